"""Extract: the stored facts as DataFrames, read through JDBC with explicit schemas and
partitioned reads (``run_no`` ranges), for one or more sweeps."""
from sqlalchemy import func, select

from app.store.db import reading
from app.sweeps import spec
from app.sweeps.tables import sweep_runs

from app.spark.jdbc import read_table
from app.sweeps.schemas import CELLS_SCHEMA, EVENTS_TABLE_SCHEMA, LATENCY_TABLE_SCHEMA, RUNS_READ_SCHEMA

EVENTS_PER_PARTITION = 250_000    # rows read by one JDBC task, about


def sweep_filter(sweep_ids):
    for sid in sweep_ids:
        if not isinstance(sid, str) or not spec.SWEEP_ID.match(sid):
            raise ValueError(f"{sid!r} is not a sweep id")
    return "sweep_id IN (" + ", ".join(f"'{s}'" for s in sweep_ids) + ")"


def run_bounds(store, sweep_ids):
    with reading(store) as conn:
        lo, hi, n = conn.execute(select(func.min(sweep_runs.c.run_no), func.max(sweep_runs.c.run_no),
                                        func.count()).where(sweep_runs.c.sweep_id.in_(sweep_ids))).one()
    return (lo or 0, hi or 0), n


def extract(spark, store, jdbc, sweep_ids, parallelism=None):
    """``{"runs", "events", "latency", "cells"}`` DataFrames of the given sweeps."""
    where = sweep_filter(sweep_ids)
    bounds, n_runs = run_bounds(store, sweep_ids)
    parallelism = parallelism or spark.sparkContext.defaultParallelism
    # ~60 events and ~40 latency buckets per run: split the big reads, keep the small ones whole
    event_parts = max(1, min(4 * parallelism, n_runs * 60 // EVENTS_PER_PARTITION + 1))
    runs = read_table(spark, jdbc, "sweep_runs", RUNS_READ_SCHEMA, "run_no", bounds,
                      max(1, min(parallelism, n_runs // 5000 + 1)), where)
    events = read_table(spark, jdbc, "sweep_events", EVENTS_TABLE_SCHEMA, "run_no", bounds, event_parts, where)
    latency = read_table(spark, jdbc, "sweep_latency", LATENCY_TABLE_SCHEMA, "run_no", bounds, event_parts, where)
    cells = read_table(spark, jdbc, "sweep_cells", CELLS_SCHEMA, where=where)
    return {"runs": runs, "events": events, "latency": latency, "cells": cells, "n_runs": n_runs}
