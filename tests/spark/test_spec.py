"""Sweep documents: validation names the field, the grid expands in order, run keys are
deterministic, each run's scenario carries a fault phase then a healing phase. (No Spark.)"""
import pytest

from app.sweeps import plan, spec
from engine.tools import sweep_run
from engine.tools.faults import DEFAULT_PROFILE


def test_defaults_are_spelled_out():
    sweep = spec.validate({"grid": {"acks": ["1", "all"]}, "seeds": 3})
    assert sweep["id"].startswith("sw-") and len(sweep["id"]) == 15
    assert sweep["seeds"] == {"first": 0, "count": 3}
    assert sweep["faults"] == "default"
    # every kind a ZooKeeper era can draw (the KRaft controller kind only in sweeps with a KRaft
    # era, the zone kind only in sweeps with racks)
    assert sweep["fault_profiles"]["default"] == {k: list(v) for k, v in DEFAULT_PROFILE.items()
                                                  if k not in ("controller", "zone")}
    assert sweep["fault_phase"] == {"start_ms": 1000, "end_ms": None, "end_fraction": 0.6}
    # the same document always gets the same id (a resumed sweep finds itself)
    assert spec.validate({"grid": {"acks": ["1", "all"]}, "seeds": 3})["id"] == sweep["id"]
    assert spec.validate({"grid": {"acks": ["1", "all"]}, "seeds": 4})["id"] != sweep["id"]


@pytest.mark.parametrize("doc, field, words", [
    ({"grid": {"acks": ["2"]}}, "grid.acks[0]", "not a valid acks"),
    ({"grid": {"min.insync.replica": [1]}}, "grid.min.insync.replica", "unknown axis"),
    ({"grid": {"kafka_version": ["3.1"]}}, "grid.kafka_version[0]", "not a supported era"),
    ({"grid": {"acks": []}}, "grid.acks", "non-empty list"),
    ({"grid": {"acks": ["1", 1]}}, "grid.acks", "duplicate"),
    ({"seeds": 0}, "seeds", "integer from 1"),
    ({"seeds": {"first": -1, "count": 2}}, "seeds.first", "integer from 0"),
    ({"faults": {"crash_disk": [1, 0, 0]}}, "faults.crash_disk", "unknown fault kind"),
    ({"faults": {"pause": [1, 500, 100]}}, "faults.pause", "integer from 500"),
    ({"faults": "gentle"}, "faults", "not a fault profile"),
    ({"grid": {"faults": ["default"]}, "faults": "none"}, "faults", "both"),
    ({"id": "Bad Id"}, "id", "not a sweep id"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"base": "no-such-scenario"}, "base", "not a library scenario"),
    ({"base": {"brokers": 0}}, "base.brokers", "out of range"),
    ({"grid": {"replication_factor": [4]}}, "grid", "replication_factor"),
    ({"grid": {"kafka_version": ["0.10"], "delivery.timeout.ms": [60000]}}, "grid", "delivery.timeout.ms"),
    ({"fault_phase": {"end_ms": 59000}}, "fault_phase", "cannot converge"),
    ({"grid": {"acks": ["1", "all"]}, "seeds": 3}, None, None),
])
def test_errors_name_the_field(doc, field, words):
    if field is None:
        spec.validate(doc)
        return
    with pytest.raises(spec.SweepError) as info:
        spec.validate(doc)
    assert info.value.field == field, str(info.value)
    assert words in str(info.value)


def test_limits_are_enforced():
    with pytest.raises(spec.SweepError) as info:
        spec.validate({"grid": {"acks": ["1", "all"]}, "seeds": 600}, limits={"max_runs": 1000})
    assert info.value.field == "seeds" and "1200 runs" in info.value.message


def test_cells_are_the_cartesian_product_in_document_order():
    sweep = spec.validate({"grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"],
                                    "min.insync.replicas": [1, 2]}, "seeds": 2})
    cells = spec.cells(sweep)
    assert [c["settings"] for c in cells][:3] == [
        {"kafka_version": "0.10", "acks": "1", "min.insync.replicas": 1},
        {"kafka_version": "0.10", "acks": "1", "min.insync.replicas": 2},
        {"kafka_version": "0.10", "acks": "all", "min.insync.replicas": 1}]
    assert len(cells) == 8
    last = cells[-1]["scenario"]
    assert last["kafka_version"] == "2.6"
    assert last["clients"][0]["acks"] == "all"
    assert last["topics"][0]["config"]["min.insync.replicas"] == 2
    # era defaults reach the healing phase: the session timeout of each cell's era
    assert cells[0]["session_timeout_ms"] == 6000 and cells[-1]["session_timeout_ms"] == 18000
    assert cells[0]["fault_end_ms"] == 36000


def test_settings_go_where_kafka_reads_them():
    base = {"topics": [{"name": "a", "partitions": 2}, {"name": "b"}],
            "clients": [{"name": "p", "type": "producer", "topic": "a"},
                        {"name": "c", "type": "consumer", "topic": "b"}]}
    doc = spec.apply_settings(base, {"replication_factor": 2, "unclean.leader.election.enable": True,
                                     "replica.lag.time.max.ms": 5000, "retries": 3, "rate_per_s": 7,
                                     "fetch.min.bytes": 10, "latency_ms": 4})
    assert [t["replication_factor"] for t in doc["topics"]] == [2, 2]
    assert all(t["config"]["unclean.leader.election.enable"] is True for t in doc["topics"])
    assert doc["config"] == {"replica.lag.time.max.ms": 5000}
    assert doc["clients"][0]["retries"] == 3 and doc["clients"][0]["rate_per_s"] == 7
    assert doc["clients"][1]["fetch.min.bytes"] == 10
    assert doc["network"] == {"latency_ms": 4}
    assert base["topics"][0] == {"name": "a", "partitions": 2}          # the base is not changed


def test_run_keys_are_deterministic_and_distinct():
    sweep = spec.validate({"id": "keys", "grid": {"acks": ["1", "all"]}, "seeds": {"first": 5, "count": 3}})
    cells = spec.cells(sweep)
    rows = plan.plan(sweep, cells)
    assert [(r[0], r[2], r[3]) for r in rows] == [(0, 0, 5), (1, 0, 6), (2, 0, 7), (3, 1, 5), (4, 1, 6), (5, 1, 7)]
    assert len({r[1] for r in rows}) == 6
    assert rows == plan.plan(sweep, spec.cells(sweep))
    assert rows[0][1] == plan.run_key("keys", {"acks": "1"}, 5)
    assert plan.plan(sweep, cells, done={0, 4}) == [r for r in rows if r[0] not in (0, 4)]


def test_each_run_has_a_fault_phase_then_a_healing_phase():
    sweep = spec.validate({"grid": {"kafka_version": ["0.10", "2.6"]}, "seeds": 1,
                           "faults": {"from": "none", "crash_process": [30, 1000, 2000]}})
    cell = spec.cells(sweep)[1]
    scenario = sweep_run.run_scenario(cell, sweep["fault_profiles"]["sweep"], seed=7)
    ops = scenario["timeline"]
    crashes = [op for op in ops if op["op"] == "crash"]
    assert crashes and all(1000 <= op["at_ms"] < 36000 and op["mode"] == "process" for op in crashes)
    assert {"at_ms": 36000, "op": "heal"} in ops
    restarts = [op for op in ops if op["op"] == "restart"]
    assert sorted(op["broker"] for op in restarts) == sorted(op["broker"] for op in crashes)
    assert all(op["at_ms"] >= 36000 + 18000 for op in restarts)
    # the same seed draws the same faults in another cell (common random numbers)
    other = sweep_run.run_scenario(spec.cells(sweep)[0], sweep["fault_profiles"]["sweep"], seed=7)
    assert [op for op in other["timeline"] if op["op"] == "crash"] == crashes


# -- KRaft eras (docs/model.md §20, docs/scenario-format.md §4.2) ---------------------------------
KRAFT_BASE = {"brokers": 3, "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
              "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 5}],
              "duration_ms": 60000}


def test_kraft_eras_and_their_config_keys_are_grid_values():
    sweep = spec.validate({"base": KRAFT_BASE, "seeds": 1, "fault_phase": {"end_ms": 20000},
                           "grid": {"kafka_version": ["2.6", "3.9-kraft", "4.1"], "min.insync.replicas": [1, 2]}})
    by_era = {c["scenario"]["kafka_version"]: c for c in spec.cells(sweep)}
    # a stopped broker's registration lapses after ZooKeeper's session in 2.6 (18 s), after the
    # controller's broker session in KRaft (broker.session.timeout.ms, 9 s, KIP-631)
    assert by_era["2.6"]["session_timeout_ms"] == 18000
    assert by_era["3.9-kraft"]["session_timeout_ms"] == by_era["4.1"]["session_timeout_ms"] == 9000
    assert "controller" in sweep["fault_profiles"]["default"]
    elr = spec.validate({"base": dict(KRAFT_BASE, kafka_version="4.1"), "seeds": 1,
                         "grid": {"eligible.leader.replicas.version": [0, 1], "broker.session.timeout.ms": [6000, 9000]}})
    assert [c["scenario"]["config"] for c in spec.cells(elr)][:2] == [
        {"eligible.leader.replicas.version": 0, "broker.session.timeout.ms": 6000},
        {"eligible.leader.replicas.version": 0, "broker.session.timeout.ms": 9000}]
    assert [c["session_timeout_ms"] for c in spec.cells(elr)] == [6000, 9000, 6000, 9000]
    # a key the era does not have is a clear error naming the cell, not a silent no-op
    with pytest.raises(spec.SweepError, match="2.6 has no eligible.leader.replicas.version"):
        spec.validate({"grid": {"kafka_version": ["2.6", "4.1"], "eligible.leader.replicas.version": [1]}})


def test_controller_faults_exist_only_in_sweeps_with_a_kraft_era():
    zk = spec.validate({"grid": {"acks": ["1", "all"]}, "seeds": 3})
    assert "controller" not in zk["fault_profiles"]["default"]
    assert zk["id"] == "sw-ff372fbde279"          # the id it had before KRaft eras existed
    with pytest.raises(spec.SweepError) as err:
        spec.validate({"grid": {"kafka_version": ["2.6"]}, "faults": {"controller": [1, 1000, 2000]}})
    assert err.value.field == "faults.controller"


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_kraft_runs_draw_no_zookeeper_faults_and_do_draw_controller_faults(era):
    sweep = spec.validate({"base": dict(KRAFT_BASE, kafka_version=era), "seeds": 20,
                           "fault_phase": {"end_ms": 40000},
                           "faults": {"expire_session": [30, 0, 0], "isolate_zk": [3, 2000, 8000],
                                      "controller": [6, 2000, 8000]}})
    cell = spec.cells(sweep)[0]
    ops = [op for seed in range(20)
           for op in sweep_run.run_scenario(cell, sweep["fault_profiles"]["sweep"], seed)["timeline"]]
    assert not any(op["op"] == "expire_session" or "zk" in (op.get("from"), op.get("to")) for op in ops)
    assert any(op["op"] == "isolate" and op.get("from") == "controllers" and "broker" in op for op in ops)
    voter_faults = {op["op"] for op in ops if "controller" in op}
    assert {"crash", "pause", "isolate", "restart"} <= voter_faults
    # one voter of three at a time: a quorum majority is never taken away by the random faults
    for seed in range(20):
        down, timeline = set(), sweep_run.run_scenario(cell, sweep["fault_profiles"]["sweep"], seed)["timeline"]
        for op in timeline:
            if op["op"] == "crash" and "controller" in op:
                down.add(op["controller"])
            elif op["op"] == "restart" and "controller" in op:
                down.discard(op["controller"])
            assert len(down) <= 1
