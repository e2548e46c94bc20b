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


def _spy(monkeypatch, cls, name, sim, seen, key=lambda *a: a):
    """Record (now_ms, key(args)) of every call of ``cls.name`` during the run of ``sim``."""
    original = getattr(cls, name)

    def spy(self, *args, **kw):
        seen.append((sim.now_ms, key(self, *args)))
        return original(self, *args, **kw)
    monkeypatch.setattr(cls, name, spy)


def test_a_silent_voter_gets_begin_quorum_epoch_once_per_request_timeout(monkeypatch):
    """KafkaRaftClient.maybeSendBeginQuorumEpochRequests @ 3.9.0 / 4.1.0 sends a round every
    fetch.timeout.ms / 2 = 1000 ms, but only to voters RequestManager.isReady finds ready: a
    request still awaiting its answer is not ready until hasRequestTimedOut
    (now >= sent + controller.quorum.request.timeout.ms = 2000, ConnectionState @ 3.9.0). So with
    the leader's link to one voter cut, that voter is sent BeginQuorumEpoch every other round
    (every 2000 ms), the other voter every round. 4.1: the cut-off voter's pre-votes are refused
    (a leader and a follower that fetched never grant), so the leader keeps its epoch. Engine
    1.3.0 sent it once per voter, at the election."""
    from engine.kraft.raft_replication import RaftReplication
    from tests.kafka_parity.test_raft import started
    for version in (None, "1.3.0"):
        sim, leader, epoch, (cut_off, other) = started("4.1", 3000, engine_version=version)
        sends = []
        _spy(monkeypatch, RaftReplication, "_send_begin_epoch", sim, sends,
             key=lambda self, voter: voter)
        sim.apply({"op": "cut", "from": leader, "to": cut_off})
        sim.advance_to(9000)
        assert sim.quorum.active == leader and sim.quorum.voters[leader].epoch == epoch
        to_cut = [t for t, v in sends if v == cut_off]
        to_other = [t for t, v in sends if v == other]
        if version is None:
            assert [b - a for a, b in zip(to_other, to_other[1:])] == [1000] * (len(to_other) - 1)
            assert len(to_cut) == 3 and to_cut[0] == to_other[0]
            assert [b - a for a, b in zip(to_cut, to_cut[1:])] == [2000, 2000]
        else:  # engine 1.3.0: acknowledged at the election, never sent again
            assert to_cut == [] and to_other == []


def test_the_leader_change_record_does_not_linger():
    """KafkaRaftClient.onBecomeLeader @ 3.9.0 / 4.1.0 appends the LeaderChangeMessage with
    BatchAccumulator.appendControlMessages, which calls forceDrain: the control batch goes to the
    log at once, unlike the controller's records, which wait controller.quorum.append.linger.ms
    (25 ms). So the new leader's epoch commits — and its controller activates — one fetch round
    trip after the election, well inside 25 ms (1 ms links)."""
    for era in ("3.9-kraft", "4.1"):
        result = Simulation(cluster(era, duration_ms=4000)).run()
        elected = next(e["t_ms"] for e in result["history"] if e["type"] == "raft_leader_elected")
        activated = next(e["t_ms"] for e in result["history"] if e["type"] == "controller_activated")
        assert activated - elected < LINGER_MS, (era, elected, activated)


def test_a_stale_broker_is_fenced_at_its_deadline_in_3_9_and_at_the_next_check_in_4_1(monkeypatch):
    """3.9: BrokerHeartbeatManager.nextCheckTimeNs schedules the check at the oldest unfenced
    contact + session (9000 ms) and findOneStaleBroker fences there (hasValidSession:
    contact + session >= now, false a moment later). 4.1: the maybeFenceStaleBroker task runs
    every session / 8 = 1125 ms from the activation and BrokerHeartbeatTracker.isExpired is
    strict (contact + session < now): the fence is decided at the first run strictly after the
    last heartbeat + 9000 ms."""
    from engine.core.messages import BROKER_HEARTBEAT
    from engine.kraft.broker_control import BrokerControl
    for era in ("3.9-kraft", "4.1"):
        sim = Simulation(cluster(era, duration_ms=20000,
                                 timeline=[{"at_ms": 5000, "op": "crash", "broker": 0}]))
        beats, decided = [], []

        def observe(what, env):
            if what == "deliver" and env.type == BROKER_HEARTBEAT and env.source == 0:
                beats.append(sim.now_ms)
        sim.network.observer = observe
        _spy(monkeypatch, BrokerControl, "fence", sim, decided, key=lambda self, broker, *a: broker)
        result = sim.run()
        activated = next(e["t_ms"] for e in result["history"] if e["type"] == "controller_activated")
        last = max(t for t in beats if t <= 5000)
        when = [t for t, b in decided if b == 0][0]
        if era == "3.9-kraft":
            assert when == last + SESSION_MS
        else:
            runs = [activated + k * CHECK_PERIOD_MS for k in range(1, 40)]
            assert when == min(t for t in runs if t > last + SESSION_MS)
