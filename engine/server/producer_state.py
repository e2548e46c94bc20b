"""A leader's check of an idempotent producer's batch, engine 1.5.0 (docs/model.md §6).

Kafka's ``ProducerStateManager`` keeps, per producer id, the producer epoch and the last five
batches (``ProducerStateEntry``); ``ProducerAppendInfo.checkProducerEpoch`` and
``checkSequence`` validate a new batch against it after ``findDuplicateBatch`` looked for a
retry (``Log.analyzeAndValidateProducerState`` @ 1.1.1 – 3.0.0, ``UnifiedLog`` @ 3.7.0 – 4.1.0).
The entry here is ``[epoch, [(base seq, count, base offset), ...]]``
(``engine.server.producer_log.entry_in_log``); a pure function of it decides.
"""

OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"


def check_batch(entry, epoch, seq, count, era, log_start_offset):
    """The answer to a batch (epoch, first sequence ``seq``, ``count`` records) of a producer
    whose state here is ``entry`` (None: none). None: append it."""
    if entry is not None:
        entry_epoch, batches = entry
        if epoch == entry_epoch:
            # findDuplicateBatch / batchWithSequenceRange: the same epoch and the same first
            # *and* last sequence as one of the last five batches
            last = seq + count - 1
            for base_seq, base_count, base_offset in batches:
                if base_seq == seq and base_seq + base_count - 1 == last:
                    return {"error": None, "base_offset": base_offset, "duplicate": True}
        if epoch < entry_epoch:
            # checkProducerEpoch: ProducerFencedException, InvalidProducerEpochException from 2.7
            return {"error": "INVALID_PRODUCER_EPOCH" if era.invalid_producer_epoch
                    else "PRODUCER_FENCED", "base_offset": -1}
        if epoch != entry_epoch:
            # checkSequence: a new epoch must start at sequence 0
            return None if seq == 0 else {"error": OUT_OF_ORDER, "base_offset": -1}
        base_seq, base_count, _ = batches[-1]
        if seq != base_seq + base_count:
            return {"error": OUT_OF_ORDER, "base_offset": -1}
        return None
    if seq != 0 and not era.producer_epoch_bump:
        # checkSequence @ 1.1.1 - 2.4.1: no state for the producer id and not sequence 0;
        # KIP-360 (2.5) accepts any sequence then
        return {"error": "UNKNOWN_PRODUCER_ID", "base_offset": -1,
                "log_start_offset": log_start_offset}
    return None


def record_append(entry, epoch, seq, count, base_offset):
    """``ProducerStateEntry.addBatch``: the new batch joins (a new epoch starts afresh); the
    entry keeps the last five. Returns the entry (a new one when ``entry`` is None)."""
    if entry is None or entry[0] != epoch:
        entry = [epoch, []]
    batches = entry[1]
    batches.append((seq, count, base_offset))
    del batches[:-5]
    return entry
