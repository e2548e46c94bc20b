"""Counterexample search and shrinking (issue: find the failure, shrink it, show it)."""
import pytest

from engine.tools.search_examples import LOSSY_0_10 as OLD, PROCESS_CRASHES_ONLY, SAFE_2_6 as SAFE
from engine.scenario.document import ScenarioError
from engine.tools.search import check, narrate, search, shrink, validate_property


@pytest.fixture(scope="module")
def old_counterexample():
    found = search(OLD, {"name": "no_acked_loss"}, runs=100)
    assert found["found"], "0.10 with RF 2 and unclean election must lose an acknowledged record"
    small, evaluations = shrink(found["scenario"], {"name": "no_acked_loss"})
    return found, small, evaluations


def test_old_kafka_loses_data_and_the_schedule_shrinks_to_a_few_steps(old_counterexample):
    found, small, evaluations = old_counterexample
    assert len(small["timeline"]) <= 6
    assert len(small["timeline"]) < len(found["scenario"]["timeline"])
    broken, evidence, result = check(small, {"name": "no_acked_loss"})
    assert broken and evidence["records"]
    assert any(r["lost"] for r in result["records"])
    assert small["duration_ms"] <= found["scenario"]["duration_ms"]


def test_shrinking_is_deterministic(old_counterexample):
    found, small, _ = old_counterexample
    again, _ = shrink(found["scenario"], {"name": "no_acked_loss"})
    assert again == small


def test_narration_ends_with_the_break_and_uses_reasons(old_counterexample):
    _, small, _ = old_counterexample
    broken, evidence, result = check(small, {"name": "no_acked_loss"})
    steps = narrate(result, evidence)
    assert steps[-1]["type"] == "property_broken" and steps[-1]["text"] == evidence["detail"]
    assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
    assert any(s["type"] == "leader_elected" for s in steps)


def test_safe_settings_lose_nothing_under_process_crashes():
    found = search(SAFE, {"name": "no_acked_loss"}, profile=PROCESS_CRASHES_ONLY, runs=25)
    assert found == {"found": False, "runs": 25, "seed": None, "scenario": None, "evidence": None}


def test_not_enough_replicas_property_is_found_with_min_isr_2():
    found = search(SAFE, {"name": "no_error", "param": "NOT_ENOUGH_REPLICAS"},
                   profile=PROCESS_CRASHES_ONLY, runs=30)
    assert found["found"] and "NOT_ENOUGH_REPLICAS" in found["evidence"]["detail"]


def test_offline_property_reports_the_span():
    scenario = {"kafka_version": "2.6", "brokers": 3,
                "topics": [{"name": "t", "partitions": 1, "replication_factor": 1, "assignment": {"0": [1]}}],
                "timeline": [{"at_ms": 1000, "op": "crash", "broker": 1},
                             {"at_ms": 40000, "op": "restart", "broker": 1}], "duration_ms": 50000}
    broken, evidence, _ = check(scenario, {"name": "max_offline_ms", "param": 5000})
    assert broken and "t-0 offline for" in evidence["detail"]
    assert not check(scenario, {"name": "max_offline_ms", "param": 60000})[0]


@pytest.mark.parametrize("prop, field", [({"name": "nope"}, "property.name"),
                                         ({"name": "invariant", "param": "x"}, "property.param"),
                                         ({"name": "max_offline_ms", "param": -1}, "property.param")])
def test_properties_are_validated(prop, field):
    with pytest.raises(ScenarioError) as err:
        validate_property(prop)
    assert err.value.field == field


#: Process crashes, one-way cuts and network partitions; no power failure (the page cache survives).
CRASHES_AND_CUTS = {**PROCESS_CRASHES_ONLY, "crash_process": (3.0, 1000, 30000),
                    "cut": (1.0, 2000, 20000), "partition": (0.5, 2000, 20000)}


def test_alter_isr_eras_lose_nothing_without_power_failures_but_power_failures_do():
    """2.7+ (AlterIsr) and 3.3 (AlterPartition, KIP-841): RF 3, acks=all, min.insync.replicas 2,
    unclean election off - an acknowledged record is on two replicas' page caches and only an
    ISR member (the controller's committed ISR, docs/model.md §17) can lead, so no crash or cut
    loses it. The control: the same search with power failures (unflushed page cache gone,
    log.flush.interval.messages is Long.MAX_VALUE) finds a loss, so the search can fail."""
    for version in ("2.7", "3.3"):
        found = search({**SAFE, "kafka_version": version}, {"name": "no_acked_loss"},
                       profile=CRASHES_AND_CUTS, runs=12)
        assert found["found"] is False and found["runs"] == 12, (version, found["evidence"])
    power = {**CRASHES_AND_CUTS, "crash_power": (3.0, 1000, 30000)}
    found = search({**SAFE, "kafka_version": "2.7"}, {"name": "no_acked_loss"}, profile=power, runs=12)
    assert found["found"] and found["evidence"]["records"]
    assert any(op["op"] == "crash" and op.get("mode") == "power" for op in found["scenario"]["timeline"])


def test_narration_explains_alter_partition_in_kafkas_words():
    from engine.scenario.library import library
    from engine.simulation import Simulation
    result = Simulation(library()["ineligible-replica-refused"]).run()
    steps = [s for s in narrate(result, None, limit=400) if s["type"] == "alter_partition"]
    assert [s["text"].split(":")[0] for s in steps[:2]] == \
        ["leader 1 sends AlterPartition for orders-0 to the controller",
         "the controller wrote ISR [1, 2] of orders-0 to ZooKeeper (zkVersion 1) and answered AlterPartition"]
    refused = [s["text"] for s in steps if "INELIGIBLE_REPLICA" in s["text"]]
    assert refused and "KIP-841" in refused[0] and "committed ISR" in refused[0]


def test_a_search_run_is_titled_as_one_not_as_the_story_it_started_from():
    """Issue 34 item 1: a counterexample's replay showed the library's "Acknowledged acks=all
    records survive" above a run that lost 19 of them."""
    from engine.scenario.library import library
    from engine.tools.search import candidate
    base = {**library()["broker-failure-clean-election"], "timeline": []}
    run = candidate(base, None, 7)
    assert run["name"] == "Search run, seed 7: " + base["name"]
    assert "survive" not in run["description"] and "seed 7" in run["description"]
