"""Re-simulation on executors: a stored run replays exactly (sweep runs and saved runs alike),
and a new question can be asked of every stored run — e.g. the what-if "under "0.10"
truncation, would it have lost acknowledged records?"."""
import json

import pytest
from sqlalchemy import select

from app.analytics import resim
from app.store import db
from app.store import runs as saved
from app.sweeps import execute, repo
from engine.tools import sweep_run
from app.sweeps.tables import resim_groups, resim_questions, resim_results
from engine.scenario.library import library
from engine.simulation import ENGINE_VERSION, Simulation

SWEEP = {"id": "replay", "base": {"brokers": 3, "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
                                  "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all",
                                               "rate_per_s": 50}],
                                  "duration_ms": 30000, "kafka_version": "2.6"},
         "faults": {"from": "none", "crash_process": [20, 2000, 8000], "partition": [10, 2000, 6000]},
         "fault_phase": {"start_ms": 1000, "end_ms": 10000}, "seeds": 6}


@pytest.fixture(scope="module")
def corpus(spark, tmp_path_factory):
    """A store with a 6-run sweep and one saved run (the KIP-101 scenario 1 under 2.6 rules)."""
    store = db.open_store(f"sqlite:///{tmp_path_factory.mktemp('resim')}/store.db")
    execute.run_sweep(spark, store, SWEEP, runs_per_task=2)
    scenario = library()["kip101-scenario-1-v2.6"]
    result = Simulation(scenario).run()
    normalised = Simulation(scenario).scenario
    run = saved.save_run(store, scenario=normalised, engine_version=ENGINE_VERSION, end_ms=result["end_ms"],
                         finished=True, summary={"records_total": len(result["records"]),
                                                 "acked": sum(r["status"] == "acked" for r in result["records"]),
                                                 "failed": 0, "lost": sum(r["lost"] for r in result["records"]),
                                                 "violations": len(result["violations"])},
                         events=result["history"], violations=result["violations"], source="headless")
    yield store, run["id"]
    store.dispose()


def test_a_stored_sweep_run_replays_exactly_on_an_executor(spark, corpus):
    store, _ = corpus
    runs = [repo.get_run(store, key) for key in _run_keys(store)]
    histories = resim.replay_histories(spark, [(r["run_key"], json.dumps(r["scenario"]), None) for r in runs])
    for r in runs:
        history = histories[r["run_key"]]
        assert sweep_run.history_digest(history) == r["history_sha256"] and len(history) == r["history_len"]
        stored = [tuple(e[k] for k in sweep_run.EVENT_FIELDS) for e in repo.run_events(store, "replay", r["run_no"])
                  if e["type"] != sweep_run.METRICS_TYPE]
        assert stored == sweep_run.compact_events(history, r["scenario"]) and len(stored) > 10


def test_a_saved_run_replays_to_exactly_its_stored_events(spark, corpus):
    store, run_id = corpus
    run = saved.get_run(store, run_id)
    histories = resim.replay_histories(spark, [("saved", json.dumps(run["scenario"]), run["end_ms"])])
    assert histories["saved"] == saved.run_events(store, run_id)


def test_what_if_old_truncation_over_every_stored_run(spark, corpus):
    store, run_id = corpus
    question = {"property": {"name": "no_acked_loss"}, "what_if": {"kafka_version": "0.10"}}
    summary = resim.ask(spark, store, question)
    assert summary["runs"] == 7 and summary["errors"] == 0
    assert summary["exact"] == summary["verified_digests"] == 6      # every sweep run replayed exactly first
    with db.reading(store) as conn:
        rows = {r.ref: r for r in conn.execute(select(resim_results).where(resim_results.c.question_id == summary["id"]))}
    kip101 = rows[str(run_id)]
    # safe under 2.6's leader-epoch truncation; under 0.10's truncation to the high watermark, with the
    # run's own timeouts and unclean setting kept, the same faults lose an acknowledged record
    assert kip101.source == "headless" and not kip101.broken_before and kip101.broken and kip101.lost >= 1
    assert "acknowledged record" in kip101.detail
    # 2.6 with acks=all, min ISR 1, process crashes and partitions: nothing lost as stored
    assert not any(r.broken_before for r in rows.values() if r.source == "sweep")
    groups = {g["group_key"]: g for g in summary["groups"]}
    assert groups["headless:2.6"]["broken"] == 1 and groups["sweep:replay:0"]["runs"] == 6


def test_a_new_question_asked_twice_gives_the_same_tables(spark, corpus):
    store, _ = corpus
    question = {"property": {"name": "max_offline_ms", "param": 5000}, "sweeps": ["replay"], "saved": False}
    first = resim.ask(spark, store, question)
    assert first["runs"] == 6 and first["exact"] == 6

    def tables():
        with db.reading(store) as conn:
            return [sorted(tuple(r) for r in conn.execute(select(t).where(
                (t.c.question_id if "question_id" in t.c else t.c.id) == first["id"]))) for t in
                    (resim_questions, resim_results, resim_groups)]
    before = tables()
    resim.ask(spark, store, question)
    assert tables() == before and len(before[1]) == 6


@pytest.mark.parametrize("doc, field", [
    ({"property": {"name": "fast"}}, "property.name"),
    ({"property": {"name": "invariant", "param": "nope"}}, "property.param"),
    ({"what_if": {"kafka_version": "9.9"}}, "what_if.kafka_version"),
    ({"what_if": {"set": {"acks": "2"}}}, "what_if.set.acks"),
    ({"sweeps": ["Bad Id"]}, "sweeps"),
    ({"colour": 1}, "colour"),
])
def test_questions_are_validated(doc, field):
    with pytest.raises(resim.QuestionError) as info:
        resim.validate_question(doc)
    assert info.value.field == field


def _run_keys(store):
    from app.sweeps.tables import sweep_runs
    with db.reading(store) as conn:
        return [k for (k,) in conn.execute(select(sweep_runs.c.run_key).where(sweep_runs.c.sweep_id == "replay")
                                           .order_by(sweep_runs.c.run_no))]


def test_the_stored_events_of_every_source_aggregate_per_source_and_era(spark, corpus, tmp_path):
    from app.analytics.corpus import corpus_summary
    store, run_id = corpus
    rows = {(r["source"], r["kafka_version"]): r for r in corpus_summary(spark, store, parquet=str(tmp_path / "corpus"))}
    assert set(rows) == {("headless", "2.6"), ("sweep:replay", "2.6")}
    saved_run = rows[("headless", "2.6")]
    events = saved.run_events(store, run_id)
    elected = sum(1 for e in events if e["type"] == "leader_elected" and e.get("kind") == "clean")
    assert saved_run["runs"] == 1 and saved_run["runs_lost"] == 0 and saved_run["clean_elections_per_run"] == elected > 0
    sweep = rows[("sweep:replay", "2.6")]
    assert sweep["runs"] == 6 and sweep["p_loss"] == 0 and sweep["p_loss_hi"] > 0 and sweep["isr_changes_per_run"] > 0
    assert spark.read.parquet(str(tmp_path / "corpus")).count() == 2
