"""A scenario of a pasted cluster (engine/scenario/import_cluster.py): brokers, assignments exactly
as the Replicas column, modelled topic configs, racks, KRaft voters; notes for everything the
scenario's healthy start cannot keep; the engine's limits refused by name."""
import pytest

from engine.scenario.document import load
from engine.scenario.fields import TOP_LEVEL
from engine.scenario.import_cluster import import_cluster
from engine.scenario.import_text import ImportRefused
from engine.simulation import Simulation
from tests.engine.import_samples import (API_VERSIONS_2_6, API_VERSIONS_4_1, DESCRIBE_0_10, DESCRIBE_1_1,
                                         DESCRIBE_2_6, DESCRIBE_3_7, DESCRIBE_4_1, QUORUM_3_7, QUORUM_4_1)



def note_with(notes, words):
    found = [n for n in notes if words in n]
    assert found, f"no note with {words!r} in {notes}"
    return found[0]


def test_assignments_are_the_replicas_column_in_order_and_the_scenario_loads():
    scenario, _ = import_cluster(DESCRIBE_0_10, "0.10")
    assert scenario["brokers"] == [0, 1, 2]
    orders, audit = scenario["topics"]
    assert orders == {"name": "orders", "partitions": 3, "replication_factor": 2,
                      "assignment": {"0": [1, 2], "1": [2, 0], "2": [0, 1]},
                      "config": {"min.insync.replicas": 2}}
    assert audit["assignment"] == {"0": [0, 1, 2]} and "config" not in audit
    loaded = load(scenario)
    assert loaded["topics"][0]["assignment"] == orders["assignment"]


def test_the_simulation_starts_with_the_preferred_replicas_leading():
    scenario, _ = import_cluster(DESCRIBE_3_7, "3.7")
    sim = Simulation(load(scenario))
    sim.advance_to(5000)
    parts = sim.result(logs=False)["partitions"]
    assert {k: (v["replicas"], v["leader"], sorted(v["isr"])) for k, v in parts.items()} == {
        "orders-0": ([1001, 1002, 1003], 1001, [1001, 1002, 1003]),
        "orders-1": ([1002, 1003, 1001], 1002, [1001, 1002, 1003]),
        "orders-2": ([1003, 1001, 1002], 1003, [1001, 1002, 1003])}


def test_modelled_topic_configs_are_typed_and_renamed_the_rest_are_notes():
    scenario, notes = import_cluster(DESCRIBE_2_6, "2.6")
    assert scenario["topics"][0]["config"] == {"min.insync.replicas": 2}
    assert note_with(notes, "cleanup.policy") == ("topic configs the simulator does not model were left out: "
                                                  "cleanup.policy (orders), segment.bytes (orders)")
    scenario, notes = import_cluster(DESCRIBE_3_7, "3.7")
    assert scenario["topics"][0]["config"] == {"log.flush.interval.messages": 10000}     # flush.messages
    note_with(notes, "retention.bytes (orders)")
    _, notes = import_cluster(DESCRIBE_0_10 + DESCRIBE_0_10.replace("orders", "more").replace("audit", "again")
                              .replace("retention.ms=86400000", "retention.ms=1,segment.ms=5"), "0.10")
    assert note_with(notes, "left out").endswith("retention.ms (2 topics: orders, more), segment.ms (more)")
    scenario, _ = import_cluster(DESCRIBE_1_1, "1.1")
    assert scenario["topics"][0]["config"] == {"unclean.leader.election.enable": True}


def test_a_config_value_the_simulator_refuses_names_the_topic_line():
    text = DESCRIBE_2_6.replace("min.insync.replicas=2", "min.insync.replicas=0")
    with pytest.raises(ImportRefused) as caught:
        import_cluster(text, "2.6")
    assert caught.value.field == "describe line 1" and "min.insync.replicas=0" in caught.value.message
    text = DESCRIBE_1_1.replace("enable=true", "enable=maybe")
    with pytest.raises(ImportRefused) as caught:
        import_cluster(text, "1.1")
    assert caught.value.field == "describe line 1" and caught.value.allowed == "true or false"


def test_state_that_a_healthy_start_cannot_keep_is_said_in_notes():
    _, notes = import_cluster(DESCRIBE_0_10, "0.10")
    assert note_with(notes, "no leader") .startswith("at import, 1 partition had no leader (Leader: none): orders-1")
    assert "broker 0 was out of the ISR of 2 partitions (orders-1, orders-2)" in note_with(notes, "broker 0 was out")
    assert "every replica in sync" in note_with(notes, "broker 0 was out")
    assert "broker 2 was out of the ISR of 1 partition (orders-0)" not in " ".join(notes)   # 2 is in orders-0's ISR
    _, notes = import_cluster(DESCRIBE_2_6, "2.6")
    assert "orders-1 (leader 3, preferred 2)" in note_with(notes, "other than the preferred replica")
    assert "moving-0 (adding 3, removing 2)" in note_with(notes, "being reassigned")
    _, notes = import_cluster(DESCRIBE_1_1, "1.1")
    assert "topic old was marked for deletion" in note_with(notes, "marked for deletion")
    _, notes = import_cluster(DESCRIBE_4_1, "4.1")
    assert "orders-1 (Elr 2,3, LastKnownElr 1)" in note_with(notes, "Eligible Leader Replicas")


def test_a_healthy_cluster_has_no_state_notes():
    healthy = ("Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
               "\tTopic: t\tPartition: 0\tLeader: 5\tReplicas: 5,6\tIsr: 6,5\n")
    scenario, notes = import_cluster(healthy, "2.6")
    assert notes == [] and scenario["brokers"] == [5, 6]
    assert scenario["description"] == ("Imported from kafka-topics.sh --describe: 1 topic, 1 partition on "
                                       "2 brokers (5, 6).")


def test_notes_are_also_in_the_description_the_page_shows():
    scenario, notes = import_cluster(DESCRIBE_0_10, "0.10")
    assert all(n in scenario["description"] for n in notes)


def test_api_versions_add_brokers_without_replicas_and_say_who_was_unreachable():
    scenario, notes = import_cluster(DESCRIBE_4_1, "3.7", api_versions=API_VERSIONS_4_1)
    assert scenario["brokers"] == [1, 2, 3, 4]            # 4: no replica, but the tool saw it
    assert "racks" not in scenario                         # every rack is null
    note_with(notes, "could not reach broker 4")
    note_with(notes, "broker 3 holds replicas but is not in the api-versions output")
    note_with(notes, "broker 2 was fenced")


@pytest.fixture
def engine_with_racks(monkeypatch):
    """The importer as it runs once feat/racks has landed: the engine knows "racks" (the stub
    loader checks the rest of the document; the racks field is the engine's to check)."""
    import engine.scenario.import_cluster as importer
    monkeypatch.setattr(importer, "TOP_LEVEL", TOP_LEVEL + ("racks",))
    monkeypatch.setattr(importer, "load", lambda doc: load({k: v for k, v in doc.items() if k != "racks"}))


def test_racks_come_from_api_versions(engine_with_racks):
    scenario, notes = import_cluster(DESCRIBE_2_6, "2.6", api_versions=API_VERSIONS_2_6)
    assert scenario["racks"] == {"1": "az-a", "2": "az-b", "3": "az-c"}
    assert not [n for n in notes if "rack" in n]


def test_brokers_without_a_rack_are_named_in_a_note(engine_with_racks):
    scenario, notes = import_cluster(DESCRIBE_0_10, "0.10", api_versions=API_VERSIONS_2_6)
    assert scenario["brokers"] == [0, 1, 2, 3]                     # 3 holds no replica, the tool saw it
    assert scenario["racks"] == {"1": "az-a", "2": "az-b", "3": "az-c"}
    assert "broker 0 has no rack" in note_with(notes, "no rack")


def test_no_known_rack_means_no_racks_field(engine_with_racks):
    scenario, _ = import_cluster(DESCRIBE_4_1, "4.1", api_versions=API_VERSIONS_4_1)     # every rack: null
    assert "racks" not in scenario


def test_racks_with_the_engine_as_it_is():
    """Before feat/racks: the racks are a note, the scenario loads without them. After it: the
    engine's own loader accepts the racks the importer wrote (scenario-format.md's racks section)."""
    scenario, notes = import_cluster(DESCRIBE_2_6, "2.6", api_versions=API_VERSIONS_2_6)
    if "racks" in TOP_LEVEL:
        assert load(scenario)["racks"] == {"1": "az-a", "2": "az-b", "3": "az-c"}
    else:
        assert "racks" not in scenario
        assert "broker 1: az-a, broker 2: az-b, broker 3: az-c" in note_with(notes, "not modelled by this version")


def test_kraft_voters_become_dedicated_controllers_and_observers_brokers():
    scenario, notes = import_cluster(DESCRIBE_3_7, "3.9-kraft", quorum=QUORUM_3_7)
    assert scenario["controllers"] == [3000, 3001, 3002]
    assert scenario["brokers"] == [1001, 1002, 1003]
    note_with(notes, "controller 3001 led the quorum")
    assert load(scenario)["controllers"] == [3000, 3001, 3002]


def test_voters_that_are_every_broker_are_combined_mode():
    scenario, _ = import_cluster(DESCRIBE_4_1, "4.1", quorum=QUORUM_4_1)       # 3.9+ JSON voters
    assert scenario["controllers"] == "combined" and scenario["brokers"] == [1, 2, 3]


def test_voters_among_some_brokers_only_fall_back_with_a_note():
    scenario, notes = import_cluster(DESCRIBE_4_1, "4.1", quorum=QUORUM_4_1.replace(
        ', {"id": 3, "endpoints": ["CONTROLLER://k3:9093"]}', ""))
    assert scenario["controllers"] == [3000, 3001, 3002]
    assert "combined mode makes every broker a voter" in note_with(notes, "voters 1, 2 include brokers 1, 2")


def test_without_a_quorum_the_default_controllers_move_clear_of_broker_ids():
    text = DESCRIBE_3_7.replace("1001", "3001")
    scenario, notes = import_cluster(text, "4.1")
    assert scenario["controllers"] == [3002, 3003, 3004]      # above broker 3001
    note_with(notes, "no kafka-metadata-quorum.sh output")
    assert load(scenario)["brokers"] == [1002, 1003, 3001]


def test_a_quorum_in_a_zookeeper_era_is_a_note():
    scenario, notes = import_cluster(DESCRIBE_3_7, "2.6", quorum=QUORUM_3_7)
    assert "controllers" not in scenario
    note_with(notes, "is not used: kafka_version 2.6 runs on ZooKeeper")


@pytest.mark.parametrize("era", ["0.10", "1.1", "2.0", "2.4", "2.7", "3.3", "3.7", "3.9-kraft", "4.1"])
def test_every_sample_loads_in_every_era(era):
    for text in (DESCRIBE_0_10, DESCRIBE_1_1, DESCRIBE_2_6, DESCRIBE_3_7, DESCRIBE_4_1):
        scenario, _ = import_cluster(text, era)
        assert load(scenario)["kafka_version"] == era


# -- limits ---------------------------------------------------------------------------------------------
def many_topics(n, partitions=1):
    lines = []
    for i in range(n):
        lines.append(f"Topic: t{i}\tPartitionCount: {partitions}\tReplicationFactor: 1\tConfigs: ")
        lines += [f"\tTopic: t{i}\tPartition: {p}\tLeader: 1\tReplicas: 1\tIsr: 1" for p in range(partitions)]
    return "\n".join(lines)


def test_the_engines_limits_are_refused_by_name():
    with pytest.raises(ImportRefused) as caught:
        import_cluster(many_topics(101), "2.6")
    assert caught.value.too_large and "at most 100 topics" in caught.value.allowed
    with pytest.raises(ImportRefused) as caught:
        import_cluster(many_topics(11, 100), "2.6")
    assert "1,100 partitions" in caught.value.message and "at most 1,000 partitions" in caught.value.allowed
    wide = "Topic: w\tPartitionCount: 65\tReplicationFactor: 1\tConfigs: \n" + "\n".join(
        f"\tTopic: w\tPartition: {p}\tLeader: {p + 1}\tReplicas: {p + 1}\tIsr: {p + 1}" for p in range(65))
    with pytest.raises(ImportRefused) as caught:
        import_cluster(wide, "2.6")
    assert "65 brokers" in caught.value.message and "at most 64 brokers" in caught.value.allowed


def test_topic_filter_brings_a_big_cluster_under_the_limits():
    scenario, _ = import_cluster(many_topics(150), "2.6", topics=["t3", "t140"])
    assert [t["name"] for t in scenario["topics"]] == ["t3", "t140"]
    with pytest.raises(ImportRefused) as caught:
        import_cluster(many_topics(2), "2.6", topics=["nope"])
    assert caught.value.field == "topic" and "no topic nope" in caught.value.message


def test_an_unknown_era_is_refused_with_the_list():
    with pytest.raises(ImportRefused) as caught:
        import_cluster(DESCRIBE_2_6, "2.5")
    assert caught.value.field == "kafka_version" and '"2.5"' not in caught.value.allowed and "2.6" in caught.value.allowed
