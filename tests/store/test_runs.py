"""The store's repository functions, on SQLite and on a real PostgreSQL server."""
import ast
import json
import pathlib

import pytest
from sqlalchemy import DateTime, select, func

from app.store import runs
from app.store.db import reading
from app.store.errors import StoreError
from app.store.models import Base, Run, RunEvent, RunSnapshot, RunViolation, SeekIndex

STORE = pathlib.Path(__file__).resolve().parents[2] / "app" / "store"


def scenario(name="s", era="2.6", seed=1, partitions=2):
    return {"name": name, "seed": seed, "kafka_version": era, "brokers": [0, 1, 2],
            "topics": [{"name": "t", "partitions": partitions, "replication_factor": 3}],
            "duration_ms": 60000, "timeline": [], "clients": []}


def events(n, t0=0):
    out = []
    for i in range(n):
        e = {"t_ms": t0 + i, "type": "high_watermark" if i % 3 else "isr_shrink", "topic": "t",
             "partition": i % 2, "broker": i % 3, "hw": i, "reason": f"because {i} «unicode»"}
        if i % 3 == 0:
            e["isr_before"], e["isr"] = [0, 1, 2], [0, 2]
        out.append(e)
    out.append({"t_ms": t0 + n, "type": "controller_elected", "broker": 0, "epoch": 2, "reason": "x"})
    return out


def save(engine, name="s", era="2.6", lost=0, violations=(), n_events=10, **kw):
    vio = list(violations)
    return runs.save_run(engine, scenario=scenario(name, era), engine_version="1.0.0", end_ms=60000,
                         finished=True, summary={"records_total": 10, "acked": 8, "failed": 2, "lost": lost,
                                                 "violations": len(vio)},
                         events=events(n_events), violations=vio, **kw)


VIOLATION = {"invariant": "acked_record_lost", "t_ms": 5, "topic": "t", "partition": 0,
             "detail": "p1-3 is gone", "records": ["p1-3"]}


def test_save_and_get_round_trip(store):
    saved = save(store, title="  My   run ", violations=[VIOLATION], n_events=50)
    run = runs.get_run(store, saved["id"])
    assert run["slug"] == saved["slug"] and runs.get_run(store, slug=saved["slug"])["id"] == saved["id"]
    assert run["title"] == "My run"
    assert run["scenario"] == scenario()
    assert (run["records_total"], run["acked_count"], run["failed_count"], run["lost_count"]) == (10, 8, 2, 0)
    assert run["violations_count"] == 1 and run["outcome"] == "violations"
    assert run["events_count"] == 51 and run["partitions"] == 2 and run["brokers"] == 3
    assert run["finished"] is True and run["kafka_version"] == "2.6" and run["seed"] == 1
    assert runs.run_events(store, saved["id"]) == events(50)
    assert runs.run_events(store, saved["id"], start=10, limit=5) == events(50)[10:15]
    assert runs.run_events(store, saved["id"], t_from=3, t_to=4) == events(50)[3:5]
    assert runs.event_times(store, saved["id"])[:2] == [(0, "isr_shrink"), (1, "high_watermark")]
    assert runs.count_events(store, saved["id"]) == 51
    assert runs.run_violations(store, saved["id"]) == [VIOLATION]
    assert runs.get_run(store, 999999) is None and runs.get_run(store, slug="nope") is None
    assert runs.get_run(store, "1") is None and runs.get_run(store, slug="x" * 40) is None


def test_outcomes(store):
    assert runs.get_run(store, save(store, lost=3, violations=[VIOLATION])["id"])["outcome"] == "lost"
    assert runs.get_run(store, save(store)["id"])["outcome"] == "clean"


def test_list_search_filter_and_page(store):
    for i in range(30):
        save(store, name=f"kip-{i % 3}", era=("0.10", "2.6")[i % 2], lost=int(i % 5 == 0),
             violations=[VIOLATION] if i % 7 == 0 else [], title=f"Run {i}%_", created_ms=1_000_000 + i)
    page = runs.list_runs(store, limit=10)
    assert page["total"] == 30 and [r["title"] for r in page["runs"]][:2] == ["Run 29%_", "Run 28%_"]
    assert "scenario_json" not in page["runs"][0]
    second = runs.list_runs(store, limit=10, offset=10)
    assert second["runs"][0]["title"] == "Run 19%_"
    assert runs.list_runs(store, era="0.10")["total"] == 15
    assert runs.list_runs(store, outcome="lost")["total"] == 6
    assert runs.list_runs(store, outcome="violations")["total"] == 4     # 7, 14, 21, 28 (not 0: lost)
    assert runs.list_runs(store, outcome="clean")["total"] == 20
    assert runs.list_runs(store, scenario="kip-1")["total"] == 10
    assert runs.list_runs(store, q="RUN 2")["total"] == 11             # case-insensitive: 2, 20..29
    assert runs.list_runs(store, q="KIP-2", era="2.6")["total"] == 5
    assert runs.list_runs(store, q="%")["total"] == 30                 # literal, not a wildcard
    assert runs.list_runs(store, q="9%_")["total"] == 3                 # 9, 19, 29
    assert runs.list_runs(store, q="nothing like it")["total"] == 0
    assert runs.list_runs(store, order="oldest", limit=1)["runs"][0]["title"] == "Run 0%_"
    facets = runs.facets(store)
    assert facets["eras"] == [["0.10", 15], ["2.6", 15]]
    assert facets["outcomes"] == {"lost": 6, "violations": 4, "clean": 20}


@pytest.mark.parametrize("kwargs,field", [
    ({"outcome": "bad"}, "outcome"), ({"limit": 0}, "limit"), ({"limit": 10 ** 6}, "limit"),
    ({"limit": "5"}, "limit"), ({"offset": -1}, "offset"), ({"q": "x" * 500}, "q"), ({"q": 5}, "q"),
    ({"era": 2.6}, "era"), ({"order": "sideways"}, "order"), ({"source": "moon"}, "source"),
])
def test_list_rejects_bad_filters_naming_the_field(store, kwargs, field):
    with pytest.raises(StoreError) as err:
        runs.list_runs(store, **kwargs)
    assert err.value.field == field and err.value.to_dict()["message"]


def test_rename(store):
    saved = save(store)
    assert runs.rename_run(store, saved["id"], " New\nname ") == "New name"
    assert runs.get_run(store, saved["id"])["title"] == "New name"
    for bad in ("", "   ", "x" * 201, None, 5):
        with pytest.raises(StoreError) as err:
            runs.rename_run(store, saved["id"], bad)
        assert err.value.field == "title"
    assert runs.rename_run(store, 424242, "x") is None


def test_delete_removes_everything_of_that_run_only(store):
    keep = save(store, violations=[VIOLATION])
    gone = save(store, violations=[VIOLATION], n_events=100)
    child = save(store, source="fork", parent_run_id=gone["id"], fork_t_ms=5)
    snap = {"seq": 0, "t_ms": 0, "history_len": 0, "pool": b"p", "state": b"s", "mac": b"m" * 64}
    runs.save_seek_index(store, gone["id"], "1.0.0", fmt=1, snapshots=[snap], build_wall_ms=1,
                         history_matches=True, details={})
    assert runs.delete_run(store, gone["id"]) is True
    assert runs.delete_run(store, gone["id"]) is False
    assert runs.get_run(store, gone["id"]) is None
    assert runs.get_run(store, child["id"])["parent_run_id"] is None
    with reading(store) as conn:
        for model in (RunEvent, RunViolation):
            assert conn.execute(select(func.count()).select_from(model).where(model.run_id == gone["id"])).scalar() == 0
        assert conn.execute(select(func.count()).select_from(RunSnapshot)).scalar() == 0
        assert conn.execute(select(func.count()).select_from(SeekIndex)).scalar() == 0
    assert len(runs.run_events(store, keep["id"])) == 11 and runs.run_violations(store, keep["id"]) == [VIOLATION]


def test_a_failing_save_leaves_nothing(store, monkeypatch):
    before = runs.list_runs(store)["total"]
    real = runs._bulk
    calls = []

    def failing(conn, model, columns, rows, run_id):
        calls.append(model)
        real(conn, model, columns, rows[:3], run_id)   # some rows are written...
        raise RuntimeError("crash in the middle of a save")  # ...then the save dies

    monkeypatch.setattr(runs, "_bulk", failing)
    with pytest.raises(RuntimeError):
        save(store, n_events=20)
    monkeypatch.setattr(runs, "_bulk", real)
    assert calls and runs.list_runs(store)["total"] == before
    with reading(store) as conn:
        assert conn.execute(select(func.count()).select_from(RunEvent)).scalar() == 0
        assert conn.execute(select(func.count()).select_from(Run)).scalar() == before


def test_seek_index_rows_replace_each_other(store):
    saved = save(store)
    snaps = [{"seq": i, "t_ms": i * 10, "history_len": i, "pool": bytes([i]) * 5, "state": b"state%d" % i,
              "mac": bytes([i]) * 64} for i in range(3)]
    first = runs.save_seek_index(store, saved["id"], "1.0.0", fmt=1, snapshots=snaps, build_wall_ms=5,
                                 history_matches=True, details={"share": "all"})
    second = runs.save_seek_index(store, saved["id"], "1.0.0", fmt=1, snapshots=snaps[:2], build_wall_ms=5,
                                  history_matches=False, details={"share": "none"})
    assert first != second
    index = runs.seek_index(store, saved["id"], "1.0.0")
    assert index["id"] == second and [s["seq"] for s in index["snapshots"]] == [0, 1]
    assert index["snapshots"][1]["pool"] == b"\x01" * 5 and index["snapshots"][1]["mac"] == b"\x01" * 64
    assert index["history_matches"] is False and index["details"] == {"share": "none"}
    assert runs.snapshot_state(store, second, 1) == (b"state1", b"\x01" * 64)
    assert runs.snapshot_state(store, second, 7) is None
    assert runs.seek_index(store, saved["id"], "9.9.9") is None
    assert runs.save_seek_index(store, 987654, "1.0.0", fmt=1, snapshots=snaps, build_wall_ms=1,
                                history_matches=True, details={}) is None
    assert runs.drop_seek_indexes(store, keep_engine_version="1.0.0") == 0
    assert runs.drop_seek_indexes(store) == 1 and runs.seek_index(store, saved["id"], "1.0.0") is None


def test_bad_saves_name_the_field(store):
    with pytest.raises(StoreError) as err:
        save(store, source="moon")
    assert err.value.field == "source"
    with pytest.raises(StoreError) as err:
        save(store, title="x" * 300)
    assert err.value.field == "title"


def test_schema_is_friendly_to_jdbc_readers():
    """Times are integer milliseconds and details JSON text: no DATETIME or JSON column types."""
    for table in Base.metadata.tables.values():
        for column in table.columns:
            assert not isinstance(column.type, DateTime), f"{table.name}.{column.name}"
            assert column.type.__class__.__name__ not in ("JSON", "JSONB"), f"{table.name}.{column.name}"
            if column.name.endswith("_ms"):
                assert column.type.python_type is int


def test_the_store_imports_neither_flask_nor_the_engine():
    offenders = []
    for path in sorted(STORE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in ("flask", "flask_socketio", "engine") or name.startswith("app.web"):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_importing_the_store_loads_no_flask_at_all():
    """Not only the store's own imports: its package (``app``) must not pull Flask in either, so
    migrations, sweeps and Spark workers run without the web stack."""
    import subprocess
    import sys
    code = ("import sys, app.store, app.sweeps, app.analytics.job; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('flask', 'flask_socketio')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_events_are_stored_with_queryable_columns(store):
    saved = save(store, n_events=6)
    with reading(store) as conn:
        rows = conn.execute(select(RunEvent.seq, RunEvent.t_ms, RunEvent.type, RunEvent.topic, RunEvent.partition,
                                   RunEvent.broker, RunEvent.details).where(RunEvent.run_id == saved["id"])
                            .order_by(RunEvent.seq)).all()
    assert rows[0][:6] == (0, 0, "isr_shrink", "t", 0, 0)
    assert rows[-1][:6] == (6, 6, "controller_elected", None, None, 0)
    assert json.loads(rows[3][6])["isr"] == [0, 2]
