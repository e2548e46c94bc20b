"""Replica placement as Kafka's own tests check it (docs/kafka-parity.md, section "Replica
placement"; docs/model.md §21.2, §21.3).

ZooKeeper eras: ``AdminRackAwareTest`` and its ``RackAwareTest.checkReplicaDistribution`` @ 3.7.0
(the same tests at 2.6.0 and 3.0.0, on the Scala ``AdminUtils``). KRaft eras:
``StripedReplicaPlacerTest`` @ 3.9.0 (unchanged at 4.1.0), with Kafka's test ``MockRandom``.
Tests whose draws are random in Kafka are run here through the scenario loader over several seeds
(the engine draws from the seed), checking what Kafka's test checks. Where a layout is pinned, the
numbers were computed by Kafka's own classes (``AdminUtils`` @ 3.7.0, ``StripedReplicaPlacer`` @
3.9.0 compiled from the tags and given the same ``java.util.Random`` seed; docs/reviews/
issue-32-second-reading.md says how).
"""
from collections import Counter

import pytest

from engine.core.rng import JavaRandom
from engine.kraft.striped_replica_placer import RackList, _BrokerList, striped_placement
from engine.scenario.document import kafka_assignment, load
from engine.scenario.placement import rack_aware_assignment, rack_alternated_brokers

ZK_ERAS = ("0.10", "2.6", "3.7")
KRAFT_ERAS = ("3.9-kraft", "4.1")
SEEDS = (0, 1, 2, 3, 7, 42)
SIX = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


class MockRandom(JavaRandom):
    """Kafka's test MockRandom (server-common): a fixed 64-bit sequence behind java.util.Random."""
    __slots__ = ()

    def __init__(self, state=17):
        self.state = state

    def next(self, bits):
        self.state = (self.state * 2862933555777941757 + 3037000493) & ((1 << 64) - 1)
        value = self.state >> (64 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value


def placed(version, racks, partitions, rf, seed):
    """The layout the loader computes for topic t over brokers ``racks`` ({id: rack})."""
    doc = {"kafka_version": version, "brokers": sorted(racks), "seed": seed,
           "racks": {str(b): r for b, r in racks.items()},
           "topics": [{"name": "t", "partitions": partitions, "replication_factor": rf}]}
    return {int(p): replicas for p, replicas in load(doc)["topics"][0]["assignment"].items()}


def check_replica_distribution(assignment, racks, partitions, rf, rack_aware=True, leaders=True,
                               replicas=True):
    """RackAwareTest.checkReplicaDistribution @ 3.7.0."""
    for brokers in assignment.values():
        assert len(set(brokers)) == len(brokers)
    if rack_aware:
        assert [len({racks[b] for b in assignment[p]}) for p in range(partitions)] == [rf] * partitions
    if leaders:
        counts = Counter(assignment[p][0] for p in range(partitions))
        assert sorted(counts.values()) == [partitions // len(racks)] * len(racks)
    if replicas:
        counts = Counter(b for p in range(partitions) for b in assignment[p])
        assert sorted(counts.values()) == [partitions * rf // len(racks)] * len(racks)


# -- AdminRackAwareTest @ 3.7.0 (ZooKeeper eras) ------------------------------------------------------
def test_get_rack_alternated_broker_list_and_assign_replicas_to_brokers():
    """AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_brokers({b: r for b, r in racks.items() if b != 5}) == [0, 3, 1, 4, 2]
    assert rack_aware_assignment(racks, 7, 3, 0, 0) == {
        "0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2], "4": [4, 2, 0],
        "5": [2, 0, 3], "6": [0, 4, 2]}


def test_assignment_with_rack_aware():
    """AdminRackAwareTest.testAssignmentWithRackAware: fixed start index 2 (Kafka's
    fixedStartIndex sets the start and the shift); the layout is Kafka's."""
    assignment = {int(p): r for p, r in rack_aware_assignment(SIX, 6, 3, 2, 2).items()}
    check_replica_distribution(assignment, SIX, 6, 3)
    assert assignment == {0: [3, 2, 0], 1: [5, 4, 1], 2: [2, 0, 3], 3: [4, 1, 5], 4: [0, 3, 2],
                          5: [1, 5, 4]}


def test_assignment_with_rack_aware_with_uneven_replicas():
    """AdminRackAwareTest.testAssignmentWithRackAwareWithUnevenReplicas: 13 partitions from
    start 0 — each partition in three racks (the layout is Kafka's)."""
    assignment = {int(p): r for p, r in rack_aware_assignment(SIX, 13, 3, 0, 0).items()}
    check_replica_distribution(assignment, SIX, 13, 3, leaders=False, replicas=False)
    assert [assignment[p] for p in (6, 12)] == [[0, 2, 4], [0, 3, 2]]


@pytest.mark.parametrize("version", ZK_ERAS)
@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_rack_aware_with_random_start_index(version, seed):
    """AdminRackAwareTest.testAssignmentWithRackAwareWithRandomStartIndex,
    testAssignmentWith2ReplicasRackAware (12 partitions), ...With6Partitions,
    ...With6PartitionsAnd3Brokers and testLargeNumberPartitionsAssignment: whatever the draws,
    leaders and replicas even, each partition's replicas in distinct racks."""
    check_replica_distribution(placed(version, SIX, 6, 3, seed), SIX, 6, 3)
    check_replica_distribution(placed(version, SIX, 12, 2, seed), SIX, 12, 2)
    check_replica_distribution(placed(version, SIX, 6, 2, seed), SIX, 6, 2)
    three = {0: "rack1", 1: "rack2", 4: "rack3"}
    check_replica_distribution(placed(version, three, 3, 2, seed), three, 3, 2)
    twelve = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
              6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"}
    check_replica_distribution(placed(version, twelve, 96, 3, seed), twelve, 96, 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_assignment_with_rack_aware_with_uneven_racks(seed):
    """AdminRackAwareTest.testAssignmentWithRackAwareWithUnevenRacks: racks of 3, 1 and 2 —
    leaders still even, replicas not."""
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    check_replica_distribution(placed("2.6", racks, 12, 3, seed), racks, 12, 3, replicas=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_more_and_less_replicas_than_racks_and_single_rack(seed):
    """AdminRackAwareTest.testMoreReplicasThanRacks (RF 5 over three racks: every rack holds one),
    testLessReplicasThanRacks (RF 2: two racks) and testSingleRack (one leader per broker)."""
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    more = placed("3.7", racks, 6, 5, seed)
    assert all(len(r) == 5 and len({racks[b] for b in r}) == 3 for r in more.values())
    less = placed("3.7", racks, 6, 2, seed)
    assert all(len({racks[b] for b in r}) == 2 for r in less.values())
    single = {b: "rack1" for b in range(6)}
    one = placed("3.7", single, 6, 3, seed)
    assert sorted(Counter(r[0] for r in one.values()).values()) == [1] * 6


def test_skip_broker_with_replica_already_assigned():
    """AdminRackAwareTest.testSkipBrokerWithReplicaAlreadyAssigned: RF 4 over racks a (three
    brokers), b, c from start 2 — once every rack holds a replica the walk goes on over the
    brokers, never one twice. The layout is Kafka's."""
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    assignment = {int(p): r for p, r in rack_aware_assignment(racks, 6, 4, 2, 2).items()}
    check_replica_distribution(assignment, racks, 6, 4, rack_aware=False, leaders=False,
                               replicas=False)
    assert assignment == {0: [2, 0, 1, 3], 1: [3, 1, 2, 4], 2: [4, 2, 1, 3], 3: [0, 1, 2, 3],
                          4: [1, 4, 2, 3], 5: [2, 4, 1, 3]}


def test_replica_assignment():
    """AdminRackAwareTest.testReplicaAssignment: the rack-unaware assignment from index 0 (the one
    the engine keeps without racks, docs/model.md §21.7)."""
    assert kafka_assignment(list(range(5)), 10, 3) == {
        "0": [0, 1, 2], "1": [1, 2, 3], "2": [2, 3, 4], "3": [3, 4, 0], "4": [4, 0, 1],
        "5": [0, 2, 3], "6": [1, 3, 4], "7": [2, 4, 0], "8": [3, 0, 1], "9": [4, 1, 2]}


# -- StripedReplicaPlacerTest @ 3.9.0 (KRaft eras) ----------------------------------------------------
def test_broker_list():
    """StripedReplicaPlacerTest.testBrokerList: one pass per epoch, the next epoch one further on."""
    assert _BrokerList().next(1) == -1
    brokers = _BrokerList()
    brokers.brokers = [0, 1, 2, 3]
    assert [brokers.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [brokers.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]


def test_avoid_fenced_replica_if_possible_on_single_rack():
    """StripedReplicaPlacerTest.testAvoidFencedReplicaIfPossibleOnSingleRack."""
    racks = RackList(MockRandom(), [(3, None, False), (1, None, True), (0, None, False),
                                    (4, None, False), (2, None, False)])
    assert (racks.total, racks.unfenced, racks.names) == (5, 4, [None])
    for bad in (0, -1):
        with pytest.raises(ValueError):
            racks.place(bad)
    assert [racks.place(4) for _ in range(5)] == [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4],
                                                  [2, 3, 4, 0], [0, 4, 3, 2]]


def test_multi_partition_topic_placement_on_single_unfenced_broker():
    """StripedReplicaPlacerTest.testMultiPartitionTopicPlacementOnSingleUnfencedBroker: with one
    unfenced broker the epoch never resets (no shuffle), every partition lands on it."""
    racks = RackList(MockRandom(), [(0, None, False), (1, None, True)])
    assert [racks.place(1) for _ in range(3)] == [[0], [0], [0]]


def test_placement_on_fenced_replica_on_single_rack():
    """StripedReplicaPlacerTest.testPlacementOnFencedReplicaOnSingleRack: RF 3 over two unfenced
    brokers takes the fenced one last, never as leader."""
    racks = RackList(MockRandom(), [(3, None, False), (1, None, True), (2, None, False)])
    assert (racks.total, racks.unfenced) == (3, 2)
    assert [racks.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_all_brokers_fenced_and_not_enough_brokers():
    """StripedReplicaPlacerTest.testAllBrokersFenced, testNotEnoughBrokers,
    testNonPositiveReplicationFactor (and the RackList variants): refused."""
    with pytest.raises(ValueError):
        RackList(MockRandom(), [(0, None, True), (1, None, True)]).place(1)
    with pytest.raises(ValueError):
        RackList(MockRandom(), [(0, None, False), (1, None, False)]).place(3)
    with pytest.raises(ValueError):
        RackList(MockRandom(), [(0, None, False)]).place(0)


# -- the second reading's regressions: layouts computed by Kafka's own classes -------------------------
@pytest.mark.parametrize("version", KRAFT_ERAS)
def test_a_long_walk_over_uneven_racks_is_placed_as_kafka_places_it(version):
    """Eight brokers in racks of one and seven, RF 8: after the lone rack's broker each replica
    passes over it, a walk longer than the engine's old loop limit (the loader failed with a
    RuntimeError; Kafka's StripedReplicaPlacer @ 3.9.0 places it). Layout from Kafka's class with
    the same java.util.Random seed."""
    racks = {b: ("a" if b == 0 else "b") for b in range(8)}
    assert placed(version, racks, 4, 8, 0) == {0: [0, 6, 7, 1, 2, 3, 4, 5], 1: [7, 0, 1, 2, 3, 4, 5, 6],
                                               2: [0, 1, 2, 3, 4, 5, 6, 7], 3: [2, 0, 3, 4, 5, 6, 7, 1]}
    twelve = striped_placement(JavaRandom(1), [(b, "a" if b == 0 else "b") for b in range(12)], 3, 12)
    assert all(sorted(r) == list(range(12)) for r in twelve.values())


def test_the_seeds_layouts_are_kafkas():
    """Seed 3, topic t, racks of two: AdminUtils @ 3.7.0 and StripedReplicaPlacer @ 3.9.0 given
    new Random(derive_seed(3, "placement/t")) compute these layouts (draws, alternated list, hash
    order of the racks, epochs and all)."""
    racks = {0: "az-a", 1: "az-a", 2: "az-b", 3: "az-b", 4: "az-c", 5: "az-c"}
    zk = [[5, 0, 2], [0, 2, 4], [2, 4, 1], [4, 1, 3], [1, 3, 5], [3, 5, 0], [5, 1, 3], [0, 3, 5]]
    kraft = [[2, 4, 1], [5, 0, 3], [1, 2, 4], [3, 5, 0], [4, 1, 2], [0, 3, 5], [5, 0, 2], [1, 3, 4]]
    for version in ZK_ERAS:
        assert placed(version, racks, 8, 3, 3) == dict(enumerate(zk))
    for version in KRAFT_ERAS:
        assert placed(version, racks, 8, 3, 3) == dict(enumerate(kraft))
