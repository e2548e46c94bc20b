"""Kafka's own tests of the KRaft broker's lifecycle and metadata cache, written again against the
simulator (docs/kafka-parity.md, section "KRaft broker").

``MetadataCacheTest``'s KRaft cases replay the same records into a broker's image and publish it
(``KRaftMetadataCache.setImage``); ``ExponentialBackoffTest`` calls the engine's port of
``ExponentialBackoff.backoff`` (``engine/kraft/lifecycle_channel.py``), which the 3.9 lifecycle
manager uses after a failed registration or heartbeat. Kafka's broker ids are kept. Tags:
apache/kafka 3.9.0 (confluentinc cc53a632ed).
"""
import random

import pytest

from engine.kraft.lifecycle_channel import exponential_backoff
from engine.kraft.metadata_image import BROKER_CHANGE, REGISTER_BROKER, MetadataImage
from engine.simulation import Simulation


def _cache():
    """A KRaft broker of engine 1.5.0 with an empty image: its metadata cache under test."""
    sim = Simulation({"name": "parity", "kafka_version": "3.9-kraft", "brokers": 3,
                      "duration_ms": 1000, "topics": [], "clients": [], "timeline": []})
    broker = sim.brokers[0]
    broker.md_image = MetadataImage()
    return broker


def _replay(broker, *records):
    for record in records:
        broker.apply_metadata({"offset": broker.md_image.offset, "epoch": 1, **record})
    broker.publish()  # setImage


def _register(broker_id, fenced=False, epoch=0, shutting_down=False):
    return {"type": REGISTER_BROKER, "broker": broker_id, "broker_epoch": epoch, "fenced": fenced,
            "in_controlled_shutdown": shutting_down}


def _change(broker_id, epoch=0, **fields):
    return {"type": BROKER_CHANGE, "broker": broker_id, "broker_epoch": epoch, **fields}


def test_is_broker_fenced():
    """MetadataCacheTest.testIsBrokerFenced @ 3.9.0: registered unfenced, then a change record
    fences it; the KIP-841 eligibility of the cache follows."""
    cache = _cache()
    _replay(cache, _register(0))
    assert 0 in cache.cache_eligible()
    _replay(cache, _change(0, fenced=1))
    assert 0 not in cache.cache_eligible() and 0 not in cache.live_brokers


def test_get_alive_brokers_with_broker_fenced():
    """MetadataCacheTest.testGetAliveBrokersWithBrokerFenced @ 3.9.0: of brokers 0 and 1, 1 is
    fenced; getAliveBrokers and getAliveBrokerNode name exactly the unfenced ones."""
    cache = _cache()
    _replay(cache, _register(0), _register(1), _change(1, fenced=1))
    for broker_id, registration in cache.md_image.brokers.items():
        assert (broker_id in cache.live_brokers) == (not registration["fenced"])
    assert sorted(cache.live_brokers) == [0]


def test_is_broker_in_controlled_shutdown():
    """MetadataCacheTest.testIsBrokerInControlledShutdown @ 3.9.0: a broker that enters controlled
    shutdown is shutting down for KIP-841 (not eligible) but, unfenced, still alive for clients
    (getAliveBrokerNodes filters fenced brokers only; engine 1.5.0)."""
    cache = _cache()
    _replay(cache, _register(0))
    assert 0 in cache.cache_eligible()
    _replay(cache, _change(0, in_controlled_shutdown=1))
    assert 0 not in cache.cache_eligible()
    assert 0 in cache.live_brokers


def test_get_live_broker_epoch():
    """MetadataCacheTest.testGetLiveBrokerEpoch @ 3.9.0: the alive broker's epoch is known, a
    fenced broker's is not."""
    cache = _cache()
    _replay(cache, _register(0, epoch=100), _register(1, epoch=101, fenced=True))
    assert cache.live_brokers.get(0, -1) == 100
    assert cache.live_brokers.get(1, -1) == -1


def test_exponential_backoff():
    """ExponentialBackoffTest.testExponentialBackoff @ 3.9.0: (100, 2, 2000, 0.2) gives
    100 x 2^attempts within 20 % for attempts up to 4, and never more than 2000 x 1.2 after."""
    rng = random.Random(0)
    for _ in range(101):
        for attempts in range(11):
            backoff = exponential_backoff(attempts, 100, 2, 2000, 0.2, rng)
            if attempts <= 4:
                expected = 100 * 2 ** attempts
                assert abs(backoff - expected) <= expected * 0.2
            else:
                assert backoff <= 2000 * 1.2


def test_exponential_backoff_without_jitter():
    """ExponentialBackoffTest.testExponentialBackoffWithoutJitter @ 3.9.0."""
    rng = random.Random(0)
    assert [exponential_backoff(a, 100, 2, 400, 0.0, rng) for a in range(4)] == [100, 200, 400, 400]


# -- BrokerLifecycleManagerTest: the lifecycle manager driven through a whole cluster --------------
# Kafka drives the manager through a mock channel and a mock clock; here the same exchanges run in
# a simulated cluster, and the test reads the requests the broker sends and when.

def _lifecycle_requests(monkeypatch, doc, broker_id):
    """(time, type, body) of every registration and heartbeat ``broker_id`` sends, the broker's
    ``_register`` retry delays, and the run's result."""
    from engine.core.messages import BROKER_HEARTBEAT, BROKER_REGISTRATION
    from engine.kraft.kraft_broker import KraftBroker
    sent, delays = [], []
    request, set_timer = KraftBroker.request, KraftBroker.set_timer

    def spy_request(self, target, type_, body, *args, **kw):
        if self.node_id == broker_id and type_ in (BROKER_HEARTBEAT, BROKER_REGISTRATION):
            sent.append((self.sim.now_ms, type_, dict(body)))
        return request(self, target, type_, body, *args, **kw)

    def spy_timer(self, delay, fn, arg=None):
        if self.node_id == broker_id and getattr(fn, "__name__", "") == "_register":
            delays.append(delay)
        return set_timer(self, delay, fn, arg)
    monkeypatch.setattr(KraftBroker, "request", spy_request)
    monkeypatch.setattr(KraftBroker, "set_timer", spy_timer)
    result = Simulation(doc).run()
    monkeypatch.undo()
    return sent, delays, result


def _events(result, type_, broker):
    return [e for e in result["history"] if e["type"] == type_ and e.get("broker") == broker]


def _rolling_restart(era):
    from engine.scenario.library import library
    return {**library()["rolling-restart"], "kafka_version": era}


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_successful_registration(monkeypatch, era):
    """BrokerLifecycleManagerTest.testSuccessfulRegistration @ 3.9.0 / 4.1.0: the registration
    carries the previous broker epoch read from the clean-shutdown file (Kafka's
    ``OptionalLong.of(10L)``) and the broker takes the epoch the answer gives; then
    (``scheduleNextCommunicationImmediately``) the first heartbeat goes out at once, with that
    epoch. rolling-restart: broker 0 shuts down cleanly and restarts at 15 s; the Raft client
    follows the leader its quorum-state file names, so the channel sends at once."""
    sent, _, result = _lifecycle_requests(monkeypatch, _rolling_restart(era), 0)
    started = _events(result, "broker_started", 0)
    registrations = [(t, b) for t, kind, b in sent if kind == "BrokerRegistration"]
    first_epoch = started[0]["broker_epoch"]
    accepted = [(t, b) for t, b in registrations if t >= 15000][-1]
    assert accepted[1]["previous_broker_epoch"] == first_epoch
    assert registrations[0][1]["previous_broker_epoch"] == -1  # a new disk
    assert min(t for t, _ in registrations if t >= 15000) == 15000  # the file's leader, no 100 ms poll
    answer_at, epoch = started[1]["t_ms"], started[1]["broker_epoch"]
    heartbeat = next((t, b) for t, kind, b in sent if kind == "BrokerHeartbeat" and t >= answer_at)
    assert heartbeat[0] == answer_at and heartbeat[1]["broker_epoch"] == epoch
    assert heartbeat[1]["want_fence"] is True


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_registration_timeout(monkeypatch, era):
    """BrokerLifecycleManagerTest.testRegistrationTimeout @ 3.9.0 / 4.1.0 (its resend part): a
    registration answered DUPLICATE_BROKER_REGISTRATION is sent again after
    ``scheduleNextCommunicationAfterFailure`` — 3.9: ExponentialBackoff(100, 2, 9000, 0.02), i.e.
    100 ms then 200, 400, ... each within 2 %; 4.1 (KAFKA-19294): the heartbeat interval, 2000 ms.
    Broker 0 crashes at 5 s and restarts at 6 s, while its old session is still valid. (The
    shutdown after initial.broker.registration.timeout.ms, 60 s, is not modelled: a run's broker
    keeps retrying.)"""
    timeline = [{"op": "crash", "broker": 0, "at_ms": 5000}, {"op": "restart", "broker": 0, "at_ms": 6000}]
    doc = {"name": "parity", "kafka_version": era, "brokers": 3, "duration_ms": 25000,
           "topics": [{"name": "foo", "partitions": 1, "replication_factor": 3}], "clients": [],
           "timeline": timeline}
    _, delays, result = _lifecycle_requests(monkeypatch, doc, 0)
    rejected = _events(result, "registration_rejected", 0)
    assert len(rejected) == len(delays) >= 3
    if era == "4.1":
        assert delays == [2000] * len(delays)
    else:
        for k, delay in enumerate(delays):
            expected = 100 * 2 ** k
            assert int(expected * 0.98) <= delay <= int(expected * 1.02), (k, delays)
    assert len(_events(result, "broker_started", 0)) == 2


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_controlled_shutdown(monkeypatch, era):
    """BrokerLifecycleManagerTest.testControlledShutdown @ 3.9.0 / 4.1.0: a caught-up answer moves
    STARTING to RECOVERY (the next heartbeat asks to be unfenced), an unfenced answer to RUNNING;
    ``beginControlledShutdown`` sends a heartbeat with WantShutDown at once (or as soon as the one
    in flight is answered), and the answer with ShouldShutDown ends the broker then.
    rolling-restart: broker 0's controlled shutdown at 10 s."""
    sent, _, result = _lifecycle_requests(monkeypatch, _rolling_restart(era), 0)
    heartbeats = [(t, b) for t, kind, b in sent if kind == "BrokerHeartbeat" and t < 15000]
    asks = [t for t, b in heartbeats if not b["want_fence"]]
    assert asks and all(b["want_fence"] for t, b in heartbeats if t < asks[0])  # RECOVERY first
    requested = _events(result, "controlled_shutdown_requested", 0)[0]["t_ms"]
    first_cs = next(t for t, b in heartbeats if b["want_shut_down"])
    before = [t for t, b in heartbeats if t < requested]
    rtt = 4  # a heartbeat in flight is answered within a round trip here
    assert requested <= first_cs <= max(requested, before[-1] + rtt)
    assert all(not b["want_shut_down"] for t, b in heartbeats if t < requested)
    stopped = _events(result, "broker_stopped", 0)[0]
    assert "granted the controlled shutdown" in stopped["reason"]
    # the grant answers the last heartbeat once the controller's records are committed
    last_cs = [t for t, b in heartbeats if b["want_shut_down"]][-1]
    assert last_cs < stopped["t_ms"] < last_cs + 100
