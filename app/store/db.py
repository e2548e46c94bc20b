"""Connecting to the store: engines, SQLite settings, write transactions, schema upgrades.

``make_engine(url)`` returns a SQLAlchemy engine for any URL. For SQLite it sets, on every new
connection: WAL journal (readers are not blocked by a writer, a killed process loses nothing it
committed), ``foreign_keys=ON``, ``busy_timeout`` and ``synchronous=NORMAL``; and it takes over
transaction control from pysqlite so that a write transaction starts with ``BEGIN IMMEDIATE``
(the write lock is taken up front and waited for with the busy timeout, instead of failing with
"database is locked" when a reader upgrades). Writes in one process are also serialised by a
lock, so threads queue rather than spin on SQLite's lock.

``writing(engine)`` is the one way to write: a context manager yielding a connection inside one
transaction. ``upgrade(engine)`` brings a database to the newest schema with Alembic (run
programmatically; no Flask app needed).
"""
import contextlib
import os
import threading

from sqlalchemy import create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIGRATIONS = os.path.join(ROOT, "migrations")
ALEMBIC_INI = os.path.join(ROOT, "alembic.ini")
DB_FILE = "isrlab.db"
BUSY_TIMEOUT_MS = 30_000
_WRITE = "isrlab_write"
_ALEMBIC = threading.Lock()   # Alembic's ``context`` is process-global: one command at a time


def default_url(instance_path=None):
    """SQLite in the instance folder (``<repo>/instance/isrlab.db`` unless given another)."""
    folder = instance_path or os.path.join(ROOT, "instance")
    return "sqlite:///" + os.path.join(os.path.abspath(folder), DB_FILE)


def app_settings():
    """The app's settings (``app.config``: the one place that reads environment variables)."""
    from app.config import load_settings
    return load_settings()


def configured_instance_path(settings=None):
    """``INSTANCE_PATH`` of the settings (ISRLAB_INSTANCE_PATH), else ``<repo>/instance``."""
    settings = app_settings() if settings is None else settings
    return settings.get("INSTANCE_PATH") or os.path.join(ROOT, "instance")


def configured_url(settings=None):
    """The database of this installation: ``DATABASE_URL`` of the app's settings (from
    ISRLAB_DATABASE_URL), else SQLite in the instance folder."""
    settings = app_settings() if settings is None else settings
    return settings.get("DATABASE_URL") or default_url(configured_instance_path(settings))


def make_engine(url=None, echo=False):
    url = make_url(url or configured_url())
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, echo)
    engine = create_engine(url, echo=echo, pool_pre_ping=True, future=True)
    engine.info = {"write_lock": contextlib.nullcontext()}  # the server serialises what it must
    return engine


def _sqlite_engine(url, echo):
    database = url.database
    memory = database in (None, "", ":memory:")
    kwargs = {"echo": echo, "connect_args": {"timeout": BUSY_TIMEOUT_MS / 1000,
                                             "check_same_thread": False}}
    if memory:
        kwargs["poolclass"] = StaticPool
    else:
        folder = os.path.dirname(os.path.abspath(database))
        os.makedirs(folder, exist_ok=True)
    engine = create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None     # we emit BEGIN ourselves (see below)
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        immediate = conn.get_execution_options().get(_WRITE)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    engine.info = {"write_lock": threading.Lock()}
    return engine


def is_sqlite(engine):
    return engine.dialect.name == "sqlite"


@contextlib.contextmanager
def writing(engine):
    """One write transaction: commits when the block ends, rolls back if it raises."""
    with engine.info["write_lock"]:
        with engine.connect() as conn:
            conn.execution_options(**{_WRITE: True})
            with conn.begin():
                yield conn


@contextlib.contextmanager
def reading(engine):
    """A read-only transaction (one consistent view of the database)."""
    with engine.connect() as conn:
        with conn.begin():
            yield conn


#: modules whose ``metadata`` (or ``Base.metadata``) the migrations create: autogenerate compares
#: the database with all of them (other parts of the app add their tables through migrations)
MIGRATED_MODELS = ("app.store.models", "app.sweeps.tables")


def all_metadata():
    import importlib
    found = []
    for name in MIGRATED_MODELS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        found.append(module.Base.metadata if hasattr(module, "Base") else module.metadata)
    return found


def alembic_config(engine_or_url=None):
    from alembic.config import Config
    cfg = Config(ALEMBIC_INI) if os.path.exists(ALEMBIC_INI) else Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    if isinstance(engine_or_url, str):
        cfg.set_main_option("sqlalchemy.url", engine_or_url.replace("%", "%%"))
    elif engine_or_url is not None:
        cfg.attributes["engine"] = engine_or_url
    return cfg


def upgrade(engine, revision="head"):
    """Bring the database to ``revision`` (the newest schema by default). Safe to call at every
    start: it does nothing when the schema is current, and concurrent callers are serialised."""
    from alembic import command
    with _ALEMBIC:
        command.upgrade(alembic_config(engine), revision)


def downgrade(engine, revision):
    from alembic import command
    with _ALEMBIC:
        command.downgrade(alembic_config(engine), revision)


def current_revision(engine):
    from alembic.migration import MigrationContext
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision():
    from alembic.script import ScriptDirectory
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def open_store(url=None, upgrade_schema=True):
    """An engine on ``url`` whose schema is current (what the app and the CLI call at start)."""
    engine = make_engine(url)
    if upgrade_schema:
        upgrade(engine)
    return engine
