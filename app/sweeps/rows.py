"""From executors' answer lines to stored rows: one batch of runs, one write transaction.

An executor answers each run with one JSON line ``[run, events, latency]`` (``app.sweeps.worker``,
the same line whether PyPy or CPython simulated it). ``store_batch`` decodes a batch of lines and
inserts the events, the latency histograms and the run rows in one transaction (plain
SQLAlchemy Core ``executemany``: SQLite and PostgreSQL alike), so a batch is stored whole or not
at all: a sweep killed mid-write leaves no half-written run behind.
"""
import json

from sqlalchemy import insert

from app.store.db import writing
from engine.tools.sweep_run import EVENT_FIELDS, RUN_FIELDS

from .tables import sweep_events, sweep_latency, sweep_runs


def decode(lines):
    """The rows of ``sweep_runs``, ``sweep_events`` and ``sweep_latency`` (lists of dicts)."""
    runs, events, latency = [], [], []
    for line in lines:
        run, run_events, hist = json.loads(line)
        row = dict(zip(RUN_FIELDS, run))
        runs.append(row)
        key = {"sweep_id": row["sweep_id"], "run_no": row["run_no"]}
        events += [{**key, **dict(zip(EVENT_FIELDS, e))} for e in run_events]
        latency += [{**key, "bucket_ms": b, "count": c} for b, c in hist]
    return runs, events, latency


def store_batch(store, lines):
    """Store a batch of answer lines in one transaction; returns the number of runs stored."""
    runs, events, latency = decode(lines)
    with writing(store) as conn:
        for table, rows in ((sweep_events, events), (sweep_latency, latency), (sweep_runs, runs)):
            if rows:
                conn.execute(insert(table), rows)
    return len(runs)
