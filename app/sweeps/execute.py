"""Run a sweep on Spark: plan -> chunks of runs on executors -> DataFrames -> the store.

For each chunk of still-missing runs (``plan``): ``parallelize`` the plan rows, ``mapPartitions``
the engine over them (``worker.run_many``; executors get the cells by broadcast), make one
DataFrame of (run row, events, latency histogram), cache it, then append through JDBC — the
events, then the latency histograms, then the run rows. A run row is the mark that a run is
done: a sweep killed at any point is resumed by running the same document again; the runs
already stored are skipped (``run_key`` is the primary key, ``run_no`` unique per sweep), and
stray events of a run whose row never got written are deleted first.

SQLite takes the chunk through one writer; PostgreSQL in parallel partitions (``jdbc``).
"""
import functools
import threading
import time

from app.spark.jdbc import jdbc_of, write_table
from app.sweeps.schemas import RESULT_SCHEMA
from engine.simulation import ENGINE_VERSION

from . import plan as planning
from . import repo, spec, worker

DEFAULT_CHUNK_RUNS = None      # adaptive: a tenth of the sweep, between 50 and 500 runs
DEFAULT_RUNS_PER_TASK = 10    # ~10 CPU-s a task: the per-task cost (scheduling, the Python
                              # worker reading the task and the broadcast) is spread over 10 runs
WATCH_EVERY_S = 2.0           # progress polls cost py4j calls on both sides for as long as a
                              # chunk runs: a cost per second of sweep, not per run


class Progress:
    """Runs done, rate and time left, fed by chunk ends and (in between) Spark's task counts."""

    def __init__(self, total, done, callback=None, clock=time.monotonic):
        self.total = total
        self.done_at_start = done
        self.done = done
        self.clock = clock
        self.started = clock()
        self.callback = callback

    def update(self, done):
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


def _watch_tasks(sc, progress, base_done, runs_in_chunk, n_tasks, stop):
    """While a chunk runs, turn completed tasks of the simulating stage into a run count."""
    tracker = sc.statusTracker()
    while not stop.wait(WATCH_EVERY_S):
        completed = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None and info.numTasks == n_tasks:
                completed = max(completed, info.numCompletedTasks)
        if completed:
            progress.update(base_done + min(runs_in_chunk, completed * runs_in_chunk // n_tasks))


def run_sweep(spark, store, doc, *, db_url=None, chunk_runs=DEFAULT_CHUNK_RUNS,
              runs_per_task=DEFAULT_RUNS_PER_TASK, progress=None, limits=None, max_chunks=None):
    """Run (or resume) the sweep ``doc`` into the store. ``store`` is the SQLAlchemy engine of the
    store (its URL gives the JDBC target unless ``db_url`` is given). Returns a summary dict."""
    sweep = spec.validate(doc, limits)
    cells = spec.cells(sweep)
    repo.register(store, sweep, cells, ENGINE_VERSION)
    strays = repo.remove_strays(store, sweep["id"])
    done = repo.done_run_nos(store, sweep["id"])
    todo = planning.plan(sweep, cells, done)
    total = planning.total_runs(sweep, cells)
    jdbc = jdbc_of(db_url or store.url.render_as_string(hide_password=False))
    if not chunk_runs:
        chunk_runs = min(500, max(50, total // 10))
    tracker = Progress(total, len(done), progress)
    tracker.update(len(done))
    started = time.monotonic()
    sc = spark.sparkContext
    payload = sc.broadcast({"cells": {c["cell_id"]: c for c in cells}, "profiles": sweep["fault_profiles"]})
    task = functools.partial(worker.run_broadcast, payload=payload, sweep_id=sweep["id"])
    status, message, chunks_done = "done", None, 0
    repo.set_status(store, sweep["id"], "running")
    try:
        for chunk in planning.chunks(todo, chunk_runs):
            if max_chunks is not None and chunks_done >= max_chunks:
                status = "stopped"
                break
            run_chunk(spark, jdbc, task, chunk, runs_per_task, tracker)
            chunks_done += 1
            tracker.update(repo.count_runs(store, sweep["id"]))
    except BaseException as exc:
        status, message = ("stopped", "interrupted") if isinstance(exc, KeyboardInterrupt) else \
            ("failed", f"{type(exc).__name__}: {exc}"[:2000])
        raise
    finally:
        wall = (time.monotonic() - started) * 1000
        final = repo.set_status(store, sweep["id"], status, message, add_wall_ms=wall)
        payload.unpersist()
    return {"sweep_id": sweep["id"], "runs_total": total, "runs_done": final, "runs_new": final - len(done),
            "strays_removed": strays, "status": status, "wall_s": round(wall / 1000, 3)}


def run_chunk(spark, jdbc, task, chunk, runs_per_task, tracker):
    sc = spark.sparkContext
    n_tasks = max(1, -(-len(chunk) // runs_per_task))
    results = sc.parallelize(chunk, n_tasks).mapPartitions(task)
    df = spark.createDataFrame(results, RESULT_SCHEMA, verifySchema=False).persist()
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_tasks, args=(sc, tracker, tracker.done, len(chunk), n_tasks, stop),
                               daemon=True)
    watcher.start()
    try:
        df.count()   # simulate the chunk in parallel (and cache it) before any single-writer step
    finally:
        stop.set()
        watcher.join()
    try:
        write_table(events_of(df), jdbc, "sweep_events")
        write_table(latency_of(df), jdbc, "sweep_latency")
        write_table(runs_of(df), jdbc, "sweep_runs")   # last: a stored run row means a complete run
    finally:
        df.unpersist()


def events_of(df):
    from pyspark.sql import functions as F
    return (df.select(F.col("run.sweep_id").alias("sweep_id"), F.col("run.run_no").alias("run_no"),
                      F.explode("events").alias("e"))
            .select("sweep_id", "run_no", "e.*"))


def latency_of(df):
    from pyspark.sql import functions as F
    return (df.select(F.col("run.sweep_id").alias("sweep_id"), F.col("run.run_no").alias("run_no"),
                      F.explode("latency").alias("h"))
            .select("sweep_id", "run_no", "h.bucket_ms", "h.count"))


def runs_of(df):
    return df.select("run.*")
