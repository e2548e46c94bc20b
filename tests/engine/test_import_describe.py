"""kafka-topics.sh --describe as every era prints it, read into topics; anything else refused with
its line number and what was expected there (engine/scenario/import_describe.py)."""
import pytest

from engine.scenario.import_describe import parse_describe
from engine.scenario.import_text import MAX_TEXT_BYTES, MAX_TEXT_LINES, ImportRefused, numbered_lines
from tests.engine.import_samples import (DESCRIBE_0_10, DESCRIBE_1_1, DESCRIBE_2_6, DESCRIBE_3_7, DESCRIBE_4_1,
                                         as_pasted)


def read(text):
    return parse_describe(numbered_lines(text, "describe"))


def refusal(text):
    with pytest.raises(ImportRefused) as caught:
        read(text)
    return caught.value


def layout(topics):
    return {t.name: {p: (d.leader, d.replicas, d.isr) for p, d in sorted(t.partitions.items())} for t in topics}


def test_0_10_old_header_and_a_leader_of_minus_one():
    orders, audit = read(DESCRIBE_0_10)
    assert (orders.name, orders.partition_count, orders.replication_factor) == ("orders", 3, 2)
    assert orders.configs == [("min.insync.replicas", "2"), ("retention.ms", "86400000")]
    assert layout([orders])["orders"] == {0: (1, [1, 2], [1, 2]), 1: (None, [2, 0], [2]), 2: (1, [0, 1], [1])}
    assert (audit.configs, audit.partitions[0].replicas) == ([], [0, 1, 2])
    assert orders.topic_id is None


def test_1_1_marked_for_deletion_and_an_empty_isr():
    payments, old = read(DESCRIBE_1_1)
    assert payments.configs == [("unclean.leader.election.enable", "true")]
    assert payments.partitions[0].replicas == [3, 1, 2]            # the order printed: 3 is preferred
    assert old.marked_for_deletion and not payments.marked_for_deletion
    assert (old.partitions[0].leader, old.partitions[0].isr) == (None, [])


def test_2_6_spaces_after_colons_list_values_and_a_reassignment():
    orders, moving = read(DESCRIBE_2_6)
    assert orders.configs == [("min.insync.replicas", "2"), ("cleanup.policy", "compact,delete"),
                              ("segment.bytes", "1073741824")]
    assert layout([orders])["orders"] == {0: (1, [1, 2, 3], [1, 2, 3]), 1: (3, [2, 3, 1], [3, 1])}
    part = moving.partitions[0]
    # ReplicationFactor is the replicas less those being added (TopicCommand.getReplicationFactor)
    assert (moving.replication_factor, part.replicas, part.adding, part.removing) == (2, [1, 2, 3], [3], [2])


def test_3_7_topic_ids_and_large_broker_ids():
    (orders,) = read(DESCRIBE_3_7)
    assert orders.topic_id == "3Bq5oKAbQ6eAE0CzXzQy9g"
    assert orders.configs == [("flush.messages", "10000"), ("retention.bytes", "-1")]
    assert [orders.partitions[p].replicas[0] for p in range(3)] == [1001, 1002, 1003]


def test_4_1_elr_columns_and_n_a():
    orders, logs = read(DESCRIBE_4_1)
    p0, p1 = orders.partitions[0], orders.partitions[1]
    assert (p0.elr, p0.last_known_elr) == ([], [])
    assert (p1.leader, p1.isr, p1.elr, p1.last_known_elr) == (None, [], [2, 3], [1])
    assert (logs.partitions[0].elr, logs.partitions[0].last_known_elr) == (None, None)     # N/A


@pytest.mark.parametrize("sample", [DESCRIBE_0_10, DESCRIBE_1_1, DESCRIBE_2_6, DESCRIBE_3_7, DESCRIBE_4_1])
def test_spaces_for_tabs_crlf_and_trailing_blanks_mean_the_same(sample):
    assert layout(read(as_pasted(sample))) == layout(read(sample))
    assert [t.configs for t in read(as_pasted(sample))] == [t.configs for t in read(sample)]


def test_blank_lines_between_topics_are_fine():
    assert layout(read(DESCRIBE_0_10.replace("\nTopic:audit", "\n\n\nTopic:audit"))) == layout(read(DESCRIBE_0_10))


# -- refusals name the line and what was expected -----------------------------------------------------
HEAD = "Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
P0 = "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
P1 = "\tTopic: t\tPartition: 1\tLeader: 2\tReplicas: 2,1\tIsr: 2,1\n"


@pytest.mark.parametrize("text, line, words", [
    ("$ kafka-topics.sh --describe\n" + HEAD + P0 + P1, 1, "neither a topic line nor a partition line"),
    (HEAD + P0 + "hello world\n" + P1, 3, "neither a topic line nor a partition line"),
    (HEAD + P0 + P1.replace("\tIsr: 2,1", ""), 3, "no Isr column"),
    (HEAD + P0 + P1.replace("Leader: 2", "Leader: 7"), 3, "Leader 7 is not one of Replicas 2,1"),
    (HEAD + P0 + P1.replace("Isr: 2,1", "Isr: 2,9"), 3, "Isr names broker 9"),
    (HEAD + P0 + P1.replace("Partition: 1", "Partition: 2"), 3, "partition 2 of t, which has PartitionCount 2"),
    (HEAD + P0 + P0, 3, "partition 0 of t is described twice (line 2)"),
    (HEAD + P0, 1, "no line for partition 1"),
    (P0 + HEAD + P1, 1, "no topic line comes before it"),
    (HEAD + P0 + P1.replace("Topic: t", "Topic: u"), 3, "a partition line of topic u"),
    (HEAD + P0 + P1.replace("Replicas: 2,1", "Replicas: 2,1,3").replace("Isr: 2,1", "Isr: 2"), 3,
     "has 3 replicas but partition 0 has 2"),
    (HEAD.replace("ReplicationFactor: 2", "ReplicationFactor: 3") + P0 + P1, 1, "ReplicationFactor 3"),
    (HEAD + P0 + P1.replace("Replicas: 2,1", "Replicas: 2,x"), 3, "'x' is not a whole number"),
    (HEAD + P0 + P1.replace("Replicas: 2,1", "Replicas: 2,2"), 3, "Replicas names a broker twice"),
    (HEAD + P0 + P1.replace("Isr: 2,1", "Isr: 2,1\tOwner: me"), 3, "Owner is not a column"),
    (HEAD + P0 + P1.replace("Leader: 2", "Leader: 2\tLeader: 2"), 3, "the column Leader appears twice"),
    (HEAD.replace("Topic: t", "Topic: a/b") + P0 + P1, 1, "'a/b' is not a Kafka topic name"),
    (HEAD.replace("PartitionCount: 2", "PartitionCount: two") + P0 + P1, 1, "'two' is not a whole number"),
    (HEAD.replace("Configs: ", "Configs: =x") + P0 + P1, 1, "does not start with key=value"),
    (HEAD + HEAD, 1, "no line for partition 0"),
    (HEAD + P0 + P1 + HEAD + P0 + P1, 4, "topic t is described twice"),
    (HEAD + P0 + P1.replace("Leader: 2", "Leader: -2"), 3, "Leader: a broker id, or none"),
    (HEAD + P0 + P1.replace("Replicas: 2,1", "Replicas: 2,1000000001").replace("Isr: 2,1", "Isr: 2"), 3,
     "1000000001 is out of range"),
])
def test_a_malformed_line_is_refused_with_its_number(text, line, words):
    error = refusal(text)
    assert error.field == f"describe line {line}", str(error)
    assert words in str(error), str(error)
    assert error.allowed                                 # what was expected there


def test_output_of_the_filters_is_refused_saying_what_to_paste():
    # --under-replicated-partitions prints partition lines without their topic line
    error = refusal(P1)
    assert "--under-replicated-partitions" in error.allowed and error.field == "describe line 1"


def test_nothing_to_import():
    for text in ("", "\n  \n\t\n"):
        error = refusal(text)
        assert error.field == "describe" and "no topic" in error.message


def test_the_size_and_line_bounds_are_named():
    big = refusal("x" * (MAX_TEXT_BYTES + 1))
    assert big.too_large and big.allowed == "at most 1,000,000 bytes"
    many = refusal("\n" * (MAX_TEXT_LINES + 1))
    assert many.too_large and many.allowed == "at most 20,000 lines" and "20,001 lines" in many.message
