"""Engine 1.5.0: the idempotent producer after a truncation (docs/model.md §6, §19 "What 1.5.0
changed"; engine/clients/idempotence.py, engine/server/producer_state.py).

Each test runs a scenario under engine 1.4.0 (the old rule) and the current engine. The scenario
is the library's unclean election: broker 2 crashes at 3 s holding p1's first records, the leader
0 crashes at 30 s, and broker 2 is elected uncleanly at 32 s — its log ends long before the
sequences the producer has reached.
"""
import collections

from engine.simulation import Simulation

UNCLEAN = {
    "name": "unclean election with an idempotent producer", "seed": 7, "brokers": 3,
    "config": {"unclean.leader.election.enable": True},
    "topics": [{"name": "orders", "partitions": 1, "replication_factor": 3}],
    "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all",
                 "rate_per_s": 20, "config": {"enable.idempotence": True}}],
    "timeline": [{"at_ms": 3000, "op": "crash", "broker": 1},
                 {"at_ms": 3000, "op": "crash", "broker": 2},
                 {"at_ms": 30000, "op": "crash", "broker": 0},
                 {"at_ms": 32000, "op": "restart", "broker": 2},
                 {"at_ms": 55000, "op": "restart", "broker": 0}],
    "duration_ms": 75000,
}


def run(era, engine_version=None, **changes):
    sim = Simulation({**UNCLEAN, "kafka_version": era, **changes}, engine_version=engine_version)
    sim.run()
    return sim


def failed(sim):
    return collections.Counter(r.error for r in sim.records.values() if r.status == "failed")


def events(sim, type_):
    return [e for e in sim.history if e["type"] == type_]


def test_kip360_epoch_bump_recovers_after_unclean_election():
    """3.0 (idempotence on by default): the batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is
    retried after one epoch bump and written at sequence 0 (TransactionManager.canRetry,
    bumpIdempotentProducerEpoch @ 3.0.0); engine 1.4.0 failed that batch and every later one."""
    old = run("3.0", "1.4.0")
    assert failed(old)["OUT_OF_ORDER_SEQUENCE_NUMBER"] > 500
    new = run("3.0")
    assert failed(new) == {}
    bumps = events(new, "producer_epoch_bump")
    assert [(b["producer_epoch"], b["partitions"]) for b in bumps] == [(1, [["orders", 0]])]
    unclean, = [e for e in events(new, "leader_elected") if e.get("kind") == "unclean"]
    assert 0 < bumps[0]["t_ms"] - unclean["t_ms"] < 1000   # the first batch to the new leader
    # the losses of the unclean election itself are the same: the error was never an ack
    assert sum(r.lost for r in new.records.values()) == sum(r.lost for r in old.records.values()) > 0
    # the new leader's log holds the retried batch under epoch 1 from sequence 0
    log = new.brokers[2].logs["orders-0"] if "orders-0" in new.brokers[2].logs else \
        next(iter(new.brokers[2].logs.values()))
    first_new = next(new.records[rid] for _e, rid in log.records
                     if new.records[rid].producer_epoch == 1)
    assert first_new.batch_seq == 0


def test_before_kip360_producer_id_reset_and_init_producer_id():
    """2.4 (enable.idempotence set): the batch after the last acknowledged one fails with
    OUT_OF_ORDER_SEQUENCE_NUMBER, the producer resets its producer id and sends nothing until
    InitProducerId answers with a new one at epoch 0 (TransactionManager.resetProducerId,
    Sender.maybeWaitForProducerId @ 2.4.1); engine 1.4.0 failed every later batch."""
    old = run("2.4", "1.4.0")
    assert failed(old)["OUT_OF_ORDER_SEQUENCE_NUMBER"] > 500
    new = run("2.4")
    assert set(failed(new)) == {"OUT_OF_ORDER_SEQUENCE_NUMBER"}
    assert len(events(new, "produce_failed")) == 1    # one batch, failed to the application
    reset, = events(new, "producer_id_reset")
    got, = events(new, "producer_id_set")
    assert (reset["producer_id"], got["producer_id"], got["producer_epoch"]) == (0, 1, 0)
    # one round trip to a broker (1 ms links each way) between the reset and the new id
    assert got["t_ms"] - reset["t_ms"] == 2
    assert not events(new, "producer_epoch_bump")
    acked_after = [r for r in new.records.values() if r.status == "acked" and r.producer_id == 1]
    assert len(acked_after) > 400 and min(r.batch_seq for r in acked_after) == 0


def test_unknown_producer_id_before_kip360():
    """A leader with no state for the producer id and a first sequence other than 0: up to 2.4
    UNKNOWN_PRODUCER_ID (ProducerAppendInfo.checkSequence @ 2.4.1). The 2.4 producer, whose last
    acknowledged offset is not below the log start offset, does not retry it: the batch fails
    and, UnknownProducerIdException being an OutOfOrderSequenceException, the producer id is
    reset (TransactionManager.canRetry, handleFailedBatch @ 2.4.1); the new id starts at 0. From
    2.5 (KIP-360) the broker appends the batch. Broker 2 never saw p1 here (p1 starts at 4 s)."""
    clients = [{**UNCLEAN["clients"][0], "start_ms": 4000}]
    old = run("2.4", "1.4.0", clients=clients)
    assert failed(old) == {}
    new = run("2.4", clients=clients)
    assert set(failed(new)) == {"UNKNOWN_PRODUCER_ID"}
    assert len(events(new, "produce_failed")) == 1
    reset, = events(new, "producer_id_reset")
    got, = events(new, "producer_id_set")
    assert "UNKNOWN_PRODUCER_ID" in reset["reason"] and got["producer_id"] == 1
    kip360 = run("2.6", clients=clients)
    assert failed(kip360) == {} and not events(kip360, "producer_epoch_bump")


def test_retries_default_for_idempotence_before_2_1():
    """KafkaProducer.configureRetries @ 1.1.1 / 2.0.1: an idempotent producer whose retries are
    not set retries Integer.MAX_VALUE times (the era's default is 0)."""
    new = run("1.1")
    assert new.clients["p1"].retries == 2147483647
    assert run("1.1", "1.4.0").clients["p1"].retries == 0
    explicit = run("1.1", clients=[{**UNCLEAN["clients"][0],
                                    "config": {"enable.idempotence": True, "retries": 3}}])
    assert explicit.clients["p1"].retries == 3


# -- a partition left on an older epoch (KAFKA-12152), read at the manager's level ----------------
# Second reading of engine 1.5.0 (docs/reviews/engine-1.5.0-second-reading.md): the bookkeeping of
# a partition whose batches in flight still carry the epoch before a bump another partition asked
# for (TransactionManager @ 2.5.0, 2.7.0, 2.7.2, 3.7.0). Helpers: tests/kafka_parity/transaction_manager.py.

def _bump_on_tp0_with_tp1_in_flight(era):
    """tp0's first batch is answered OUT_OF_ORDER_SEQUENCE_NUMBER (a real gap): epoch 1 -> 2;
    tp1's two batches (sequences 0 and 1) are still in flight under epoch 1."""
    from tests.kafka_parity import transaction_manager as tm
    producer = tm.manager(era)
    b1 = tm.write_batch(producer, 0, "1")
    c1, c2 = tm.write_batch(producer, 1, "2"), tm.write_batch(producer, 1, "3")
    assert tm.can_retry(producer, b1, "OUT_OF_ORDER_SEQUENCE_NUMBER", 0) is True
    tm.run_once(producer)
    assert producer.producer_epoch == 2 and (c1.producer_epoch, c2.producer_epoch) == (1, 1)
    return tm, producer, c1, c2


def test_failed_batch_of_an_older_epoch_asks_for_a_bump_from_2_7_1():
    """TransactionManager.handleFailedBatch: up to 2.7.0 a failed batch whose id and epoch are
    not the producer's is ignored (matchesProducerIdAndEpoch @ 2.5.0, 2.7.0); KAFKA-12152 (2.7.1)
    dropped that check, so at 2.7.2 / 3.7.0 tp1's epoch-1 batch failing with retries left
    (adjustSequenceNumbers) asks for a bump for tp1: epoch 3, tp1's other batch renumbered to
    sequence 0 of epoch 3. Era "2.6" (client 2.5 - 2.7.0) keeps epoch 2."""
    for era, epoch, c2_state in (("2.7", 3, (0, 3, True)), ("3.7", 3, (0, 3, True)),
                                 ("2.6", 2, (1, 1, False))):
        tm, producer, c1, c2 = _bump_on_tp0_with_tp1_in_flight(era)
        tm.failed(producer, c1, "REQUEST_TIMED_OUT", True)
        tm.run_once(producer)
        assert producer.producer_epoch == epoch, era
        assert (c2.seq, c2.producer_epoch, c2.seq_reset) == c2_state, era


def test_expired_batch_of_an_older_epoch_leaves_its_partition_unresolved():
    """Sender.sendProducerData marks an expired batch's partition unresolved whatever the batch's
    epoch (markSequenceUnresolved @ 2.5.0 - 3.7.0), and handleCompletedBatch takes the last
    acknowledged sequence whatever the epoch: tp1's epoch-1 batch at sequence 0 expires
    (unresolved, next sequence 1); its other batch (sequence 1) succeeds, so tp1 is resolved
    without a bump. Had that one expired too, the next Sender pass bumps the epoch to 3."""
    for era in ("2.7", "3.7"):
        tm, producer, c1, c2 = _bump_on_tp0_with_tp1_in_flight(era)
        c1.in_flight = False    # in retry
        tm.expired(producer, c1)
        assert producer.unresolved == {tm.tp(producer, 1): 1}
        tm.completed(producer, c2, 501)
        tm.run_once(producer)
        assert producer.producer_epoch == 2 and not tm.has_unresolved(producer), era
        tm, producer, c1, c2 = _bump_on_tp0_with_tp1_in_flight(era)
        tm.expired(producer, c1)
        tm.expired(producer, c2)
        assert producer.unresolved == {tm.tp(producer, 1): 2}
        tm.run_once(producer)
        assert producer.producer_epoch == 3 and not tm.has_unresolved(producer), era
