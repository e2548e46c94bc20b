"""Run a sweep on Spark: plan -> chunks of runs simulated on executors -> batches in the store.

The still-missing runs (``plan``) are cut into chunks; each chunk is one Spark job of a few
tasks, each task a batch of runs (``worker.run_task``: many runs per task, the scenario built on
the executor from cell and seed, in a PyPy worker process where the node has one). A task
yields one JSON line per run; the job's lines are collected to the driver and stored in one
transaction (``rows.store_batch``). Spark never builds a DataFrame of the results and nothing
is written per run: the per-run cost on top of the engine is a pickled line and a few inserts.

Two chunks are in flight: while the driver stores one, the next keeps the executors busy, and
its tasks take the cores the current chunk's last tasks leave idle.

Resume: a chunk is stored whole or not at all, and a stored run row is the mark that a run is
done (``run_key`` is the primary key, ``run_no`` unique per sweep). Run the same document again
after a kill: the stored runs are skipped; a kill loses at most the chunks in flight. Events of
runs without a run row (left by versions that wrote a chunk in several transactions) are
removed before anything runs.
"""
import collections
import concurrent.futures
import functools
import itertools
import threading
import time

from engine.simulation import ENGINE_VERSION

from . import plan as planning
from . import repo, rows, spec, worker

MIN_CHUNK_RUNS, MAX_CHUNK_RUNS = 40, 500   # default: a twentieth of the sweep within these bounds
MAX_RUNS_PER_TASK = 25        # ~5-10 CPU-s a task: scheduling and the task's setup are spread
                              # over many runs, and a chunk still has >= 2 tasks per core
IN_FLIGHT = 2                 # chunks simulating at once
#: below this many runs to simulate, "auto" stays in CPython: a PyPy worker spends ~10 CPU-s
#: warming its JIT, which ~25 runs at the JIT's pace (0.4 CPU-s less each) win back per worker
PYPY_MIN_RUNS = 100
WATCH_EVERY_S = 5.0           # progress polls cost py4j calls and JVM work for as long as a
                              # chunk runs: a cost per second of sweep, not per run


class Progress:
    """Runs done, rate and time left, fed by stored chunks and (in between) Spark's task counts."""

    def __init__(self, total, done, callback=None, clock=time.monotonic):
        self.total = total
        self.done_at_start = done
        self.done = done
        self.clock = clock
        self.started = clock()
        self.callback = callback
        self.lock = threading.Lock()

    def update(self, done):
        with self.lock:
            self.done = min(max(done, self.done), self.total)
            if self.callback:
                self.callback(self.snapshot())

    def snapshot(self):
        elapsed = self.clock() - self.started
        new = self.done - self.done_at_start
        rate = new / elapsed if elapsed > 0 and new > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else None
        return {"done": self.done, "total": self.total, "rate_per_s": rate, "eta_s": left,
                "elapsed_s": elapsed}


def sizes(total, parallelism, chunk_runs=None, runs_per_task=None):
    """(runs per chunk, runs per task): given, or derived from the sweep and the cores."""
    chunk = chunk_runs or min(MAX_CHUNK_RUNS, max(MIN_CHUNK_RUNS, total // 20))
    per_task = runs_per_task or max(1, min(MAX_RUNS_PER_TASK, chunk // (2 * parallelism)))
    return chunk, per_task


def run_sweep(spark, store, doc, *, chunk_runs=None, runs_per_task=None, pypy="auto", progress=None,
              limits=None, max_chunks=None):
    """Run (or resume) the sweep ``doc`` into the store (a SQLAlchemy engine). ``pypy``: "auto"
    (the default: PyPy workers where ``pypy3`` exists, for a sweep with at least
    ``PYPY_MIN_RUNS`` runs to simulate), "off" (the executors' CPython) or the interpreter's
    command. PyPy's measured gain is 2.56x the runs/s (docs/performance.md), over the 1.8x that makes it the
    default. Returns a summary dict."""
    sweep = spec.validate(doc, limits)
    cells = spec.cells(sweep)
    repo.register(store, sweep, cells, ENGINE_VERSION)
    strays = repo.remove_strays(store, sweep["id"])
    done = repo.done_run_nos(store, sweep["id"])
    todo = planning.plan(sweep, cells, done)
    if pypy == "auto" and len(todo) < PYPY_MIN_RUNS:
        pypy = "off"
    total = planning.total_runs(sweep, cells)
    sc = spark.sparkContext
    chunk_runs, runs_per_task = sizes(total, sc.defaultParallelism, chunk_runs, runs_per_task)
    tracker = Progress(total, len(done), progress)
    tracker.update(len(done))
    started = time.monotonic()
    payload = sc.broadcast({"cells": {c["cell_id"]: c for c in cells}, "profiles": sweep["fault_profiles"]})
    task = functools.partial(worker.run_task, payload=payload, sweep_id=sweep["id"], pypy=pypy)
    chunks = list(planning.chunks(todo, chunk_runs))
    status, message = "done", None
    repo.set_status(store, sweep["id"], "running")
    try:
        Chunks(sc, task, runs_per_task, tracker).run(store, chunks[:max_chunks])
        if max_chunks is not None and len(chunks) > max_chunks:
            status = "stopped"
    except BaseException as exc:
        status, message = ("stopped", "interrupted") if isinstance(exc, KeyboardInterrupt) else \
            ("failed", f"{type(exc).__name__}: {exc}"[:2000])
        raise
    finally:
        wall = (time.monotonic() - started) * 1000
        final = repo.set_status(store, sweep["id"], status, message, add_wall_ms=wall)
        payload.unpersist()
    return {"sweep_id": sweep["id"], "runs_total": total, "runs_done": final, "runs_new": final - len(done),
            "strays_removed": strays, "status": status, "wall_s": round(wall / 1000, 3), "pypy": pypy}


_job_groups = itertools.count()


class Chunks:
    """Chunks as Spark jobs, ``IN_FLIGHT`` at a time, each stored when its job ends (in order)."""

    def __init__(self, sc, task, runs_per_task, tracker):
        self.sc, self.task, self.runs_per_task, self.tracker = sc, task, runs_per_task, tracker
        self.prefix = f"isrlab-sweep-{next(_job_groups)}"
        self.stored = tracker.done_at_start            # runs in the store
        self.in_flight = collections.OrderedDict()     # job group -> (chunk, n_tasks, future)
        self.cancelled = False

    def run(self, store, chunks):
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(stop,), daemon=True)
        pending = iter(enumerate(chunks))
        with concurrent.futures.ThreadPoolExecutor(IN_FLIGHT, thread_name_prefix="sweep-chunk") as pool:
            watcher.start()
            try:
                for _ in range(IN_FLIGHT):
                    self._submit(pool, pending)
                while self.in_flight:
                    group, (chunk, _n, future) = next(iter(self.in_flight.items()))
                    lines = future.result()
                    del self.in_flight[group]
                    self._submit(pool, pending)       # before storing: the cores stay busy
                    self.stored += rows.store_batch(store, lines)
                    self.tracker.update(self.stored)
            except BaseException:
                self.cancelled = True          # a chunk whose job is not submitted yet never is
                for group in self.in_flight:
                    self.sc.cancelJobGroup(group)
                raise
            finally:
                stop.set()
                watcher.join()

    def _submit(self, pool, pending):
        item = next(pending, None)
        if item is None:
            return
        index, chunk = item
        group = f"{self.prefix}-{index}"
        n_tasks = max(1, -(-len(chunk) // self.runs_per_task))
        future = pool.submit(self._simulate, group, chunk, n_tasks)
        self.in_flight[group] = (chunk, n_tasks, future)

    def _simulate(self, group, chunk, n_tasks):
        if self.cancelled:
            return []
        self.sc.setJobGroup(group, "isrlab sweep chunk", interruptOnCancel=True)
        return self.sc.parallelize(chunk, n_tasks).mapPartitions(self.task).collect()

    def _watch(self, stop):
        """While chunks run, turn their completed tasks into a run count for the progress bar."""
        tracker = self.sc.statusTracker()
        while not stop.wait(WATCH_EVERY_S):
            running = 0
            for group, (chunk, n_tasks, _future) in list(self.in_flight.items()):
                completed = 0
                for job_id in tracker.getJobIdsForGroup(group):
                    job = tracker.getJobInfo(job_id)
                    for stage_id in (job.stageIds if job else ()):
                        stage = tracker.getStageInfo(stage_id)
                        completed += stage.numCompletedTasks if stage else 0
                running += min(len(chunk), completed * len(chunk) // n_tasks)
            if running:
                self.tracker.update(self.stored + running)
