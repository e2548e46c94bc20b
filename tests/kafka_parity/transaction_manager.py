"""A producer's ``TransactionManager`` on its own, for ports of Kafka's TransactionManagerTest
(tests/kafka_parity/test_transaction_manager.py) and the engine tests of its rules.

Kafka's tests call the manager's methods directly, with batches they build and "drain"
themselves. The engine's manager is the ``IdempotentProducer`` mixin of a producer
(engine/clients/idempotence.py); these helpers make the same calls on a producer that never
starts (its Sender never runs), so every step is the test's own.
"""
from engine.clients.producer_consumer import Batch, Record
from engine.simulation import Simulation

TOPIC = "foo"


def manager(era, producer_id=13131, epoch=1):
    """An idempotent producer of ``era`` whose producer id and epoch are set
    (``initializeIdempotentProducerId``); topic "foo" has two partitions."""
    doc = {"seed": 1, "kafka_version": era, "brokers": 1,
           "topics": [{"name": TOPIC, "partitions": 2, "replication_factor": 1}],
           "clients": [{"name": "p", "type": "producer", "topic": TOPIC, "acks": "all",
                        "start_ms": 1000, "config": {"enable.idempotence": True}}],
           "duration_ms": 1000}
    producer = Simulation(doc).clients["p"]
    producer.producer_id, producer.producer_epoch = producer_id, epoch
    return producer


def tp(producer, partition):
    return producer.sim.key(TOPIC, partition)


def write_batch(producer, partition, value):
    """``writeIdempotentBatchWithValue``: a one-record batch drained now (the partition's next
    sequence under the current id and epoch) and in flight."""
    key = tp(producer, partition)
    batch = Batch(key, -1, 0)
    batch.records.append(Record(f"p-{value}", "p", TOPIC, "all", 0))
    producer.queues.setdefault(key, []).append(batch)
    producer.assign_sequence(batch)
    batch.in_flight = True
    batch.attempts = 1
    return batch


def append_unsent(producer, partition, value):
    """``appendToAccumulator``: a batch waiting to be drained (no sequence yet)."""
    key = tp(producer, partition)
    batch = Batch(key, -1, 0)
    batch.records.append(Record(f"p-{value}", "p", TOPIC, "all", 0))
    producer.queues.setdefault(key, []).append(batch)
    return batch


def completed(producer, batch, base_offset=500):
    """``handleCompletedBatch``."""
    batch.in_flight = False
    producer._dequeue(batch)
    producer.idempotent_completed(batch, base_offset)


def failed(producer, batch, error, adjust):
    """``handleFailedBatch`` (the Sender's ``failBatch``)."""
    batch.in_flight = False
    producer._dequeue(batch)
    producer.idempotent_failed(batch, error, adjust)


def expired(producer, batch):
    """The Sender's expiry of a batch in retry: ``markSequenceUnresolved``, then failed with a
    TimeoutException and no adjustment (``Sender.sendProducerData``)."""
    batch.in_flight = False
    producer._dequeue(batch)
    producer.idempotent_expired(batch)
    producer.idempotent_failed(batch, "REQUEST_TIMED_OUT", False)


def can_retry(producer, batch, error, log_start_offset=-1):
    """``TransactionManager.canRetry`` for a partition answer; a retried batch waits again."""
    batch.in_flight = False
    return producer.idempotent_can_retry(batch, error, {"error": error,
                                                        "log_start_offset": log_start_offset})


def run_once(producer):
    """The top of ``Sender.runOnce``: resolve sequences (``maybeResolveSequences`` /
    ``resetProducerIdIfNeeded``), then bump the epoch if asked
    (``bumpIdempotentEpochAndResetIdIfNeeded``)."""
    producer.idempotent_before_send()


def sequence_number(producer, partition):
    """``sequenceNumber(tp)``: the next sequence of the partition."""
    return producer.seqs.get(tp(producer, partition), 0)


def last_acked_sequence(producer, partition):
    return producer.acked_seqs.get(tp(producer, partition), -1)


def has_unresolved(producer, partition=None):
    if partition is None:
        return bool(producer.unresolved)
    return tp(producer, partition) in producer.unresolved
