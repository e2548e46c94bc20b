"""Small ZooKeeper-mode clusters for the ported AlterIsr / AlterPartition and controller tests
(docs/kafka-parity.md): broker 0 is the controller (it starts first), partition t-0 lives on
brokers 1-3 and is led by 1, so that the leader's AlterPartition really travels to another node.

``ask_controller`` plays Kafka's test harness that hands a hand-built AlterPartition request to the
controller (``ControllerIntegrationTest.alterPartitionFuture``); ``controller_fails`` plays
``MockAlterPartitionManager.failIsrUpdate`` — the controller answers the next proposals with an
error — so that the leader's reaction can be asserted on the whole simulated cluster.
"""
from engine.core.messages import ALTER_ISR
from engine.simulation import Simulation
# the same small cluster as our own AlterIsr tests: controller 0; t-0 on [1, 2, 3] led by 1;
# replica.lag.time.max.ms 2000; an acks=1 producer writes 4 records until 2 s (KAFKA-7152)
from tests.engine.conftest import events
from tests.engine.test_alter_isr import alter, cluster

STATE = "/brokers/topics/t/partitions/0/state"
ISOLATE_3 = {"at_ms": 1000, "op": "isolate", "broker": 3, "from": "brokers"}
SLOW_TO_CONTROLLER = {"at_ms": 500, "op": "slow", "from": 1, "to": 0, "latency_ms": 3000}
#: broker 3 leaves by controlled shutdown (the controller removes it, leader epoch 1) and comes
#: back at 3 s: the leader proposes it again at its first caught-up fetch (~3016 ms)
BOUNCE_3 = [{"at_ms": 1000, "op": "shutdown", "broker": 3},
            {"at_ms": 3000, "op": "restart", "broker": 3}]


def leader_partition(sim, broker=1):
    return sim.brokers[broker].partitions["t-0"]


def controller_fails(sim, error, times=1):
    """The controller answers the next ``times`` partitions of AlterPartition requests with
    ``error`` instead of validating them; later ones are handled as usual."""
    controller = sim.brokers[0].controller
    validate = controller._validate_alter_isr
    left = [times]

    def failing(broker, req):
        if left[0] > 0:
            left[0] -= 1
            return error, None
        return validate(broker, req)
    controller._validate_alter_isr = failing


def controller_fails_request(sim, error, times=1):
    """The controller answers the next ``times`` AlterPartition requests with a top-level error."""
    controller = sim.brokers[0].controller
    receive = controller.on_alter_isr
    left = [times]

    def failing(env):
        if left[0] > 0:
            left[0] -= 1
            return controller.broker.reply(env, {"error": error, "partitions": {}})
        return receive(env)
    controller.on_alter_isr = failing


def ask_controller(sim, sender, leader_epoch, new_isr, partition_epoch, key="t-0",
                   broker=None, broker_epoch=None, recovery_state=0):
    """Sends one hand-built AlterPartition from broker ``sender`` to the controller and runs the
    cluster until its answer arrives; returns the answer's body."""
    node = sim.brokers[sender]
    topic, index = key.rsplit("-", 1)
    body = {"api": sim.era.alter_isr_api, "broker": sender if broker is None else broker,
            "broker_epoch": node.broker_epoch if broker_epoch is None else broker_epoch,
            "partitions": [{"key": key, "topic": topic, "partition": int(index),
                            "leader_epoch": leader_epoch, "new_isr": list(new_isr),
                            "zk_version": partition_epoch,
                            "leader_recovery_state": recovery_state}]}
    answers = []
    node.request(node.controller_id, ALTER_ISR, body, 30000,
                 lambda _ctx, response, error: answers.append(response or error))
    while not answers:
        sim.advance_to(sim.scheduler.now_ms + 5)
    return answers[0]


def started(version, timeline=(), at_ms=2000, **kw):
    sim = Simulation(cluster(version, list(timeline), **kw))
    sim.advance_to(at_ms)
    return sim
