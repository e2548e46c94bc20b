"""End to end on real Spark: a small sweep stored in SQLite through JDBC, the analysis read back
through JDBC, and findings that must hold: under "0.10" (unclean election on by default) with
power crashes some acknowledged record is lost; under "2.6" with acks=all, min.insync.replicas=2,
unclean election off and process crashes only, none ever is. Then the same against a real
PostgreSQL server, which must give the very same result tables."""
import json

import pytest
from sqlalchemy import func, select, text

from app.analytics import job
from app.store import db
from app.sweeps import execute, repo
from app.sweeps.tables import (analytics_cells, analytics_distributions, analytics_invariants, analytics_runs,
                               sweep_events, sweep_latency, sweep_runs)

SWEEP = {
    "id": "e2e",
    "name": "eras x acks x crash kinds",
    "base": {"brokers": 3,
             "topics": [{"name": "t", "partitions": 3, "replication_factor": 3,
                         "config": {"min.insync.replicas": 2}}],
             "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 50}],
             "duration_ms": 30000},
    "grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"], "faults": ["power", "procs"]},
    "fault_profiles": {"power": {"from": "none", "crash_power": [20, 2000, 8000]},
                       "procs": {"from": "none", "crash_process": [20, 2000, 8000]}},
    "fault_phase": {"start_ms": 1000, "end_ms": 10000},
    "seeds": 8,
}
RESULTS = (analytics_cells, analytics_invariants, analytics_distributions, analytics_runs)


def table_rows(store, table, order=None):
    cols = list(table.c)
    with db.reading(store) as conn:
        rows = conn.execute(select(*cols).order_by(*(order or list(table.primary_key.columns)))).all()
    return [tuple(round(v, 9) if isinstance(v, float) else (bool(v) if c.type.python_type is bool else v)
                  for c, v in zip(cols, r)) for r in rows]


@pytest.fixture(scope="module")
def sqlite_store(spark, tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('e2e')}/store.db"
    store = db.open_store(url)
    seen = []
    summary = execute.run_sweep(spark, store, SWEEP, chunk_runs=32, runs_per_task=4, progress=seen.append)
    analysis = job.analyze(spark, store, ["e2e"])
    yield store, summary, analysis, seen
    store.dispose()


def count(store, table):
    with db.reading(store) as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def cells_by(store):
    cells = {c["cell_id"]: c["settings"] for c in repo.cells_of(store, "e2e")}
    with db.reading(store) as conn:
        rows = conn.execute(select(analytics_cells)).mappings().all()
    return {json.dumps(cells[r["cell_id"]], sort_keys=True): dict(r) for r in rows}, cells


def test_the_sweep_is_stored_whole(sqlite_store):
    store, summary, _analysis, seen = sqlite_store
    assert summary["runs_total"] == summary["runs_done"] == summary["runs_new"] == 64
    assert summary["status"] == "done"
    sweep = repo.get_sweep(store, "e2e")
    assert sweep["status"] == "done" and sweep["runs_done"] == 64 and sweep["cells"] == 8
    with db.reading(store) as conn:
        assert conn.execute(select(func.count(func.distinct(sweep_runs.c.run_key)))).scalar_one() == 64
        assert conn.execute(select(func.count()).select_from(sweep_runs).where(sweep_runs.c.status != "ok")).scalar_one() == 0
        per_run = dict(conn.execute(select(sweep_events.c.run_no, func.count()).group_by(sweep_events.c.run_no)).all())
        latency = conn.execute(select(func.sum(sweep_latency.c.count))).scalar_one()
        acked = conn.execute(select(func.sum(sweep_runs.c.acked))).scalar_one()
    assert sorted(per_run) == list(range(64)) and min(per_run.values()) > 10
    assert latency == acked                               # one latency sample per acknowledged record
    # progress went up to the total, with a rate
    assert seen[-1]["done"] == 64 and seen[-1]["rate_per_s"] > 0 and seen[-1]["eta_s"] == 0


def test_old_truncation_with_unclean_election_and_power_loss_loses_acked_records(sqlite_store):
    store = sqlite_store[0]
    cells, _ = cells_by(store)
    for acks in ("1", "all"):
        cell = cells[json.dumps({"acks": acks, "faults": "power", "kafka_version": "0.10"}, sort_keys=True)]
        assert cell["runs"] == 8 and cell["runs_lost"] >= 1 and cell["p_loss"] > 0, cell
        assert cell["p_loss_lo"] < cell["p_loss"] < cell["p_loss_hi"]


def test_modern_acks_all_min_isr_2_process_crashes_never_lose(sqlite_store):
    store = sqlite_store[0]
    cells, _ = cells_by(store)
    cell = cells[json.dumps({"acks": "all", "faults": "procs", "kafka_version": "2.6"}, sort_keys=True)]
    assert cell["runs"] == 8 and cell["runs_lost"] == 0 and cell["lost_max"] == 0 and cell["p_loss"] == 0
    assert cell["p_loss_hi"] > 0          # 0 of 8 is not proof of 0: the interval says how much
    assert cell["nonconverged"] == 0      # and every run healed
    with db.reading(store) as conn:
        lost = conn.execute(text("SELECT SUM(r.lost) FROM sweep_runs r JOIN sweep_cells c ON "
                                 "c.sweep_id = r.sweep_id AND c.cell_id = r.cell_id WHERE c.label = :l"),
                            {"l": "kafka_version=2.6, acks=all, faults=procs"}).scalar_one()
    assert lost == 0


def test_the_analysis_measures_unavailability_and_reactions(sqlite_store):
    store, _summary, analysis, _seen = sqlite_store
    assert analysis["runs"] == 64 and analysis["rows"]["analytics_cells"] == 8
    assert analysis["rows"]["analytics_runs"] == 64
    cells, _ = cells_by(store)
    for cell in cells.values():
        assert cell["offline_ms_mean"] > 0 and 0 < cell["offline_fraction"] < 1     # crashes cost availability
        assert cell["detect_samples"] > 0 and cell["detect_ms_p50"] > 0
        assert cell["failover_samples"] > 0 and cell["failover_ms_p50"] > 0
        assert cell["latency_p50_ms"] <= cell["latency_p95_ms"] <= cell["latency_p99_ms"] <= cell["latency_max_ms"]
        assert cell["worst_run_key"] is not None
    # a dead leader is noticed after the session timeout: 2.6 (18 s) fails over later than 0.10 (6 s)
    old = [c["failover_ms_p50"] for k, c in cells.items() if '"0.10"' in k]
    new = [c["failover_ms_p50"] for k, c in cells.items() if '"2.6"' in k]
    assert max(old) < min(new)
    with db.reading(store) as conn:
        metrics = {r.metric for r in conn.execute(select(analytics_distributions.c.metric).distinct())}
    assert metrics == {"detect_ms", "failover_ms", "offline_ms", "latency_ms"}


def test_the_worst_run_of_a_cell_is_its_biggest_loss(sqlite_store):
    store = sqlite_store[0]
    cells, _ = cells_by(store)
    cell = cells[json.dumps({"acks": "all", "faults": "power", "kafka_version": "0.10"}, sort_keys=True)]
    with db.reading(store) as conn:
        most = conn.execute(select(func.max(sweep_runs.c.lost)).where(sweep_runs.c.cell_id == cell["cell_id"])).scalar_one()
    worst = repo.get_run(store, cell["worst_run_key"])
    assert worst["lost"] == most == cell["lost_max"] > 0
    assert worst["scenario"]["kafka_version"] == "0.10"


def test_running_the_analysis_twice_gives_the_same_tables(spark, sqlite_store, tmp_path):
    store = sqlite_store[0]
    before = {t.name: table_rows(store, t) for t in RESULTS}
    job.analyze(spark, store, ["e2e"], parquet=str(tmp_path / "results"))
    assert {t.name: table_rows(store, t) for t in RESULTS} == before
    cells = spark.read.parquet(str(tmp_path / "results" / "analytics_cells"))
    assert cells.count() == 8 and {r.sweep_id for r in cells.select("sweep_id").collect()} == {"e2e"}


def test_running_the_sweep_again_adds_nothing(spark, sqlite_store):
    store = sqlite_store[0]
    summary = execute.run_sweep(spark, store, SWEEP)
    assert summary["runs_new"] == 0 and summary["runs_done"] == 64


def test_the_same_pipeline_on_postgresql_gives_the_same_results(spark, pg_tcp, sqlite_store):
    pg_tcp.create_database("e2e")
    store = db.open_store(pg_tcp.tcp_url("e2e"))
    try:
        summary = execute.run_sweep(spark, store, SWEEP, chunk_runs=32, runs_per_task=4)
        assert summary["runs_done"] == 64
        job.analyze(spark, store, ["e2e"])
        sqlite = sqlite_store[0]
        for table in (sweep_runs,) + RESULTS:
            got, want = table_rows(store, table), table_rows(sqlite, table)
            if table is sweep_runs:        # cpu_ms is a measurement, not a fact of the run
                skip = [c.name for c in table.c].index("cpu_ms")
                got = [r[:skip] + r[skip + 1:] for r in got]
                want = [r[:skip] + r[skip + 1:] for r in want]
            assert got == want, table.name
        assert count(store, sweep_events) == count(sqlite, sweep_events) > 0
    finally:
        store.dispose()


def test_the_analysis_reads_the_facts_once_in_a_few_jobs(spark, sqlite_store):
    """The facts are read once (one job fills their caches) and every result table comes from
    one action: 10 Spark jobs for this 40-run sweep (those two, and the broadcasts of small
    join sides, each a job of its own: with the caches filled before planning, Spark knows how
    small they are), where a collect per table with adaptive execution (a job per shuffle
    stage) ran 56. A regression that re-reads the store or collects per table shows up here."""
    from app.spark.work import SparkWork
    store = sqlite_store[0]
    before = {t.name: table_rows(store, t) for t in RESULTS}
    with SparkWork(spark) as work:
        job.analyze(spark, store, ["e2e"])
    assert work.summary()["jobs"] <= JOBS_PER_ANALYSIS, work.summary()
    assert {t.name: table_rows(store, t) for t in RESULTS} == before


JOBS_PER_ANALYSIS = 10


def test_the_lean_extract_gives_the_analysis_of_every_stored_fact(spark, sqlite_store):
    """The extract reads only the analysed event types, lets the database sum produce errors per
    run and latency per cell; the analysis of every stored row (all events, per-run latency
    summed by Spark) must give the same tables."""
    from app.analytics import extract as ex
    from app.analytics import load
    from app.analytics import transforms as T
    from app.spark.jdbc import jdbc_of, read_table
    from app.sweeps.schemas import EVENTS_TABLE_SCHEMA, LATENCY_TABLE_SCHEMA
    store = sqlite_store[0]
    jdbc = jdbc_of(store.url.render_as_string(hide_password=False))
    lean = ex.extract(spark, store, jdbc, ["e2e"])
    where = ex.sweep_filter(["e2e"])
    events = read_table(spark, jdbc, "sweep_events", EVENTS_TABLE_SCHEMA, where=where)
    latency = read_table(spark, jdbc, "sweep_latency", LATENCY_TABLE_SCHEMA, where=where)
    # the types left in the store, and the produce errors summed per run and error
    skipped = events.where(~events["type"].isin(*T.ANALYSED_TYPES)).count()
    errors = events.where(events["type"] == "produce_error")
    assert skipped > 0 and errors.count() > errors.select("run_no", "kind").distinct().count()
    assert lean["events"].where(lean["events"]["type"] != "produce_error").count() == \
        events.count() - skipped - errors.count()

    def tables(events, lat):
        results = T.analyse(lean["runs"], events, lat)
        try:
            got = load.collect_tables(load.result_frames({k: v for k, v in results.items() if k != "_cached"}))
        finally:
            T.release(results)
        return {name: sorted(json.dumps(r, sort_keys=True) for r in rows) for name, rows in got.items()}

    every = tables(events, T.cell_latency(lean["runs"], latency))
    assert any(every.values())
    assert tables(lean["events"], lean["cell_latency"]) == every
