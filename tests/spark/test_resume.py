"""A sweep stopped or killed part-way resumes where it stopped: the runs already stored are not
simulated again, none is stored twice, and half-written runs are redone whole."""
import json
import os
import signal
import sqlite3
import time

from sqlalchemy import func, insert, select

from app.store import db
from app.sweeps import execute, repo, spec
from engine.tools import sweep_run
from app.sweeps.tables import sweep_events, sweep_latency, sweep_runs

from .conftest import start_cli

SMALL = {"base": {"brokers": 3, "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
                  "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 50}],
                  "duration_ms": 30000},
         "grid": {"acks": ["1", "all"]},
         "faults": {"from": "none", "crash_process": [20, 2000, 8000], "pause": [10, 1000, 5000]},
         "fault_phase": {"start_ms": 1000, "end_ms": 10000}}


def check_complete(store, doc):
    """Every planned run stored once, and each run's events exactly what the executor produces."""
    sweep = spec.validate(doc)
    cells = {c["cell_id"]: c for c in spec.cells(sweep)}
    total = len(cells) * sweep["seeds"]["count"]
    with db.reading(store) as conn:
        runs = conn.execute(select(sweep_runs.c.run_no, sweep_runs.c.run_key, sweep_runs.c.cell_id, sweep_runs.c.seed)
                            .where(sweep_runs.c.sweep_id == sweep["id"])).all()
        events = conn.execute(select(sweep_events).where(sweep_events.c.sweep_id == sweep["id"])
                              .order_by(sweep_events.c.run_no, sweep_events.c.seq)).all()
        n_latency = conn.execute(select(func.count()).select_from(sweep_latency)
                                 .where(sweep_latency.c.sweep_id == sweep["id"])).scalar_one()
    assert sorted(r.run_no for r in runs) == list(range(total))
    assert len({r.run_key for r in runs}) == total
    stored = {}
    for e in events:
        stored.setdefault(e.run_no, []).append(tuple(e)[2:])
    expected_latency = 0
    for r in runs:
        cell = cells[r.cell_id]
        _row, want, hist = sweep_run.simulate((r.run_no, r.run_key, r.cell_id, r.seed), cell,
                                           sweep["fault_profiles"][cell["profile"]], sweep["id"])
        assert stored.get(r.run_no, []) == [tuple(e) for e in want], r.run_no
        expected_latency += len(hist)
    assert n_latency == expected_latency
    return total


def test_a_stopped_sweep_resumes_and_removes_half_written_runs(spark, sqlite_url):
    doc = {**SMALL, "id": "resume", "seeds": 5}
    store = db.open_store(sqlite_url)
    first = execute.run_sweep(spark, store, doc, chunk_runs=4, runs_per_task=2, max_chunks=1)
    assert first["status"] == "stopped" and first["runs_done"] == 4
    assert repo.get_sweep(store, "resume")["status"] == "stopped"
    # a kill between the events write and the run-row write leaves events of a run that is not done
    with db.writing(store) as conn:
        conn.execute(insert(sweep_events), [{"sweep_id": "resume", "run_no": 7, "seq": s, "t_ms": s,
                                              "type": "fault"} for s in range(3)])
        conn.execute(insert(sweep_latency), [{"sweep_id": "resume", "run_no": 7, "bucket_ms": 1, "count": 5}])
    second = execute.run_sweep(spark, store, doc, chunk_runs=4, runs_per_task=2)
    assert second["strays_removed"] == 4
    assert second["runs_new"] == 6 and second["runs_done"] == 10 and second["status"] == "done"
    assert check_complete(store, doc) == 10
    store.dispose()


def test_a_killed_sweep_resumes_without_duplicates(spark, tmp_path):
    doc = {**SMALL, "id": "killed", "seeds": 20}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(doc))
    url = f"sqlite:///{tmp_path}/store.db"
    db.open_store(url).dispose()
    proc = start_cli(["sweep", str(path), "--db", url, "--chunk-runs", "2", "--runs-per-task", "1",
                      "--progress", "json"])
    done_at_kill = 0
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            try:
                with sqlite3.connect(f"{tmp_path}/store.db", timeout=5) as conn:
                    done_at_kill = conn.execute("SELECT COUNT(*) FROM sweep_runs").fetchone()[0]
            except sqlite3.OperationalError:
                continue
            if done_at_kill >= 4:
                break
    finally:
        os.killpg(proc.pid, signal.SIGKILL)          # the driver and its JVM: a hard stop
        proc.wait(timeout=60)
    assert 4 <= done_at_kill < 40, "the sweep must be killed part-way"
    store = db.open_store(url)
    assert repo.get_sweep(store, "killed")["status"] == "running"   # it never got to say otherwise
    resumed = execute.run_sweep(spark, store, doc)
    assert resumed["runs_done"] == 40 and resumed["runs_new"] <= 40 - done_at_kill   # stored runs are not redone
    assert check_complete(store, doc) == 40
    store.dispose()
