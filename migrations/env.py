"""Alembic environment of the store: plain SQLAlchemy, no Flask app.

Which database, first found wins:
  1. an engine handed over by ``app.store.db.upgrade(engine)`` (``config.attributes["engine"]``);
  2. ``-x url=...`` on the alembic command line;
  3. ``sqlalchemy.url`` set on the Config (``app.store.db.alembic_config(url)``);
  4. the app's settings (``DATABASE_URL``: ISRLAB_DATABASE_URL), else ``instance/isrlab.db``.

Upgrades are serialised across processes (PostgreSQL: an advisory lock; SQLite: BEGIN
IMMEDIATE), so servers starting together do not both migrate. On SQLite, foreign keys are off
while migrating (batch mode rebuilds a table by dropping it, which would fire ON DELETE CASCADE
on its children) and ``PRAGMA foreign_key_check`` must come back clean before the commit.
"""
from alembic import context
from sqlalchemy import text

from app.store import db

config = context.config
target_metadata = db.all_metadata()   # the store's tables and every other part's
PG_LOCK_KEY = 0x15_0B_1A_B5  # arbitrary constant: "isrlab migrations"


def _url():
    x = context.get_x_argument(as_dictionary=True)
    if x.get("url"):
        return x["url"]
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    return db.configured_url()


def run_offline():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def _migrate(connection):
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:   # outside any transaction (inside one this pragma is a no-op)
        connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        connection.execution_options(isrlab_write=True)   # BEGIN IMMEDIATE: one migrator at a time
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True, compare_type=True)
    try:
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_LOCK_KEY})
            context.run_migrations()
            if sqlite:
                bad = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if bad:
                    raise RuntimeError(f"migration left dangling foreign keys: {bad[:5]}")
    finally:
        if sqlite:
            if connection.in_transaction():   # anything alembic read after committing
                connection.rollback()
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")


def run_online():
    engine = config.attributes.get("engine")
    owned = engine is None
    if owned:
        engine = db.make_engine(_url())
    try:
        with engine.connect() as connection:
            _migrate(connection)
    finally:
        if owned:
            engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
