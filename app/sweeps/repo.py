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


# -- what the report page shows ----------------------------------------------------------------------
def _plain(row):
    return {k: (bool(v) if k == "converged" else v) for k, v in dict(row).items()}


def report(engine, sweep_id):
    """The sweep, its grid and every cell with its analysed numbers, distributions and invariants
    (``analysed`` is False until the analysis job ran)."""
    sweep = get_sweep(engine, sweep_id)
    if sweep is None:
        return None
    cells = cells_of(engine, sweep_id)
    with reading(engine) as conn:
        metrics = {r["cell_id"]: _plain(r) for r in conn.execute(
            select(analytics_cells).where(analytics_cells.c.sweep_id == sweep_id)).mappings()}
        invariants = [dict(r) for r in conn.execute(
            select(analytics_invariants).where(analytics_invariants.c.sweep_id == sweep_id)
            .order_by(analytics_invariants.c.cell_id, analytics_invariants.c.invariant)).mappings()]
        dists = {}
        for r in conn.execute(select(analytics_distributions).where(analytics_distributions.c.sweep_id == sweep_id)
                              .order_by(analytics_distributions.c.cell_id, analytics_distributions.c.metric,
                                        analytics_distributions.c.bucket_ms)).mappings():
            dists.setdefault(r["cell_id"], {}).setdefault(r["metric"], []).append([r["bucket_ms"], r["count"]])
        done_by_cell = dict(conn.execute(select(sweep_runs.c.cell_id, func.count()).where(
            sweep_runs.c.sweep_id == sweep_id).group_by(sweep_runs.c.cell_id)).all())
        # faults drawn per cell: a cell whose seeds drew none tested nothing (its 0 % is not "safe")
        faults_by_cell = dict(conn.execute(select(sweep_runs.c.cell_id, func.sum(sweep_runs.c.faults)).where(
            sweep_runs.c.sweep_id == sweep_id).group_by(sweep_runs.c.cell_id)).all())
    out_cells = []
    for c in cells:
        m = metrics.get(c["cell_id"], {})
        m.pop("sweep_id", None)
        m.pop("cell_id", None)
        out_cells.append({"cell_id": c["cell_id"], "settings": c["settings"], "label": c["label"],
                          "profile": c["profile"], "runs_stored": done_by_cell.get(c["cell_id"], 0),
                          "faults": int(faults_by_cell.get(c["cell_id"]) or 0),
                          "metrics": m or None, "distributions": dists.get(c["cell_id"], {}),
                          "invariants": [i for i in invariants if i["cell_id"] == c["cell_id"]]})
    doc = sweep.pop("doc")
    sweep.pop("doc_sha256", None)
    sweep["runs_done"] = sum(done_by_cell.values())     # live, also while a sweep is running
    sweep["faults_drawn"] = int(sum(v or 0 for v in faults_by_cell.values()))
    return {"sweep": sweep, "doc": doc, "axes": doc["grid"], "seeds": doc["seeds"], "cells": out_cells,
            "analysed": bool(metrics)}


def cell_runs(engine, sweep_id, cell_id, limit=20):
    """The cell's worst runs first (as the analysis ranked them), else its runs by number."""
    with reading(engine) as conn:
        ranked = conn.execute(select(analytics_runs).where(and_(
            analytics_runs.c.sweep_id == sweep_id, analytics_runs.c.cell_id == cell_id))
            .order_by(analytics_runs.c.worst_rank).limit(limit)).mappings().all()
        if ranked:
            return [_plain(r) for r in ranked]
        rows = conn.execute(select(sweep_runs.c.run_key, sweep_runs.c.run_no, sweep_runs.c.seed, sweep_runs.c.lost,
                                   sweep_runs.c.violations, sweep_runs.c.converged, sweep_runs.c.status)
                            .where(and_(sweep_runs.c.sweep_id == sweep_id, sweep_runs.c.cell_id == cell_id))
                            .order_by(sweep_runs.c.lost.desc(), sweep_runs.c.run_no).limit(limit)).mappings().all()
    return [_plain(r) for r in rows]


def questions(engine, limit=50):
    """Questions asked of the stored runs (re-simulation), with their per-group results."""
    from .tables import resim_groups, resim_questions
    with reading(engine) as conn:
        qs = [dict(r) for r in conn.execute(select(resim_questions).limit(limit)).mappings()]
        groups = {}
        for r in conn.execute(select(resim_groups).order_by(resim_groups.c.group_key)).mappings():
            groups.setdefault(r["question_id"], []).append(dict(r))
    for q in qs:
        q["question"] = json.loads(q.pop("question_json"))
        q["groups"] = groups.get(q["id"], [])
    return qs
