"""PyPy workers: the engine under Debian's pypy3 (Python 3.9) gives CPython's results byte for
byte, a sweep task hands its runs to one reused PyPy worker process, falls back to in-process
CPython where the node has no PyPy, and a sweep stores the same rows either way. Never skipped:
scripts/setup.sh installs pypy3."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from app.store import db
from app.sweeps import execute, spec, worker
from app.sweeps.tables import sweep_events, sweep_latency, sweep_runs
from engine.tools import sweep_run
from engine.tools import worker as engine_worker

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYPY = shutil.which("pypy3")
SWEEP = {"id": "pypy", "base": {"brokers": 3, "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
                                "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 50}],
                                "duration_ms": 30000},
         "grid": {"kafka_version": ["0.10", "2.6"]},
         "faults": {"from": "none", "crash_power": [20, 2000, 8000], "partition": [10, 1000, 5000]},
         "fault_phase": {"start_ms": 1000, "end_ms": 8000}, "seeds": 3}


def test_pypy3_is_installed():
    assert PYPY, "pypy3 is missing: scripts/setup.sh installs Debian's pypy3"


@pytest.mark.parametrize("name", ["kip101-scenario-1-v0.10", "zombie-leader-after-pause"])
def test_the_engine_under_pypy_prints_the_same_result_document(name):
    def run(python):
        out = subprocess.run([python, "-m", "engine", "run", name], cwd=ROOT, check=True,
                             stdout=subprocess.PIPE).stdout
        return re.sub(rb'"wall_ms":\d+', b'"wall_ms":0', out)     # the one measured number
    cpython, pypy = run(sys.executable), run(PYPY)
    assert pypy == cpython and json.loads(cpython)["history"]


def _task_inputs():
    sweep = spec.validate(SWEEP)
    cells = spec.cells(sweep)
    payload = SimpleNamespace(value={"cells": {c["cell_id"]: c for c in cells}, "profiles": sweep["fault_profiles"]})
    rows = [(0, "k" * 20, 0, 5), (4, "m" * 20, 1, 6)]
    return payload, rows


def _without_cpu(line):
    run, events, hist = json.loads(line)
    run[sweep_run.RUN_FIELDS.index("cpu_ms")] = None
    return run, events, hist


def test_a_task_in_a_pypy_worker_answers_as_in_process_and_reuses_the_worker():
    payload, rows = _task_inputs()
    in_process = list(worker.run_task(iter(rows), payload, "pypy", pypy="off"))
    first = list(worker.run_task(iter(rows), payload, "pypy", pypy="auto"))
    process = engine_worker._workers[PYPY]
    assert process.alive() and process.interpreter == PYPY
    again = list(worker.run_task(iter(rows[:1]), payload, "pypy", pypy="auto"))
    assert engine_worker._workers[PYPY] is process           # the next task: the same (warm) process
    assert [_without_cpu(x) for x in first] == [_without_cpu(x) for x in in_process]
    assert _without_cpu(again[0]) == _without_cpu(in_process[0])
    assert json.loads(first[0])[0][sweep_run.RUN_FIELDS.index("status")] == "ok"


def test_without_pypy_on_the_node_the_task_runs_in_process(capsys):
    payload, rows = _task_inputs()
    assert worker.interpreter_for("/nowhere/pypy3") is None and worker.interpreter_for("off") is None
    missing = list(worker.run_task(iter(rows[:1]), payload, "pypy", pypy="/nowhere/pypy3"))
    assert capsys.readouterr().err.count("/nowhere/pypy3 is not on this node; simulating in process") == 1
    broken = list(worker.run_task(iter(rows[:1]), payload, "pypy", pypy="/bin/false"))
    assert "/bin/false cannot run the engine" in capsys.readouterr().err   # a broken PyPy is said, not hidden
    want = _without_cpu(next(worker.run_in_process(rows[:1], payload.value["cells"], payload.value["profiles"], "pypy")))
    assert _without_cpu(missing[0]) == _without_cpu(broken[0]) == want


def test_auto_on_a_node_without_pypy_runs_in_process_without_a_note(capsys, monkeypatch):
    """"auto" means "where the node has one": its absence is no news. A name the sweep gave is
    looked up on the node that runs the task, and its absence is said there (above)."""
    payload, rows = _task_inputs()
    monkeypatch.setattr(worker, "PYPY_COMMAND", "no-such-pypy3")
    assert worker.interpreter_for("auto") is None
    lines = list(worker.run_task(iter(rows[:1]), payload, "pypy", pypy="auto"))
    assert json.loads(lines[0])[0][sweep_run.RUN_FIELDS.index("status")] == "ok"
    assert capsys.readouterr().err == ""


def _stored(store):
    out = {}
    with db.reading(store) as conn:
        for table, order in ((sweep_runs, ("run_no",)), (sweep_events, ("run_no", "seq")),
                             (sweep_latency, ("run_no", "bucket_ms"))):
            cols = [c for c in table.c if c.name != "cpu_ms"]
            out[table.name] = conn.execute(select(*cols).order_by(*(table.c[k] for k in order))).all()
    return out


def _engine_workers_below(pid):
    """PyPy engine worker processes among the descendants of ``pid`` (not its own children: those
    of Spark's Python workers)."""
    parents, cmdlines = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    cmdlines[int(entry)] = handle.read().split(b"\0")
            except OSError:
                continue
    found = []
    for child, cmd in cmdlines.items():
        node = child
        while node in parents and node not in (0, 1, pid):
            node = parents[node]
        if node == pid and parents.get(child) != pid and cmd[:1] and os.path.basename(cmd[0]).startswith(b"pypy") and b"worker" in cmd:
            found.append(child)
    return found


def test_a_sweep_stores_the_same_rows_with_and_without_pypy_workers(spark, tmp_path):
    stores = {}
    for mode in ("off", PYPY):     # the interpreter named: PyPy even for a sweep this small
        name = "off" if mode == "off" else "pypy"
        store = stores[name] = db.open_store(f"sqlite:///{tmp_path}/{name}.db")
        summary = execute.run_sweep(spark, store, SWEEP, chunk_runs=4, runs_per_task=2, pypy=mode)
        assert summary["runs_done"] == 6 and summary["status"] == "done" and summary["pypy"] == mode
        if mode == PYPY:
            assert _engine_workers_below(os.getpid()), "the executors simulated under PyPy"
    plain, pypy = _stored(stores["off"]), _stored(stores["pypy"])
    assert len(plain["sweep_runs"]) == 6 and len(plain["sweep_events"]) > 60
    assert pypy == plain
    for store in stores.values():
        store.dispose()


def test_a_sweep_runs_under_pypy_by_default_from_the_size_where_the_jit_pays(spark, tmp_path, monkeypatch):
    """``auto`` is the default; a sweep with fewer than PYPY_MIN_RUNS runs left stays in CPython
    (the JIT's warm-up would cost more than it wins), from that size on it goes to PyPy."""
    assert execute.PYPY_MIN_RUNS == 100
    small = db.open_store(f"sqlite:///{tmp_path}/small.db")
    assert execute.run_sweep(spark, small, SWEEP, chunk_runs=6, runs_per_task=3)["pypy"] == "off"
    monkeypatch.setattr(execute, "PYPY_MIN_RUNS", 6)
    earlier = _engine_workers_below(os.getpid())
    for pid in earlier:             # workers of earlier tests: this sweep must start its own
        os.kill(pid, signal.SIGKILL)
    large = db.open_store(f"sqlite:///{tmp_path}/large.db")
    summary = execute.run_sweep(spark, large, SWEEP, chunk_runs=6, runs_per_task=3)
    assert summary["pypy"] == "auto" and summary["runs_done"] == 6
    started = set(_engine_workers_below(os.getpid())) - set(earlier)
    assert started, "the executors started PyPy workers and simulated there"
    assert _stored(large) == _stored(small)
    for store in (small, large):
        store.dispose()
