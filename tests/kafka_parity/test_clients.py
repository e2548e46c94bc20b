"""Kafka's client tests (MetadataTest, NetworkClientTest, SenderTest, FetcherTest) as the referee
for the engine's producer, consumer and their metadata (docs/kafka-parity.md, "Clients").

Where Kafka's test is a unit test of ``Metadata`` alone, the port feeds metadata answers to a
running simulated producer (``_on_metadata``, the engine's ``Metadata.update``); the others run a
small cluster and assert on what the client sent and the history.
"""
from engine.simulation import Simulation


def _metadata_producer(version="3.7"):
    """A running producer of t (one partition) whose metadata answers the test writes itself."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 5000}
    sim = Simulation(doc)
    sim.advance_to(1000)
    return sim.clients["p"]


def _answer(producer, leader, epoch, isr):
    producer._on_metadata(leader, {"error": None, "partitions": {
        "t-0": {"leader": leader, "leader_epoch": epoch, "isr": isr, "replicas": [0, 1, 2]}}}, None)
    return producer.leaders["t-0"]


def test_reject_old_metadata():
    """Kafka: MetadataTest.testRejectOldMetadata at 3.7.0 (its first three steps) - the first
    epoch seen is taken, an answer with an older epoch is ignored (the cached partition stays),
    one with the same epoch replaces it."""
    producer = _metadata_producer()
    assert _answer(producer, 1, 100, [1]) == (1, 100)
    assert _answer(producer, 2, 99, []) == (1, 100)      # older epoch: rejected
    assert _answer(producer, 2, 100, []) == (2, 100)     # same epoch: accepted


def test_update_last_epoch():
    """Kafka: MetadataTest.testUpdateLastEpoch at 3.7.0 (its metadata-answer steps) - epoch 10 is
    taken, then 12, and a later answer with epoch 11 does not overwrite 12."""
    producer = _metadata_producer()
    assert _answer(producer, 0, 10, [0])[1] == 10
    assert _answer(producer, 0, 12, [0])[1] == 12
    assert _answer(producer, 1, 11, [1]) == (0, 12)


def test_reject_old_metadata_is_a_2_2_rule():
    """Kafka: MetadataTest.testRejectOldMetadata at 2.7.0 holds from 2.2.0 (the era "2.4"); Kafka
    2.0.0's Metadata has no leader epochs, so era "2.0" takes the older answer."""
    assert _answer(_metadata_producer("2.4"), 1, 100, [1]) == (1, 100)
    old = _metadata_producer("2.0")
    _answer(old, 1, 100, [1])
    assert _answer(old, 2, 99, []) == (2, 99)


# -- request timeouts (NetworkClient.handleTimedOutRequests) ---------------------------------------
def _silent_leader(version, records=1, config=None):
    """Leader 0 of t-0 stops answering producer p at 900 ms; acks=all records sent at 1000 and
    1005 ms. Returns (produce_failed events, times of p's Metadata requests)."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"retries": 0, **(config or {})},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 100000,
           "timeline": [{"at_ms": 900, "op": "isolate", "broker": 0, "from": ["p"]}]
           + [{"at_ms": 1000 + 5 * i, "op": "produce", "topic": "t", "producer": "p", "count": 1,
               "acks": "all"} for i in range(records)]}
    sim = Simulation(doc)
    asked = []
    sim.network.observer = lambda kind, env: asked.append(env.sent_at_ms) \
        if kind == "send" and env.source == "p" and env.type == "Metadata" else None
    r = sim.run()
    failed = [(e["t_ms"], e["records"], e["error"]) for e in r["history"] if e["type"] == "produce_failed"]
    assert not sim.clients["p"].pending   # nothing left in flight
    return failed, asked


def test_request_timeout_3_3():
    """Kafka: NetworkClientTest.testDefaultRequestTimeout at 3.3.1 (testRequestTimeout there is
    the same with request.timeout.ms 35000) - a request polled at send + timeout + 1 comes back
    disconnected (the Sender's NETWORK_EXCEPTION). That the check is strict (not at send +
    timeout) is InFlightRequests.hasExpiredRequest's ">", which the Kafka test does not probe."""
    failed, _ = _silent_leader("3.3")
    # sent at 1000: the idle poll returns at 31000 (30000 ms, not past) and at 61000
    assert failed == [(61000, ["p-0"], "NETWORK_EXCEPTION")]


def test_request_timeout():
    """Kafka: NetworkClientTest.testRequestTimeout at 3.7.0 - with request.timeout.ms 35000 a
    request past it comes back timed out (REQUEST_TIMED_OUT, KAFKA-14317) and a metadata update
    is requested (handleServerDisconnect): the next Metadata request goes out at once."""
    failed, asked = _silent_leader("3.7", config={"request.timeout.ms": 35000})
    assert failed == [(71000, ["p-0"], "REQUEST_TIMED_OUT")]
    assert 71000 in asked


def test_default_request_timeout():
    """Kafka: NetworkClientTest.testDefaultRequestTimeout at 3.7.0 - the same with the default
    request.timeout.ms (30000)."""
    failed, asked = _silent_leader("3.7")
    assert failed == [(61000, ["p-0"], "REQUEST_TIMED_OUT")]
    assert 61000 in asked


def test_disconnect_with_multiple_in_flights():
    """Kafka: NetworkClientTest.testDisconnectWithMultipleInFlights at 3.7.0 - a disconnected
    node fails both requests in flight to it, in the order they were sent, none left in flight."""
    failed, _ = _silent_leader("3.7", records=2)
    assert failed == [(31005, ["p-0"], "REQUEST_TIMED_OUT"), (31005, ["p-1"], "REQUEST_TIMED_OUT")]
    failed, _ = _silent_leader("3.3", records=2)
    assert [f[2] for f in failed] == ["NETWORK_EXCEPTION", "NETWORK_EXCEPTION"]


# -- the Sender ---------------------------------------------------------------------------------------
def _crashed_leader(retries):
    """Leader 0 of t-0 crashes (process) at 500 ms; its session lives on (18 s), so metadata keeps
    naming it and each Produce is refused: NETWORK_EXCEPTION, one round trip later."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3, "config": {"retries": retries},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 10000,
           "timeline": [{"at_ms": 500, "op": "crash", "broker": 0},
                        {"at_ms": 1000, "op": "produce", "topic": "t", "producer": "p", "acks": "all"}]}
    return Simulation(doc).run()


def test_retries():
    """Kafka: SenderTest.testRetries at 3.7.0 (its unsuccessful half) - with retries=1 a batch
    whose request fails with a disconnect is sent once more, and the second disconnect fails it
    with a NetworkException after 2 attempts."""
    r = _crashed_leader(1)
    [failed] = [e for e in r["history"] if e["type"] == "produce_failed"]
    assert (failed["error"], failed["attempts"], failed["records"]) == ("NETWORK_EXCEPTION", 2, ["p-0"])


def test_simple():
    """Kafka: SenderTest.testSimple at 3.7.0 - one record, one Produce, acknowledged at offset 0
    with nothing left in flight."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 3000,
           "timeline": [{"at_ms": 1000, "op": "produce", "topic": "t", "producer": "p"}]}
    sim = Simulation(doc)
    r = sim.run()
    [record] = r["records"]
    assert (record["status"], record["offset"], record["error"]) == ("acked", 0, None)
    assert not sim.clients["p"].pending


def _stale_leader_produce():
    """t-0 on [1, 2, 0]: broker 1 crashes at 1000 (leader 2, epoch 1 at 6 s) and is back at 8000;
    producer p learns leader 2 from a send at 10000. The preferred election at 12000 moves the
    leader back to 1; p's next send (12500) still goes to 2 and gets NOT_LEADER_OR_FOLLOWER."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3,
           "config": {"zookeeper.session.timeout.ms": 6000},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 2, 0]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 20000,
           "timeline": [{"at_ms": 1000, "op": "crash", "broker": 1},
                        {"at_ms": 8000, "op": "restart", "broker": 1},
                        {"at_ms": 10000, "op": "produce", "topic": "t", "producer": "p", "acks": "all"},
                        {"at_ms": 12000, "op": "elect_preferred", "topic": "t", "partition": 0},
                        {"at_ms": 12500, "op": "produce", "topic": "t", "producer": "p", "acks": "all"}]}
    sim = Simulation(doc)
    sent = []
    sim.network.observer = lambda kind, env: sent.append((env.sent_at_ms, env.type, env.source, env.target,
                                                          env.body.get("partitions"))) \
        if kind == "send" and "p" in (env.source, env.target) and env.sent_at_ms >= 12500 else None
    return sim.run(), sent


def test_when_produce_response_returns_with_a_leadership_change_error_but_no_new_leader_information():
    """Kafka: SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation
    at 3.7.0 - NOT_LEADER_OR_FOLLOWER leaves the batch unfinished, requests a metadata update
    (sent at once) and retries only after retry.backoff.ms, here to the new leader."""
    r, sent = _stale_leader_produce()
    answer = next(s for s in sent if s[1] == "ProduceResponse")
    assert answer[2] == 2 and answer[4]["t-0"]["error"] == "NOT_LEADER_OR_FOLLOWER"
    at = answer[0] + 1   # the answer arrives one link latency later
    assert (at, "Metadata") in [(s[0], s[1]) for s in sent if s[2] == "p"]
    retry = next(s for s in sent if s[1] == "Produce" and s[0] > at)
    assert retry[0] >= at + 100 and retry[3] == 1
    assert r["records"][1]["status"] == "acked"


# -- the consumer's Fetcher ---------------------------------------------------------------------------
def _consumer(start, timeline=(), version="3.3"):
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [1, 2, 0]}}],
           "duration_ms": 20000,
           "timeline": [{"at_ms": 1000, "op": "produce", "topic": "t", "producer": "p", "count": 2,
                         "acks": "all"},
                        {"at_ms": 2000, "op": "consume", "consumer": "c", "topic": "t", "from": start},
                        *timeline]}
    sim = Simulation(doc)
    sent = []
    sim.network.observer = lambda kind, env: sent.append((env.sent_at_ms, env.type, env.source,
                                                          env.body.get("partitions"))) \
        if kind == "send" and "c" in (env.source, env.target) else None
    return sim, sim.run(), sent


def test_fetch_normal():
    """Kafka: FetcherTest.testFetchNormal at 3.3.1 - a fetch from the position returns the
    records and the position moves past them."""
    sim, _r, _sent = _consumer(0)
    assert [c["id"] for c in sim.consumed["c"]] == ["p-0", "p-1"]
    assert sim.clients["c"].positions["t-0"] == 2


def test_fetch_offset_out_of_range():
    """Kafka: FetcherTest.testFetchOffsetOutOfRange at 3.3.1 - OFFSET_OUT_OF_RANGE returns no
    records, does not advance the position and asks for an offset reset (here latest: 2)."""
    sim, r, sent = _consumer(100)
    errors = [s[3]["t-0"]["error"] for s in sent if s[1] == "FetchResponse"]
    assert errors[0] == "OFFSET_OUT_OF_RANGE"
    [reset] = [e for e in r["history"] if e["type"] == "consumer_reset"]
    assert reset["offset"] == 2 and "auto.offset.reset=latest" in reset["reason"]
    assert sim.consumed["c"] == []


def test_fetch_not_leader_or_follower():
    """Kafka: FetcherTest.testFetchNotLeaderOrFollower at 3.3.1 - NOT_LEADER_OR_FOLLOWER returns
    no records and makes a metadata update due at once (timeToNextUpdate 0)."""
    # leader 1 hands t-0 to 2 in a controlled shutdown at 5000: the parked fetch is answered
    sim, r, sent = _consumer(0, [{"at_ms": 5000, "op": "shutdown", "broker": 1}])
    answer = next(s for s in sent if s[1] == "FetchResponse" and s[3]["t-0"]["error"] == "NOT_LEADER_OR_FOLLOWER")
    assert not answer[3]["t-0"].get("records")
    assert (answer[0] + 1, "Metadata") in [(s[0], s[1]) for s in sent if s[2] == "c"]
    assert [c["id"] for c in sim.consumed["c"]] == ["p-0", "p-1"]   # nothing read twice


def _in_order_run(engine_version=None):
    """max.in.flight.requests.per.connection 1; p-0 goes at 1000 over a 3 s link to leader 0,
    which hands t-0 to broker 1 in a controlled shutdown at 1500; p-1 is sent at 2500. Returns
    (p's Produce sends as (time, broker, ids), broker 1's log)."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3,
           "config": {"max.in.flight.requests.per.connection": 1, "enable.idempotence": False,
                      "metadata.max.age.ms": 500},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1"}],
           "duration_ms": 20000,
           "timeline": [{"at_ms": 900, "op": "slow", "from": "p", "to": 0, "latency_ms": 3000},
                        {"at_ms": 1000, "op": "produce", "topic": "t", "producer": "p"},
                        {"at_ms": 1500, "op": "shutdown", "broker": 0},
                        {"at_ms": 2500, "op": "produce", "topic": "t", "producer": "p"}]}
    sim = Simulation(doc, engine_version=engine_version)
    sent = []
    sim.network.observer = lambda kind, env: sent.append(
        (env.sent_at_ms, env.target, env.body["partitions"]["t-0"]["ids"])) \
        if kind == "send" and env.source == "p" and env.type == "Produce" else None
    r = sim.run()
    return sent, [x["id"] for x in r["partitions"]["t-0"]["replica_state"]["1"]["log"]]


def test_send_in_order():
    """Kafka: SenderTest.testSendInOrder at 3.7.0 - with max.in.flight.requests.per.connection 1
    a partition whose batch is in flight is muted: after its leader moved, the next batch is not
    sent to the new leader before the first completes, so the log keeps the send order. (Fails
    before the fix, as engine 1.2.0 still runs: p-1 reached broker 1 first.)"""
    sent, log = _in_order_run()
    # p-0 is refused by the stopped broker 0 (at 4000), retried there at 4101 (p's metadata
    # still names 0: its Metadata request sits on the slow link), then at 7202 to broker 1
    assert sent == [(1000, 0, ["p-0"]), (4101, 0, ["p-0"]), (7202, 1, ["p-0"]), (7204, 1, ["p-1"])]
    assert log == ["p-0", "p-1"]
    assert _in_order_run("1.2.0")[1] == ["p-1", "p-0"]


# -- when the next metadata request goes (Metadata.timeToNextUpdate) ----------------------------------
def _metadata_exchanges(age_ms):
    """An idle producer from t = 0 (the brokers boot then); metadata.max.age.ms ``age_ms``.
    Returns its Metadata requests' send times and the (arrival time, error) of each answer."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3, "config": {"metadata.max.age.ms": age_ms},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 5000}
    sim = Simulation(doc)
    asked, answers = [], []
    sim.network.observer = lambda kind, env: (
        asked.append(env.sent_at_ms) if kind == "send" and env.source == "p" and env.type == "Metadata" else
        answers.append((env.deliver_at_ms, env.body.get("error")))
        if kind == "deliver" and env.target == "p" and env.type == "MetadataResponse" else None)
    sim.run()
    return asked, answers


def test_time_to_next_update():
    """Kafka: MetadataTest.testTimeToNextUpdate at 2.7.0 - after a successful update the next one
    is due max(retry.backoff.ms, metadata.max.age.ms) after it (here 1000, then 100 with a 50 ms
    age)."""
    for age, wait in ((1000, 1000), (50, 100)):
        asked, answers = _metadata_exchanges(age)
        ok = [at for at, error in answers if error is None]
        assert ok and all(at + wait in asked for at in ok[:-1]), age
        later = [a for a in asked if a > ok[0]]
        assert later[0] == ok[0] + wait, age


def test_time_to_next_update_retry_backoff():
    """Kafka: MetadataTest.testTimeToNextUpdateRetryBackoff at 2.7.0 - after a failed update (the
    booting broker refuses: NetworkClient.handleServerDisconnect treats it as failedUpdate) the
    next request waits retry.backoff.ms from the failure, not from the request."""
    asked, answers = _metadata_exchanges(300000)
    failed_at, error = answers[0]
    assert error == "NETWORK_EXCEPTION" and asked[:2] == [0, failed_at + 100]


# -- linger.ms (RecordAccumulator.ready / drain, engine 1.5.0) -------------------------------------
BATCH_RECORDS = 163   # the engine's batch.size: 16384 / 100-byte records


def _accumulator_run(ops, linger_ms=10, version="3.7"):
    """Producer p with ``linger.ms``; t-0 and t-1 led by broker 0, t-2 by broker 1 (Kafka's
    node1 and node2). ``ops`` are (at_ms, partition, count). Returns the Produce requests as
    (sent_ms, broker, {partition: records})."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3, "config": {"linger.ms": linger_ms},
           "topics": [{"name": "t", "partitions": 3, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2], "1": [0, 2, 1], "2": [1, 2, 0]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all"}],
           "duration_ms": 7000,
           "timeline": [{"at_ms": at, "op": "produce", "topic": "t", "producer": "p", "count": n,
                         "partition": part} for at, part, n in ops]}
    sim = Simulation(doc)
    sends = []
    sim.network.observer = lambda kind, env: sends.append(
        (env.sent_at_ms, env.target, {k: len(v["ids"]) for k, v in env.body["partitions"].items()})) \
        if kind == "send" and env.type == "Produce" else None
    sim.run()
    return sends


def test_linger():
    """Kafka: RecordAccumulatorTest.testLinger at 4.1.0 (13f70256db; the same at 3.7.0) - with
    linger.ms 10 a lone record's partition is not ready at once, its leader is ready 10 ms later,
    and the drain brings one batch holding that record."""
    assert _accumulator_run([(2000, 0, 1)]) == [(2010, 0, {"t-0": 1})]
    # 4.1's default linger.ms is 5 (KIP-1030): the same wait without the key
    sends = _accumulator_run([(5000, 2, 1), (6000, 0, 1)], linger_ms=5, version="4.1")
    assert [s for s in sends if "t-0" in s[2]] == [(6005, 0, {"t-0": 1})]


def test_full():
    """Kafka: RecordAccumulatorTest.testFull at 4.1.0 - records that do not fill the batch leave
    the partition not ready (it lingers); the record that does not fit opens a second batch and
    the first is ready at once, drained alone with exactly the first records. The engine's batch
    is full at 163 records (not by bytes): 162 linger, 164 send the first 163 at once."""
    assert _accumulator_run([(2000, 0, BATCH_RECORDS - 1)]) == [(2010, 0, {"t-0": BATCH_RECORDS - 1})]
    assert _accumulator_run([(2000, 0, BATCH_RECORDS + 1)]) == \
        [(2000, 0, {"t-0": BATCH_RECORDS}), (2010, 0, {"t-0": 1})]


def test_next_ready_check_delay():
    """Kafka: RecordAccumulatorTest.testNextReadyCheckDelay at 4.1.0 - a partition on node1
    lingers (the next check is the linger time); 5 ms later one on node2 lingers too (the next
    check is node1's remaining half); then a full batch for another partition of node1 makes
    node1 ready. The engine sends node1's request then, carrying the lingering partition too
    (drainBatchesForOneNode takes every partition of a ready node), and node2's at its own
    linger's end (5 ms later)."""
    sends = _accumulator_run([(2000, 0, 1), (2005, 2, 1), (2005, 1, BATCH_RECORDS)])
    assert sends == [(2005, 0, {"t-0": 1, "t-1": BATCH_RECORDS}), (2015, 1, {"t-2": 1})]
