"""Load: results into the store (and optionally Parquet), idempotently.

The result tables of the analysed sweeps are replaced in one transaction: their rows are
deleted and the new ones inserted, so running the job twice gives the same tables and a reader
never sees half of a result. Results are small (one row per cell, per run, per histogram
bucket), so they are collected to the driver and written with SQLAlchemy.
"""
import json
import os

from sqlalchemy import delete, insert

from app.store.db import writing
from app.sweeps import tables

BATCH = 5000


def rows_of(df, table):
    names = [c.name for c in table.columns]
    return [{n: row[n] for n in names} for row in df.select(*names).collect()]


def collect_tables(frames):
    """``frames``: name -> (DataFrame, column names). All of them in one Spark action: each row
    packed as JSON text tagged with its name, the packs unioned and collected once. One action
    is one plan, so the facts are scanned once and the exchanges the outputs share are
    computed once (Spark reuses identical exchanges within a plan), where a collect per table
    ran every shared step again. Returns name -> list of dicts (columns in the given order).
    Exact: JSON keeps nulls (ignoreNullFields off), longs, booleans, and doubles (Java writes
    the shortest text that reads back to the same double)."""
    return collect_union(tagged_union(frames), frames)


def tagged_union(frames):
    """The one DataFrame of collect_tables: (t = table name, j = the row as JSON)."""
    from pyspark.sql import functions as F
    packs = [df.select(F.lit(name).alias("t"), F.to_json(F.struct(*[F.col(c) for c in columns]),
                                                         {"ignoreNullFields": "false"}).alias("j"))
             for name, (df, columns) in frames.items()]
    union = packs[0]
    for pack in packs[1:]:
        union = union.unionByName(pack)
    return union


def collect_union(union, frames):
    out = {name: [] for name in frames}
    for row in union.collect():
        out[row.t].append(json.loads(row.j))
    return out


def result_frames(results):
    """The result DataFrames with the columns of their tables, as collect_tables takes them."""
    by_table = {t.name: t for t in tables.RESULT_TABLES}
    return {name: (df, [c.name for c in by_table[name].columns]) for name, df in results.items()}


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
