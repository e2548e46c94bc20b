"""The clients' metadata, request timeouts and unknown topics (docs/model.md §6 client facts, §10),
each rule pinned with a small scenario and Kafka's numbers from the client code at the tags."""
from engine.simulation import Simulation


def zombie_cluster(version):
    """Controller 0; t-0 on [1, 2, 3] led by 1. At 2 s broker 1 loses ZooKeeper and the other
    brokers but still talks to clients: its session expires at 8 s (6 s timeout), broker 2 leads
    with epoch 1, and broker 1 stays a zombie whose metadata cache names itself, epoch 0. The
    producer refreshes metadata every second (metadata.max.age.ms 1000) from each broker in turn."""
    return {"seed": 1, "kafka_version": version, "brokers": 4,
            "config": {"zookeeper.session.timeout.ms": 6000, "metadata.max.age.ms": 1000},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                        "assignment": {"0": [1, 2, 3]}}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 10}],
            "duration_ms": 20000,
            "timeline": [{"at_ms": 2000, "op": "isolate", "broker": 1, "from": ["zk", 0, 2, 3]}]}


def produce_targets(version, engine_version=None):
    """(time, broker) of each Produce the producer sent when it changed broker."""
    sim = Simulation(zombie_cluster(version), engine_version=engine_version)
    sends = []
    sim.network.observer = lambda kind, env: sends.append((env.sent_at_ms, env.target)) \
        if kind == "send" and env.source == "p" and env.type == "Produce" else None
    sim.run()
    return [sends[0]] + [b for a, b in zip(sends, sends[1:]) if a[1] != b[1]]


def test_a_producer_never_returns_to_an_older_leader_epoch_from_2_2():
    """Defect 4 (fails before the fix: the zombie's answer at 8.2 s sent the producer back to
    broker 1, and every later one too). Kafka 2.2.0+ Metadata.updatePartitionInfo
    (updateLatestMetadata from 3.0) keeps the cached partition when an answer's leader epoch is
    older than the last seen one."""
    for version in ("2.4", "3.0", "3.7"):
        assert produce_targets(version) == [(104, 1), (6200, 2)], version


def test_before_2_2_and_under_engine_1_2_0_a_stale_answer_moves_the_producer_back():
    # Kafka 2.0's Metadata.update takes every answer as it comes (no leader epochs in clients):
    # each answer of broker 1 (every fourth, about one a second) sends the producer back to it
    assert produce_targets("2.0") == [(104, 1), (6200, 2), (8200, 1), (9200, 2), (12200, 1),
                                      (13200, 2), (16200, 1), (17200, 2)]
    assert produce_targets("3.7", engine_version="1.2.0") == \
        [(102, 1), (8100, 2), (14100, 1), (16100, 2)]


def late_topic(version, engine_version=None):
    """Topic t is created at 5 s and a consumer of it starts at once: the brokers' first answer
    (5001) does not know t yet (the controller has not propagated it). Two records at 6 s."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "other", "partitions": 1, "replication_factor": 1}],
           "duration_ms": 30000,
           "timeline": [{"at_ms": 5000, "op": "create_topic", "name": "t", "partitions": 2,
                         "replication_factor": 3},
                        {"at_ms": 5000, "op": "consume", "consumer": "c", "topic": "t", "from": "earliest"},
                        {"at_ms": 6000, "op": "produce", "topic": "t", "producer": "p", "count": 2,
                         "acks": "all"}]}
    sim = Simulation(doc, engine_version=engine_version)
    asked = []
    sim.network.observer = lambda kind, env: asked.append(env.sent_at_ms) \
        if kind == "send" and env.source == "c" and env.type == "Metadata" else None
    sim.run()
    return asked, [(c["id"], c["at_ms"]) for c in sim.consumed["c"]]


def test_a_consumer_of_an_unknown_topic_asks_again_after_retry_backoff_ms():
    """Defect 8, consumer half (fails before the fix: the consumer waited metadata.max.age.ms,
    300 s, and read nothing). Metadata.handleMetadataResponse (2.4.0 - 4.1.0): the topic's
    UNKNOWN_TOPIC_OR_PARTITION is an InvalidMetadataException, so requestUpdate(); the next
    request waits retry.backoff.ms (100) from the answer (lastRefreshMs)."""
    for version, linger in (("2.4", 0), ("3.7", 0), ("4.1", 5)):
        asked, read = late_topic(version)
        assert asked[:2] == [5000, 5102], version    # answer at 5002, + 100
        # the records' batch lingers linger.ms first: 5 by default in 4.1 (engine 1.5.0, KIP-1030)
        assert read == [("p-0", 6006 + linger), ("p-1", 6006 + linger)], version


def test_under_engine_1_2_0_the_consumer_of_a_late_topic_reads_nothing():
    asked, read = late_topic("3.7", engine_version="1.2.0")
    assert asked == [5000] and read == []


def timeout_run(version, fault, records=1, engine_version=None):
    """Leader 0 of t-0 on [0, 1, 2]; producer p (retries 0, so each failure shows) has its
    metadata from the start; ``records`` produce ops of one acks=all record at 1000 and 1005 ms.
    Returns the produce_failed events as (t_ms, records, error)."""
    timeline = [fault] + [{"at_ms": 1000 + 5 * i, "op": "produce", "topic": "t", "producer": "p",
                           "count": 1, "acks": "all"} for i in range(records)]
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"replica.lag.time.max.ms": 60000, "retries": 0},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}],
           "duration_ms": 100000, "timeline": timeline}
    r = Simulation(doc, engine_version=engine_version).run()
    return [(e["t_ms"], e["records"], e["error"]) for e in r["history"] if e["type"] == "produce_failed"]


#: the leader cannot reach its followers: its DelayedProduce answers REQUEST_TIMED_OUT after the
#: request's 30000 ms, one link latency after receiving it
FOLLOWERS_CUT = {"at_ms": 500, "op": "isolate", "broker": 0, "from": [1, 2]}
#: the producer cannot reach the leader: nothing ever answers
LEADER_SILENT = {"at_ms": 900, "op": "isolate", "broker": 0, "from": ["p"]}


def test_an_idle_producer_gets_the_brokers_request_timed_out_before_its_own_timeout():
    """Defect 10 (fails before the fix: the client gave up at exactly send + 30000 = 31000 ms,
    before the broker's answer). Sent at 1000, the broker's REQUEST_TIMED_OUT leaves at 31001
    and arrives at 31002; the client would time the request out only when its poll returns with
    now - send > 30000 (InFlightRequests.hasExpiredRequest, strict), and an idle producer's poll
    blocks up to request.timeout.ms (NetworkClient.poll), so the broker's answer comes first."""
    for version in ("2.0", "3.3", "3.7"):
        assert timeout_run(version, FOLLOWERS_CUT) == [(31002, ["p-0"], "REQUEST_TIMED_OUT")], version


def test_a_producer_whose_poll_returns_past_the_timeout_fails_every_request_to_the_node():
    """Defect 10. Two requests to leader 0 (sent 1000 and 1005) and no answer: the idle poll
    that began with the second send returns at 31005, finds the first past its timeout
    (30005 > 30000), closes the connection and fails both - as disconnected up to 3.4
    (NETWORK_EXCEPTION, Sender's wasDisconnected path), as timed out from 3.5.0 (KAFKA-14317)."""
    for version, error in (("2.0", "NETWORK_EXCEPTION"), ("3.3", "NETWORK_EXCEPTION"),
                           ("3.7", "REQUEST_TIMED_OUT")):
        assert timeout_run(version, LEADER_SILENT, records=2) == \
            [(31005, ["p-0"], error), (31005, ["p-1"], error)], version


def test_a_lone_request_to_a_silent_broker_times_out_after_two_idle_polls():
    """Defect 10. One request sent at 1000: the poll returns at 31000 (30000 ms: not yet past
    the timeout, the comparison is strict) and blocks again; the next return, 61000, times it out."""
    assert timeout_run("3.3", LEADER_SILENT) == [(61000, ["p-0"], "NETWORK_EXCEPTION")]
    assert timeout_run("3.7", LEADER_SILENT) == [(61000, ["p-0"], "REQUEST_TIMED_OUT")]


def test_under_engine_1_2_0_the_client_timed_out_at_exactly_the_timeout():
    assert timeout_run("3.7", LEADER_SILENT, records=2, engine_version="1.2.0") == \
        [(31000, ["p-0"], "REQUEST_TIMED_OUT"), (31000, ["p-1"], "NETWORK_EXCEPTION")]
    assert timeout_run("3.7", FOLLOWERS_CUT, engine_version="1.2.0") == \
        [(31000, ["p-0"], "REQUEST_TIMED_OUT")]


def _fed_producer(version, engine_version=None):
    """A running producer of t-0 whose metadata answers the test writes itself."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 5000}
    sim = Simulation(doc, engine_version=engine_version)
    sim.advance_to(1000)
    producer = sim.clients["p"]

    def answer(leader, epoch):
        producer._on_metadata(0, {"error": None, "partitions": {
            "t-0": {"leader": leader, "leader_epoch": epoch, "isr": [], "replicas": [0, 1, 2]}}}, None)
        return producer.leaders["t-0"][0]
    return answer


def test_a_leaderless_answer_forgets_the_last_seen_epoch_in_2_4():
    """Defect 4 at 2.4.x: a 2.4 broker answers a partition without a live leader with
    LEADER_NOT_AVAILABLE and no leader epoch (MetadataCache.getPartitionMetadata @ 2.4.1), and the
    client's Metadata.updatePartitionInfo (2.4.1) takes such a partition as it is and forgets the
    last seen epoch (lastSeenLeaderEpochs.remove), so an older epoch is taken next. Fails before
    the fix (the leaderless answer was compared by its epoch and ignored)."""
    answer = _fed_producer("2.4")
    assert answer(1, 5) == 1
    assert answer(-1, 4) == -1    # no epoch on the wire: taken
    assert answer(2, 3) == 2      # nothing to compare with: taken


def test_from_2_6_a_leaderless_answer_carries_its_epoch():
    """From 2.6 the broker sets the leader epoch on a LEADER_NOT_AVAILABLE partition
    (MetadataCache / ZkMetadataCache / KRaftMetadataCache getPartitionMetadata @ 2.6.3, 3.7.0,
    3.9.0), so the client compares it as any other (updateLatestMetadata @ 3.7.0:
    newEpoch >= currentEpoch); engine 1.2.0 takes every answer."""
    for version in ("2.6", "3.7", "4.1"):
        answer = _fed_producer(version)
        assert answer(1, 5) == 1
        assert answer(-1, 4) == 1, version    # older epoch: the cached leader stays
        assert answer(-1, 6) == -1, version
        assert answer(2, 5) == -1, version
    answer = _fed_producer("2.4", engine_version="1.2.0")
    assert answer(1, 5) == 1 and answer(-1, 4) == -1 and answer(2, 3) == 2


def _metadata_asks_after_broker_timeout(version, engine_version=None):
    """FOLLOWERS_CUT with retries: the leader's DelayedProduce answers REQUEST_TIMED_OUT at 31002.
    Returns p's Metadata sends and Produce sends after 30 s."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3,
           "config": {"replica.lag.time.max.ms": 60000},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}], "duration_ms": 40000,
           "timeline": [FOLLOWERS_CUT, {"at_ms": 1000, "op": "produce", "topic": "t", "producer": "p",
                                        "count": 1, "acks": "all"}]}
    sim = Simulation(doc, engine_version=engine_version)
    sent = []
    sim.network.observer = lambda kind, env: sent.append((env.sent_at_ms, env.type)) \
        if kind == "send" and env.source == "p" and env.sent_at_ms > 30000 else None
    sim.run()
    return sent


def test_the_brokers_request_timed_out_does_not_ask_for_metadata():
    """Sender.completeBatch (0.10.2.2, 2.7.2, 3.7.0, 4.1.0) requests a metadata update only for
    an InvalidMetadataException; the broker's REQUEST_TIMED_OUT is a TimeoutException, so the
    batch is retried after retry.backoff.ms to the same leader with no Metadata request. Fails
    before the fix (a Metadata request went out at 31002); engine 1.2.0 keeps it."""
    for version in ("2.4", "3.3", "3.7"):
        assert _metadata_asks_after_broker_timeout(version) == [(31102, "Produce")], version
    # KRaft: the brokers boot later, so the answer comes later; still no Metadata request
    assert [kind for _at, kind in _metadata_asks_after_broker_timeout("4.1")] == ["Produce"]
    # engine 1.2.0: its own timeout at exactly 31000 wins and asks for metadata (a disconnect)
    assert _metadata_asks_after_broker_timeout("3.7", engine_version="1.2.0") == \
        [(31000, "Metadata"), (31100, "Produce")]


def _offline_partition_asks(version, engine_version=None):
    """t-0 on broker 1 alone, t-1 on broker 2; producer p sends one record to t-1 at 1 s (so it
    has t, and nothing queued for t-0). Broker 1 shuts down at 2 s (t-0 has no leader) and is
    back at 10 s; metadata.max.age.ms 1000, so p learns that t-0 has no leader. Returns p's
    Metadata request times in 3 s - 9 s."""
    doc = {"seed": 1, "kafka_version": version, "brokers": 3, "config": {"metadata.max.age.ms": 1000},
           "topics": [{"name": "t", "partitions": 2, "replication_factor": 1,
                       "assignment": {"0": [1], "1": [2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}],
           "duration_ms": 12000,
           "timeline": [{"at_ms": 1000, "op": "produce", "topic": "t", "partition": 1, "producer": "p"},
                        {"at_ms": 2000, "op": "shutdown", "broker": 1},
                        {"at_ms": 10000, "op": "restart", "broker": 1}]}
    sim = Simulation(doc, engine_version=engine_version)
    asked = []
    sim.network.observer = lambda kind, env: asked.append(env.sent_at_ms) \
        if kind == "send" and env.source == "p" and env.type == "Metadata" else None
    sim.run()
    return [at for at in asked if 3000 <= at < 9000]


def test_a_producer_asks_again_while_a_partition_of_its_topic_has_no_leader_from_2_3():
    """Defect 8, producer side: Metadata.handleMetadataResponse (2.3.0 - 4.1.0) calls
    requestUpdate() for LEADER_NOT_AVAILABLE on any partition of the answer, and a producer's
    Metadata request names every topic it sends to (ProducerMetadata), so while t-0 has no leader
    the producer asks every retry.backoff.ms after the answer (100 + one round trip). Up to 2.2
    only the consumer's ConsumerCoordinator listener asked again; the producer (nothing queued
    for t-0) waits for metadata.max.age.ms. Fails before the fix (one request a second)."""
    for version in ("2.4", "3.7", "4.1"):
        asked = _offline_partition_asks(version)
        assert len(asked) > 50 and all(b - a == 102 for a, b in zip(asked, asked[1:])), version
    assert len(_offline_partition_asks("2.0")) < 12   # about one a second (metadata.max.age.ms)


def _wakeup_run(times, engine_version=None):
    """Leader 0 of t-0 is silent to p from 900 ms; max.in.flight.requests.per.connection 1, so
    while the first request is in flight the next records wait in one batch. One acks=all record
    at each of ``times``. Returns the produce_failed events as (t_ms, records, error)."""
    doc = {"seed": 1, "kafka_version": "3.7", "brokers": 3,
           "config": {"retries": 0, "max.in.flight.requests.per.connection": 1,
                      "enable.idempotence": False},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3,
                       "assignment": {"0": [0, 1, 2]}}],
           "clients": [{"name": "p", "type": "producer", "topic": "t"}],
           "duration_ms": 100000,
           "timeline": [LEADER_SILENT] + [{"at_ms": at, "op": "produce", "topic": "t", "producer": "p",
                                           "acks": "all"} for at in times]}
    r = Simulation(doc, engine_version=engine_version).run()
    return [(e["t_ms"], e["records"], e["error"]) for e in r["history"] if e["type"] == "produce_failed"]


def test_a_send_that_joins_a_batch_does_not_wake_the_sender():
    """Defect 10, the poll cadence: KafkaProducer.doSend calls sender.wakeup() only when
    RecordAccumulator.append created a batch or reports batchIsFull ("deque.size() > 1 ||
    last.isFull()", 0.10.2.2, 2.7.2, 3.7.0). p-0 goes at 1000; p-1 (2000) opens a new batch (a
    wakeup: the poll returns at 2000 and then blocks up to 30000 ms); p-2 (31500) joins that batch
    and wakes nothing, so p-0 times out at the poll's return at 32000 (not 31500). Fails before the
    fix, which took every send() as a return of the Sender's poll."""
    failed = _wakeup_run([1000, 2000, 31500])
    assert failed[0] == (32000, ["p-0"], "REQUEST_TIMED_OUT")
    # a send that opens a batch does wake it: p-2 at 31500 into an empty accumulator
    assert _wakeup_run([1000, 31500])[0] == (31500, ["p-0"], "REQUEST_TIMED_OUT")
