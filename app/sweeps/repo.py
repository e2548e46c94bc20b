"""Repository functions over the sweep tables (plain SQLAlchemy Core; no Flask, no Spark).

The bulk rows of a sweep (runs, events, latency) are written by Spark through JDBC
(``app.sweeps.execute``); this module writes the small things — the sweep, its cells, its
progress — and answers the questions the command line and the report page ask.
"""
import hashlib
import json
import time

from sqlalchemy import and_, delete, func, insert, not_, select, update

from app.store.db import reading, writing

from . import spec
from .tables import (analytics_cells, analytics_distributions, analytics_invariants, analytics_runs,
                     sweep_cells, sweep_events, sweep_latency, sweep_runs, sweeps)

STATUSES = ("planned", "running", "stopped", "done", "failed")


def now_ms():
    return int(time.time() * 1000)


def register(engine, sweep, cells, engine_version):
    """Create the sweep and its cells, or check that the stored one is the same document.
    Returns the sweep's row (a dict). Raises SweepError when the id holds another document."""
    text = spec.canonical(sweep)
    digest = hashlib.sha256(text.encode()).hexdigest()
    total = len(cells) * sweep["seeds"]["count"]
    with writing(engine) as conn:
        row = conn.execute(select(sweeps).where(sweeps.c.id == sweep["id"])).mappings().first()
        if row is not None:
            if row["doc_sha256"] != digest:
                raise spec.SweepError("id", f"sweep {sweep['id']!r} already exists with a different document",
                                      "the same document (to resume it) or another id")
            if row["engine_version"] != engine_version:
                raise spec.SweepError("id", f"sweep {sweep['id']!r} was run with engine {row['engine_version']}, "
                                            f"this is engine {engine_version}: its runs would not be comparable",
                                      "another id")
            return dict(row)
        now = now_ms()
        values = {"id": sweep["id"], "name": sweep["name"], "description": sweep["description"],
                  "doc_json": text, "doc_sha256": digest, "engine_version": engine_version,
                  "cells": len(cells), "runs_total": total, "runs_done": 0, "status": "planned",
                  "message": None, "created_ms": now, "updated_ms": now, "wall_ms": 0}
        conn.execute(insert(sweeps).values(**values))
        rows = [{"sweep_id": sweep["id"], "cell_id": c["cell_id"], "settings_json": spec.canonical(c["settings"]),
                 "label": spec.cell_label(c["settings"])[:1000], "profile": c["profile"],
                 "kafka_version": c["scenario"]["kafka_version"]} for c in cells]
        for start in range(0, len(rows), 1000):
            conn.execute(insert(sweep_cells), rows[start:start + 1000])
        return values


def done_run_nos(engine, sweep_id):
    with reading(engine) as conn:
        return {n for (n,) in conn.execute(select(sweep_runs.c.run_no).where(sweep_runs.c.sweep_id == sweep_id))}


def remove_strays(engine, sweep_id):
    """Delete events and latency rows of runs that have no run row (a write cut short by a kill):
    those runs are not done and will be simulated again. Returns the number of rows removed."""
    removed = 0
    done = select(sweep_runs.c.run_no).where(sweep_runs.c.sweep_id == sweep_id)
    with writing(engine) as conn:
        for table in (sweep_events, sweep_latency):
            removed += conn.execute(delete(table).where(and_(
                table.c.sweep_id == sweep_id, not_(table.c.run_no.in_(done))))).rowcount
    return removed


def set_status(engine, sweep_id, status, message=None, add_wall_ms=0):
    assert status in STATUSES
    with writing(engine) as conn:
        done = conn.execute(select(func.count()).select_from(sweep_runs)
                            .where(sweep_runs.c.sweep_id == sweep_id)).scalar_one()
        conn.execute(update(sweeps).where(sweeps.c.id == sweep_id).values(
            status=status, message=message, runs_done=done, updated_ms=now_ms(),
            wall_ms=sweeps.c.wall_ms + int(add_wall_ms)))
    return done


def get_sweep(engine, sweep_id):
    if not isinstance(sweep_id, str) or not spec.SWEEP_ID.match(sweep_id):
        return None
    with reading(engine) as conn:
        row = conn.execute(select(sweeps).where(sweeps.c.id == sweep_id)).mappings().first()
    if row is None:
        return None
    out = dict(row)
    out["doc"] = json.loads(out.pop("doc_json"))
    return out


def list_sweeps(engine, limit=100):
    cols = [c for c in sweeps.c if c.name != "doc_json"]
    with reading(engine) as conn:
        return [dict(r) for r in conn.execute(select(*cols).order_by(sweeps.c.created_ms.desc()).limit(limit))
                .mappings()]


def cells_of(engine, sweep_id):
    with reading(engine) as conn:
        rows = conn.execute(select(sweep_cells).where(sweep_cells.c.sweep_id == sweep_id)
                            .order_by(sweep_cells.c.cell_id)).mappings().all()
    return [{**dict(r), "settings": json.loads(r["settings_json"])} for r in rows]


def count_runs(engine, sweep_id):
    with reading(engine) as conn:
        return conn.execute(select(func.count()).select_from(sweep_runs)
                            .where(sweep_runs.c.sweep_id == sweep_id)).scalar_one()


def get_run(engine, run_key):
    if not isinstance(run_key, str) or len(run_key) != 20 or not all(c in "0123456789abcdef" for c in run_key):
        return None
    with reading(engine) as conn:
        row = conn.execute(select(sweep_runs).where(sweep_runs.c.run_key == run_key)).mappings().first()
    if row is None:
        return None
    out = dict(row)
    out["scenario"] = json.loads(out.pop("scenario_json"))
    out["converged"] = bool(out["converged"])
    return out


def run_events(engine, sweep_id, run_no):
    with reading(engine) as conn:
        return [dict(r) for r in conn.execute(
            select(sweep_events).where(and_(sweep_events.c.sweep_id == sweep_id, sweep_events.c.run_no == run_no))
            .order_by(sweep_events.c.seq)).mappings()]


def delete_sweep(engine, sweep_id):
    with writing(engine) as conn:
        for table in (analytics_runs, analytics_distributions, analytics_invariants, analytics_cells):
            conn.execute(delete(table).where(table.c.sweep_id == sweep_id))
        for table in (sweep_latency, sweep_events, sweep_runs, sweep_cells):
            conn.execute(delete(table).where(table.c.sweep_id == sweep_id))
        return conn.execute(delete(sweeps).where(sweeps.c.id == sweep_id)).rowcount > 0
