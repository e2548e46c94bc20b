"""Kafka's tests of the idempotent producer's state, as referee for engine 1.5.0
(engine/server/producer_state.py, engine/clients/idempotence.py; docs/kafka-parity.md, "Clients").

The broker-side ports call the pure check of a batch against a producer's entry; the client-side
ports run a small cluster whose leader is given a producer state the test writes itself.
"""
from engine import eras
from engine.server.producer_state import check_batch, record_append
from engine.simulation import Simulation


def _append(entry, epoch, seq, offset, era="2.4"):
    """ProducerStateManagerTest.append: one record at ``seq``; the error name, or the entry."""
    answer = check_batch(entry, epoch, seq, 1, eras.ERAS[era], 0)
    if answer is not None:
        return answer["error"] or "DUPLICATE", entry
    return None, record_append(entry, epoch, seq, 1, offset)


def test_basic_id_mapping():
    """Kafka: ProducerStateManagerTest.testBasicIdMapping at 2.4.1 (and 3.0.0) - sequences 0
    and 1 are taken; sequence 1 again is a duplicate here, since the engine's check is the log's
    (findDuplicateBatch first; Kafka's test appends past it and gets OutOfOrderSequence); 5 is
    out of order; a new epoch starts at 0; the old epoch is then fenced (ProducerFenced up to
    2.6, InvalidProducerEpoch from 2.7)."""
    error, entry = _append(None, 0, 0, 0)
    assert error is None
    error, entry = _append(entry, 0, 1, 1)
    assert error is None
    assert _append(entry, 0, 1, 1)[0] == "DUPLICATE"
    assert _append(entry, 0, 5, 2)[0] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    error, entry = _append(entry, 1, 0, 3)
    assert error is None and entry == [1, [(0, 1, 3)]]
    assert _append(entry, 0, 0, 4)[0] == "PRODUCER_FENCED"
    assert _append(entry, 0, 0, 4, era="2.7")[0] == "INVALID_PRODUCER_EPOCH"


def test_duplicate_needs_first_and_last_sequence():
    """Kafka: ProducerStateEntry.batchWithSequenceRange at 1.1.1 - 4.1.0 (as
    ProducerStateManagerTest.testBasicIdMapping's duplicate step uses it): a retry matches a
    cached batch only with the same first *and* last sequence; a batch of 5 records at the
    cached batch's first sequence but a different length is out of order."""
    entry = record_append(None, 0, 0, 10, 100)
    era = eras.ERAS["3.7"]
    assert check_batch(entry, 0, 0, 10, era, 0) == {"error": None, "base_offset": 100,
                                                    "duplicate": True}
    assert check_batch(entry, 0, 0, 5, era, 0)["error"] == "OUT_OF_ORDER_SEQUENCE_NUMBER"


def test_unknown_producer_before_kip360_and_any_sequence_after():
    """Kafka: ProducerStateManagerTest's new-producer cases of checkSequence - at 2.4.1 a first
    append at sequence 5 of an unknown producer id throws UnknownProducerIdException
    (UNKNOWN_PRODUCER_ID); at 2.5.0 (KIP-360) it is accepted; a new epoch at a sequence other
    than 0 is OutOfOrderSequence in both."""
    assert check_batch(None, 0, 5, 1, eras.ERAS["2.4"], 0)["error"] == "UNKNOWN_PRODUCER_ID"
    assert check_batch(None, 0, 5, 1, eras.ERAS["2.6"], 0) is None
    entry = record_append(None, 0, 0, 1, 0)
    for era in ("2.4", "2.6"):
        assert check_batch(entry, 1, 3, 1, eras.ERAS[era], 0)["error"] == \
            "OUT_OF_ORDER_SEQUENCE_NUMBER"


def _producer_facing_stale_state(era):
    """A producer whose partition's leader already holds state for its producer id at epoch 0
    up to sequence 10: its first batch (sequence 0) is answered OUT_OF_ORDER_SEQUENCE_NUMBER."""
    doc = {"seed": 1, "kafka_version": era, "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p", "type": "producer", "topic": "t", "acks": "all",
                        "start_ms": 3000, "config": {"enable.idempotence": True}}],
           "timeline": [{"at_ms": 3500, "op": "produce", "topic": "t", "partition": 0,
                         "producer": "p", "count": 1}],
           "duration_ms": 6000}
    sim = Simulation(doc)
    sim.advance_to(3000)
    producer = sim.clients["p"]
    for broker in sim.brokers.values():
        part = broker.partitions.get("t-0")
        if part is not None and part.is_leader:
            broker.producer_state["t-0"] = {("p", producer.producer_id): [0, [(10, 1, 0)]]}
    sim.advance_to(6000)
    return sim, producer


def test_bump_epoch_when_out_of_order_sequence_received():
    """Kafka: SenderTest.testBumpEpochWhenOutOfOrderSequenceReceived at 3.0.0 (also 3.7.0) - the
    first batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is not completed: the producer bumps its
    epoch to 1 and sends it again (here it is then written at sequence 0 of epoch 1)."""
    sim, producer = _producer_facing_stale_state("3.0")
    assert producer.producer_epoch == 1
    record, = sim.records.values()
    assert (record.status, record.producer_epoch, record.batch_seq) == ("acked", 1, 0)


def test_must_not_retry_out_of_order_sequence_for_next_batch():
    """Kafka: SenderTest.testMustNotRetryOutOfOrderSequenceForNextBatch at 2.4.1 - the batch right
    after the last acknowledged one (none yet: sequence 0) answered OUT_OF_ORDER_SEQUENCE_NUMBER
    fails, and the producer id is reset (the engine then gets a new one, InitProducerId)."""
    sim, producer = _producer_facing_stale_state("2.4")
    record, = sim.records.values()
    assert (record.status, record.error) == ("failed", "OUT_OF_ORDER_SEQUENCE_NUMBER")
    assert [e["type"] for e in sim.history if e["type"].startswith("producer_id")] == \
        ["producer_id_reset", "producer_id_set"]
    assert producer.producer_id != record.producer_id and producer.producer_epoch == 0
