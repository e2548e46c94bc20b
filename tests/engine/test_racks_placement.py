"""Replica placement with racks (docs/model.md §21.2-§21.3, docs/scenario-format.md §4.3).

The pure algorithms are checked against the layouts Kafka's own tests expect
(``AdminRackAwareTest`` at 2.6.0, ``StripedReplicaPlacerTest`` at 3.9.0 with its ``MockRandom``),
then placement through the scenario loader in each era family: replicas in distinct racks,
leaders spread over racks, the seed's draws, the ZooKeeper eras' refusal and the KRaft eras' rack
of rackless brokers.
"""
from collections import Counter

import pytest

from engine.core.rng import JavaRandom, derive_seed
from engine.kraft.striped_replica_placer import RackList, striped_placement
from engine.scenario.document import ScenarioError, kafka_assignment, load
from engine.scenario.placement import rack_aware_assignment, rack_alternated_brokers
from engine.scenario.racks import same_rack_partitions

ZK_ERAS = ("0.10", "2.0", "2.6", "3.7")
KRAFT_ERAS = ("3.9-kraft", "4.1")
SIX = {"0": "az-a", "1": "az-a", "2": "az-b", "3": "az-b", "4": "az-c", "5": "az-c"}


class MockRandom(JavaRandom):
    """Kafka's test MockRandom (server-common): java.util.Random with its own next(bits)."""
    __slots__ = ()

    def __init__(self, state=17):
        self.state = state

    def next(self, bits):
        self.state = (self.state * 2862933555777941757 + 3037000493) & ((1 << 64) - 1)
        value = self.state >> (64 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value


def doc(version, racks=SIX, partitions=6, rf=3, seed=1, brokers=6, **extra):
    return {"kafka_version": version, "brokers": brokers, "seed": seed, "racks": racks,
            "topics": [{"name": "t", "partitions": partitions, "replication_factor": rf}], **extra}


def layout(document):
    return load(document)["topics"][0]["assignment"]


# -- java.util.Random ------------------------------------------------------------------------------
def test_java_random_draws_what_java_util_random_draws():
    r = JavaRandom(42)
    assert [r.randrange(10) for _ in range(5)] == [0, 3, 8, 4, 0]   # new Random(42).nextInt(10)
    r = JavaRandom(42)
    assert r.next(32) == -1170105035                                  # new Random(42).nextInt()
    items = list(range(5))
    JavaRandom(42).shuffle(items)
    assert sorted(items) == [0, 1, 2, 3, 4] and items != [0, 1, 2, 3, 4]


# -- AdminUtils (ZooKeeper eras) --------------------------------------------------------------------
def test_rack_alternated_list_is_kafkas():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_alternated_brokers(racks) == [0, 3, 1, 5, 4, 2]
    del racks[5]
    assert rack_alternated_brokers(racks) == [0, 3, 1, 4, 2]


def test_rack_aware_assignment_is_kafkas_for_a_fixed_start_index():
    """AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers: 7 partitions,
    RF 3, fixedStartIndex 0 (start 0, shift 0); partition 6 starts the shifted second round."""
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert rack_aware_assignment(racks, 7, 3, 0, 0) == {
        "0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2], "4": [4, 2, 0],
        "5": [2, 0, 3], "6": [0, 4, 2]}


def test_rack_aware_assignment_by_hand_start_2_shift_1():
    """Worked by hand from assignReplicasToBrokersRackAware: alternated list 0 2 4 1 3 5, first
    replica at (p + 2) % 6, the others at first + 1 + (1 * 3 racks + k) % 5, never a second
    replica in one rack while a rack has none."""
    racks = {0: "az-a", 1: "az-a", 2: "az-b", 3: "az-b", 4: "az-c", 5: "az-c"}
    assert rack_alternated_brokers(racks) == [0, 2, 4, 1, 3, 5]
    assert rack_aware_assignment(racks, 6, 3, 2, 1) == {
        "0": [4, 0, 2], "1": [1, 2, 4], "2": [3, 4, 1], "3": [5, 1, 3], "4": [0, 3, 5], "5": [2, 5, 0]}


def test_uneven_racks_still_put_each_replica_in_another_rack():
    """Racks of 3, 1 and 2 brokers: every partition still spans all three racks (RF 3)."""
    racks = {0: "a", 1: "a", 2: "a", 3: "b", 4: "c", 5: "c"}
    for start in range(6):
        for shift in range(6):
            for replicas in rack_aware_assignment(racks, 12, 3, start, shift).values():
                assert len({racks[b] for b in replicas}) == 3


# -- StripedReplicaPlacer (KRaft eras) -------------------------------------------------------------
def test_striped_placer_is_kafkas_with_kafkas_mock_random():
    """StripedReplicaPlacerTest.testSuccessfulPlacement (one rackless rack, four brokers)."""
    brokers = [(0, None), (3, None), (2, None), (1, None)]
    assert striped_placement(MockRandom(), brokers, 5, 3) == {
        "0": [2, 3, 0], "1": [3, 0, 1], "2": [0, 1, 2], "3": [1, 2, 3], "4": [1, 0, 2]}


def test_striped_placer_shuffles_as_kafka_does():
    """StripedReplicaPlacerTest.testEvenDistribution: 200 partitions of RF 2 on four brokers go
    through 49 shuffles; the count of each replica pair is Kafka's."""
    placed = striped_placement(MockRandom(), [(b, None) for b in range(4)], 200, 2)
    counts = Counter(tuple(r) for r in placed.values())
    assert counts == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
                      (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


def test_striped_placer_walks_racks_as_kafka_does():
    """StripedReplicaPlacerTest.testRackListWithMultipleRacks and testRackListWithInvalidRacks
    (fenced brokers only as followers, the leader from an unfenced one)."""
    racks = RackList(MockRandom(), [(11, "1", False), (10, "1", False), (30, "3", False),
                                    (31, "3", False), (21, "2", False), (20, "2", True)])
    assert [racks.place(4) for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]
    racks = RackList(MockRandom(), [(11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
                                    (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True)])
    assert [racks.place(4) for _ in range(3)] == [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]
    racks = RackList(MockRandom(), [(3, None, False), (1, None, True), (0, None, False),
                                    (4, None, False), (2, None, False)])
    assert [racks.place(4) for _ in range(5)] == [[3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4],
                                                  [2, 3, 4, 0], [0, 4, 3, 2]]


def test_striped_placer_by_hand():
    """Three racks of two. The start draws go to the racks in Kafka's HashMap order, az-a, az-c,
    az-b (String.hashCode buckets 0, 2, 3): az-a starts at 1, az-c at 0, az-b at 1; the rack
    offset is 2. Partition 0 starts in az-c (broker 4), then az-a (1), az-b (3); each new epoch
    moves every rack's start one on and the rack offset one on."""
    class Draws:
        def __init__(self, values):
            self.values = list(values)

        def randrange(self, bound):
            return self.values.pop(0)

    brokers = [(0, "az-a"), (1, "az-a"), (2, "az-b"), (3, "az-b"), (4, "az-c"), (5, "az-c")]
    assert striped_placement(Draws([1, 0, 1, 2]), brokers, 3, 3) == {
        "0": [4, 1, 3], "1": [0, 2, 5], "2": [3, 4, 1]}


# -- through the loader, per era family ----------------------------------------------------------------
@pytest.mark.parametrize("version", ZK_ERAS + KRAFT_ERAS)
@pytest.mark.parametrize("seed", [0, 1, 7, 123456])
def test_every_replica_in_another_rack_and_leaders_spread(version, seed):
    placed = layout(doc(version, seed=seed))
    for replicas in placed.values():
        assert len({SIX[str(b)] for b in replicas}) == 3
    leaders = Counter(SIX[str(replicas[0])] for replicas in placed.values())
    assert leaders == {"az-a": 2, "az-b": 2, "az-c": 2}
    assert Counter(b for r in placed.values() for b in r) == {b: 3 for b in range(6)}
    assert same_rack_partitions(load(doc(version, seed=seed))) == []


@pytest.mark.parametrize("version", ZK_ERAS)
def test_zookeeper_eras_draw_start_index_then_shift_from_the_seed(version):
    for seed in (0, 1, 2, 99):
        rng = JavaRandom(derive_seed(seed, "placement/t"))
        start, shift = rng.randrange(6), rng.randrange(6)
        expected = rack_aware_assignment({b: SIX[str(b)] for b in range(6)}, 6, 3, start, shift)
        assert layout(doc(version, seed=seed)) == expected
    layouts = {str(layout(doc(version, seed=seed))) for seed in range(10)}
    assert len(layouts) > 1


@pytest.mark.parametrize("version", KRAFT_ERAS)
def test_kraft_eras_draw_the_placer_from_the_seed(version):
    brokers = [(b, SIX[str(b)]) for b in range(6)]
    for seed in (0, 1, 2, 99):
        expected = striped_placement(JavaRandom(derive_seed(seed, "placement/t")), brokers, 6, 3)
        assert layout(doc(version, seed=seed)) == expected
    assert layout(doc(version, seed=5)) == layout(doc(version, seed=5))
    assert len({str(layout(doc(version, seed=seed))) for seed in range(10)}) > 1


def test_each_topic_draws_its_own_placement():
    document = doc("2.6", seed=3)
    document["topics"].append({"name": "u", "partitions": 6, "replication_factor": 3})
    both = load(document)["topics"]
    alone = load(doc("2.6", seed=3))["topics"]
    assert both[0]["assignment"] == alone[0]["assignment"]   # adding a topic reshuffles nothing
    rng = JavaRandom(derive_seed(3, "placement/u"))
    start, shift = rng.randrange(6), rng.randrange(6)
    assert both[1]["assignment"] == rack_aware_assignment({b: SIX[str(b)] for b in range(6)}, 6, 3,
                                                          start, shift)


@pytest.mark.parametrize("version", ZK_ERAS)
def test_zookeeper_eras_refuse_a_topic_when_some_brokers_have_no_rack(version):
    with pytest.raises(ScenarioError) as err:
        load(doc(version, racks={"0": "a", "1": "b", "2": "c"}))
    assert err.value.field == "topics[0].assignment"
    assert "Not all brokers have rack information" in err.value.message
    assert "[3, 4, 5]" in err.value.message
    # the default topic too, and a topic created on the timeline
    with pytest.raises(ScenarioError):
        load({"kafka_version": version, "brokers": 3, "racks": {"0": "a"}})
    explicit = {"kafka_version": version, "brokers": 3, "racks": {"0": "a"},
                "topics": [{"name": "t", "partitions": 1, "assignment": {"0": [1, 2]}}],
                "timeline": [{"at_ms": 5, "op": "create_topic", "name": "u", "partitions": 1,
                              "replication_factor": 2}]}
    with pytest.raises(ScenarioError) as err:
        load(explicit)
    assert err.value.field == "timeline[0].assignment"
    explicit["timeline"] = []
    assert load(explicit)["topics"][0]["assignment"] == {"0": [1, 2]}   # explicit: kept as given


@pytest.mark.parametrize("version", ZK_ERAS + KRAFT_ERAS)
def test_without_a_broker_in_a_rack_placement_is_unchanged(version):
    for racks in ({}, None):
        document = doc(version, racks=racks, partitions=4)
        if racks is None:
            del document["racks"]
        assert layout(document) == kafka_assignment(list(range(6)), 4, 3)
    if version in KRAFT_ERAS:   # racks naming controllers only: still no broker in a rack
        assert layout(doc(version, racks={"3000": "a", "3001": "b"}, partitions=4)) == \
            kafka_assignment(list(range(6)), 4, 3)


@pytest.mark.parametrize("version", KRAFT_ERAS)
def test_kraft_brokers_without_a_rack_count_as_one_more_rack(version):
    racks = {"0": "a", "1": "a", "2": "b", "3": "b"}          # 4 and 5 in no rack
    for seed in range(5):
        placed = layout(doc(version, racks=racks, seed=seed))
        for replicas in placed.values():
            assert len({racks.get(str(b)) for b in replicas}) == 3   # a, b and "no rack"
        expected = striped_placement(JavaRandom(derive_seed(seed, "placement/t")),
                                     [(b, racks.get(str(b))) for b in range(6)], 6, 3)
        assert placed == expected


@pytest.mark.parametrize("version", ("2.6", "4.1"))
def test_create_topic_is_placed_as_a_scenario_topic(version):
    document = doc(version, seed=11)
    document["topics"] = [{"name": "x", "partitions": 1, "replication_factor": 1}]
    document["timeline"] = [{"at_ms": 100, "op": "create_topic", "name": "t", "partitions": 6,
                             "replication_factor": 3}]
    assert load(document)["timeline"][0]["assignment"] == layout(doc(version, seed=11))


def test_fewer_racks_than_replicas_put_two_replicas_in_one_rack():
    racks = {"0": "a", "1": "a", "2": "a", "3": "b", "4": "b", "5": "b"}
    scenario = load(doc("2.6", racks=racks, partitions=2))
    crowded = same_rack_partitions(scenario)
    assert [(c["topic"], c["partition"]) for c in crowded] == [("t", 0), ("t", 1)]
    for entry in crowded:
        assert len(entry["replicas"]) == 2
        assert all(racks[str(b)] == entry["rack"] for b in entry["replicas"])
    for replicas in scenario["topics"][0]["assignment"].values():
        assert {racks[str(b)] for b in replicas} == {"a", "b"}   # still both racks
