"""Answer lines to stored rows (app.sweeps.rows): a batch is stored whole or not at all, and chunk
and task sizes follow the sweep. (No Spark.)"""
import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from app.store import db
from app.sweeps import execute, plan, repo, rows, spec, worker
from app.sweeps.tables import sweep_events, sweep_latency, sweep_runs
from engine.simulation import ENGINE_VERSION

DOC = {"id": "rows", "base": {"brokers": 3, "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
                              "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 20}],
                              "duration_ms": 30000},
       "faults": {"from": "none", "crash_process": [20, 2000, 6000]},
       "fault_phase": {"start_ms": 1000, "end_ms": 8000}, "seeds": 3}


def counts(store):
    with db.reading(store) as conn:
        return tuple(conn.execute(select(func.count()).select_from(t)).scalar_one()
                     for t in (sweep_runs, sweep_events, sweep_latency))


def test_a_batch_is_stored_whole_or_not_at_all(tmp_path):
    store = db.open_store(f"sqlite:///{tmp_path}/store.db")
    sweep = spec.validate(DOC)
    cells = spec.cells(sweep)
    repo.register(store, sweep, cells, ENGINE_VERSION)
    todo = plan.plan(sweep, cells)
    lines = list(worker.run_in_process(todo, {c["cell_id"]: c for c in cells}, sweep["fault_profiles"], "rows"))
    runs, events, latency = rows.decode(lines[:2])
    assert [r["run_no"] for r in runs] == [0, 1] and events and latency
    assert all(e["sweep_id"] == "rows" and e["run_no"] in (0, 1) for e in events)
    assert rows.store_batch(store, lines[:2]) == 2
    stored = counts(store)
    assert stored == (2, len(events), len(latency))
    with pytest.raises(IntegrityError):            # run 1 again: the whole batch is refused
        rows.store_batch(store, [lines[2], lines[1]])
    assert counts(store) == stored                 # not even run 2's events were kept
    assert rows.store_batch(store, lines[2:]) == 1
    assert repo.done_run_nos(store, "rows") == {0, 1, 2}
    store.dispose()


def test_chunks_and_tasks_follow_the_sweep_unless_given():
    assert execute.sizes(10_000, 2) == (500, 25)
    assert execute.sizes(200, 2) == (40, 10)
    assert execute.sizes(64, 2, chunk_runs=32, runs_per_task=4) == (32, 4)
    assert execute.sizes(10, 8) == (40, 2)
