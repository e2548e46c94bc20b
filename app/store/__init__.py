"""Saved runs: plain SQLAlchemy 2 models and repository functions (no Flask, no engine).

``db``: engines (SQLite with WAL, foreign keys and immediate write transactions; any SQLAlchemy
URL), ``open_store(url)`` which upgrades the schema with Alembic; ``runs``: save / list / get /
rename / delete runs, their events, violations and seek indexes; ``models``: the tables.
"""
from .db import make_engine, open_store, upgrade
from .errors import StoreError

__all__ = ["make_engine", "open_store", "upgrade", "StoreError"]
