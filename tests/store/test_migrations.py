"""Alembic migrations: upgrade from empty, downgrade, upgrade again; the models match the
migrations; the alembic command line works without any Flask app; concurrent upgrades."""
import os
import subprocess
import sys
import threading

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from app.store import db
from app.store.models import Base

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = {"runs", "run_events", "run_violations", "seek_indexes", "run_snapshots"}


def tables(engine):
    """The store's tables present (other parts of the app add their own through migrations)."""
    return set(inspect(engine).get_table_names()) & TABLES


def test_upgrade_downgrade_upgrade(store_url):
    engine = db.make_engine(store_url)
    assert tables(engine) == set() and db.current_revision(engine) is None
    db.upgrade(engine)
    assert tables(engine) == TABLES and db.current_revision(engine) == db.head_revision()
    db.upgrade(engine)                                  # idempotent
    db.downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    assert db.current_revision(engine) is None
    db.upgrade(engine)
    assert tables(engine) == TABLES
    engine.dispose()


def test_models_match_the_migrations(store):
    """Autogenerate finds nothing to do: every model (of every part of the app) is migrated."""
    metadata = db.all_metadata()
    assert metadata[0] is Base.metadata
    with store.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
    assert diff == []
    assert set(inspect(store).get_table_names()) >= TABLES


def test_sqlite_keeps_its_settings_after_migrating(tmp_path):
    engine = db.open_store(f"sqlite:///{tmp_path}/x.db")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == db.BUSY_TIMEOUT_MS


def test_alembic_command_line_needs_no_flask_app(store_url):
    env = dict(os.environ, PYTHONPATH=ROOT)
    alembic = os.path.join(os.path.dirname(sys.executable), "alembic")
    for args in (["upgrade", "head"], ["downgrade", "base"], ["upgrade", "head"], ["current"]):
        out = subprocess.run([alembic, "-c", os.path.join(ROOT, "alembic.ini"), "-x", f"url={store_url}", *args],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
    assert db.head_revision() in out.stdout
    engine = db.make_engine(store_url)
    assert tables(engine) == TABLES
    engine.dispose()


def test_default_database_lives_in_the_instance_folder(tmp_path):
    url = db.configured_url({"INSTANCE_PATH": str(tmp_path / "inst")})
    assert url == f"sqlite:///{tmp_path}/inst/isrlab.db"
    engine = db.open_store(url)
    assert os.path.exists(tmp_path / "inst" / "isrlab.db")
    engine.dispose()
    assert db.configured_url({"DATABASE_URL": "postgresql://x/y"}) == "postgresql://x/y"


def test_servers_starting_together_upgrade_once(store_url):
    """Several processes (and threads in one) open a fresh database at the same moment."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    code = f"from app.store import db; db.open_store({store_url!r}).dispose(); print('ok')"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = []

    def start():
        try:
            engine = db.open_store(store_url)
            engine.dispose()
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    assert errors == []
    engine = db.make_engine(store_url)
    assert tables(engine) == TABLES and db.current_revision(engine) == db.head_revision()
    engine.dispose()
