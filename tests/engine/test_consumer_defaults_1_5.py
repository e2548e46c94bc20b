"""The consumer's request.timeout.ms default per era (engine 1.5.0; docs/model.md §12, §19):
305000 in "0.10" and "1.1" (ConsumerConfig @ 0.10.2.2 and 1.1.1: "chosen to be higher than the
default of max.poll.interval.ms"), 30000 from 2.0.0 (KAFKA-7050); the producer's is 30000 in every
era. Engine 1.4.0 gave the consumer 30000 everywhere.
"""
from engine.simulation import Simulation

CUT_AT, HEAL_AT = 5000, 90000


def cut_consumer(version, engine_version=None, consumer_config=None):
    """Leader 1; consumer c reads t-0 from it; the link c - 1 is cut from 5 s to 90 s. Returns
    the simulation and when c reads its first record produced after the cut."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 2, 0]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all",
                        "rate_per_s": 10},
                       {"name": "c", "type": "consumer", "topic": "t",
                        **({"config": consumer_config} if consumer_config else {})}],
           "duration_ms": 120000,
           "timeline": [{"at_ms": CUT_AT, "op": "cut", "from": "c", "to": 1},
                        {"at_ms": HEAL_AT, "op": "heal", "from": "c", "to": 1}]}
    sim = Simulation(doc, engine_version=engine_version)
    r = sim.run()
    after = [x for x in r["consumed"]["c"] if x["at_ms"] > CUT_AT + 100]
    return sim, after[0]["at_ms"]


def test_the_consumer_request_timeout_default_per_era():
    for version, consumer, producer in (("0.10", 305000, 30000), ("1.1", 305000, 30000),
                                        ("2.0", 30000, 30000), ("2.6", 30000, 30000),
                                        ("3.7", 30000, 30000), ("4.1", 30000, 30000)):
        doc = {"seed": 1, "kafka_version": version, "brokers": 1,
               "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
               "clients": [{"name": "p", "type": "producer", "topic": "t"},
                           {"name": "c", "type": "consumer", "topic": "t"}],
               "duration_ms": 1000}
        sim = Simulation(doc)
        assert sim.clients["c"].config["request.timeout.ms"] == consumer, version
        assert sim.clients["p"].config["request.timeout.ms"] == producer, version
        old = Simulation(doc, engine_version="1.4.0")
        assert old.clients["c"].config["request.timeout.ms"] == 30000, version


def test_a_1_1_consumer_fetch_outlives_a_85_second_cut():
    """1.1: the Fetch sent just after the cut (5004 ms) does not time out (305 s): TCP delivers it
    at its first retransmission after the heal, 102.2 s after it was sent (§16, network), and the
    consumer reads on at 107206 ms. With 30000 (engine 1.4.0, or 2.0's default, or the key set)
    the request times out at 35 s and the consumer goes on a new connection, whose retransmission
    gets through sooner after the heal."""
    _sim, resumed = cut_consumer("1.1")
    assert resumed == 107206
    _sim, resumed_old = cut_consumer("1.1", engine_version="1.4.0")
    assert resumed_old == 90558
    _sim, resumed_set = cut_consumer("1.1", consumer_config={"request.timeout.ms": 30000})
    assert resumed_set == resumed_old
    _sim, resumed_20 = cut_consumer("2.0")
    assert resumed_20 < 100000
