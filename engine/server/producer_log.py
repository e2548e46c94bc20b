"""A replica rebuilds an idempotent producer's state from its own log (docs/model.md §6), as
Kafka's ``ProducerStateManager`` does when it loads a log or becomes leader: deduplication then
survives a failover for the batches that survived. Pure functions of the run's record table and
one replica's log; the leader keeps what they return (``engine/server/leader.py``).
"""

#: the batches Kafka keeps per producer (``ProducerStateEntry.NUM_BATCHES_TO_RETAIN``)
BATCHES_KEPT = 5


def _batched_records(records, log, producer):
    """(record, offset) of ``producer``'s batched records in ``log``, newest first."""
    prefix = producer + "-"
    offset = log.leo
    for _epoch, rid in reversed(log.records):
        offset -= 1
        if not rid.startswith(prefix):
            continue
        record = records.get(rid)
        if record is not None and record.batch_seq is not None:
            yield record, offset


def _add(found, record, offset):
    """Fold one record (newest first) into ``found``; False once BATCHES_KEPT are complete."""
    if found and found[-1][0] == record.batch_seq:
        found[-1][2] = offset           # an older record of the same batch: its base offset
        return True
    if len(found) == BATCHES_KEPT:
        return False
    found.append([record.batch_seq, record.batch_count, offset])
    return True


def entry_in_log(records, log, producer, producer_id):
    """Engine 1.5.0: the state for one producer id: None when the log holds no batch of that id,
    else [epoch, batches] with the newest epoch and its last five batches (seq, count, base
    offset), oldest first (a new epoch clears the older one's batches,
    ``ProducerStateEntry.maybeUpdateProducerEpoch``)."""
    found = []  # newest first: [base seq, count, base offset]
    epoch = None
    for record, offset in _batched_records(records, log, producer):
        if record.producer_id != producer_id:
            continue
        if epoch is None:
            epoch = record.producer_epoch
        elif record.producer_epoch != epoch:
            break
        if not _add(found, record, offset):
            break
    if epoch is None:
        return None
    return [epoch, [tuple(b) for b in reversed(found)]]


def batches_in_log(records, log, producer):
    """Engines before 1.5.0 (no producer ids): the producer's last five batches in this log, as
    (base seq, count, base offset), oldest first."""
    found = []
    for record, offset in _batched_records(records, log, producer):
        if not _add(found, record, offset):
            break
    return [tuple(b) for b in reversed(found)]
