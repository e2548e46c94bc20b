"""Engine 1.5.0's ZooKeeper-mode controller fixes (docs/model.md §9.1, §9.8, §19 "What 1.5.0
changed"). Each test runs a scenario under the current engine and under engine 1.4.0, whose
rule it fails.
"""
from engine.core.messages import STOP_REPLICA
from engine.simulation import Simulation

from .conftest import events

SOLO = "/brokers/topics/solo/partitions/0/state"


def _stop_replicas_to(sim, broker):
    """Every StopReplica broker ``broker`` receives: (time, partitions)."""
    got = []
    node = sim.brokers[broker]
    handler = node.handlers[STOP_REPLICA]

    def spy(env):
        got.append((sim.now_ms, list(env.body["partitions"])))
        return handler(env)
    node.handlers[STOP_REPLICA] = spy
    return got


def leaderless_solo_then_shutdown(engine_version=None):
    """0.10: single-replica partition solo-0 lives on broker 1 only; t-0 on [0, 1]. Broker 1
    crashes with unclean election on (0.10's default), so the controller empties solo-0's ISR
    (leader -1, ISR []); unclean election is then turned off for solo, so when broker 1 is back
    at 14 s nothing can elect it: solo-0 stays leaderless on a live broker. At 20 s broker 1
    shuts down the controlled way."""
    doc = {"seed": 1, "kafka_version": "0.10", "brokers": 2,
           "config": {"auto.leader.rebalance.enable": False},
           "topics": [{"name": "solo", "partitions": 1, "replication_factor": 1,
                       "assignment": {"0": [1]}},
                      {"name": "t", "partitions": 1, "replication_factor": 2,
                       "assignment": {"0": [0, 1]}}],
           "clients": [], "duration_ms": 30000,
           "timeline": [{"at_ms": 2000, "op": "crash", "broker": 1},
                        {"at_ms": 12000, "op": "set_config", "topic": "solo",
                         "key": "unclean.leader.election.enable", "value": False},
                        {"at_ms": 14000, "op": "restart", "broker": 1},
                        {"at_ms": 20000, "op": "shutdown", "broker": 1}]}
    sim = Simulation(doc, engine_version=engine_version)
    stops = _stop_replicas_to(sim, 1)
    return sim, sim.run(), stops


def test_a_controlled_shutdown_leaves_single_replica_partitions_alone():
    """KafkaController.doControlledShutdown @ 0.10.2.2 (shutdownBroker) - 3.9.0 acts only on
    partitions with more than one replica: the StopReplica and the ISR removal go to t-0 only,
    never to the single-replica solo-0 (engine 1.4.0 stopped solo-0 too)."""
    sim, r, stops = leaderless_solo_then_shutdown()
    assert r["zk"][SOLO]["data"]["leader"] == -1 and r["zk"][SOLO]["data"]["isr"] == []
    assert stops == [(20002, ["t-0"])]
    [shrink] = [e for e in events(r, "isr_shrink") if e["t_ms"] >= 20000]
    assert (shrink["topic"], shrink["isr"]) == ("t", [0])
    [stopped] = events(r, "broker_stopped", broker=1)[1:]
    assert stopped["reason"].startswith("controlled shutdown succeeded after 1 attempt(s)")
    _sim, _r, old_stops = leaderless_solo_then_shutdown("1.4.0")
    assert old_stops == [(20002, ["solo-0", "t-0"])]


def epoch_check_fails(version="2.4", engine_version=None):
    """Controller 0; t-0 on [1, 2] led by 1. At 2 s the /controller_epoch znode is rewritten out
    of band (same value, zkVersion + 1), so every fenced write of controller 0 fails its check
    although /controller still names it; at 3 s leader 1 crashes and the controller's offline
    election writes."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"auto.leader.rebalance.enable": False},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 2,
                       "assignment": {"0": [1, 2]}}],
           "clients": [], "duration_ms": 12000,
           "timeline": [{"at_ms": 3000, "op": "crash", "broker": 1}]}
    sim = Simulation(doc, engine_version=engine_version)
    sim.advance_to(2000)
    tree = sim.zk_server.tree
    tree.set("/controller_epoch", tree.nodes["/controller_epoch"].data, -1)
    return sim, sim.run()


def test_a_failed_epoch_check_resigns_only_if_controller_moved():
    """maybeResign (KafkaController @ 2.4.1, 2.7.2, 3.7.0): a ControllerMovedException re-reads
    /controller and resigns only when it names another broker or nobody. Here it still names 0,
    so controller 0 stays active and only the event is abandoned: t-0 stays leaderless, as in
    Kafka (every later fenced write fails the same way). Engine 1.4.0 resigned at once, leaving
    the cluster with no active controller while /controller named broker 0."""
    for version in ("2.4", "2.6", "2.7", "3.3", "3.7"):
        sim, r = epoch_check_fails(version)
        assert not events(r, "controller_resigned"), version
        assert sim.brokers[0].controller.active and sim.brokers[0].controller_id == 0, version
        assert r["zk"]["/brokers/topics/t/partitions/0/state"]["data"]["leader"] == 1, version
        assert not events(r, "leader_elected", topic="t"), version
        # the controller still works: its queue is empty, the next event is taken
        assert not sim.brokers[0].controller.busy and not sim.brokers[0].controller.queue, version
    _sim, old = epoch_check_fails("2.4", "1.4.0")
    [resigned] = events(old, "controller_resigned")
    assert resigned["reason"].startswith("ControllerMovedException")
    assert not _sim.brokers[0].controller.active


def controller_moves_during_election(version, engine_version=None):
    """As ``epoch_check_fails``, but at 2.5 s /controller is deleted and created again naming
    broker 7 while /controller_epoch moves to the next epoch; the watch notifications of
    /controller are withheld from broker 0."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"auto.leader.rebalance.enable": False},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 2,
                       "assignment": {"0": [1, 2]}}],
           "clients": [], "duration_ms": 12000,
           "timeline": [{"at_ms": 3000, "op": "crash", "broker": 1}]}
    sim = Simulation(doc, engine_version=engine_version)
    sim.advance_to(2500)
    tree = sim.zk_server.tree
    notify = tree.notify
    tree.notify = lambda session, kind, path: None if path == "/controller" else notify(session, kind, path)
    tree.delete("/controller")
    tree.create("/controller", {"version": 1, "brokerid": 7, "timestamp": "2500"})
    tree.set("/controller_epoch", tree.nodes["/controller_epoch"].data + 1, -1)
    return sim, sim.run()


def test_a_failed_epoch_check_resigns_when_controller_names_another_broker():
    """maybeResign when /controller names someone else: the controller resigns one ZooKeeper
    round trip (exists with a watch, then get: ``registerZNodeChangeHandlerAndCheckExistence``,
    ``getControllerId``) after the failed write, naming the new holder. Here /controller_epoch
    is moved and /controller handed to a broker 7 that does not exist (as Kafka's
    testControllerMove does with ``servers.size``), its NodeDeleted/NodeCreated notifications held
    back from broker 0 as Kafka's event queue holds the ControllerChange event behind the current
    one."""
    sim, r = controller_moves_during_election("2.4")
    [resigned] = events(r, "controller_resigned")
    assert resigned["reason"] == ("ControllerMovedException: a partition-state write failed its "
                                  "/controller_epoch zkVersion check, and /controller names broker 7")
    assert sim.brokers[0].controller_id == 7 and not sim.brokers[0].controller.active
    _sim, old = controller_moves_during_election("2.4", "1.4.0")
    [resigned_old] = events(old, "controller_resigned")
    assert resigned_old["reason"].startswith("ControllerMovedException: /controller_epoch")
    assert resigned["t_ms"] > resigned_old["t_ms"]


# -- second reading of engine 1.5.0 (docs/reviews/engine-1.5.0-second-reading.md) ----------------

def test_controlled_shutdown_during_a_failed_epoch_check_is_answered_not_controller():
    """KafkaController.processControlledShutdown @ 2.4.1 / 3.7.0 wraps doControlledShutdown in a
    Try: the ControllerMovedException of its election write goes back to the broker
    (Errors.forException: NOT_CONTROLLER) and never reaches maybeResign. As epoch_check_fails,
    but broker 1 (leader of t-0) shuts down at 3 s: each of its controlled.shutdown.max.retries
    (3) attempts, controlled.shutdown.retry.backoff.ms (5000) apart, is answered NOT_CONTROLLER,
    the controller stays, and the broker then stops anyway. Engine 1.4.0 resigned at the first."""
    from engine.core.messages import CONTROLLED_SHUTDOWN

    def run(engine_version):
        doc = {"seed": 1, "kafka_version": "2.4", "brokers": 3,
               "config": {"auto.leader.rebalance.enable": False},
               "topics": [{"name": "t", "partitions": 1, "replication_factor": 2,
                           "assignment": {"0": [1, 2]}}],
               "clients": [], "duration_ms": 30000,
               "timeline": [{"at_ms": 3000, "op": "shutdown", "broker": 1}]}
        sim = Simulation(doc, engine_version=engine_version)
        arrivals = []
        controller = sim.brokers[0]
        handler = controller.handlers[CONTROLLED_SHUTDOWN]

        def spy(env):
            arrivals.append(sim.now_ms)
            return handler(env)
        controller.handlers[CONTROLLED_SHUTDOWN] = spy
        sim.advance_to(2000)
        tree = sim.zk_server.tree
        tree.set("/controller_epoch", tree.nodes["/controller_epoch"].data, -1)
        return sim, sim.run(), arrivals

    sim, r, arrivals = run(None)
    assert len(arrivals) == 3
    assert [b - a for a, b in zip(arrivals, arrivals[1:])] == [5000 + 6, 5000 + 6]
    assert not events(r, "controller_resigned") and sim.brokers[0].controller.active
    [stopped] = [e for e in events(r, "broker_stopped") if e["broker"] == 1]
    assert stopped["reason"].startswith("controlled shutdown failed 3 times (NOT_CONTROLLER)")
    _sim, old, old_arrivals = run("1.4.0")
    assert len(old_arrivals) == 1 and len(events(old, "controller_resigned")) == 1


def test_a_state_znode_of_a_newer_controller_epoch_fails_that_partition_alone():
    """PartitionStateMachine.doElectLeaderForPartitions @ 2.4.1 (ZkPartitionStateMachine @
    3.7.0): a partition whose state znode carries a controller epoch above the controller's is a
    failed election (StateChangeFailedException, "already written by another controller"); the
    other partitions of the same change go on, and nobody resigns. t-0 and t-1 are led by broker
    1; t-0's znode is rewritten at 2 s with controller epoch 2; broker 1 crashes at 3 s: t-1 is
    elected leader 2 (epoch 1, ISR [2]), t-0's znode is left as it was. Engine 1.4.0 resigned."""
    def run(engine_version):
        doc = {"seed": 1, "kafka_version": "2.4", "brokers": 3,
               "config": {"auto.leader.rebalance.enable": False},
               "topics": [{"name": "t", "partitions": 2, "replication_factor": 2,
                           "assignment": {"0": [1, 2], "1": [1, 2]}}],
               "clients": [], "duration_ms": 12000,
               "timeline": [{"at_ms": 3000, "op": "crash", "broker": 1}]}
        sim = Simulation(doc, engine_version=engine_version)
        sim.advance_to(2000)
        tree = sim.zk_server.tree
        path = "/brokers/topics/t/partitions/0/state"
        tree.set(path, {**tree.nodes[path].data, "controller_epoch": 2}, -1)
        return sim, sim.run()

    def state(sim, p):
        data = sim.zk_server.tree.nodes[f"/brokers/topics/t/partitions/{p}/state"].data
        return data["leader"], data["leader_epoch"], data["isr"], data["controller_epoch"]

    sim, r = run(None)
    assert not events(r, "controller_resigned")
    assert [(e["partition"], e["leader"]) for e in events(r, "leader_elected")] == [(1, 2)]
    assert state(sim, 1) == (2, 1, [2], 1)
    assert state(sim, 0) == (1, 0, [1, 2], 2)
    old_sim, old = run("1.4.0")
    assert len(events(old, "controller_resigned")) == 1 and not events(old, "leader_elected")
    assert state(old_sim, 1) == (1, 0, [1, 2], 1)
