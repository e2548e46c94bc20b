"""Kafka's ZooKeeper-mode controller tests (``ControllerIntegrationTest``, ``KafkaControllerTest``)
ported as scenarios on the simulated cluster, eras 2.7 - 3.7 (docs/kafka-parity.md,
docs/model.md §9). Kafka's tests start real brokers on an embedded ZooKeeper and read the state
znodes; here the brokers, the controller and ZooKeeper are the simulated ones and the assertions
read the same znodes.

Kafka's constants: the first controller epoch is 1 (``KafkaController.InitialControllerEpoch`` + 1),
the first leader epoch 0 (``LeaderAndIsr.InitialLeaderEpoch``), no leader is -1
(``LeaderAndIsr.NoLeader``).
"""
import pytest

from engine.core.messages import CONTROLLED_SHUTDOWN
from engine.simulation import Simulation

from .zk_cluster import events

FIRST_CONTROLLER_EPOCH = 1
NO_LEADER = -1
ERAS = ("2.7", "3.3", "3.7")


def zk_cluster(version, brokers, assignment, timeline=(), config=None):
    """Broker 0 starts first and is the controller; topic t has one partition on ``assignment``;
    no automatic leader rebalance unless asked (Kafka's test servers have it off)."""
    return Simulation({"seed": 1, "kafka_version": version, "brokers": brokers,
                       "config": {"auto.leader.rebalance.enable": False, **(config or {})},
                       "topics": [{"name": "t", "partitions": 1,
                                   "replication_factor": len(assignment),
                                   "assignment": {"0": list(assignment)}}],
                       "clients": [], "duration_ms": 30000, "timeline": list(timeline)})


def state(sim, topic="t"):
    """(leader, leader epoch, ISR, controller epoch) of the partition's state znode."""
    data = sim.zk_server.tree.nodes[f"/brokers/topics/{topic}/partitions/0/state"].data
    return data["leader"], data["leader_epoch"], data["isr"], data["controller_epoch"]


def controller_epoch(sim):
    return sim.zk_server.tree.nodes["/controller_epoch"].data


@pytest.mark.parametrize("version", ERAS)
def test_topic_creation(version):
    """Kafka: ControllerIntegrationTest.testTopicCreation at 2.7.0, 3.3.1 and 3.7.0 — the new
    partition's state znode names the first replica leader, every replica in the ISR, leader epoch
    0 and controller epoch 1."""
    sim = zk_cluster(version, 2, [1, 0])
    sim.advance_to(1000)
    assert state(sim) == (1, 0, [1, 0], FIRST_CONTROLLER_EPOCH)
    assert controller_epoch(sim) == FIRST_CONTROLLER_EPOCH


@pytest.mark.parametrize("version", ERAS)
def test_topic_creation_with_offline_replica(version):
    """Kafka: ControllerIntegrationTest.testTopicCreationWithOfflineReplica at 3.7.0 — a topic
    created while its first replica is down gets the live one as leader, alone in the ISR, leader
    epoch 0."""
    sim = zk_cluster(version, 2, [0], [
        {"at_ms": 1000, "op": "shutdown", "broker": 1},
        {"at_ms": 3000, "op": "create_topic", "name": "u", "partitions": 1,
         "replication_factor": 2, "assignment": {"0": [1, 0]}, "config": {}}])
    sim.advance_to(4000)
    assert state(sim, "u") == (0, 0, [0], FIRST_CONTROLLER_EPOCH)


@pytest.mark.parametrize("version", ERAS)
def test_controller_move_increments_controller_epoch(version):
    """Kafka: ControllerIntegrationTest.testControllerMoveIncrementsControllerEpoch at 3.7.0 — the
    only broker stops (the /controller_epoch stays 1: testControllerEpochPersistsWhenAllBrokersDown)
    and starts again: it is elected with controller epoch 2."""
    sim = zk_cluster(version, 1, [0], [{"at_ms": 1000, "op": "shutdown", "broker": 0},
                                       {"at_ms": 5000, "op": "restart", "broker": 0}])
    sim.advance_to(4000)
    assert "/controller" not in sim.zk_server.tree.nodes
    assert controller_epoch(sim) == FIRST_CONTROLLER_EPOCH
    r = sim.run()
    assert controller_epoch(sim) == FIRST_CONTROLLER_EPOCH + 1
    assert [e["epoch"] for e in events(r, "controller_elected")] == [1, 2]


@pytest.mark.parametrize("version", ERAS)
def test_preferred_replica_leader_election(version):
    """Kafka: ControllerIntegrationTest.testPreferredReplicaLeaderElection and
    testBackToBackPreferredReplicaLeaderElections at 3.7.0 — the preferred leader stops (the
    controller leads, leader epoch 1), comes back into the ISR, and a preferred replica election
    gives it back the leadership with leader epoch 2; a second round gives epochs 3 and 4."""
    def round_trip(at):
        return [{"at_ms": at, "op": "shutdown", "broker": 1},
                {"at_ms": at + 2000, "op": "restart", "broker": 1},
                {"at_ms": at + 6000, "op": "elect_preferred", "topic": "t", "partition": 0}]
    sim = zk_cluster(version, 2, [1, 0], round_trip(1000) + round_trip(10000))
    sim.advance_to(2000)
    assert state(sim)[:3] == (0, 1, [0])
    sim.advance_to(6500)
    assert state(sim)[:3] == (0, 1, [0, 1])
    sim.advance_to(8000)
    assert state(sim)[:3] == (1, 2, [0, 1])
    assert "/admin/preferred_replica_election" not in sim.zk_server.tree.nodes
    sim.advance_to(11000)
    assert state(sim)[:2] == (0, 3)
    sim.advance_to(17000)
    assert state(sim)[:2] == (1, 4)


@pytest.mark.parametrize("version", ERAS)
def test_preferred_replica_leader_election_with_offline_preferred_replica(version):
    """Kafka: ControllerIntegrationTest.testPreferredReplicaLeaderElectionWithOfflinePreferredReplica
    at 3.7.0 — with the preferred replica down the election gives up: the admin znode is removed
    and the partition stays with the controller at leader epoch 1."""
    sim = zk_cluster(version, 2, [1, 0], [
        {"at_ms": 1000, "op": "shutdown", "broker": 1},
        {"at_ms": 3000, "op": "elect_preferred", "topic": "t", "partition": 0}])
    sim.advance_to(4000)
    assert "/admin/preferred_replica_election" not in sim.zk_server.tree.nodes
    assert state(sim) == (0, 1, [0], FIRST_CONTROLLER_EPOCH)


@pytest.mark.parametrize("version", ERAS)
def test_auto_preferred_replica_leader_election(version):
    """Kafka: ControllerIntegrationTest.testAutoPreferredReplicaLeaderElection at 3.7.0 — with
    auto.leader.rebalance.enable, the preferred leader that stopped (controller leads, epoch 1)
    gets the leadership back after it restarts, without any request (leader epoch 2)."""
    sim = zk_cluster(version, 2, [1, 0], [{"at_ms": 1000, "op": "shutdown", "broker": 1},
                                          {"at_ms": 3000, "op": "restart", "broker": 1}],
                     {"auto.leader.rebalance.enable": True,
                      "leader.imbalance.check.interval.seconds": 5})
    sim.advance_to(2000)
    assert state(sim) == (0, 1, [0], FIRST_CONTROLLER_EPOCH)
    r = sim.run()
    assert state(sim)[:2] == (1, 2)
    assert events(r, "auto_rebalance")


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("unclean", [False, True])
def test_leader_and_isr_when_entire_isr_offline(version, unclean):
    """Kafka: ControllerIntegrationTest.testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElectionDisabled
    and ...Enabled at 3.7.0 — the only replica stops: no leader (-1), leader epoch 1, and the ISR
    keeps the last member, whether unclean election is enabled or not."""
    sim = zk_cluster(version, 2, [1], [{"at_ms": 1000, "op": "shutdown", "broker": 1}],
                     {"unclean.leader.election.enable": unclean})
    sim.advance_to(500)
    assert state(sim) == (1, 0, [1], FIRST_CONTROLLER_EPOCH)
    sim.advance_to(5000)
    assert state(sim) == (NO_LEADER, 1, [1], FIRST_CONTROLLER_EPOCH)


@pytest.mark.parametrize("version", ERAS)
def test_controlled_shutdown(version):
    """Kafka: ControllerIntegrationTest.testControlledShutdown at 2.7.0 and 3.7.0 — partition
    [0, 1, 2]: broker 2 shuts down (leader 0, ISR [0, 1], leader epoch 1), then broker 1 (leader 0,
    ISR [0], leader epoch 2); the leader stays on broker 0 and the metadata of the live brokers
    says so. (Failed in 2.7 before engine 1.3.0 sent the removal's LeaderAndIsr to the other
    replicas only.)"""
    sim = zk_cluster(version, 3, [0, 1, 2], [{"at_ms": 1000, "op": "shutdown", "broker": 2},
                                             {"at_ms": 3000, "op": "shutdown", "broker": 1}])
    removals = []
    for at in (1010, 3010, 5000):
        sim.advance_to(at)
        removals.append(state(sim)[:3])
    # the removed follower gets StopReplica, not the LeaderAndIsr: it never rejoins (in 2.7,
    # without KIP-841, a fetch of it would have been proposed back and accepted)
    assert removals == [(0, 1, [0, 1]), (0, 2, [0]), (0, 2, [0])]
    assert sim.brokers[0].metadata["t-0"]["leader"] == 0


def ask_controlled_shutdown(sim, sender, broker, broker_epoch):
    """A hand-built ControlledShutdown from broker ``sender``; runs until its answer."""
    node = sim.brokers[sender]
    answers = []
    node.request(node.controller_id, CONTROLLED_SHUTDOWN,
                 {"broker": broker, "broker_epoch": broker_epoch}, 30000,
                 lambda _ctx, response, error: answers.append(response or error))
    while not answers:
        sim.advance_to(sim.scheduler.now_ms + 5)
    return answers[0]


@pytest.mark.parametrize("version", ERAS)
def test_controlled_shutdown_requests_answer_the_partitions_still_led(version):
    """Kafka: ControllerIntegrationTest.testControlledShutdown at 2.7.0 and 3.7.0, its requests
    as the test makes them (``controller.controlledShutdown`` called by hand; the brokers keep
    running): broker 2, then broker 1 — nothing remains, leader 0, ISR [0, 1] then [0]; then
    broker 0 itself — its one replicated partition remains (``partitionLeadersOnBroker``), and the
    leader does not change since every other replica is shutting down."""
    sim = zk_cluster(version, 3, [0, 1, 2])
    sim.advance_to(1000)
    live = sim.brokers[0].controller.live
    assert ask_controlled_shutdown(sim, 2, 2, live[2]) == {"error": None, "partitions_remaining": []}
    assert state(sim)[:3] == (0, 1, [0, 1])
    assert ask_controlled_shutdown(sim, 1, 1, live[1]) == {"error": None, "partitions_remaining": []}
    assert state(sim)[:3] == (0, 2, [0])
    assert ask_controlled_shutdown(sim, 0, 0, live[0]) == {"error": None,
                                                          "partitions_remaining": ["t-0"]}
    assert state(sim)[:3] == (0, 2, [0])
    assert all(b.metadata["t-0"]["leader"] == 0 for b in sim.brokers.values())


@pytest.mark.parametrize("version", ERAS)
def test_controller_rejects_controlled_shutdown_request_with_stale_broker_epoch(version):
    """Kafka: ControllerIntegrationTest.testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch
    at 3.7.0 (and 2.7.0) — a ControlledShutdown carrying an older broker epoch fails with
    STALE_BROKER_EPOCH (all Kafka's test asserts). Beyond it, from KafkaController.doControlledShutdown
    @ 2.7.2 / 3.7.0: nothing changes, an unknown broker's request fails in the epoch lookup
    (UNKNOWN_SERVER_ERROR), the current epoch is accepted. Failed before engine 1.3.0, whose
    controller did not look at the epoch."""
    sim = zk_cluster(version, 2, [1, 0])
    sim.advance_to(1000)
    epoch = sim.brokers[0].controller.live[1]
    answer = ask_controlled_shutdown(sim, 1, 1, epoch - 1)
    assert answer == {"error": "STALE_BROKER_EPOCH", "partitions_remaining": []}
    assert not sim.brokers[0].controller.shutting_down
    assert state(sim) == (1, 0, [1, 0], FIRST_CONTROLLER_EPOCH)
    assert ask_controlled_shutdown(sim, 1, 99, epoch)["error"] == "UNKNOWN_SERVER_ERROR"
    # the current epoch is accepted: leadership moves to 0, 1 leaves the ISR
    assert ask_controlled_shutdown(sim, 1, 1, epoch) == {"error": None, "partitions_remaining": []}
    assert state(sim)[:3] == (0, 1, [0])


@pytest.mark.parametrize("version", ERAS)
def test_metadata_propagation_on_broker_shutdown_with_no_replicas(version):
    """Kafka: ControllerIntegrationTest.testMetadataPropagationOnBrokerShutdownWithNoReplicas at
    3.7.0 — the replica broker stops, then a broker with no replica at all: the UpdateMetadata of
    the broker change still reaches the controller's broker, whose metadata cache lists only
    itself alive."""
    sim = zk_cluster(version, 3, [1], [{"at_ms": 1000, "op": "shutdown", "broker": 1},
                                       {"at_ms": 2000, "op": "shutdown", "broker": 2}])
    sim.advance_to(1500)
    assert sorted(sim.brokers[0].live_brokers) == [0, 2]
    sim.advance_to(3000)
    assert sorted(sim.brokers[0].live_brokers) == [0]
