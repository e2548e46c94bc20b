"""Kafka's TransactionManagerTest (and one SenderTest read at the manager's level) as referee for
the idempotent producer's sequence bookkeeping, engine 1.5.0 (engine/clients/idempotence.py;
docs/model.md §6; docs/kafka-parity.md, "Clients").

The tests call the manager directly, as Kafka's do (helpers in
tests/kafka_parity/transaction_manager.py): a batch is written (drained with the partition's next
sequence), completed, failed or expired, and ``run_once`` is the top of ``Sender.runOnce``.
Eras: "2.4" is client 2.4.1 (before KIP-360: a producer id reset), "2.7" client 2.7.2 and "3.7"
client 3.7.x (KIP-360 epoch bumps, KAFKA-12152).
"""
import pytest

from tests.kafka_parity.transaction_manager import (
    append_unsent, can_retry, completed, expired, failed, has_unresolved, last_acked_sequence,
    manager, run_once, sequence_number, tp, write_batch)

TIMEOUT = "REQUEST_TIMED_OUT"
OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
UNKNOWN_PRODUCER_ID = "UNKNOWN_PRODUCER_ID"


@pytest.mark.parametrize("era", ["2.4", "2.7", "3.7"])
def test_no_producer_id_reset_after_last_in_flight_batch_succeeds(era):
    """Kafka: TransactionManagerTest.testNoProducerIdResetAfterLastInFlightBatchSucceeds at 2.4.1
    (resetProducerIdIfNeeded) and at 2.7.2 / 3.7.0 (bumpIdempotentEpochAndResetIdIfNeeded,
    maybeResolveSequences) - two of three batches time out; while the third is in flight nothing
    is reset; when it succeeds the partition is resolved (next sequence 3 follows the last
    acknowledged 2) and the producer keeps id 15, epoch 5."""
    producer = manager(era, 15, 5)
    b1, b2, b3 = (write_batch(producer, 0, v) for v in "123")
    assert sequence_number(producer, 0) == 3
    expired(producer, b1)
    assert has_unresolved(producer)
    run_once(producer)
    assert (producer.producer_id, producer.producer_epoch) == (15, 5) and has_unresolved(producer)
    failed(producer, b2, TIMEOUT, False)
    run_once(producer)
    assert (producer.producer_id, producer.producer_epoch) == (15, 5) and has_unresolved(producer)
    completed(producer, b3)
    run_once(producer)
    assert (producer.producer_id, producer.producer_epoch) == (15, 5)
    assert not has_unresolved(producer)
    assert sequence_number(producer, 0) == 3


def test_producer_id_reset_after_last_in_flight_batch_fails():
    """Kafka: TransactionManagerTest.testProducerIdResetAfterLastInFlightBatchFails at 2.4.1 - the
    first batch times out, the second succeeds (still unresolved: the third is in flight), the
    third times out too: with nothing in flight and next sequence 3 not after the last
    acknowledged 1, the producer id is reset (no id, nothing unresolved, sequence 0)."""
    producer = manager("2.4", 15, 5)
    b1, b2, b3 = (write_batch(producer, 0, v) for v in "123")
    expired(producer, b1)
    completed(producer, b2)
    run_once(producer)
    assert producer.producer_id == 15 and has_unresolved(producer)
    failed(producer, b3, TIMEOUT, False)
    run_once(producer)
    assert producer.producer_id is None
    assert not has_unresolved(producer)
    assert sequence_number(producer, 0) == 0


@pytest.mark.parametrize("era", ["2.7", "3.7"])
def test_epoch_bump_after_last_inflight_batch_fails(era):
    """Kafka: TransactionManagerTest.testEpochBumpAfterLastInflightBatchFails at 2.7.2, 3.7.0 -
    the same steps from KIP-360 on: instead of a reset, the epoch goes from 1 to 2, the
    partition is resolved and its sequences start again at 0."""
    producer = manager(era)
    b1, b2, b3 = (write_batch(producer, 0, v) for v in "123")
    assert sequence_number(producer, 0) == 3
    expired(producer, b1)
    completed(producer, b2)
    run_once(producer)
    assert producer.producer_epoch == 1 and has_unresolved(producer)
    failed(producer, b3, TIMEOUT, False)
    run_once(producer)
    assert (producer.producer_id, producer.producer_epoch) == (13131, 2)
    assert not has_unresolved(producer)
    assert sequence_number(producer, 0) == 0


def test_bump_epoch_after_timeout_without_pending_inflight_requests():
    """Kafka: TransactionManagerTest.testBumpEpochAfterTimeoutWithoutPendingInflightRequests at
    2.7.2 - a completed batch makes sequence 0 the last acknowledged; marking it unresolved
    with nothing in flight resolves at once, epoch 5 kept; a second batch that times out, the
    only one in flight, leaves the partition unresolved, and the next Sender pass resolves it
    by bumping the epoch to 6."""
    producer = manager("2.7", 15, 5)
    run_once(producer)
    assert producer.producer_epoch == 5 and sequence_number(producer, 0) == 0
    b1 = write_batch(producer, 0, "1")
    assert sequence_number(producer, 0) == 1
    completed(producer, b1)
    assert last_acked_sequence(producer, 0) == 0
    producer.idempotent_expired(b1)          # markSequenceUnresolved(b1), nothing in flight
    run_once(producer)
    assert producer.producer_epoch == 5 and not has_unresolved(producer)
    b2 = write_batch(producer, 0, "2")
    assert sequence_number(producer, 0) == 2
    expired(producer, b2)
    assert has_unresolved(producer)
    run_once(producer)
    assert producer.producer_epoch == 6 and not has_unresolved(producer)


def test_batch_failure_and_completion_after_producer_reset():
    """Kafka: TransactionManagerTest.testBatchFailureAfterProducerReset and
    testBatchCompletedAfterProducerReset at 2.4.1 - after a producer id reset and a new id,
    a batch of the old id answered UNKNOWN_PRODUCER_ID is not retried, and neither its failure
    nor another's success changes the new id's sequences (next sequence 1, the new batch
    first)."""
    for outcome in ("failed", "completed"):
        producer = manager("2.4")
        b1 = write_batch(producer, 0, "1")
        producer.reset_producer_id()
        producer.producer_id, producer.producer_epoch = 13132, 1
        b2 = write_batch(producer, 0, "2")
        assert sequence_number(producer, 0) == 1
        if outcome == "failed":
            assert can_retry(producer, b1, UNKNOWN_PRODUCER_ID, 400) is False
            failed(producer, b1, UNKNOWN_PRODUCER_ID, True)
        else:
            completed(producer, b1)
        assert sequence_number(producer, 0) == 1
        assert producer._sequenced(tp(producer, 0)) == [b2] and b2.seq == 0
        assert last_acked_sequence(producer, 0) == -1


def test_expiry_of_first_batch_should_cause_epoch_bump_if_future_batches_fail():
    """Kafka: SenderTest.testExpiryOfFirstBatchShouldCauseEpochBumpIfFutureBatchesFail at 2.7.2
    (3.7.0 alike), read at the manager's level - the first batch (sequence 0) is retried and
    expires: the partition is unresolved with next sequence 1 (markSequenceUnresolved keeps the
    expired batch's last sequence + 1); a new batch is not drained while it is. The second batch
    (sequence 1) is answered OUT_OF_ORDER_SEQUENCE_NUMBER: it is the one right after the expired
    one (isNextSequenceForUnresolvedPartition), so it is retried *and* the epoch is bumped: epoch
    1, the second batch renumbered to 0, next sequence 1, nothing unresolved."""
    producer = manager("2.7", 343434, 0)
    b1 = write_batch(producer, 0, "1")
    b2 = write_batch(producer, 0, "2")
    b1.in_flight = False                   # answered NOT_LEADER_OR_FOLLOWER: in retry
    expired(producer, b1)
    assert has_unresolved(producer, 0)
    b3 = append_unsent(producer, 0, "3")
    assert producer.drain_blocked(tp(producer, 0), b3)
    assert can_retry(producer, b2, OUT_OF_ORDER, 1) is True
    run_once(producer)
    assert producer.producer_epoch == 1
    assert (b2.seq, b2.producer_epoch, b2.seq_reset) == (0, 1, True)
    assert sequence_number(producer, 0) == 1
    assert not has_unresolved(producer, 0)
    assert len(producer.queues[tp(producer, 0)]) == 2    # b2 to retry, b3 not drained yet


@pytest.mark.parametrize("era", ["2.7", "3.7"])
def test_failed_inflight_batch_after_epoch_bump(era):
    """Kafka: TransactionManagerTest.testFailedInflightBatchAfterEpochBump at 2.7.2 and 3.7.0
    (KAFKA-12152) - tp0 and tp1 each have a first batch acknowledged; tp0's second batch is
    answered UNKNOWN_PRODUCER_ID (log start 500, not above tp0's last acknowledged offset 500):
    retried, with an epoch bump to 2. tp0's batches are renumbered from 0 under epoch 2, tp1's
    keep sequence 1 and epoch 1; a new tp1 batch is not drained while tp1 has a batch of the
    old epoch in flight. That batch, after NOT_LEADER_OR_FOLLOWER, is retried with the old
    epoch and succeeds: tp1's last acknowledged sequence is then 1 (handleCompletedBatch takes
    it whatever the epoch), and once nothing is in flight tp1 restarts at 0 under epoch 2
    (maybeUpdateProducerIdAndEpoch), so the new batch goes out as sequence 0 of epoch 2."""
    producer = manager(era)
    tp0b1, tp0b2, _tp0b3 = (write_batch(producer, 0, v) for v in "123")
    tp1b1, tp1b2 = write_batch(producer, 1, "4"), write_batch(producer, 1, "5")
    assert (sequence_number(producer, 0), sequence_number(producer, 1)) == (3, 2)
    completed(producer, tp0b1, 500)
    completed(producer, tp1b1, 500)
    assert can_retry(producer, tp0b2, UNKNOWN_PRODUCER_ID, 500) is True
    run_once(producer)
    assert producer.producer_epoch == 2
    assert (tp0b2.seq, tp0b2.seq_reset, tp0b2.producer_epoch) == (0, True, 2)
    assert (tp1b2.seq, tp1b2.seq_reset, tp1b2.producer_epoch) == (1, False, 1)
    tp1b3 = append_unsent(producer, 1, "6")
    assert producer.drain_blocked(tp(producer, 1), tp1b3)
    completed(producer, tp1b2, 501)        # retried after NOT_LEADER_OR_FOLLOWER, old epoch
    assert last_acked_sequence(producer, 1) == 1
    assert not producer.drain_blocked(tp(producer, 1), tp1b3)
    producer.assign_sequence(tp1b3)
    assert (tp1b3.seq, tp1b3.producer_epoch) == (0, 2)
    assert sequence_number(producer, 1) == 1
