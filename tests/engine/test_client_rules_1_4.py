"""Client rules fixed in engine 1.4.0 (docs/model.md §10, §16), read at the eras' tags; each test
re-simulates the run as engine 1.3.0 too, which keeps the old behaviour."""
import pytest

from engine.simulation import Simulation


def consumer_cluster(era):
    return {"seed": 1, "kafka_version": era, "brokers": 3, "duration_ms": 10000,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 10},
                        {"name": "c", "type": "consumer", "topic": "t"}],
            "timeline": []}


def _answer_unknown_leader_epoch(era, version):
    """A fetching consumer gets UNKNOWN_LEADER_EPOCH for its partition (the leader has not yet
    learned the epoch the consumer's metadata named). Returns (metadata refreshes asked, Fetches
    sent in the same millisecond)."""
    sim = Simulation(consumer_cluster(era), engine_version=version)
    sim.advance_to(5000)
    consumer = sim.clients["c"]
    key = next(iter(consumer.positions))
    leader = consumer.leaders[key][0]
    asked = []
    consumer.refresh_metadata = lambda *_: asked.append(sim.now_ms)
    sent = []
    sim.network.observer = lambda kind, env: sent.append(env.target) \
        if kind == "send" and env.source == "c" and env.type == "Fetch" else None
    consumer.in_flight[leader] = True
    parts = {key: {"fetch_offset": consumer.positions[key], "current_leader_epoch": consumer.leaders[key][1]}}
    consumer._on_fetch((leader, parts), {"partitions": {key: {"error": "UNKNOWN_LEADER_EPOCH"}}}, None)
    return asked, sent, leader


@pytest.mark.parametrize("era", ["2.4", "3.3", "3.7", "3.9-kraft", "4.1"])
def test_the_consumer_only_logs_unknown_leader_epoch(era):
    """Fetcher.initializeCompletedFetch @ 2.4.0 / 3.3.1 and FetchCollector.handleInitializeErrors
    @ 3.7.0 / 3.9.0 / 4.1.0: UNKNOWN_LEADER_EPOCH is logged ("Received unknown leader epoch error
    in fetch") and asks for no metadata update, unlike NOT_LEADER_OR_FOLLOWER or
    FENCED_LEADER_EPOCH; the partition stays fetchable and the next poll fetches it again at once.
    Engine 1.3.0 refreshed metadata and waited retry.backoff.ms."""
    asked, sent, leader = _answer_unknown_leader_epoch(era, None)
    assert asked == [] and sent == [leader]
    asked, sent, _ = _answer_unknown_leader_epoch(era, "1.3.0")
    assert asked and sent == []
