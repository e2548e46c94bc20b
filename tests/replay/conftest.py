"""The store fixtures (SQLite and a throwaway PostgreSQL server) for the replay tests."""
from tests.store.conftest import pg_server, store, store_url  # noqa: F401
