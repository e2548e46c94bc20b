"""The zones sweep of docs/sweeps.md (``docs/sweep-zones.json``), three seeds instead of 200, on
Spark with a SQLite store: the same replica lists with the brokers dealt round robin into three
zones, or zone by zone (two replicas of every partition in one zone), under zone outages only.

What Kafka's rules give: with each partition's replicas in three zones, a zone outage leaves two
in-sync replicas, exactly min.insync.replicas 2, so acks=all is never refused and no partition
goes under min ISR; with two replicas in one zone, losing that zone leaves one, and acks=all is
answered NOT_ENOUGH_REPLICAS until the zone is back (docs/model.md §21, library stories
lose-one-zone and two-replicas-in-one-zone). Seeds 5-7 draw, in the zone-by-zone cell, a crash of
az-a (orders-0 left with ISR [2]), nothing, and a cut-off of az-b (orders-1 and orders-2 left with
one replica each); the round-robin cell draws the same kinds of outage and never two zones at once.
"""
import json
import os

import pytest
from sqlalchemy import select

from app.analytics import job
from app.store import db
from app.sweeps import execute, repo, spec
from app.sweeps.tables import analytics_cells
from engine.scenario.racks import same_rack_partitions
from engine.simulation import Simulation

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "sweep-zones.json")


def zones_sweep(**changes):
    with open(DOC, encoding="utf-8") as handle:
        return {**json.load(handle), **changes}


def layout(settings):
    return "spread" if settings["racks"] == 3 else "zone by zone"


def test_the_documented_sweep_validates_and_its_cells_place_as_described():
    sweep = spec.validate(zones_sweep())
    assert sweep["seeds"] == {"first": 0, "count": 200}
    cells = {layout(c["settings"]): c for c in spec.cells(sweep)}
    assert sorted(cells) == ["spread", "zone by zone"]
    for name, cell in cells.items():
        sim = Simulation({**cell["scenario"], "seed": 0})
        crowded = same_rack_partitions(sim.scenario, sim.topics)
        if name == "spread":
            assert crowded == []
        else:
            assert [(c["partition"], c["rack"]) for c in crowded] == [(0, "az-a"), (1, "az-b"), (2, "az-b")]
    assert set(sweep["fault_profiles"]["sweep"]) >= {"zone"}
    assert all(rate == 0 for kind, (rate, _lo, _hi) in sweep["fault_profiles"]["sweep"].items() if kind != "zone")


@pytest.fixture(scope="module")
def swept(spark, tmp_path_factory):
    store = db.open_store(f"sqlite:///{tmp_path_factory.mktemp('zones')}/store.db")
    doc = zones_sweep(id="zones-tiny", seeds={"first": 5, "count": 3})
    summary = execute.run_sweep(spark, store, doc, chunk_runs=6, runs_per_task=3)
    analysis = job.analyze(spark, store, ["zones-tiny"])
    settings = {c["cell_id"]: c["settings"] for c in repo.cells_of(store, "zones-tiny")}
    with db.reading(store) as conn:
        rows = conn.execute(select(analytics_cells)).mappings().all()
    yield summary, analysis, {layout(settings[r["cell_id"]]): dict(r) for r in rows}
    store.dispose()


def test_a_zone_outage_blocks_acks_all_only_with_two_replicas_in_one_zone(swept):
    summary, analysis, cells = swept
    assert summary["status"] == "done" and summary["runs_done"] == 6
    assert analysis["rows"]["analytics_cells"] == 2
    spread, crowded = cells["spread"], cells["zone by zone"]
    assert all(c["runs"] == 3 and c["runs_invalid"] == 0 and c["runs_error"] == 0 for c in cells.values())
    # three zones: an outage leaves two in-sync replicas = min.insync.replicas
    assert spread["ner_rate"] == 0 and spread["under_min_isr_ms_mean"] == 0
    # two in one zone: the outage of that zone leaves one, and acks=all is refused meanwhile
    assert crowded["ner_rate"] > 0.05 and crowded["under_min_isr_ms_mean"] > 10000
    # nothing is lost either way: the survivor was in sync, and unclean election is off
    assert spread["runs_lost"] == crowded["runs_lost"] == 0
