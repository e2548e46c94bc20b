"""kafka-broker-api-versions.sh and kafka-metadata-quorum.sh describe --status output read into
broker racks and KRaft voters (engine/scenario/import_tools.py); malformed lines refused by number."""
import pytest

from engine.scenario.import_cluster import import_cluster
from engine.scenario.import_text import ImportRefused, numbered_lines
from engine.scenario.import_tools import parse_api_versions, parse_quorum
from tests.engine.import_samples import API_VERSIONS_2_6, API_VERSIONS_4_1, QUORUM_3_7, QUORUM_4_1, as_pasted


def api(text):
    return parse_api_versions(numbered_lines(text, "api-versions"))


def quorum(text):
    return parse_quorum(numbered_lines(text, "quorum"))


def refused(parse, text):
    with pytest.raises(ImportRefused) as caught:
        parse(text)
    return caught.value


def test_api_versions_give_ids_and_racks():
    nodes = api(API_VERSIONS_2_6)
    assert nodes.racks == {1: "az-a", 2: "az-b", 3: "az-c"}
    assert api(as_pasted(API_VERSIONS_2_6)).racks == nodes.racks


def test_api_versions_of_4_1_rack_null_is_fenced_and_error():
    nodes = api(API_VERSIONS_4_1)
    assert nodes.racks == {1: None, 2: None, 4: None}
    assert (nodes.fenced, nodes.unreachable) == ([2], [4])


@pytest.mark.parametrize("text, line, words", [
    ("hello\n", 1, "'hello' is not a broker line"),
    ("k:9092 (id: 1 rack: a) -> (\n\tProduce(0): 0 to 9 [usable: 9],\n\tnot an api\n)\n", 3, "is not an API version"),
    ("k:9092 (id: 1 rack: a) -> (\n\tProduce(0): 0 to 9\n", 1, "are not closed by ')'"),
    ("k:9092 (id: 1 rack: a) -> (\n)\nk:9092 (id: 1 rack: b) -> (\n)\n", 3, "broker 1 has rack b here but a on line 1"),
    ("k:9092 (id: x rack: a) -> (\n)\n", 1, "is not a broker line"),
    ("k:9092 (id: 1 rack: a) -> maybe\n", 1, "'maybe' after '->'"),
])
def test_a_malformed_api_versions_line_is_refused_with_its_number(text, line, words):
    error = refused(api, text)
    assert error.field == f"api-versions line {line}" and words in str(error), str(error)


def test_quorum_of_3_7_and_of_4_1():
    q = quorum(QUORUM_3_7)
    assert (q.voters, q.observers, q.leader) == ([3000, 3001, 3002], [1001, 1002, 1003], 3001)
    q = quorum(as_pasted(QUORUM_4_1))
    assert (q.voters, q.observers, q.leader) == ([1, 2, 3], [], 1)


@pytest.mark.parametrize("text, field, words", [
    ("LeaderId: 1\nCurrentVoters: [1,2\n", "quorum line 2", "is not a list of ids"),
    ("CurrentVoters: [{\"directoryId\": \"x\"}]\n", "quorum line 1", "which has no node id"),
    ("CurrentVoters: []\n", "quorum line 1", "CurrentVoters is empty"),
    ("CurrentVoters: [1,1]\n", "quorum line 1", "names node 1 twice"),
    ("Voters: [1]\n", "quorum line 1", "is not a line of describe --status"),
    ("LeaderId: 1\n", "quorum", "has no CurrentVoters line"),
    ("LeaderId: one\nCurrentVoters: [1]\n", "quorum line 1", "'one' is not a whole number"),
])
def test_a_malformed_quorum_is_refused_naming_the_line(text, field, words):
    error = refused(quorum, text)
    assert error.field == field and words in str(error), str(error)


def test_an_offline_column_is_read_and_said_in_a_note():
    text = ("Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
            "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tOffline: 3\n")
    _, notes = import_cluster(text, "2.6")
    assert "at import, broker 3's replica was offline in 1 partition (t-0)" in " ".join(notes)
    with pytest.raises(ImportRefused) as caught:
        import_cluster(text.replace("Offline: 3", "Offline: 4"), "2.6")
    assert caught.value.field == "describe line 2" and "Offline names broker 4" in caught.value.message
