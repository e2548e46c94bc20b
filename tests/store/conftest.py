"""Store fixtures: every store test runs on SQLite (a file with WAL) and on a real PostgreSQL
server started for the session (see pgserver.py)."""
import itertools

import pytest

from app.store import db

from .pgserver import PgServer, find_bin

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server():
    bindir = find_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (scripts/setup.sh installs them)")
    server = PgServer(bindir).start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/store.db"
    server = request.getfixturevalue("pg_server")
    return server.create_database(f"isrlab_{next(_names)}")


@pytest.fixture
def store(store_url):
    engine = db.open_store(store_url)
    yield engine
    engine.dispose()
