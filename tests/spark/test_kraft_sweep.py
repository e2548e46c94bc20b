"""A sweep over eras {2.6 (ZooKeeper), 3.9-kraft (KRaft), 4.1 (KRaft + ELR)} x min.insync.replicas
{1, 2} on real Spark with a SQLite store, and what the analysis shows ELR buys (KIP-966,
docs/model.md §20.6). The base is the ELR worked example as a timeline: RF 3, acks=all, unclean
election off; broker 2 shuts down at 5 s, broker 1 at 20 s, the leader 0 loses power at 35 s (and
its unflushed records), broker 1 comes back at 50 s, broker 0 at 65 s, broker 2 at 70 s.

What Kafka's rules give:
* min ISR 2 without ELR (2.6, 3.9-kraft): at 20 s the ISR is [0], below min ISR, so acks=all
  fails and nothing new commits; when 0 loses power the partition goes offline with ISR [0]
  (the controller keeps the last ISR member). Broker 1 returning at 50 s is not in the ISR and
  unclean election is off, so the partition waits for 0, which leads again from a log that lost
  acknowledged records: loss > 0.
* min ISR 2 with ELR (4.1): broker 1 left an ISR below min ISR holding every committed record (the
  HW cannot move without min ISR members), so it entered the ELR; 0's power loss empties the ISR
  (0 goes to the ELR too) and 0's unclean re-registration takes it out, so broker 1 is elected
  from the ELR at 50 s with every acknowledged record: loss 0.
* min ISR 1: records acknowledged between 20 s and 35 s exist on broker 0 alone. No ELR rule can
  bring back records one replica held: 4.1 elects 0 as last known leader (the ELR is cleared while
  ISR [0] still met min ISR 1), 3.9-kraft waits for it as the last ISR member: loss > 0 in every
  era, and the same in both KRaft eras.
"""
import json

import pytest
from sqlalchemy import select

from app.analytics import job
from app.store import db
from app.sweeps import execute, repo
from app.sweeps.tables import analytics_cells
from engine.scenario.library import library
from engine.simulation import Simulation

ELR_EXAMPLE = library()["last-isr-member-elr"]
ERAS = ["2.6", "3.9-kraft", "4.1"]
SWEEP = {
    "id": "kraft-elr",
    "name": "what ELR buys",
    "base": {key: ELR_EXAMPLE[key] for key in ("brokers", "topics", "clients", "timeline", "duration_ms")},
    "grid": {"kafka_version": ERAS, "min.insync.replicas": [1, 2]},
    "faults": "none",                       # the worked example's own timeline is the fault
    "fault_phase": {"start_ms": 1000, "end_ms": 2000},
    "seeds": 1,
}


@pytest.fixture(scope="module")
def swept(spark, tmp_path_factory):
    store = db.open_store(f"sqlite:///{tmp_path_factory.mktemp('kraft')}/store.db")
    summary = execute.run_sweep(spark, store, SWEEP, chunk_runs=6, runs_per_task=2)
    analysis = job.analyze(spark, store, ["kraft-elr"])
    settings = {c["cell_id"]: c["settings"] for c in repo.cells_of(store, "kraft-elr")}
    with db.reading(store) as conn:
        rows = conn.execute(select(analytics_cells)).mappings().all()
    cells = {(settings[r["cell_id"]]["kafka_version"], settings[r["cell_id"]]["min.insync.replicas"]): dict(r)
             for r in rows}
    yield summary, analysis, cells, store
    store.dispose()


def test_the_sweep_runs_every_era_and_min_isr_cell(swept):
    summary, analysis, cells, _store = swept
    assert summary["status"] == "done" and summary["runs_done"] == 6
    assert analysis["rows"]["analytics_cells"] == 6
    assert sorted(cells) == sorted((era, m) for era in ERAS for m in (1, 2))
    assert all(c["runs"] == 1 and c["runs_invalid"] == 0 and c["runs_error"] == 0 for c in cells.values())


def test_elr_removes_acknowledged_loss_at_min_isr_2_only(swept):
    cells = swept[2]
    lost = {key: cell["lost_max"] for key, cell in cells.items()}
    assert lost[("4.1", 2)] == 0 and cells[("4.1", 2)]["runs_lost"] == 0
    assert lost[("3.9-kraft", 2)] > 0 and lost[("2.6", 2)] > 0
    assert all(lost[(era, 1)] > 0 for era in ERAS)
    assert lost[("4.1", 1)] == lost[("3.9-kraft", 1)]       # ELR cannot help a single copy
    # the lost records were all acknowledged: acks=all is the only producer setting here
    assert all(c["runs_lost_acks_all"] == c["runs_lost"] for c in cells.values())


def test_offline_time_and_reactions_are_measured_from_the_metadata_log_in_kraft(swept):
    """In KRaft the controller's ISR changes and leaderless partitions are PartitionChangeRecords,
    not state znodes. At min ISR 2 the partition is offline from the leader's power loss (35 s)
    until a leader returns: 4.1 elects broker 1 from the ELR once it re-registers after 50 s
    (~15 s offline), 3.9-kraft waits for broker 0 at 65 s (~30 s offline)."""
    cells = swept[2]
    elr, no_elr = cells[("4.1", 2)]["offline_ms_mean"], cells[("3.9-kraft", 2)]["offline_ms_mean"]
    assert 15000 <= elr <= 17000 and 30000 <= no_elr <= 32000, (elr, no_elr)
    for era in ERAS:
        cell = cells[(era, 2)]
        # the controlled shutdown of broker 2 at 5 s shrinks the ISR: a detection sample in every era
        assert cell["detect_samples"] >= 1 and cell["failover_samples"] >= 1, (era, cell)
        assert cell["under_min_isr_ms_mean"] > 0


def test_the_spark_numbers_are_the_engine_s(swept):
    """Each cell's loss is what a plain engine run of the same scenario reports, and the 4.1 run
    at min ISR 2 elected from the ELR while 3.9-kraft had to wait for the unclean leader."""
    _summary, _analysis, cells, store = swept
    for (era, min_isr), cell in cells.items():
        run = repo.get_run(store, cell["worst_run_key"])      # the stored scenario of the cell's run
        assert run["scenario"]["kafka_version"] == era
        result = Simulation(run["scenario"]).run()
        acked_lost = sum(1 for r in result["records"] if r["status"] == "acked" and r["lost"])
        assert acked_lost == cell["lost_max"], (era, min_isr)
        kinds = [e.get("kind") for e in result["history"] if e["type"] == "leader_elected"]
        if (era, min_isr) == ("4.1", 2):
            assert "elr" in kinds
        if era == "3.9-kraft":
            assert "elr" not in kinds and "last_known_leader" not in kinds


def test_isrlab_sweep_runs_kraft_plus_elr_against_kraft_without_it(spark, tmp_path, capsys, monkeypatch):
    """``isrlab sweep --analyze`` with 4.1 x eligible.leader.replicas.version {0, 1} at min ISR 2:
    the same era with ELR off loses what 3.9-kraft loses, with ELR on nothing."""
    from app.analytics import cli
    monkeypatch.setattr(cli, "_session", lambda master, **_: spark)     # the session of this test run
    doc = dict(SWEEP, id="kraft-cli", base=dict(SWEEP["base"], kafka_version="4.1", config={"min.insync.replicas": 2}),
               grid={"eligible.leader.replicas.version": [0, 1]})
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(doc))
    url = f"sqlite:///{tmp_path}/cli.db"
    assert cli.main(["sweep", str(path), "--db", url, "--analyze", "--progress", "none"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert printed[0]["sweep"]["runs_done"] == 2 and printed[1]["analysis"]["rows"]["analytics_cells"] == 2
    store = db.open_store(url)
    settings = {c["cell_id"]: c["settings"] for c in repo.cells_of(store, "kraft-cli")}
    with db.reading(store) as conn:
        lost = {settings[r.cell_id]["eligible.leader.replicas.version"]: r.lost_max
                for r in conn.execute(select(analytics_cells))}
    store.dispose()
    without = Simulation(dict(ELR_EXAMPLE, kafka_version="3.9-kraft", config={"min.insync.replicas": 2},
                              seed=0)).run()
    assert lost[1] == 0 and lost[0] > 0
    assert lost[0] == sum(1 for r in without["records"] if r["status"] == "acked" and r["lost"])
