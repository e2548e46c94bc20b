"""The analysis job: extract (JDBC) -> transform (pure DataFrame functions) -> load (the store's
result tables, optionally Parquet)."""
import time

from sqlalchemy import select

from app.spark.jdbc import jdbc_of
from app.store.db import reading
from app.sweeps.tables import sweeps

from . import extract as ex
from . import load, transforms


def all_sweep_ids(store):
    with reading(store) as conn:
        return [s for (s,) in conn.execute(select(sweeps.c.id).where(sweeps.c.runs_done > 0).order_by(sweeps.c.id))]


def analyze(spark, store, sweep_ids=None, parquet=None, db_url=None):
    """Analyse the sweeps (all with runs by default) and replace their results. Returns a summary
    with the rows written and the time of each step."""
    timings = {}
    started = time.monotonic()
    sweep_ids = list(sweep_ids) if sweep_ids else all_sweep_ids(store)
    if not sweep_ids:
        return {"sweeps": [], "rows": {}, "timings_s": {}}
    jdbc = jdbc_of(db_url or store.url.render_as_string(hide_password=False))
    facts = ex.extract(spark, store, jdbc, sweep_ids)
    # co-partition the facts by run once: the per-run windows and joins then need no shuffle
    parts = int(spark.conf.get("spark.sql.shuffle.partitions"))
    runs = facts["runs"].repartition(parts, "sweep_id", "run_no").cache()
    events = facts["events"].repartition(parts, "sweep_id", "run_no").cache()
    latency = facts["latency"].repartition(parts, "sweep_id", "run_no").cache()
    n_events = events.count()
    runs.count()
    latency.count()
    timings["extract"] = time.monotonic() - started
    t = time.monotonic()
    results = transforms.analyse(runs, events, latency)
    cached = results.pop("_cached")
    counts = load.replace_results(store, sweep_ids, results)
    timings["transform_load"] = time.monotonic() - t
    if parquet:
        t = time.monotonic()
        load.write_parquet(results, parquet)
        timings["parquet"] = time.monotonic() - t
    for df in [runs, events, latency] + cached:
        df.unpersist()
    timings["total"] = time.monotonic() - started
    return {"sweeps": sweep_ids, "runs": facts["n_runs"], "events": n_events, "rows": counts,
            "timings_s": {k: round(v, 3) for k, v in timings.items()}}
