#!/usr/bin/env python
"""Benchmark of a sweep: Spark with and without PyPy workers against a plain process pool.

    .venv/bin/python scripts/bench_sweep.py                   # 1,000 runs, every mode
    .venv/bin/python scripts/bench_sweep.py --large           # 10,000 runs
    .venv/bin/python scripts/bench_sweep.py --runs 200 --mode spark-pypy --keep

The workload: a 3-broker cluster, one topic of 3 partitions at RF 3, a producer at 100 records/s
with acks=all, 60 simulated seconds, the default fault profile (fault phase 1..36 s, then healing),
on a grid of kafka_version ("0.10", "2.6") x min.insync.replicas (1, 2), runs/4 seeds per cell.

Modes, each in a fresh child process with a fresh SQLite store: ``spark`` (``local[*]`` or
``--master``; runs simulated in the executors' CPython), ``spark-pypy`` (each executor hands its
runs to a ``pypy3 -m engine worker`` process), ``processes`` (the floor: the same runs in a
``multiprocessing`` pool, CPython, the parent storing the same batches). All of them store
through ``app.sweeps.rows``, so the differences are Spark's cost and PyPy's gain. Prints one JSON
document: per mode wall time, runs/s, the CPU seconds of every process involved (driver, JVM,
Python workers, PyPy workers) per run, the engine's own CPU per run (measured inside each run),
the machine's load average (other work slows every mode's wall time; CPU time much less), a
digest of the stored rows (equal in every mode: the same results), and the ratios.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def sweep_doc(runs, sweep_id):
    per_cell = max(1, runs // 4)
    return {"id": sweep_id, "name": f"bench: {per_cell * 4} runs",
            "base": {"brokers": 3, "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
                     "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 100}],
                     "duration_ms": 60000},
            "grid": {"kafka_version": ["0.10", "2.6"], "min.insync.replicas": [1, 2]},
            "faults": "default", "seeds": per_cell}


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def tree_cpu_s(by_kind=False):
    """CPU seconds (user + system) of this process and every live descendant, including the
    children they have reaped (e.g. Spark's Python workers, reaped by pyspark.daemon). With
    ``by_kind``: also split into this process (the driver), the JVM, PyPy workers and other
    Python processes (Spark's Python workers, or the pool's)."""
    tick = os.sysconf("SC_CLK_TCK")
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as handle:
                name, rest = handle.read().split(" (", 1)[1].rsplit(")", 1)
        except (OSError, IndexError, ValueError):
            continue
        fields = rest.split()
        children.setdefault(int(fields[1]), []).append((int(pid), name, fields))
    me = os.getpid()
    with open(f"/proc/{me}/stat") as handle:
        mine = handle.read().rsplit(")", 1)[1].split()
    kinds = {"driver": sum(int(x) for x in mine[11:15])}   # utime stime cutime cstime
    stack = [me]
    while stack:
        for pid, name, fields in children.get(stack.pop(), []):
            kind = "jvm" if name == "java" else "pypy_workers" if name.startswith("pypy") else "python_workers"
            kinds[kind] = kinds.get(kind, 0) + sum(int(x) for x in fields[11:15])
            stack.append(pid)
    total = round(sum(kinds.values()) / tick, 1)
    return (total, {k: round(v / tick, 1) for k, v in kinds.items()}) if by_kind else total


def stored_stats(store):
    from sqlalchemy import func, select

    from app.store.db import reading
    from app.sweeps.tables import sweep_events, sweep_runs
    with reading(store) as conn:
        n, cpu, lost = conn.execute(select(func.count(), func.sum(sweep_runs.c.cpu_ms),
                                           func.sum(func.coalesce(sweep_runs.c.lost, 0)))).one()
        events = conn.execute(select(func.count()).select_from(sweep_events)).scalar_one()
    return {"runs": n, "engine_cpu_s": round((cpu or 0) / 1000, 1),
            "engine_cpu_ms_per_run": round((cpu or 0) / max(n, 1), 1), "events_stored": events,
            "lost_records": int(lost or 0)}


def stored_digest(store):
    """SHA-256 of every stored row of the sweep but the measured ``cpu_ms``: equal digests, equal
    results."""
    import hashlib

    from sqlalchemy import select

    from app.store.db import reading
    from app.sweeps.tables import sweep_events, sweep_latency, sweep_runs
    digest = hashlib.sha256()
    with reading(store) as conn:
        for table, order in ((sweep_runs, "run_no"), (sweep_events, ("run_no", "seq")),
                             (sweep_latency, ("run_no", "bucket_ms"))):
            cols = [c for c in table.c if c.name != "cpu_ms"]
            keys = [table.c[k] for k in ((order,) if isinstance(order, str) else order)]
            for row in conn.execute(select(*cols).order_by(*keys)):
                digest.update(repr(tuple(row)).encode())
    return digest.hexdigest()[:16]


def progress_printer(mode):
    last = [0.0]

    def progress(p):
        now = time.monotonic()
        if now - last[0] > 30 or p["done"] == p["total"]:
            last[0] = now
            print(f"  {mode}: {p['done']}/{p['total']} runs, {p['rate_per_s']:.2f}/s, "
                  f"eta {p['eta_s'] or 0:.0f} s, load {load_average()}", file=sys.stderr, flush=True)
    return progress


def bench_spark(doc, url, master, pypy, chunk_runs, runs_per_task):
    from app.spark.session import build_session
    from app.store import db
    from app.sweeps import execute
    store = db.open_store(url)
    t0 = time.monotonic()
    spark = build_session(master, app_name="isrlab-bench")
    session_s = time.monotonic() - t0
    session_cpu = tree_cpu_s()        # the JVM's start: paid once per session, not per run
    mode = "spark-pypy" if pypy != "off" else "spark"
    t1 = time.monotonic()
    summary = execute.run_sweep(spark, store, doc, chunk_runs=chunk_runs, runs_per_task=runs_per_task,
                                pypy=pypy, progress=progress_printer(mode))
    sweep_s = time.monotonic() - t1
    cpu, cpu_by_kind = tree_cpu_s(by_kind=True)
    spark.stop()
    out = {"mode": mode, "master": master or "local[*]", "session_start_s": round(session_s, 1),
           "sweep_wall_s": round(sweep_s, 1), "total_wall_s": round(session_s + sweep_s, 1),
           "runs_per_s": round(summary["runs_new"] / sweep_s, 3), "load_average_after": load_average(),
           "cpu_s_all_processes": cpu, "cpu_s_session_start": session_cpu,
           "cpu_s_sweep": round(cpu - session_cpu, 1), "cpu_s_by_process": cpu_by_kind, **stored_stats(store),
           "rows_digest": stored_digest(store)}
    store.dispose()
    return out


_CELLS = None


def _init(cells, profiles, sweep_id):
    global _CELLS
    _CELLS = (cells, profiles, sweep_id)


def _simulate(rows):
    from app.sweeps import worker
    return list(worker.run_in_process(rows, *_CELLS))


def bench_processes(doc, url, workers, chunk_runs, runs_per_task):
    """The same runs in a multiprocessing pool (CPython); the parent stores the same batches."""
    from app.store import db
    from app.sweeps import execute, plan, repo, rows, spec
    from engine.simulation import ENGINE_VERSION
    store = db.open_store(url)
    t0 = time.monotonic()
    sweep = spec.validate(doc)
    cells = spec.cells(sweep)
    repo.register(store, sweep, cells, ENGINE_VERSION)
    todo = plan.plan(sweep, cells, repo.done_run_nos(store, sweep["id"]))
    chunk_runs, runs_per_task = execute.sizes(len(todo), workers, chunk_runs, runs_per_task)
    by_id = {c["cell_id"]: c for c in cells}
    progress = execute.Progress(len(todo), 0, progress_printer("processes"))
    with multiprocessing.get_context("fork").Pool(workers, _init, (by_id, sweep["fault_profiles"], sweep["id"])) as pool:
        for chunk in plan.chunks(todo, chunk_runs):
            batches = pool.map(_simulate, list(plan.chunks(chunk, runs_per_task)))
            rows.store_batch(store, [line for batch in batches for line in batch])
            progress.update(progress.done + len(chunk))
        cpu, cpu_by_kind = tree_cpu_s(by_kind=True)
    repo.set_status(store, sweep["id"], "done")
    wall = time.monotonic() - t0
    out = {"mode": "processes", "workers": workers, "total_wall_s": round(wall, 1), "sweep_wall_s": round(wall, 1),
           "runs_per_s": round(len(todo) / wall, 3), "load_average_after": load_average(),
           "cpu_s_all_processes": cpu, "cpu_s_sweep": cpu, "cpu_s_by_process": cpu_by_kind, **stored_stats(store),
           "rows_digest": stored_digest(store)}
    store.dispose()
    return out


def run_mode(mode, args, doc, folder):
    """One mode in a fresh child process; prints its result as JSON."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--inner", mode, "--runs", str(args.runs),
           "--workers", str(args.workers), "--folder", folder]
    for flag, value in (("--chunk-runs", args.chunk_runs), ("--runs-per-task", args.runs_per_task),
                        ("--master", args.master)):
        if value:
            cmd += [flag, str(value)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)


def ratios(results):
    """Each Spark mode against the pool (the floor), and PyPy's gain on Spark."""
    by_mode = {r["mode"]: r for r in results}
    out = {}
    floor = by_mode.get("processes")
    for mode in ("spark", "spark-pypy"):
        r = by_mode.get(mode)
        if r and floor:
            out[f"{mode}_vs_processes"] = {
                "runs_per_s_ratio": round(r["runs_per_s"] / floor["runs_per_s"], 3),
                "cpu_ratio_excluding_session_start": round(r["cpu_s_sweep"] / floor["cpu_s_sweep"], 3),
                # what a run costs on Spark beyond the same run in the pool, once the session is up
                "extra_cpu_s_per_run_excluding_session_start": round(
                    r["cpu_s_per_run"] - floor["cpu_s_per_run"], 4)}
    if "spark" in by_mode and "spark-pypy" in by_mode:
        plain, pypy = by_mode["spark"], by_mode["spark-pypy"]
        out["pypy_gain_on_spark"] = {"runs_per_s": round(pypy["runs_per_s"] / plain["runs_per_s"], 3),
                                     "cpu_s_per_run": round(plain["cpu_s_per_run"] / pypy["cpu_s_per_run"], 3),
                                     "engine_cpu_per_run": round(plain["engine_cpu_ms_per_run"]
                                                                 / pypy["engine_cpu_ms_per_run"], 3)}
    out["same_rows_in_every_mode"] = len({r["rows_digest"] for r in results}) == 1
    return out


MODES = ("spark", "spark-pypy", "processes")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1_000)
    parser.add_argument("--large", action="store_true", help="10,000 runs")
    parser.add_argument("--mode", choices=MODES + ("all",), default="all")
    parser.add_argument("--master", help="Spark master URL (default local[*])")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="worker processes (the floor)")
    parser.add_argument("--chunk-runs", type=int, help="runs per stored batch (default: the sweep's own)")
    parser.add_argument("--runs-per-task", type=int, help="runs per Spark task (default: the sweep's own)")
    parser.add_argument("--keep", action="store_true", help="keep the stores (their folder is printed)")
    parser.add_argument("--inner", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.large:
        args.runs = 10_000
    doc = sweep_doc(args.runs, f"bench-{args.runs}")
    if args.inner:
        url = f"sqlite:///{args.folder}/{args.inner}.db"
        if args.inner == "processes":
            result = bench_processes(doc, url, args.workers, args.chunk_runs, args.runs_per_task)
        else:
            result = bench_spark(doc, url, args.master, "auto" if args.inner == "spark-pypy" else "off",
                                 args.chunk_runs, args.runs_per_task)
        print(json.dumps(result))
        return 0
    if args.mode in ("all", "spark-pypy") and shutil.which("pypy3") is None:
        parser.error("pypy3 is not installed (scripts/setup.sh installs it)")
    folder = tempfile.mkdtemp(prefix="isrlab-bench-")
    report = {"workload": {"runs": max(1, args.runs // 4) * 4, "cluster": "3 brokers, 3 partitions RF 3",
                           "producer": "100 records/s acks=all", "duration_ms": 60000, "faults": "default profile",
                           "grid": doc["grid"]},
              "machine": {"cpus": os.cpu_count(), "load_average_before": load_average()}, "results": []}
    for mode in (MODES if args.mode == "all" else (args.mode,)):
        report["results"].append(run_mode(mode, args, doc, folder))
    for r in report["results"]:
        # CPU of the mode's whole process tree per run, and what of it is not the engine's own
        r["cpu_s_per_run"] = round(r["cpu_s_sweep"] / max(r["runs"], 1), 4)
        r["overhead_cpu_s_per_run"] = round((r["cpu_s_sweep"] - r["engine_cpu_s"]) / max(r["runs"], 1), 4)
    report["ratios"] = ratios(report["results"])
    if args.keep:
        report["stores"] = folder
    print(json.dumps(report, indent=2))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
