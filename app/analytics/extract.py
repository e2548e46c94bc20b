"""Extract: the stored facts as DataFrames, read through JDBC with explicit schemas and
partitioned reads (``run_no`` ranges), for one or more sweeps.

Each stored row is read once, and only what the analysis uses crosses JDBC:

* ``events``: the rows of the event types the transforms read (``transforms.ANALYSED_TYPES``:
  not failed produce requests, controller changes, truncations, session expiries), their columns
  without ``leader_epoch`` and the ``details`` text, with a run's NOT_ENOUGH_REPLICAS answers
  summed by the database into one row per error (``events_query``): 275,604 rows for the
  reference 10,000-run sweep's 1,813,236;
* ``cell_latency``: the produce-latency histogram per cell, summed by the database from the
  ``sweep_latency`` rows of the cell's simulated runs. Every report number that reads latency is
  per cell (percentiles, the histogram), so Spark gets ~1,500 rows for 10,000 runs instead of
  ~1.5 million per-run buckets; ``transforms.cell_latency`` computes the same from per-run rows,
  and a test checks the two agree."""
from sqlalchemy import func, select

from app.store.db import reading
from app.sweeps import spec
from app.sweeps.tables import sweep_runs

from app.spark.jdbc import read_query, read_table
from app.sweeps.schemas import (CELL_LATENCY_SCHEMA, CELLS_SCHEMA, EVENTS_READ_SCHEMA, KAFKA_METRICS_READ_SCHEMA,
                                RUNS_READ_SCHEMA)

from engine.tools.sweep_run import METRICS_TYPE, NER_ERRORS

from .transforms import ANALYSED_TYPES

EVENTS_PER_PARTITION = 250_000    # rows read by one JDBC task, about


def sweep_filter(sweep_ids, column="sweep_id"):
    for sid in sweep_ids:
        if not isinstance(sid, str) or not spec.SWEEP_ID.match(sid):
            raise ValueError(f"{sid!r} is not a sweep id")
    return f"{column} IN (" + ", ".join(f"'{s}'" for s in sweep_ids) + ")"


def run_bounds(store, sweep_ids):
    with reading(store) as conn:
        lo, hi, n = conn.execute(select(func.min(sweep_runs.c.run_no), func.max(sweep_runs.c.run_no),
                                        func.count()).where(sweep_runs.c.sweep_id.in_(sweep_ids))).one()
    return (lo or 0, hi or 0), n


def events_query(sweep_ids):
    """The analysed events, a run's NOT_ENOUGH_REPLICAS answers summed into one row per error.

    Produce errors are most of the stored events (~55 % in the reference sweep), and the
    transforms read nothing of them but the records they answered, summed per run: the database
    sums them (per run and error, at the first one's seq and time), so Spark reads ~one row per
    run instead of ~100."""
    names = [f.name for f in EVENTS_READ_SCHEMA.fields]
    types = ", ".join(f"'{t}'" for t in ANALYSED_TYPES if t != "produce_error")
    ner = ", ".join(f"'{k}'" for k in sorted(NER_ERRORS))
    where = sweep_filter(sweep_ids)
    stored = ", ".join(f'"{name}"' for name in names)
    summed = ", ".join(_summed_error_column(name) for name in names)
    return (f"SELECT {stored} FROM sweep_events WHERE {where} AND type IN ({types}) "
            f"UNION ALL SELECT {summed} FROM sweep_events WHERE {where} "
            f"AND type = 'produce_error' AND kind IN ({ner}) GROUP BY sweep_id, run_no, kind")


#: a run's produce errors of one kind, as one row: the first one's seq and time, the records summed
_ERROR_AGGREGATES = {"seq": 'MIN("seq")', "t_ms": 'MIN("t_ms")', "count": 'SUM("count")', "type": "'produce_error'"}
_ERROR_KEYS = ("sweep_id", "run_no", "kind")


def _summed_error_column(name):
    if name in _ERROR_AGGREGATES:
        return f'{_ERROR_AGGREGATES[name]} AS "{name}"'
    return f'"{name}"' if name in _ERROR_KEYS else f'NULL AS "{name}"'


def cell_latency_query(sweep_ids):
    """Per sweep, cell and bucket: the records of the cell's simulated runs (status ok).

    ``CROSS JOIN`` with the join in WHERE is plain SQL for PostgreSQL, and tells SQLite to loop
    over the runs and range-scan each run's buckets (its primary key), where its own choice
    looked up the run of every latency row: 2 s instead of 4 s for 10,000 runs."""
    return ('SELECT r.sweep_id AS sweep_id, r.cell_id AS cell_id, l.bucket_ms AS bucket_ms, '
            'SUM(l."count") AS "count" FROM sweep_runs r CROSS JOIN sweep_latency l '
            f"WHERE {sweep_filter(sweep_ids, 'r.sweep_id')} AND r.status = 'ok' "
            'AND l.sweep_id = r.sweep_id AND l.run_no = r.run_no '
            'GROUP BY r.sweep_id, r.cell_id, l.bucket_ms')


def kafka_metrics_query(sweep_ids):
    """Each run's Kafka metrics summary: its one kafka_metrics event row (runs stored before the
    metrics existed have none)."""
    return (f"SELECT sweep_id, run_no, details FROM sweep_events WHERE {sweep_filter(sweep_ids)} "
            f"AND type = '{METRICS_TYPE}'")


def extract(spark, store, jdbc, sweep_ids, parallelism=None):
    """``{"runs", "events", "cell_latency", "cells", "kafka_metrics", "n_runs"}`` of the given sweeps."""
    where = sweep_filter(sweep_ids)
    bounds, n_runs = run_bounds(store, sweep_ids)
    parallelism = parallelism or spark.sparkContext.defaultParallelism
    # ~50 analysed events per run: split the big read, keep the small ones whole
    event_parts = max(1, min(4 * parallelism, n_runs * 50 // EVENTS_PER_PARTITION + 1))
    runs = read_table(spark, jdbc, "sweep_runs", RUNS_READ_SCHEMA, "run_no", bounds,
                      max(1, min(parallelism, n_runs // 5000 + 1)), where)
    events = read_query(spark, jdbc, events_query(sweep_ids), EVENTS_READ_SCHEMA, "run_no", bounds, event_parts)
    cell_latency = read_query(spark, jdbc, cell_latency_query(sweep_ids), CELL_LATENCY_SCHEMA)
    cells = read_table(spark, jdbc, "sweep_cells", CELLS_SCHEMA, where=where)
    kafka_metrics = read_query(spark, jdbc, kafka_metrics_query(sweep_ids), KAFKA_METRICS_READ_SCHEMA)
    return {"runs": runs, "events": events, "cell_latency": cell_latency, "cells": cells,
            "kafka_metrics": kafka_metrics, "n_runs": n_runs}
