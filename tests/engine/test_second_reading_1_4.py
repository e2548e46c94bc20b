"""Regression tests from the second reading of engine 1.4.0's nine fixes against Kafka's code at
the tags (docs/reviews/engine-1.4.0-second-reading.md). Each pins a number read in Kafka's code;
where the reading found a deviation, the run is re-simulated as engine 1.4.0 too."""
from engine.simulation import Simulation

SESSION_MS = 9000             # broker.session.timeout.ms
CHECK_PERIOD_MS = 9000 // 8   # 4.1: QuorumController.maybeFenceStaleBrokerPeriodNs
LINGER_MS = 25                # controller.quorum.append.linger.ms


def cluster(era, brokers=4, duration_ms=30000, timeline=(), config=None, topics=None):
    return {"name": "second-reading", "kafka_version": era, "brokers": brokers,
            "duration_ms": duration_ms, "config": config or {},
            "topics": topics or [{"name": "t", "partitions": 2, "replication_factor": 3}],
            "clients": [], "timeline": list(timeline)}


def _failover_then_two_crashes(era, version=None):
    """The active controller crashes at 5 s; brokers 1 and 2 crash in the millisecond the new
    controller activates, so their last contact is the activation's. Returns the activation time
    and the (decision time, broker) of their fences."""
    sim = Simulation(cluster(era), engine_version=version)
    sim.advance_to(5000)
    sim.apply({"op": "crash", "controller": sim.quorum.active})
    t = 5001
    while not [e for e in sim.history if e["type"] == "controller_activated" and e["t_ms"] > 5000]:
        t += 1
        sim.advance_to(t)
    for broker in (1, 2):
        sim.apply({"op": "crash", "broker": broker})
    fenced = [(e["t_ms"], e["broker"]) for e in sim.run()["history"] if e["type"] == "broker_fenced"]
    return t, fenced


def test_4_1_fences_a_broker_last_seen_at_the_activation_one_session_later():
    """QuorumController.claim @ 4.1.0 runs ClusterControlManager.activate (the tracker's contact
    of every unfenced broker = nowNs) before the prepended CompleteActivationEvent, whose
    processBatchEndOffset runs PeriodicTaskControlManager.activate (the fencing task's first run
    one period, 1125 ms, after ITS nanoTime). So the eighth check comes a few microseconds more
    than 9000 ms after the contact and BrokerHeartbeatTracker.isExpired (contact + session < now)
    is true there: fenced one session after the activation. Engine 1.4.0 compared whole
    milliseconds (9000 < 9000 is false) and fenced one period later. 3.9 fences at the deadline
    (BrokerHeartbeatManager's deferred check at lastContactNs + session)."""
    for era in ("4.1", "3.9-kraft"):
        activated, fenced = _failover_then_two_crashes(era)
        assert sorted(b for _, b in fenced) == [1, 2]
        # the decision at activation + 9000 ms, answered after the 25 ms linger and the commit
        assert all(activated + SESSION_MS + LINGER_MS <= t <= activated + SESSION_MS + LINGER_MS + 5
                   for t, _ in fenced), (era, activated, fenced)
    activated, fenced = _failover_then_two_crashes("4.1", "1.4.0")
    assert all(t >= activated + SESSION_MS + CHECK_PERIOD_MS for t, _ in fenced)
