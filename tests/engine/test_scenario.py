"""Scenario validation (docs/scenario-format.md §1-§3): every bad field is named with what is allowed."""
import json

import pytest

from engine.scenario.document import ScenarioError, kafka_assignment, load


def error_of(doc):
    with pytest.raises(ScenarioError) as err:
        load(doc)
    return err.value


def test_defaults_fill_an_empty_document():
    sc = load({})
    assert sc["kafka_version"] == "2.6" and sc["seed"] == 0 and sc["brokers"] == [0, 1, 2]
    assert sc["topics"][0]["name"] == "t" and sc["topics"][0]["replication_factor"] == 3
    assert sc["duration_ms"] == 60000 and sc["network"] == {"latency_ms": 1, "jitter_ms": 0}


def test_load_is_idempotent():
    sc = load({"brokers": 4, "topics": [{"name": "a", "partitions": 5, "replication_factor": 3}],
               "clients": [{"name": "p", "type": "producer", "topic": "a", "acks": "all",
                            "request.timeout.ms": 5000},
                           {"name": "c", "type": "consumer", "topic": "a", "auto.offset.reset": "earliest"}],
               "timeline": [{"at_ms": 5, "op": "crash", "broker": 1}]})
    assert load(json.loads(json.dumps(sc))) == sc


def test_load_is_idempotent_for_a_producer_on_the_era_default_acks():
    """The normalised form writes "acks": null (the era's default, §0); loading it again works."""
    sc = load({"clients": [{"name": "p", "type": "producer", "topic": "t", "rate_per_s": 10}]})
    assert sc["clients"][0]["acks"] is None
    assert load(json.loads(json.dumps(sc))) == sc


@pytest.mark.parametrize("doc, field", [
    ({"kafka_version": "3.1"}, "kafka_version"),
    ({"brokers": 0}, "brokers"),
    ({"brokers": [1, 1]}, "brokers"),
    ({"seed": "x"}, "seed"),
    ({"seed": True}, "seed"),
    ({"nonsense": 1}, "nonsense"),
    ({"topics": [{"name": "t", "replication_factor": 4}]}, "topics[0].replication_factor"),
    ({"topics": [{"name": "bad name!"}]}, "topics[0].name"),
    ({"topics": [{"name": "t", "partitions": 2, "assignment": {"0": [0]}}]}, "topics[0].assignment"),
    ({"topics": [{"name": "t", "assignment": {"0": [7]}}]}, "topics[0].assignment.0"),
    ({"config": {"replica.lag.time.max.ms": -5}}, "config.replica.lag.time.max.ms"),
    ({"config": {"made.up.key": 1}}, "config.made.up.key"),
    ({"timeline": [{"at_ms": 1, "op": "crash", "broker": 9}]}, "timeline[0].broker"),
    ({"timeline": [{"at_ms": 1, "op": "explode"}]}, "timeline[0].op"),
    ({"timeline": [{"at_ms": -1, "op": "heal"}]}, "timeline[0].at_ms"),
    ({"timeline": [{"at_ms": 1, "op": "produce", "topic": "nope"}]}, "timeline[0].topic"),
    ({"clients": [{"name": "p", "type": "producer", "topic": "t", "acks": 2}]}, "clients[0].acks"),
    ({"clients": [{"name": "zk", "type": "consumer", "topic": "t"}]}, "clients[0].name"),
])
def test_bad_fields_are_named(doc, field):
    assert error_of(doc).field == field


def test_a_key_the_era_does_not_know_is_an_error():
    err = error_of({"kafka_version": "0.10", "config": {"delivery.timeout.ms": 1000}})
    assert err.field == "config.delivery.timeout.ms" and "0.10" in err.message
    assert load({"kafka_version": "2.4", "config": {"delivery.timeout.ms": 1000}})


def test_restarting_a_running_broker_is_rejected_at_load_time():
    err = error_of({"timeline": [{"at_ms": 10, "op": "restart", "broker": 1}]})
    assert err.field == "timeline[0].broker" and "running" in err.message


def test_timeline_states_are_followed_in_time_order():
    load({"timeline": [{"at_ms": 20, "op": "restart", "broker": 1},
                       {"at_ms": 10, "op": "crash", "broker": 1}]})


def test_fetch_wait_must_stay_below_the_lag_time():
    err = error_of({"config": {"replica.lag.time.max.ms": 400}})
    assert err.field == "config.replica.fetch.wait.max.ms"


def test_malformed_json_text():
    assert "not valid JSON" in str(error_of("{broken"))


def test_kafka_round_robin_assignment_with_start_index_0():
    assert kafka_assignment([0, 1, 2], 4, 3) == {"0": [0, 1, 2], "1": [1, 2, 0], "2": [2, 0, 1],
                                                  "3": [0, 2, 1]}


def test_error_lists_what_is_allowed():
    err = error_of({"kafka_version": "9"})
    assert err.allowed == '"0.10", "1.1", "2.0", "2.0.1", "2.4", "2.6", "2.7", "3.0", "3.3", "3.7", "3.9-kraft", "4.1"'
    assert err.to_dict()["field"] == "kafka_version"
