#!/usr/bin/env python
"""Benchmark of the analysis: Spark (JVM start included) against a single-process engine
(DuckDB) computing the same headline aggregation from the same SQLite store.

    .venv/bin/pip install -r requirements-bench.txt           # DuckDB and its sqlite extension
    .venv/bin/python scripts/bench_analysis.py --db sqlite:////tmp/bench.db [--sweep ID]

The store is one written by scripts/bench_sweep.py (``--db URL --mode spark``) or by
``python -m app sweep``. Measured, each in its own fresh state:

* Spark, in a fresh JVM as a user runs it: session start (the JVM), the whole analysis job
  (``job.analyze``: every result table, written back to the store), then in the warm JVM the
  headline aggregation (``transforms.headline``: per cell runs, runs losing acknowledged records
  with the Wilson interval, lost records per run, ISR churn, NOT_ENOUGH_REPLICAS rate, produce
  latency p50/p99) read through JDBC;
* DuckDB: the same headline aggregation as one SQL query over the SQLite file (its sqlite
  extension), in this process.

Both answers are compared (they must agree) and the times printed as JSON with their ratio.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

HEADLINE_SQL = """
WITH ok AS (SELECT sweep_id, run_no, cell_id, lost, records_sent FROM s.sweep_runs
            WHERE status = 'ok' AND sweep_id = $sweep),
churn AS (SELECT sweep_id, run_no, count(*) AS churn FROM s.sweep_events
          WHERE type IN ('isr_shrink', 'isr_expand') AND sweep_id = $sweep GROUP BY 1, 2),
ner AS (SELECT sweep_id, run_no, sum("count") AS ner FROM s.sweep_events
        WHERE type = 'produce_error' AND kind IN ('NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND')
          AND sweep_id = $sweep GROUP BY 1, 2),
per_run AS (SELECT ok.*, coalesce(churn.churn, 0) AS churn, coalesce(ner.ner, 0) AS ner FROM ok
            LEFT JOIN churn USING (sweep_id, run_no) LEFT JOIN ner USING (sweep_id, run_no)),
agg AS (SELECT sweep_id, cell_id, count(*) AS runs, sum(CASE WHEN lost > 0 THEN 1 ELSE 0 END) AS runs_lost,
               sum(lost)::DOUBLE / count(*) AS lost_mean, sum(churn)::DOUBLE / count(*) AS isr_churn_mean,
               sum(ner)::DOUBLE / sum(records_sent) AS ner_rate
        FROM per_run GROUP BY 1, 2),
lat AS (SELECT l.sweep_id, ok.cell_id, l.bucket_ms, sum(l."count") AS n FROM s.sweep_latency l
        JOIN ok USING (sweep_id, run_no) GROUP BY 1, 2, 3),
cum AS (SELECT *, sum(n) OVER (PARTITION BY sweep_id, cell_id ORDER BY bucket_ms ROWS UNBOUNDED PRECEDING) AS cum,
               sum(n) OVER (PARTITION BY sweep_id, cell_id) AS total FROM lat),
pct AS (SELECT sweep_id, cell_id, min(CASE WHEN cum >= total * 0.5 THEN bucket_ms END)::DOUBLE AS latency_p50_ms,
               min(CASE WHEN cum >= total * 0.99 THEN bucket_ms END)::DOUBLE AS latency_p99_ms
        FROM cum GROUP BY 1, 2),
w AS (SELECT *, runs_lost::DOUBLE / runs AS p, 1 + 1.96 * 1.96 / runs AS denom FROM agg)
SELECT w.sweep_id, w.cell_id, runs, runs_lost, p AS p_loss,
       greatest(0.0, (p + 1.96 * 1.96 / (2 * runs)) / denom
                - 1.96 * sqrt(p * (1 - p) / runs + 1.96 * 1.96 / (4 * runs * runs)) / denom) AS p_loss_lo,
       least(1.0, (p + 1.96 * 1.96 / (2 * runs)) / denom
             + 1.96 * sqrt(p * (1 - p) / runs + 1.96 * 1.96 / (4 * runs * runs)) / denom) AS p_loss_hi,
       lost_mean, isr_churn_mean, ner_rate, latency_p50_ms, latency_p99_ms
FROM w LEFT JOIN pct USING (sweep_id, cell_id) ORDER BY w.cell_id
"""


def duckdb_connection():
    """DuckDB with its sqlite extension loaded from the duckdb-extension-sqlite wheel (no download)."""
    import duckdb
    import duckdb_extension_sqlite
    folder = os.path.join(os.path.dirname(duckdb_extension_sqlite.__file__), "extensions", f"v{duckdb.__version__}")
    source = os.path.join(folder, "sqlite.duckdb_extension")
    target_dir = tempfile.mkdtemp(prefix="isrlab-duckdb-")
    target = os.path.join(target_dir, "sqlite_scanner.duckdb_extension")   # the name decides the entry point
    shutil.copyfile(source, target)
    conn = duckdb.connect()
    conn.execute(f"LOAD '{target}'")
    return conn


def bench_duckdb(path, sweep_id):
    t0 = time.monotonic()
    conn = duckdb_connection()
    conn.execute(f"ATTACH '{path}' AS s (TYPE sqlite, READ_ONLY)")
    t1 = time.monotonic()
    cursor = conn.execute(HEADLINE_SQL, {"sweep": sweep_id})
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, r)) for r in cursor.fetchall()]
    t2 = time.monotonic()
    conn.close()
    return {"engine": "duckdb (one process)", "connect_s": round(t1 - t0, 3), "headline_s": round(t2 - t1, 3),
            "total_s": round(t2 - t0, 3)}, rows


def bench_spark(url, sweep_id, master):
    """In a fresh JVM, as a user runs it: session start, then the whole analysis job
    (``job.analyze``: every result table, written back to the store); then, in that now warm JVM,
    the headline aggregation (``transforms.headline`` over the facts read through JDBC); each
    with the Spark jobs, stages and tasks it ran (``app.spark.work``)."""
    t0 = time.monotonic()
    from app.analytics import extract, job, transforms
    from app.spark import class_archive
    from app.spark.jdbc import jdbc_of
    from app.spark.session import build_session, jdbc_jars, sql_conf
    from app.spark.work import SparkWork
    from app.store import db
    spark = build_session(master, app_name="isrlab-bench-analysis")
    jvm_args = str(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                   .getInputArguments())
    t1 = time.monotonic()
    store = db.open_store(url)
    with SparkWork(spark) as full_work:
        full = job.analyze(spark, store, [sweep_id])
    t2 = time.monotonic()
    with SparkWork(spark) as headline_work, sql_conf(spark, **{"spark.sql.adaptive.enabled": "false"}):
        facts = extract.extract(spark, store, jdbc_of(url), [sweep_id])
        cached = [facts[k].cache() for k in ("runs", "events", "cell_latency")]
        rows = [r.asDict() for r in transforms.headline(*cached).orderBy("cell_id").collect()]
        for df in cached:
            df.unpersist()
    t3 = time.monotonic()
    work = {"headline": headline_work.summary(), "full": full_work.summary()}   # before stop()
    spark.stop()
    store.dispose()
    archive = class_archive.archive_path(jdbc_jars())
    return {"engine": f"spark ({master or 'local[*]'})",
            "jvm": {"jit": "C1 only" if "TieredStopAtLevel=1" in jvm_args else "tiered C2",
                    "class_archive": archive if "SharedArchiveFile" in jvm_args else None},
            "session_start_s": round(t1 - t0, 3),
            "full_analysis_s": round(t2 - t1, 3), "full_analysis_incl_jvm_start_s": round(t2 - t0, 3),
            "full_analysis_spark_work": work["full"], "full_analysis_steps_s": full["timings_s"],
            "headline_after_analysis_s": round(t3 - t2, 3), "headline_spark_work": work["headline"],
            "runs": full["runs"], "events_read": full["events_read"], "result_rows": full["rows"]}, rows


def replicate(url, sweep_id, times):
    """A copy of the sweep's facts ``times`` over, renumbered, as sweep ``<id>-x<times>``: the
    volume of a bigger sweep for timing the aggregation (the answers are those of the original
    runs, each counted ``times`` times). Returns the new sweep id."""
    from sqlalchemy import text

    from app.store import db
    new = f"{sweep_id}-x{times}"[:40]
    store = db.open_store(url)
    with db.writing(store) as conn:
        if conn.execute(text("SELECT COUNT(*) FROM sweeps WHERE id = :n"), {"n": new}).scalar_one():
            return new
        span = conn.execute(text("SELECT MAX(run_no) + 1 FROM sweep_runs WHERE sweep_id = :s"), {"s": sweep_id}).scalar_one()
        conn.execute(text("INSERT INTO sweeps SELECT :n, name || ' (replicated)', description, doc_json, doc_sha256, "
                          "engine_version, cells, runs_total * :k, runs_done * :k, status, message, created_ms, "
                          "updated_ms, wall_ms FROM sweeps WHERE id = :s"), {"n": new, "k": times, "s": sweep_id})
        conn.execute(text("INSERT INTO sweep_cells SELECT :n, cell_id, settings_json, label, profile, kafka_version "
                          "FROM sweep_cells WHERE sweep_id = :s"), {"n": new, "s": sweep_id})
        cols = [r[1] for r in conn.execute(text("PRAGMA table_info(sweep_runs)"))]
        for k in range(times):
            select_cols = ", ".join(
                {"run_key": f"printf('r%02d', {k}) || substr(run_key, 4)", "sweep_id": ":n",
                 "run_no": f"run_no + {k * span}"}.get(c, f'"{c}"') for c in cols)
            conn.execute(text(f"INSERT INTO sweep_runs SELECT {select_cols} FROM sweep_runs WHERE sweep_id = :s"),
                         {"n": new, "s": sweep_id})
            for table in ("sweep_events", "sweep_latency"):
                tcols = [r[1] for r in conn.execute(text(f"PRAGMA table_info({table})"))]
                sel = ", ".join({"sweep_id": ":n", "run_no": f"run_no + {k * span}"}.get(c, f'"{c}"') for c in tcols)
                conn.execute(text(f"INSERT INTO {table} SELECT {sel} FROM {table} WHERE sweep_id = :s"),
                             {"n": new, "s": sweep_id})
    store.dispose()
    return new


def compare(a, b):
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} cells"
    for x, y in zip(a, b):
        for key, value in x.items():
            other = y[key]
            if isinstance(value, float) or isinstance(other, float):
                if value is None or other is None:
                    if value != other:
                        return f"cell {x['cell_id']} {key}: {value} vs {other}"
                elif abs(value - other) > 1e-9 * max(1.0, abs(value)):
                    return f"cell {x['cell_id']} {key}: {value} vs {other}"
            elif value != other:
                return f"cell {x['cell_id']} {key}: {value} vs {other}"
    return "equal"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="SQLAlchemy URL of a SQLite store holding a sweep")
    parser.add_argument("--sweep", help="sweep id (default: the sweep with the most runs)")
    parser.add_argument("--master", help="Spark master URL (default local[*])")
    parser.add_argument("--replicate", type=int, default=1,
                        help="time the aggregation over the sweep's facts copied this many times (renumbered)")
    args = parser.parse_args(argv)
    from sqlalchemy import func, select
    from sqlalchemy.engine import make_url

    from app.store import db
    from app.sweeps.tables import sweep_runs
    path = make_url(args.db).database
    store = db.open_store(args.db)
    with db.reading(store) as conn:
        if args.sweep:
            sweep_id = args.sweep
        else:
            sweep_id = conn.execute(select(sweep_runs.c.sweep_id).group_by(sweep_runs.c.sweep_id)
                                    .order_by(func.count().desc()).limit(1)).scalar_one()
    store.dispose()
    original = sweep_id
    if args.replicate > 1:
        sweep_id = replicate(args.db, sweep_id, args.replicate)
    store = db.open_store(args.db)
    with db.reading(store) as conn:
        n_runs = conn.execute(select(func.count()).where(sweep_runs.c.sweep_id == sweep_id)).scalar_one()
    store.dispose()
    try:
        duck, duck_rows = bench_duckdb(path, sweep_id)
    except ImportError:
        print("DuckDB is not installed: .venv/bin/pip install -r requirements-bench.txt", file=sys.stderr)
        return 2
    spark, spark_rows = bench_spark(args.db, sweep_id, args.master)
    report = {"sweep": sweep_id, "runs": n_runs,
              "replicated": {"from": original, "times": args.replicate} if args.replicate > 1 else None, "database_mb": round(os.path.getsize(path) / 1e6, 1),
              "load_average": [round(x, 2) for x in os.getloadavg()], "spark": spark, "duckdb": duck,
              "same_answer": compare(spark_rows, duck_rows),
              "ratio_spark_full_analysis_incl_jvm_over_duckdb_headline": round(
                  spark["full_analysis_incl_jvm_start_s"] / duck["total_s"], 1),
              "ratio_spark_headline_warm_over_duckdb": round(spark["headline_after_analysis_s"] / duck["total_s"], 1),
              "headline": spark_rows}
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
