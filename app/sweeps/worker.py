"""What a Spark executor does with one task: a batch of sweep runs, simulated in a PyPy worker
process when the node has one, else in this (CPython) process.

Standard library and the engine only: this module is shipped to executors *by value* (see
``app.spark.session``), so an executor needs nothing but the engine (itself shipped as a zip)
and never imports the ``app`` package.

A task gets plan rows ``(run_no, run_key, cell_id, seed)``; the cells and fault profiles come
from a Spark broadcast, and each run's scenario is built on the executor from its cell and seed
(``engine.tools.sweep_run``). It yields one JSON line per run, ``[run, events, latency]`` — exactly
what ``python -m engine worker`` answers, so a line from PyPy passes through untouched, and
in-process runs are encoded the same way. The driver decodes the lines and stores them in
batches (``app.sweeps.rows``): no per-run DataFrame or JDBC work on either side.

PyPy (``pypy`` = "auto": ``pypy3`` on the node's PATH, what a sweep asks for by default; a
command or path; "off"):
one worker process per Spark Python worker, reused by its later tasks
(``engine.tools.worker.shared_worker``), so the JIT warms up once per executor process, not per task. The
interpreter is looked up on the node that runs the task (its PATH), never on the driver's. A node
without it, or whose PyPy cannot start the engine, simulates in process (with a note on the
executor's stderr unless the sweep said "auto"): the rows are the same either way.
"""
import shutil
import sys

from engine.tools.cli import tune_gc
from engine.tools.sweep_run import simulate
from engine.tools.worker import WorkerError, encode, shared_worker

PYPY_COMMAND = "pypy3"


def interpreter_for(pypy):
    """The PyPy interpreter to use on this node, or None for in-process CPython."""
    if not pypy or pypy == "off":
        return None
    return shutil.which(PYPY_COMMAND if pypy == "auto" else pypy)


def run_in_process(rows, cells, profiles, sweep_id):
    """Simulate each plan row here; yields the answer lines the engine worker would give."""
    tune_gc()   # fewer GC passes over the engine's many long-lived objects (idempotent)
    for row in rows:
        cell = cells[row[2]]
        yield encode(simulate(tuple(row), cell, profiles[cell["profile"]], sweep_id))


def _pypy_worker(interpreter, cells, profiles, sweep_id):
    try:
        worker = shared_worker(interpreter)
        worker.setup(cells, profiles, sweep_id)
        return worker
    except (WorkerError, OSError) as exc:
        print(f"isrlab sweep: {interpreter} cannot run the engine ({exc}); simulating in process",
              file=sys.stderr)
        return None


def run_task(rows, payload, sweep_id, pypy="off"):
    """mapPartitions over plan rows, the cells and profiles in the broadcast ``payload``."""
    value = payload.value
    cells, profiles = value["cells"], value["profiles"]
    interpreter = interpreter_for(pypy)
    if interpreter is None and pypy not in (None, "off", "auto"):
        # asked for by name and not on this node: say so where the node logs (the executor's
        # stderr), so a cluster that lacks it is visible; the rows are the same either way
        print(f"isrlab sweep: {pypy} is not on this node; simulating in process", file=sys.stderr)
    worker = _pypy_worker(interpreter, cells, profiles, sweep_id) if interpreter else None
    if worker is None:
        yield from run_in_process(rows, cells, profiles, sweep_id)
        return
    for row in rows:
        yield worker.simulate(row)
