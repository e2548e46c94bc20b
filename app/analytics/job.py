"""The analysis job: extract (JDBC) -> transform (pure DataFrame functions) -> load (the store's
result tables, optionally Parquet)."""
import time
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import functions as F
from sqlalchemy import select

from app.spark.jdbc import jdbc_of
from app.spark.session import sql_conf
from app.store.db import reading
from app.sweeps.tables import sweeps

from . import extract as ex
from . import load, transforms


def all_sweep_ids(store):
    with reading(store) as conn:
        return [s for (s,) in conn.execute(select(sweeps.c.id).where(sweeps.c.runs_done > 0).order_by(sweeps.c.id))]


def _materialise(runs, events, latency):
    """Fill the caches of the facts in one Spark job; returns the event rows read."""
    one = F.lit(1).alias("n")
    counts = (runs.select(F.lit("runs").alias("t"), one).unionByName(events.select(F.lit("events").alias("t"), one))
              .unionByName(latency.select(F.lit("latency").alias("t"), one)).groupBy("t").count().collect())
    return {row["t"]: row["count"] for row in counts}.get("events", 0)


def analyze(spark, store, sweep_ids=None, parquet=None, db_url=None):
    """Analyse the sweeps (all with runs by default) and replace their results. Returns a summary
    with the rows written and the time of each step.

    The facts are read from the store once (partitioned JDBC reads of what the analysis uses,
    see ``extract``), by one job that fills their caches while the driver builds the plan, and
    every result table is computed by one action (``load.collect_tables``), with adaptive
    execution off: AQE submits a job per shuffle stage, which for this plan of ~25 small stages
    cost more scheduling than it saved. Result rows are tiny, so the one collect is cheap."""
    timings = {}
    started = time.monotonic()
    sweep_ids = list(sweep_ids) if sweep_ids else all_sweep_ids(store)
    if not sweep_ids:
        return {"sweeps": [], "rows": {}, "timings_s": {}}
    jdbc = jdbc_of(db_url or store.url.render_as_string(hide_password=False))
    facts = ex.extract(spark, store, jdbc, sweep_ids)
    # co-partition the facts by run once: the per-run windows and joins then need no shuffle;
    # cached, so the store is read once whatever the plan scans them for. One partition per core:
    # the plan has ~25 small stages, and more partitions only add tasks to schedule.
    parts = max(2, spark.sparkContext.defaultParallelism)
    with sql_conf(spark, **{"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": str(parts)}):
        runs, events = (facts[name].repartition(parts, *transforms.RUN_KEY).cache() for name in ("runs", "events"))
        latency = facts["cell_latency"].cache()
        # read the store into the cache while this thread builds the plan: in a fresh JVM the
        # DataFrame calls and planning below take ~15 s of driver time, as long as the reads
        with ThreadPoolExecutor(1) as pool:
            loading = pool.submit(_materialise, runs, events, latency)
            results = transforms.analyse(runs, events, latency, cache=False,
                                         kafka_metrics=facts["kafka_metrics"])
            results.pop("_cached")
            frames = load.result_frames(results)
            union = load.tagged_union(frames)
            n_events = loading.result()
        collected = load.collect_union(union, frames)
        timings["extract_transform"] = time.monotonic() - started
        t = time.monotonic()
        counts = load.replace_results(store, sweep_ids, collected)
        timings["load"] = time.monotonic() - t
        if parquet:
            t = time.monotonic()
            load.write_parquet(results, parquet)
            timings["parquet"] = time.monotonic() - t
    for df in (runs, events, latency):
        df.unpersist()
    timings["total"] = time.monotonic() - started
    return {"sweeps": sweep_ids, "runs": facts["n_runs"], "events_read": n_events, "rows": counts,
            "timings_s": {k: round(v, 3) for k, v in timings.items()}}
