"""Repository functions for saved runs: save, list/search/filter, get, rename, delete, and the
run's events, violations and seek index. Plain SQLAlchemy Core over the models (bulk inserts;
one transaction per save). The store knows documents as plain dicts: it never imports the
engine (the caller runs simulations and hands over their facts).
"""
import csv
import hashlib
import io
import json
import secrets
import time

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from .db import reading, writing
from .errors import StoreError
from .models import OUTCOMES, SOURCES, Run, RunEvent, RunSnapshot, RunViolation, SeekIndex
from .packed import batches

TITLE_MAX = 200
QUERY_MAX = 100
PAGE_MAX = 500
BATCH = 5000
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
SUMMARY_COLUMNS = (Run.id, Run.slug, Run.title, Run.scenario_name, Run.kafka_version, Run.seed,
                   Run.engine_version, Run.source, Run.parent_run_id, Run.fork_t_ms, Run.created_ms,
                   Run.end_ms, Run.duration_ms, Run.finished, Run.brokers, Run.partitions,
                   Run.records_total, Run.acked_count, Run.failed_count, Run.lost_count,
                   Run.violations_count, Run.events_count, Run.outcome)


def canonical_json(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def outcome_of(lost, violations):
    return "lost" if lost else ("violations" if violations else "clean")


def check_title(title, default=None):
    if title is None:
        if default is None:
            raise StoreError("title", "missing", f"text of 1 to {TITLE_MAX} characters")
        title = default
    if not isinstance(title, str):
        raise StoreError("title", "is not text", f"text of 1 to {TITLE_MAX} characters")
    title = " ".join(title.split())
    if not title:
        raise StoreError("title", "is empty", f"text of 1 to {TITLE_MAX} characters")
    if len(title) > TITLE_MAX:
        raise StoreError("title", f"is {len(title)} characters long", f"at most {TITLE_MAX}")
    return title


def _int_or_none(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_or_none(value):
    return value if isinstance(value, str) else None


def _topology(scenario):
    brokers = scenario.get("brokers", 3)
    n_brokers = len(brokers) if isinstance(brokers, list) else int(brokers)
    topics = scenario.get("topics") or [{"partitions": 1}]
    return n_brokers, sum(int(t.get("partitions", 1)) for t in topics)


# -- saving --------------------------------------------------------------------------------------------
def save_run(engine, **facts):
    """Save one run in one transaction (all of it or nothing). Returns ``{"id", "slug"}``.

    ``scenario``: the (normalised) scenario document that replays the run; ``summary``: counts
    ``records_total``, ``acked``, ``failed``, ``lost``, ``violations``; ``events``: the history
    (list of dicts with at least ``t_ms`` and ``type``); ``violations``: the violations list.
    """
    return insert_prepared(engine, prepare_run(**facts))


def prepare_run(*, scenario, engine_version, end_ms, finished, summary, events, violations,
                title=None, source="headless", parent_run_id=None, fork_t_ms=None, created_ms=None):
    """The rows of one run, encoded (plain tuples of str/int: cheap to send between processes).
    This is the CPU-heavy half of a save, so a job worker process does it; ``insert_prepared``
    is the database half, kept in the server so all writes go through its one write lock."""
    if source not in SOURCES:
        raise StoreError("source", f"{source!r} is not a source", ", ".join(SOURCES))
    if not isinstance(scenario, dict):
        raise StoreError("scenario", "is not a JSON object", "a scenario document")
    name = str(scenario.get("name", "untitled"))[:TITLE_MAX] or "untitled"
    title = check_title(title, default=name)
    scenario_text = canonical_json(scenario)
    n_brokers, n_partitions = _topology(scenario)
    lost, n_violations = int(summary["lost"]), int(summary["violations"])
    row = {
        "title": title, "scenario_name": name,
        "kafka_version": str(scenario.get("kafka_version", "2.6")),
        "seed": int(scenario.get("seed", 0)), "engine_version": str(engine_version),
        "scenario_json": scenario_text,
        "scenario_sha256": hashlib.sha256(scenario_text.encode()).hexdigest(),
        "source": source, "parent_run_id": parent_run_id, "fork_t_ms": fork_t_ms,
        "created_ms": int(created_ms if created_ms is not None else time.time() * 1000),
        "end_ms": int(end_ms), "duration_ms": int(scenario.get("duration_ms", end_ms)),
        "finished": bool(finished), "brokers": n_brokers, "partitions": n_partitions,
        "records_total": int(summary["records_total"]), "acked_count": int(summary["acked"]),
        "failed_count": int(summary["failed"]), "lost_count": lost, "violations_count": n_violations,
        "events_count": len(events), "outcome": outcome_of(lost, n_violations),
    }
    event_rows = [(e["t_ms"], e["type"][:40] if type(e["type"]) is str else str(e["type"])[:40],
                   e.get("topic") if type(e.get("topic")) is str else None,
                   e.get("partition") if type(e.get("partition")) is int else None,
                   e.get("broker") if type(e.get("broker")) is int else None, _json(e)) for e in events]
    violation_rows = [(v["t_ms"], str(v["invariant"])[:64], _str_or_none(v.get("topic")),
                       _int_or_none(v.get("partition")), _json(v)) for v in violations]
    return {"row": row, "events": event_rows, "violations": violation_rows}


def insert_prepared(engine, prepared):
    """Write ``prepare_run``'s rows in one transaction. Returns ``{"id", "slug"}``."""
    row = dict(prepared["row"])
    for attempt in range(5):
        row["slug"] = secrets.token_urlsafe(6)
        try:
            with writing(engine) as conn:
                run_id = conn.execute(insert(Run).values(**row).returning(Run.id)).scalar_one()
                _bulk(conn, RunEvent, EVENT_COLUMNS, prepared["events"], run_id)
                _bulk(conn, RunViolation, VIOLATION_COLUMNS, prepared["violations"], run_id)
            return {"id": run_id, "slug": row["slug"]}
        except IntegrityError:
            if attempt == 4 or _slug_taken(engine, row["slug"]) is False:
                raise
    raise AssertionError("unreachable")


def _slug_taken(engine, slug):
    with reading(engine) as conn:
        return conn.execute(select(Run.id).where(Run.slug == slug)).first() is not None


EVENT_COLUMNS = ("t_ms", "type", "topic", "partition", "broker", "details")
VIOLATION_COLUMNS = ("t_ms", "invariant", "topic", "partition", "details")


def _bulk(conn, model, columns, rows, run_id):
    """Insert ``rows`` (tuples of ``columns``; run_id and seq are added) as fast as the driver
    allows: SQLite's executemany, PostgreSQL's COPY, else SQLAlchemy's executemany."""
    if not rows:
        return
    table = model.__table__
    names = ("run_id", "seq") + columns
    driver = conn.dialect.driver
    if conn.dialect.name == "sqlite" and driver == "pysqlite":
        sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        cursor = conn.connection.driver_connection.cursor()
        cursor.executemany(sql, ((run_id, i) + row for i, row in enumerate(rows)))
        cursor.close()
        return
    if conn.dialect.name == "postgresql" and driver == "psycopg2":
        # COPY: one stream, parsed by the server in bulk (an order of magnitude faster than
        # INSERT ... VALUES batches). CSV: None is an unquoted empty field, i.e. NULL.
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows((run_id, i) + row for i, row in enumerate(rows))
        buffer.seek(0)
        quoted = ", ".join(conn.dialect.identifier_preparer.quote(n) for n in names)
        cursor = conn.connection.driver_connection.cursor()
        cursor.copy_expert(f"COPY {table.name} ({quoted}) FROM STDIN WITH (FORMAT csv)", buffer)
        cursor.close()
        return
    numbered = ((run_id, i) + row for i, row in enumerate(rows))      # rows may be PackedRows
    for batch in batches(numbered, BATCH):
        conn.execute(insert(table), [dict(zip(names, row)) for row in batch])


# -- reading ---------------------------------------------------------------------------------------------
def _summary(row):
    d = dict(row._mapping)
    d["finished"] = bool(d["finished"])
    return d


def list_runs(engine, *, q=None, era=None, outcome=None, scenario=None, source=None,
              limit=50, offset=0, order="newest"):
    """One page of run summaries, newest first, and the number of runs that match.

    ``q`` searches titles and scenario names (case-insensitive substring); ``era`` is a
    kafka_version; ``outcome`` one of lost / violations / clean; ``scenario`` an exact scenario name.
    """
    conditions = []
    if q is not None:
        if not isinstance(q, str) or len(q) > QUERY_MAX:
            raise StoreError("q", "is not a search text", f"text of at most {QUERY_MAX} characters")
        q = q.strip()
        if q:
            pattern = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            conditions.append(or_(Run.title.ilike(pattern, escape="\\"),
                                  Run.scenario_name.ilike(pattern, escape="\\")))
    if era is not None:
        if not isinstance(era, str) or len(era) > 16:
            raise StoreError("era", "is not a Kafka version", 'e.g. "0.10" or "2.6"')
        conditions.append(Run.kafka_version == era)
    if outcome is not None:
        if outcome not in OUTCOMES:
            raise StoreError("outcome", f"{str(outcome)[:20]!r} is not an outcome", ", ".join(OUTCOMES))
        conditions.append(Run.outcome == outcome)
    if scenario is not None:
        if not isinstance(scenario, str) or len(scenario) > TITLE_MAX:
            raise StoreError("scenario", "is not a scenario name", f"text of at most {TITLE_MAX} characters")
        conditions.append(Run.scenario_name == scenario)
    if source is not None:
        if source not in SOURCES:
            raise StoreError("source", f"{str(source)[:20]!r} is not a source", ", ".join(SOURCES))
        conditions.append(Run.source == source)
    if not _count_ok(limit, 1, PAGE_MAX):
        raise StoreError("limit", f"{limit!r} is out of range", f"an integer from 1 to {PAGE_MAX}")
    if not _count_ok(offset, 0, 10 ** 9):
        raise StoreError("offset", f"{offset!r} is out of range", "an integer from 0")
    orders = {"newest": (Run.created_ms.desc(), Run.id.desc()), "oldest": (Run.created_ms.asc(), Run.id.asc())}
    if order not in orders:
        raise StoreError("order", f"{str(order)[:20]!r} is not an order", ", ".join(orders))
    where = and_(*conditions) if conditions else None
    page = select(*SUMMARY_COLUMNS)
    count = select(func.count()).select_from(Run)
    if where is not None:
        page, count = page.where(where), count.where(where)
    page = page.order_by(*orders[order]).limit(limit).offset(offset)
    with reading(engine) as conn:
        runs = [_summary(r) for r in conn.execute(page)]
        total = conn.execute(count).scalar_one()
    return {"runs": runs, "total": total, "limit": limit, "offset": offset}


def _count_ok(value, lo, hi):
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def facets(engine):
    """What the filters can choose from: eras and scenario names present, with counts."""
    with reading(engine) as conn:
        eras = conn.execute(select(Run.kafka_version, func.count()).group_by(Run.kafka_version)
                            .order_by(Run.kafka_version)).all()
        names = conn.execute(select(Run.scenario_name, func.count()).group_by(Run.scenario_name)
                             .order_by(Run.scenario_name).limit(500)).all()
        outcomes = conn.execute(select(Run.outcome, func.count()).group_by(Run.outcome)).all()
    return {"eras": [[e, n] for e, n in eras], "scenarios": [[s, n] for s, n in names],
            "outcomes": {o: n for o, n in outcomes}}


def get_run(engine, run_id=None, slug=None):
    """The run (summary, ``scenario`` document) or None."""
    if slug is not None:
        if not isinstance(slug, str) or not 1 <= len(slug) <= 16:
            return None
        where = Run.slug == slug
    else:
        if not _count_ok(run_id, 1, 2 ** 62):
            return None
        where = Run.id == run_id
    with reading(engine) as conn:
        row = conn.execute(select(*SUMMARY_COLUMNS, Run.scenario_json, Run.scenario_sha256).where(where)).first()
    if row is None:
        return None
    out = _summary(row)
    out["scenario"] = json.loads(out.pop("scenario_json"))
    return out


def rename_run(engine, run_id, title):
    title = check_title(title)
    with writing(engine) as conn:
        done = conn.execute(update(Run).where(Run.id == run_id).values(title=title)).rowcount
    return title if done else None


def delete_run(engine, run_id):
    """Delete a run with its events, violations and snapshots. True if it existed."""
    with writing(engine) as conn:
        # explicit, so that it does not depend on the database enforcing ON DELETE CASCADE
        index_ids = select(SeekIndex.id).where(SeekIndex.run_id == run_id)
        conn.execute(delete(RunSnapshot).where(RunSnapshot.index_id.in_(index_ids)))
        conn.execute(delete(SeekIndex).where(SeekIndex.run_id == run_id))
        conn.execute(delete(RunEvent).where(RunEvent.run_id == run_id))
        conn.execute(delete(RunViolation).where(RunViolation.run_id == run_id))
        conn.execute(update(Run).where(Run.parent_run_id == run_id).values(parent_run_id=None))
        return conn.execute(delete(Run).where(Run.id == run_id)).rowcount > 0


def run_events(engine, run_id, start=0, limit=None, t_from=None, t_to=None):
    """The run's history events (the dicts as saved), in order, with their ``seq``."""
    query = select(RunEvent.seq, RunEvent.details).where(RunEvent.run_id == run_id)
    if start:
        query = query.where(RunEvent.seq >= start)
    if t_from is not None:
        query = query.where(RunEvent.t_ms >= t_from)
    if t_to is not None:
        query = query.where(RunEvent.t_ms <= t_to)
    query = query.order_by(RunEvent.seq)
    if limit is not None:
        query = query.limit(limit)
    loads = json.loads
    with reading(engine) as conn:
        return [loads(details) for _seq, details in conn.execute(query)]


def event_times(engine, run_id):
    """(t_ms, type) of every event, in order: the replay timeline's ticks."""
    with reading(engine) as conn:
        return [(t, ty) for t, ty in conn.execute(
            select(RunEvent.t_ms, RunEvent.type).where(RunEvent.run_id == run_id).order_by(RunEvent.seq))]


def count_events(engine, run_id):
    with reading(engine) as conn:
        return conn.execute(select(func.count()).select_from(RunEvent).where(RunEvent.run_id == run_id)).scalar_one()


def run_violations(engine, run_id):
    with reading(engine) as conn:
        return [json.loads(d) for (d,) in conn.execute(
            select(RunViolation.details).where(RunViolation.run_id == run_id).order_by(RunViolation.seq))]


# -- seek indexes (opaque, signed snapshot bytes made by app.replay.seek) ---------------------------------
def save_seek_index(engine, run_id, engine_version, *, fmt, snapshots, build_wall_ms, history_matches,
                    details):
    """Replace the run's seek index for ``engine_version`` by ``snapshots`` (dicts with seq, t_ms,
    history_len, pool, state, mac), in one transaction. Returns the index id, or None when the run
    was deleted meanwhile."""
    total = sum(len(s["pool"]) + len(s["state"]) for s in snapshots)
    with writing(engine) as conn:
        if conn.execute(select(Run.id).where(Run.id == run_id)).first() is None:
            return None
        old = select(SeekIndex.id).where(SeekIndex.run_id == run_id, SeekIndex.engine_version == engine_version)
        conn.execute(delete(RunSnapshot).where(RunSnapshot.index_id.in_(old)))
        conn.execute(delete(SeekIndex).where(SeekIndex.run_id == run_id, SeekIndex.engine_version == engine_version))
        index_id = conn.execute(insert(SeekIndex).values(
            run_id=run_id, engine_version=engine_version, format=fmt, snapshots=len(snapshots),
            bytes=total, built_ms=int(time.time() * 1000), build_wall_ms=int(build_wall_ms),
            history_matches=bool(history_matches), details=_json(details)).returning(SeekIndex.id)).scalar_one()
        rows = [{"index_id": index_id, "seq": s["seq"], "t_ms": s["t_ms"], "history_len": s["history_len"],
                 "pool": s["pool"], "state": s["state"], "mac": s["mac"]} for s in snapshots]
        for start in range(0, len(rows), 64):
            conn.execute(insert(RunSnapshot.__table__), rows[start:start + 64])
    return index_id


def seek_index(engine, run_id, engine_version):
    """The index's description and its snapshots' (seq, t_ms, history_len, pool, mac) — without
    the states, which ``snapshot_state`` reads one at a time. None if absent."""
    with reading(engine) as conn:
        row = conn.execute(select(SeekIndex.__table__).where(
            SeekIndex.run_id == run_id, SeekIndex.engine_version == engine_version)).first()
        if row is None:
            return None
        index = row
        snaps = conn.execute(select(RunSnapshot.seq, RunSnapshot.t_ms, RunSnapshot.history_len,
                                    RunSnapshot.pool, RunSnapshot.mac).where(RunSnapshot.index_id == index.id)
                             .order_by(RunSnapshot.seq)).all()
    return {"id": index.id, "run_id": run_id, "engine_version": index.engine_version, "format": index.format,
            "snapshots": [{"seq": s, "t_ms": t, "history_len": h, "pool": bytes(p), "mac": bytes(m)}
                          for s, t, h, p, m in snaps],
            "bytes": index.bytes, "build_wall_ms": index.build_wall_ms,
            "history_matches": bool(index.history_matches), "details": json.loads(index.details)}


def snapshot_state(engine, index_id, seq):
    """(state bytes, mac) of one snapshot, or None."""
    with reading(engine) as conn:
        row = conn.execute(select(RunSnapshot.state, RunSnapshot.mac).where(
            RunSnapshot.index_id == index_id, RunSnapshot.seq == seq)).first()
    return None if row is None else (bytes(row[0]), bytes(row[1]))


def drop_seek_indexes(engine, run_id=None, keep_engine_version=None):
    """Delete seek indexes (of one run, or of every run), except those of ``keep_engine_version``."""
    with writing(engine) as conn:
        which = select(SeekIndex.id)
        if run_id is not None:
            which = which.where(SeekIndex.run_id == run_id)
        if keep_engine_version is not None:
            which = which.where(SeekIndex.engine_version != keep_engine_version)
        ids = [i for (i,) in conn.execute(which)]
        if ids:
            conn.execute(delete(RunSnapshot).where(RunSnapshot.index_id.in_(ids)))
            conn.execute(delete(SeekIndex).where(SeekIndex.id.in_(ids)))
    return len(ids)
