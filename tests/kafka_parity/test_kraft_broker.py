"""Kafka's own tests of the KRaft broker's lifecycle and metadata cache, written again against the
simulator (docs/kafka-parity.md, section "KRaft broker").

``MetadataCacheTest``'s KRaft cases replay the same records into a broker's image and publish it
(``KRaftMetadataCache.setImage``); ``ExponentialBackoffTest`` calls the engine's port of
``ExponentialBackoff.backoff`` (``engine/kraft/lifecycle_channel.py``), which the 3.9 lifecycle
manager uses after a failed registration or heartbeat. Kafka's broker ids are kept. Tags:
apache/kafka 3.9.0 (confluentinc cc53a632ed).
"""
import random

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
