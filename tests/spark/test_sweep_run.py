"""What one sweep run keeps (engine.tools.sweep_run): the compact row, the kept events, the latency
histogram — checked against the full result document of the same run. (No Spark.)"""
import json

from app.sweeps import spec
from engine.tools import sweep_run
from engine.simulation import Simulation


def _one_run(seed=3):
    sweep = spec.validate({"id": "w", "base": {"topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
                                               "clients": [{"name": "p1", "type": "producer", "topic": "t",
                                                            "rate_per_s": 50}],
                                               "duration_ms": 30000, "kafka_version": "0.10"},
                           "faults": {"from": "none", "crash_power": [20, 2000, 8000]},
                           "fault_phase": {"start_ms": 1000, "end_ms": 10000}, "seeds": 1})
    cell = spec.cells(sweep)[0]
    row, events, hist = sweep_run.simulate((0, "k" * 20, 0, seed), cell, sweep["fault_profiles"]["sweep"], "w")
    scenario = json.loads(dict(zip(sweep_run.RUN_FIELDS, row))["scenario_json"])
    return dict(zip(sweep_run.RUN_FIELDS, row)), events, hist, Simulation(scenario).run()


def test_the_row_counts_what_the_result_document_says():
    run, events, hist, result = _one_run()
    records = result["records"]
    assert run["status"] == "ok" and run["records_sent"] == len(records)
    assert run["acked"] == sum(r["status"] == "acked" for r in records)
    assert run["lost"] == sum(r["lost"] for r in records if r["status"] == "acked") > 0
    assert run["violations"] == len(result["violations"])
    assert run["history_len"] == len(result["history"])
    assert run["history_sha256"] == sweep_run.history_digest(result["history"])
    assert sum(n for _b, n in hist) == run["latency_count"] == run["acked"]
    assert run["converged"] is True and run["offline_end"] == 0 and run["brokers_down_end"] == 0


def test_kept_events_are_the_replication_story_in_order():
    run, events, _hist, result = _one_run()
    history = result["history"]
    assert events[-1][2] == sweep_run.METRICS_TYPE and events[-1][0] == len(history)
    events = events[:-1]                     # the Kafka metrics row (test below)
    kept = [e for e in history if e["type"] in sweep_run.KEPT_TYPES]
    assert [row[0] for row in events] == [i for i, e in enumerate(history) if e["type"] in sweep_run.KEPT_TYPES]
    assert [row[2] for row in events] == [e["type"] for e in kept]
    assert not any(row[2] == "high_watermark" for row in events)
    by_type = {}
    for row in events:
        by_type.setdefault(row[2], []).append(dict(zip(sweep_run.EVENT_FIELDS, row)))
    assert {e["kind"] for e in by_type["broker_stopped"]} == {"power"}
    elected = by_type["leader_elected"][0]
    assert elected["leader"] is not None and elected["isr_size"] >= 1 and elected["min_isr"] == 1
    violations = by_type.get("violation", [])
    assert len(violations) == run["violations"]
    # a leader's own ISR shrink names no leader; the controller's does
    for e in by_type.get("isr_shrink", []):
        assert (e["leader"] is None) == (e["kind"] == "leader")


def test_the_last_row_carries_the_runs_kafka_metrics():
    """One extra event row per run (type kafka_metrics, seq = history length, t_ms = the end):
    the summary of engine.metrics.run_summary, its counts equal to the history's own."""
    run, events, _hist, result = _one_run()
    row = dict(zip(sweep_run.EVENT_FIELDS, events[-1]))
    assert (row["type"], row["seq"], row["t_ms"]) == ("kafka_metrics", run["history_len"], run["end_ms"])
    summary = json.loads(row["details"])
    history = result["history"]
    assert summary["sample_ms"] == 100
    assert summary["isr_shrinks"] == sum(1 for e in history if e["type"] == "isr_shrink" and "by" not in e)
    assert summary["isr_expands"] == sum(1 for e in history if e["type"] == "isr_expand")
    assert summary["record_errors"] == sum(len(e["records"]) for e in history if e["type"] == "produce_failed")
    assert summary["unclean_elections"] == sum(1 for e in history if e["type"] == "leader_elected"
                                               and e.get("kind") == "unclean")
    assert summary["under_min_isr_ms"] is None            # 0.10 has no UnderMinIsrPartitionCount
    assert summary["metadata_lag_ms_peak"] is None and summary["fenced_brokers_max"] is None
    assert summary["under_replicated_ms"] % 100 == 0 and summary["under_replicated_ms"] > 0
    assert summary["active_controller_max"] == 1


def test_latency_buckets_keep_two_significant_digits():
    assert [sweep_run.latency_bucket(v) for v in (0, 7, 99, 100, 123, 999, 1000, 1999, 29862)] == \
        [0, 7, 99, 100, 120, 990, 1000, 1900, 29000]


def test_a_run_the_engine_rejects_is_kept_as_invalid():
    sweep = spec.validate({"id": "w", "seeds": 1})
    cell = dict(spec.cells(sweep)[0])
    cell["scenario"] = dict(cell["scenario"], timeline=[{"at_ms": 5, "op": "restart", "broker": 0}])
    row, events, hist = sweep_run.simulate((0, "k" * 20, 0, 1), cell, sweep["fault_profiles"]["default"], "w")
    run = dict(zip(sweep_run.RUN_FIELDS, row))
    assert run["status"] == "invalid" and "restart" in run["error"] and events == [] and hist == []
