"""The tables of saved runs: plain SQLAlchemy 2 models (no Flask, no engine).

Facts, written once: a run (its scenario document and outcome), the replication events of its
history, its invariant violations, and the snapshot index used for fast seeking. Times are
integer milliseconds (simulated time, or Unix time for ``created_ms``), ids are explicit
integers, structured details are JSON text — so JDBC readers (Spark) need no DATETIME or JSON
types. Constraint names follow ``NAMING`` so Alembic's batch mode can rebuild SQLite tables.

The schema changes only through Alembic migrations (``migrations/``); ``Base.metadata`` is what
``alembic revision --autogenerate`` compares against.
"""
from sqlalchemy import (BigInteger, Boolean, ForeignKey, Index, Integer, LargeBinary, MetaData,
                        String, Text)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: outcome of a run, most severe first: acknowledged records lost / invariants broken / neither
OUTCOMES = ("lost", "violations", "clean")
#: how a run came to be saved
SOURCES = ("live", "headless", "import", "fork", "link", "compare", "counterexample")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    slug: Mapped[str] = mapped_column(String(16), unique=True)           # short link: /s/<slug>
    title: Mapped[str] = mapped_column(String(200))
    scenario_name: Mapped[str] = mapped_column(String(200))
    kafka_version: Mapped[str] = mapped_column(String(16))                # the era
    seed: Mapped[int] = mapped_column(BigInteger)
    engine_version: Mapped[str] = mapped_column(String(32))
    scenario_json: Mapped[str] = mapped_column(Text)                      # replays the run exactly
    scenario_sha256: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(16))
    parent_run_id: Mapped[int | None] = mapped_column(
        Integer, ForeignKey("runs.id", ondelete="SET NULL"), nullable=True)
    fork_t_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)                   # Unix time, ms
    end_ms: Mapped[int] = mapped_column(BigInteger)                       # simulated time saved
    duration_ms: Mapped[int] = mapped_column(BigInteger)                  # the scenario's duration
    finished: Mapped[bool] = mapped_column(Boolean)
    brokers: Mapped[int] = mapped_column(Integer)
    partitions: Mapped[int] = mapped_column(Integer)
    records_total: Mapped[int] = mapped_column(Integer)
    acked_count: Mapped[int] = mapped_column(Integer)
    failed_count: Mapped[int] = mapped_column(Integer)
    lost_count: Mapped[int] = mapped_column(Integer)
    violations_count: Mapped[int] = mapped_column(Integer)
    events_count: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(16))

    __table_args__ = (
        Index("ix_runs_created_ms", "created_ms"),
        Index("ix_runs_outcome_created_ms", "outcome", "created_ms"),
        Index("ix_runs_kafka_version_created_ms", "kafka_version", "created_ms"),
        Index("ix_runs_scenario_name", "scenario_name"),
        {"sqlite_autoincrement": True},    # ids are never reused (caches and links key on them)
    )


class RunEvent(Base):
    """One entry of a run's replication history (docs/scenario-format.md §5 ``history``), in order."""
    __tablename__ = "run_events"

    run_id: Mapped[int] = mapped_column(Integer, ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)           # index in the history
    t_ms: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(40))
    topic: Mapped[str | None] = mapped_column(String(255), nullable=True)
    partition: Mapped[int | None] = mapped_column(Integer, nullable=True)
    broker: Mapped[int | None] = mapped_column(Integer, nullable=True)
    details: Mapped[str] = mapped_column(Text)                            # the whole event as JSON

    __table_args__ = (Index("ix_run_events_run_id_t_ms", "run_id", "t_ms"),)


class RunViolation(Base):
    """One invariant violation of a run (docs/scenario-format.md §5 ``violations``), in order."""
    __tablename__ = "run_violations"

    run_id: Mapped[int] = mapped_column(Integer, ForeignKey("runs.id", ondelete="CASCADE"),
                                        primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    t_ms: Mapped[int] = mapped_column(BigInteger)
    invariant: Mapped[str] = mapped_column(String(64))
    topic: Mapped[str | None] = mapped_column(String(255), nullable=True)
    partition: Mapped[int | None] = mapped_column(Integer, nullable=True)
    details: Mapped[str] = mapped_column(Text)                            # the whole violation as JSON


class SeekIndex(Base):
    """A complete set of periodic snapshots of a run for one engine version (written in one
    transaction with its snapshots, after them: a row here means the set is whole)."""
    __tablename__ = "seek_indexes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(Integer, ForeignKey("runs.id", ondelete="CASCADE"))
    engine_version: Mapped[str] = mapped_column(String(32))
    format: Mapped[int] = mapped_column(Integer)
    snapshots: Mapped[int] = mapped_column(Integer)
    bytes: Mapped[int] = mapped_column(BigInteger)
    built_ms: Mapped[int] = mapped_column(BigInteger)                     # Unix time, ms
    build_wall_ms: Mapped[int] = mapped_column(Integer)
    history_matches: Mapped[bool] = mapped_column(Boolean)                # re-simulation == saved history
    details: Mapped[str] = mapped_column(Text)                            # JSON: sharing mode, problems

    __table_args__ = (
        Index("ix_seek_indexes_run_id_engine_version", "run_id", "engine_version", unique=True),
        {"sqlite_autoincrement": True},
    )


class RunSnapshot(Base):
    """One snapshot of a seek index: a pool segment (state shared with later snapshots) and the
    snapshot itself, both compressed pickles, signed with the server's key (``mac``)."""
    __tablename__ = "run_snapshots"

    index_id: Mapped[int] = mapped_column(Integer, ForeignKey("seek_indexes.id", ondelete="CASCADE"),
                                          primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    t_ms: Mapped[int] = mapped_column(BigInteger)
    history_len: Mapped[int] = mapped_column(Integer)
    pool: Mapped[bytes] = mapped_column(LargeBinary)
    state: Mapped[bytes] = mapped_column(LargeBinary)
    mac: Mapped[bytes] = mapped_column(LargeBinary)
