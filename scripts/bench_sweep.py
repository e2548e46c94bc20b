#!/usr/bin/env python
"""Benchmark of a sweep: Spark (local[*], or --master) against plain worker processes.

    .venv/bin/python scripts/bench_sweep.py                   # 10,000 runs, Spark then processes
    .venv/bin/python scripts/bench_sweep.py --runs 400        # a quick check
    .venv/bin/python scripts/bench_sweep.py --mode spark --db sqlite:////tmp/bench.db --keep

The workload: a 3-broker cluster, one topic of 3 partitions at RF 3, a producer at 100 records/s
with acks=all, 60 simulated seconds, the default fault profile (fault phase 1..36 s, then healing),
on a grid of kafka_version ("0.10", "2.6") x min.insync.replicas (1, 2), runs/4 seeds per cell.

Both modes run the same per-run function (``app.sweeps.worker.simulate``) and store the same rows
in a fresh SQLite store (Spark: through JDBC, one writer; processes: the parent writes with
SQLAlchemy), so the difference is Spark's overhead. Prints one JSON document: wall time, runs/s,
the engine's CPU per run (measured inside each run), the machine's load average (other work on
the machine slows both modes), and the overhead ratio.
"""
import argparse
import json
import multiprocessing
import os
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


def tree_cpu_s():
    """CPU seconds (user + system) of this process and every live descendant, including the
    children they have reaped (e.g. Spark's Python workers, reaped by pyspark.daemon)."""
    tick = os.sysconf("SC_CLK_TCK")
    children = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append((int(pid), fields))
    me = os.getpid()
    with open(f"/proc/{me}/stat") as handle:
        mine = handle.read().rsplit(")", 1)[1].split()
    total = int(mine[11]) + int(mine[12])          # utime, stime of this process
    stack = [me]
    while stack:
        for pid, fields in children.get(stack.pop(), []):
            total += sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
            stack.append(pid)
    return round(total / tick, 1)


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


def bench_spark(doc, url, master, chunk_runs, runs_per_task):
    from app.spark.session import build_session
    from app.store import db
    from app.sweeps import execute
    store = db.open_store(url)
    t0 = time.monotonic()
    spark = build_session(master, app_name="isrlab-bench")
    session_s = time.monotonic() - t0
    session_cpu = tree_cpu_s()        # the JVM's start: paid once per session, not per run
    last = [0.0]

    def progress(p):
        now = time.monotonic()
        if now - last[0] > 30 or p["done"] == p["total"]:
            last[0] = now
            print(f"  spark: {p['done']}/{p['total']} runs, {p['rate_per_s']:.2f}/s, "
                  f"eta {p['eta_s'] or 0:.0f} s, load {load_average()}", file=sys.stderr, flush=True)
    t1 = time.monotonic()
    summary = execute.run_sweep(spark, store, doc, chunk_runs=chunk_runs, runs_per_task=runs_per_task,
                                progress=progress)
    sweep_s = time.monotonic() - t1
    cpu = tree_cpu_s()
    spark.stop()
    out = {"mode": "spark", "master": master or "local[*]", "session_start_s": round(session_s, 1),
           "sweep_wall_s": round(sweep_s, 1), "total_wall_s": round(session_s + sweep_s, 1),
           "runs_per_s": round(summary["runs_new"] / sweep_s, 2), "load_average_after": load_average(),
           "cpu_s_all_processes": cpu, "cpu_s_session_start": session_cpu,
           "cpu_s_sweep": round(cpu - session_cpu, 1), **stored_stats(store)}
    store.dispose()
    return out


_CELLS = None


def _init(cells, profiles, sweep_id):
    global _CELLS
    from engine.cli import tune_gc
    tune_gc()
    _CELLS = (cells, profiles, sweep_id)


def _simulate(row):
    from app.sweeps import worker
    cells, profiles, sweep_id = _CELLS
    cell = cells[row[2]]
    return worker.simulate(row, cell, profiles[cell["profile"]], sweep_id)


def bench_processes(doc, url, workers, chunk_runs):
    """The same runs in a multiprocessing pool; the parent stores the rows with SQLAlchemy."""
    from sqlalchemy import insert

    from app.store import db
    from app.sweeps import plan, repo, spec, worker
    from app.sweeps.tables import sweep_events, sweep_latency, sweep_runs
    from engine.simulation import ENGINE_VERSION
    store = db.open_store(url)
    t0 = time.monotonic()
    sweep = spec.validate(doc)
    cells = spec.cells(sweep)
    repo.register(store, sweep, cells, ENGINE_VERSION)
    rows = plan.plan(sweep, cells, repo.done_run_nos(store, sweep["id"]))
    by_id = {c["cell_id"]: c for c in cells}
    done = 0
    last = time.monotonic()
    with multiprocessing.get_context("fork").Pool(workers, _init, (by_id, sweep["fault_profiles"], sweep["id"])) as pool:
        for chunk in plan.chunks(rows, chunk_runs):
            results = pool.map(_simulate, chunk, chunksize=5)
            run_rows, event_rows, latency_rows = [], [], []
            for run, events, hist in results:
                r = dict(zip(worker.RUN_FIELDS, run))
                run_rows.append(r)
                event_rows += [{"sweep_id": r["sweep_id"], "run_no": r["run_no"], **dict(zip(worker.EVENT_FIELDS, e))}
                               for e in events]
                latency_rows += [{"sweep_id": r["sweep_id"], "run_no": r["run_no"], "bucket_ms": b, "count": c}
                                 for b, c in hist]
            with db.writing(store) as conn:
                for table, batch in ((sweep_events, event_rows), (sweep_latency, latency_rows), (sweep_runs, run_rows)):
                    if batch:
                        conn.execute(insert(table), batch)
            done += len(chunk)
            if time.monotonic() - last > 30:
                last = time.monotonic()
                print(f"  processes: {done}/{len(rows)} runs, load {load_average()}", file=sys.stderr, flush=True)
        cpu = tree_cpu_s()
    repo.set_status(store, sweep["id"], "done")
    wall = time.monotonic() - t0
    out = {"mode": "processes", "workers": workers, "total_wall_s": round(wall, 1), "sweep_wall_s": round(wall, 1),
           "runs_per_s": round(len(rows) / wall, 2), "load_average_after": load_average(),
           "cpu_s_all_processes": cpu, "cpu_s_sweep": cpu, **stored_stats(store)}
    store.dispose()
    return out


def run_mode(mode, args, doc, folder):
    """One mode in a fresh child process. Besides wall time (which depends on what else the
    machine runs) each mode reports the CPU time of its whole process tree (the JVM and Python
    workers included), which much less so."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--inner", mode, "--runs", str(args.runs),
           "--chunk-runs", str(args.chunk_runs), "--runs-per-task", str(args.runs_per_task),
           "--workers", str(args.workers), "--folder", folder]
    if args.master:
        cmd += ["--master", args.master]
    if args.db and mode == "spark":
        cmd += ["--db", args.db]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--mode", choices=("spark", "processes", "both"), default="both")
    parser.add_argument("--master", help="Spark master URL (default local[*])")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="worker processes (baseline)")
    parser.add_argument("--chunk-runs", type=int, default=500)
    parser.add_argument("--runs-per-task", type=int, default=10)
    parser.add_argument("--db", help="SQLAlchemy URL of the Spark run's store (default: a temporary SQLite file)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary stores")
    parser.add_argument("--inner", choices=("spark", "processes"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    doc = sweep_doc(args.runs, f"bench-{args.runs}")
    if args.inner:
        if args.inner == "spark":
            result = bench_spark(doc, args.db or f"sqlite:///{args.folder}/spark.db", args.master, args.chunk_runs,
                                 args.runs_per_task)
        else:
            result = bench_processes(doc, f"sqlite:///{args.folder}/processes.db", args.workers, args.chunk_runs)
        print(json.dumps(result))
        return 0
    folder = tempfile.mkdtemp(prefix="isrlab-bench-")
    report = {"workload": {"runs": max(1, args.runs // 4) * 4, "cluster": "3 brokers, 3 partitions RF 3",
                           "producer": "100 records/s acks=all", "duration_ms": 60000, "faults": "default profile",
                           "grid": doc["grid"]},
              "machine": {"cpus": os.cpu_count(), "load_average_before": load_average()}, "results": []}
    modes = ["spark", "processes"] if args.mode == "both" else [args.mode]
    for mode in modes:
        report["results"].append(run_mode(mode, args, doc, folder))
    if args.mode in ("spark", "both"):
        report["spark_store"] = args.db or f"sqlite:///{folder}/spark.db"
    if len(report["results"]) == 2:
        spark, procs = report["results"]
        report["spark_overhead"] = {
            "wall_ratio_spark_over_processes": round(spark["total_wall_s"] / procs["total_wall_s"], 3),
            "wall_ratio_excluding_session_start": round(spark["sweep_wall_s"] / procs["sweep_wall_s"], 3),
            "cpu_ratio_spark_over_processes": round(spark["cpu_s_all_processes"] / procs["cpu_s_all_processes"], 3),
            "spark_extra_cpu_s_per_run": round((spark["cpu_s_all_processes"] - procs["cpu_s_all_processes"])
                                               / spark["runs"], 4),
            # what a run costs on Spark beyond the engine, once the session is up (the target: <= 0.02)
            "spark_extra_cpu_s_per_run_excluding_session_start": round(
                (spark["cpu_s_sweep"] - procs["cpu_s_sweep"]) / spark["runs"], 4),
            "cpu_ratio_excluding_session_start": round(spark["cpu_s_sweep"] / procs["cpu_s_sweep"], 3)}
    for r in report["results"]:
        # CPU of the mode's whole process tree per run, and what of it is not the engine's own
        # (measured inside each run): Spark's or the pool's overhead, nearly independent of load
        r["cpu_s_per_run"] = round(r["cpu_s_sweep"] / max(r["runs"], 1), 4)
        r["overhead_cpu_s_per_run"] = round((r["cpu_s_sweep"] - r["engine_cpu_s"]) / max(r["runs"], 1), 4)
    cpu_per_run = max(r["engine_cpu_ms_per_run"] for r in report["results"]) / 1000
    report["engine_bound_minimum_for_10000_runs_s"] = round(10_000 * cpu_per_run / (os.cpu_count() or 2))
    print(json.dumps(report, indent=2))
    if not args.keep and not args.db:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
