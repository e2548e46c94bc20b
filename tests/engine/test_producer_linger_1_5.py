"""The producer's linger.ms (engine 1.5.0, issue 30; docs/model.md §6, §19).

A batch that is not full waits linger.ms after it was created before it is sendable
(RecordAccumulator.ready / batchReady @ 0.10.2.2 - 4.1.0). The default is 0 up to 3.9.0
(ProducerConfig @ 3.7.0, 3.9.0 cc53a632ed) and 5 from 4.0 (KIP-1030; ProducerConfig @ 4.1.0
13f70256db), so a 4.1 record waits 5 ms where a 3.9-kraft one goes at once. Engine 1.4.0 sent
every batch at once whatever the key said.
"""
from engine.simulation import Simulation

BATCH_RECORDS = 163   # batch.size 16384 / 100-byte records
ASSIGNMENT = {"0": [0, 1, 2], "1": [0, 2, 1], "2": [1, 2, 0]}   # t-0, t-1 led by 0; t-2 by 1


def produce_run(version, ops, engine_version=None, config=None, topic_config=None, duration=4000):
    """Producer p (acks=all) of t; ``ops`` are (at_ms, partition, count) produce operations.
    Returns (simulation, the Produce requests as (sent_ms, broker, {partition: records}))."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3, "config": config or {},
           "topics": [{"name": "t", "partitions": 3, "replication_factor": 3,
                       "assignment": ASSIGNMENT, **({"config": topic_config} if topic_config else {})}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all"}],
           "duration_ms": duration,
           "timeline": [{"at_ms": at, "op": "produce", "topic": "t", "producer": "p", "count": n,
                         "partition": part} for at, part, n in ops]}
    sim = Simulation(doc, engine_version=engine_version)
    sends = []
    sim.network.observer = lambda kind, env: sends.append(
        (env.sent_at_ms, env.target, {k: len(v["ids"]) for k, v in env.body["partitions"].items()})) \
        if kind == "send" and env.type == "Produce" else None
    sim.run()
    return sim, sends


def first_send(version, engine_version=None, config=None):
    """A first record to t-2 at 5 s (the producer learns t's leaders), then one to t-0 at 6 s:
    how long after its send() the t-0 record left, and that request's batches."""
    sim, sends = produce_run(version, [(5000, 2, 1), (6000, 0, 1)], engine_version, config,
                             duration=7000)
    assert sim.records["p-1"].status == "acked"
    sent = [s for s in sends if "t-0" in s[2]][0]
    return sent[0] - 6000, sent[2]


def test_the_linger_ms_default_per_era():
    for version, linger in (("0.10", 0), ("2.4", 0), ("3.7", 0), ("3.9-kraft", 0), ("4.1", 5)):
        doc = {"seed": 1, "kafka_version": version, "brokers": 1,
               "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
               "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 100}
        assert Simulation(doc).clients["p"].linger_ms == linger, version
        assert Simulation(doc, engine_version="1.4.0").clients["p"].linger_ms == 0, version


def test_a_4_1_record_waits_5_ms_a_3_9_kraft_one_goes_at_once():
    assert first_send("4.1") == (5, {"t-0": 1})
    assert first_send("3.9-kraft") == (0, {"t-0": 1})


def test_linger_ms_20_in_3_7_waits_20_ms():
    assert first_send("3.7", config={"linger.ms": 20}) == (20, {"t-0": 1})
    assert first_send("3.7") == (0, {"t-0": 1})
    assert first_send("0.10", config={"linger.ms": 20}) == (20, {"t-0": 1})


def test_under_engine_1_4_0_nothing_lingers():
    assert first_send("4.1", engine_version="1.4.0") == (0, {"t-0": 1})
    assert first_send("3.7", engine_version="1.4.0", config={"linger.ms": 20}) == (0, {"t-0": 1})


def test_records_within_the_linger_share_one_batch():
    # 4.1: three records to t-0 at 2000, 2002 and 2004 go in one batch at 2005; under 1.4.0 the
    # first goes alone at once and the two others follow as they come
    ops = [(2000, 0, 1), (2002, 0, 1), (2004, 0, 1)]
    assert produce_run("4.1", ops)[1] == [(2005, 0, {"t-0": 3})]
    assert [s[2] for s in produce_run("4.1", ops, "1.4.0")[1]] == [{"t-0": 1}] * 3


def test_a_full_batch_goes_before_its_linger():
    # 164 records at once with linger.ms 1000: the first batch is full (batch.size) and goes at
    # once; the one record of the second batch lingers the whole second
    _, sends = produce_run("3.7", [(2000, 0, BATCH_RECORDS + 1)], config={"linger.ms": 1000})
    assert sends == [(2000, 0, {"t-0": BATCH_RECORDS}), (3000, 0, {"t-0": 1})]


def test_a_lingering_batch_rides_along_when_its_leader_is_ready():
    # RecordAccumulator.drain takes every partition of a ready node, lingering or not: t-0's
    # record (2000) goes with t-1's full batch at 2004, not at its own 2050; t-2 (leader 1) waits
    _, sends = produce_run("3.7", [(2000, 0, 1), (2002, 2, 1), (2004, 1, BATCH_RECORDS)],
                           config={"linger.ms": 50})
    assert sends == [(2004, 0, {"t-0": 1, "t-1": BATCH_RECORDS}), (2052, 1, {"t-2": 1})]


def test_a_retried_batch_waits_the_backoff_not_the_linger():
    # min.insync.replicas 4 on 3 replicas (2.6: not yet capped at the replication factor, §17.5):
    # every acks=all produce is answered NOT_ENOUGH_REPLICAS.
    # A batch drained once is closed for appends (isFull), so its retries wait retry.backoff.ms
    # (100) after each answer, not linger.ms (300)
    sim, sends = produce_run("2.6", [(2000, 0, 1)], config={"linger.ms": 300},
                             topic_config={"min.insync.replicas": 4}, duration=2900)
    times = [s[0] for s in sends]
    assert times[0] == 2300
    rtt = 2   # the request's and the answer's link delays
    assert [b - a for a, b in zip(times, times[1:])][:4] == [100 + rtt] * 4


def test_the_default_delivery_timeout_covers_linger_plus_request_timeout():
    # KafkaProducer.configureDeliveryTimeout @ 2.1.0 - 4.1.0: a default delivery.timeout.ms below
    # linger.ms + request.timeout.ms becomes that sum; an explicit one is left as it is (Kafka
    # refuses it with a ConfigException)
    def delivery(config, client_config=None, engine_version=None):
        doc = {"seed": 1, "kafka_version": "3.7", "brokers": 1, "config": config,
               "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
               "clients": [{"name": "p", "type": "producer", "topic": "t",
                            **({"config": client_config} if client_config else {})}],
               "duration_ms": 100}
        return Simulation(doc, engine_version=engine_version).clients["p"].delivery_timeout_ms
    assert delivery({"linger.ms": 100000}) == 130000
    assert delivery({"linger.ms": 5}) == 120000
    assert delivery({}, {"linger.ms": 100000, "delivery.timeout.ms": 125000}) == 125000
    # linger.ms 0 too (the second reading, C13): only the request timeout then
    assert delivery({"request.timeout.ms": 200000}) == 200000
    assert delivery({"request.timeout.ms": 200000}, engine_version="1.4.0") == 120000


def test_up_to_2_0_a_batch_expires_after_request_timeout_plus_linger():
    # ProducerBatch.maybeExpire @ 0.10.2.2 - 2.0.0: a batch not retried expires when more than
    # request.timeout.ms passed since its creation plus linger.ms
    doc = {"seed": 1, "kafka_version": "2.0", "brokers": 1, "config": {"linger.ms": 40},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 100}
    producer = Simulation(doc).clients["p"]
    from engine.clients.producer_consumer import Batch
    batch = Batch("t-0", 1, 1000)
    assert producer._expiry_ms(batch) == 1000 + 30000 + 40
    batch.attempts, batch.ready_ms = 1, 5000
    assert producer._expiry_ms(batch) == 5000 + 30000


def test_a_ready_leader_does_not_drain_a_batch_in_retry_backoff():
    # second reading: drainBatchesForOneNode @ 0.10.2.2 - 4.1.0 skips a partition whose first batch
    # is backing off (attempts > 0 and waited < retry.backoff.ms), whatever the node's readiness.
    # Every acks=all produce is refused (min.insync.replicas 4 on 3 replicas, 2.6): t-0's batch is
    # answered at 2302 and backs off to 2402, so t-1's full batch at 2350 goes alone; at 2402 t-0
    # goes alone too, t-1 (answered at 2352) backing off to 2452
    _, sends = produce_run("2.6", [(2000, 0, 1), (2350, 1, BATCH_RECORDS)],
                           config={"linger.ms": 300}, topic_config={"min.insync.replicas": 4},
                           duration=2600)
    assert sends[:4] == [(2300, 0, {"t-0": 1}), (2350, 0, {"t-1": BATCH_RECORDS}),
                         (2402, 0, {"t-0": 1}), (2452, 0, {"t-1": BATCH_RECORDS})]
