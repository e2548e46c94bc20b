"""Load: results into the store (and optionally Parquet), idempotently.

The result tables of the analysed sweeps are replaced in one transaction: their rows are
deleted and the new ones inserted, so running the job twice gives the same tables and a reader
never sees half of a result. Results are small (one row per cell, per run, per histogram
bucket), so they are collected to the driver and written with SQLAlchemy.
"""
import os

from sqlalchemy import delete, insert

from app.store.db import writing
from app.sweeps import tables

BATCH = 5000


def rows_of(df, table):
    names = [c.name for c in table.columns]
    return [{n: row[n] for n in names} for row in df.select(*names).collect()]


def replace_results(store, sweep_ids, results):
    """``results``: table name -> DataFrame (or list of dicts). Returns rows written per table."""
    by_table = {t.name: t for t in tables.RESULT_TABLES}
    materialised = {name: (rows if isinstance(rows, list) else rows_of(rows, by_table[name]))
                    for name, rows in results.items()}
    counts = {}
    with writing(store) as conn:
        for name, rows in materialised.items():
            table = by_table[name]
            conn.execute(delete(table).where(table.c.sweep_id.in_(sweep_ids)))
            for start in range(0, len(rows), BATCH):
                conn.execute(insert(table), rows[start:start + BATCH])
            counts[name] = len(rows)
    return counts


def replace_rows(store, table, where, rows):
    """Delete ``where`` from ``table`` and insert ``rows``, in one transaction."""
    with writing(store) as conn:
        conn.execute(delete(table).where(where))
        for start in range(0, len(rows), BATCH):
            conn.execute(insert(table), rows[start:start + BATCH])
    return len(rows)


def write_parquet(results, folder):
    """Each result table to ``folder/<table>/sweep_id=<id>/``; only the analysed sweeps'
    partitions are overwritten."""
    os.makedirs(folder, exist_ok=True)
    for name, df in results.items():
        (df.write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
         .partitionBy("sweep_id").parquet(os.path.join(folder, name)))
