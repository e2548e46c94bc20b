"""The idempotent producer's producer id, epoch and sequences (engine 1.5.0; docs/model.md §6).

After Kafka's ``TransactionManager`` for a producer without a ``transactional.id``: the
producer id and epoch every batch carries, the next sequence and the last acknowledged one per
partition, and what an error does to them. Two eras of rules:

* before KIP-360 (clients 1.1 – 2.4; ``Era.producer_epoch_bump`` False): OUT_OF_ORDER_SEQUENCE_NUMBER
  for the batch right after the last acknowledged one fails it and resets the producer id
  (``resetProducerId``): nothing is sent until InitProducerId brings a new one, whose sequences
  start at 0 (``Sender.maybeWaitForProducerId`` @ 1.1.1, 2.0.1, 2.4.1);
* from KIP-360 (2.5+): that batch is retried, and the producer bumps its epoch on its own (no
  request), restarting the partition's sequences at 0 (``canRetry``,
  ``bumpIdempotentEpochAndResetIdIfNeeded`` @ 2.5.0 – 4.1.0); from 2.7.1 (KAFKA-12152) every other
  partition restarts at 0 under the new epoch once its batches in flight are done.

A mixin of ``Producer``; only used under engine 1.5.0's rules (``sim.rules_1_5``).
"""
from engine.core.messages import INIT_PRODUCER_ID

OUT_OF_ORDER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
UNKNOWN_PRODUCER_ID = "UNKNOWN_PRODUCER_ID"


class IdempotentProducer:
    """Mixin of ``Producer``: producer id / epoch and per-partition sequences."""

    def init_idempotence(self, sim):
        """The producer id the producer starts with (its first InitProducerId is not modelled:
        every idempotent producer starts with a fresh id at epoch 0, docs/model.md §16)."""
        self.producer_id = sim.allocate_producer_id()
        self.producer_epoch = 0
        self.acked_seqs = {}        # key -> last acknowledged sequence (lastAckedSequence)
        self.acked_offsets = {}     # key -> last acknowledged offset (lastAckedOffset)
        self.part_epochs = {}       # key -> (id, epoch) its sequences belong to (KAFKA-12152)
        # key -> a batch expired after it was sent: from 2.5 the sequence after it, else None
        self.unresolved = {}
        self.bump_keys = None       # partitions whose sequences restart at the next bump
        self.pid_in_flight = False

    # -- state of a batch ---------------------------------------------------------------------------
    def _current(self, batch):
        return batch.producer_id == self.producer_id and batch.producer_epoch == self.producer_epoch

    def _sequenced(self, key):
        """The partition's batches with a sequence not yet completed or failed: Kafka's
        ``inflightBatchesBySequence`` (sent at least once, in flight or waiting to retry)."""
        return [b for b in self.queues.get(key, ()) if b.seq is not None]

    def drain_blocked(self, key, batch):
        """``RecordAccumulator.shouldStopDrainBatchesForPartition`` for a batch without a
        sequence: not while the partition's sequences are unresolved, nor (2.5+) while it has
        batches in flight under an older id or epoch."""
        if batch.seq is not None:
            return False
        if key in self.unresolved:
            return True
        if self.sim.era.producer_epoch_bump:
            for queued in self.queues[key]:
                if queued.seq is not None and not self._current(queued):
                    return True
        return False

    def assign_sequence(self, batch):
        """RecordAccumulator.drain: a batch sent for the first time takes the producer's id and
        epoch and the partition's next sequence; from 2.7.1 a partition whose sequences belong to
        an older epoch starts again at 0 (``maybeUpdateProducerIdAndEpoch``, KAFKA-12152)."""
        key = batch.key
        current = (self.producer_id, self.producer_epoch)
        if self.sim.era.partition_producer_epoch:
            if self.part_epochs.get(key, current) != current:
                self.seqs[key] = 0
                self.acked_seqs.pop(key, None)
            self.part_epochs[key] = current
        batch.producer_id, batch.producer_epoch = current
        batch.seq = self.seqs.get(key, 0)
        self.seqs[key] = batch.seq + len(batch.records)
        self._stamp(batch)

    def _stamp(self, batch):
        count = len(batch.records)
        for record in batch.records:
            record.batch_seq, record.batch_count = batch.seq, count
            record.producer_id, record.producer_epoch = batch.producer_id, batch.producer_epoch

    def _start_sequences_at_beginning(self, key):
        """The partition's sequenced batches renumbered from 0, in sequence order, under the
        current id and epoch (``startSequencesAtBeginning``); they retry as reset batches."""
        seq = 0
        for batch in sorted(self._sequenced(key), key=lambda b: b.seq):
            batch.producer_id, batch.producer_epoch = self.producer_id, self.producer_epoch
            batch.seq = seq
            batch.seq_reset = True
            self._stamp(batch)
            seq += len(batch.records)
        self.seqs[key] = seq
        self.acked_seqs.pop(key, None)
        if self.sim.era.partition_producer_epoch:
            self.part_epochs[key] = (self.producer_id, self.producer_epoch)

    # -- answers ------------------------------------------------------------------------------------
    def idempotent_completed(self, batch, base_offset):
        """``handleCompletedBatch``: the last acknowledged sequence and offset. 2.5 – 2.7.0: a
        batch of an older epoch that was the partition's last in flight restarts its sequences."""
        key = batch.key
        era = self.sim.era
        # up to 2.4 a batch of an older producer id is ignored (hasProducerIdAndEpoch @ 2.4.1);
        # from 2.5 every completed batch counts, whatever its epoch (@ 2.5.0, 2.7.2 - 4.1.0)
        if self._current(batch) or era.producer_epoch_bump:
            last = batch.seq + len(batch.records) - 1
            if last > self.acked_seqs.get(key, -1):
                self.acked_seqs[key] = last
            last_offset = base_offset + len(batch.records) - 1
            if last_offset > self.acked_offsets.get(key, -1):
                self.acked_offsets[key] = last_offset
        if era.producer_epoch_bump and not era.partition_producer_epoch and \
                not self._current(batch) and not self._sequenced(key):
            self._start_sequences_at_beginning(key)

    def idempotent_can_retry(self, batch, err, result):
        """``TransactionManager.canRetry`` (the Sender has checked retries and the delivery
        timeout): whether an OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID is retried."""
        key = batch.key
        next_in_line = batch.seq == self.acked_seqs.get(key, -1) + 1
        unresolved = key in self.unresolved
        if not self.sim.era.producer_epoch_bump:
            if not self._current(batch):
                return False    # 1.1.1 hasProducerId, 2.4.1 hasProducerIdAndEpoch
            if err == OUT_OF_ORDER:
                return not unresolved and (batch.seq_reset or not next_in_line)
            if batch.seq_reset:
                return True
            log_start = (result or {}).get("log_start_offset", -1)
            if log_start < 0:
                return True
            if self.acked_offsets.get(key, -1) < log_start:
                self._start_sequences_at_beginning(key)
                return True
            return False
        if err == OUT_OF_ORDER:
            if not unresolved and (batch.seq_reset or not next_in_line):
                return True
            # a real gap, or the batch right after an expired one (isNextSequenceForUnresolved-
            # Partition: the sequence markSequenceUnresolved kept), bumps; others wait and see
            if not unresolved or batch.seq == self.unresolved[key]:
                self.request_epoch_bump(key)
            return True
        # UNKNOWN_PRODUCER_ID: no 2.5+ broker of the engine answers it to an idempotent producer
        if batch.seq_reset or (result or {}).get("log_start_offset", -1) < 0:
            return True
        self.request_epoch_bump(key)
        return True

    def idempotent_failed(self, batch, err, adjust):
        """``handleFailedBatch`` for a batch failed to the application. ``adjust``: the batch
        had retries left (its sequence surely never made it into the log)."""
        if not self._current(batch) and not self.sim.era.partition_producer_epoch:
            # the id or epoch changed meanwhile: nothing to repair (matchesProducerIdAndEpoch up
            # to 2.7.0; KAFKA-12152, 2.7.1, dropped the check: a stale partition asks a bump too)
            return
        key = batch.key
        if not self.sim.era.producer_epoch_bump:
            # UnknownProducerIdException extends OutOfOrderSequenceException: both reset the id
            # (Sender.failBatch @ 1.1.1, TransactionManager.handleFailedBatch @ 2.4.1)
            if err in (OUT_OF_ORDER, UNKNOWN_PRODUCER_ID):
                self.reset_producer_id(err)
            elif adjust:
                self._adjust_sequences(batch)
            return
        if err == OUT_OF_ORDER or adjust:
            self.request_epoch_bump(key)

    def idempotent_expired(self, batch):
        """An expired batch that had been sent: its sequence's fate is unknown
        (``markSequenceUnresolved``) until the partition's other batches tell. From 2.5 the
        partition keeps the sequence after the highest expired batch, of any epoch."""
        if batch.seq is None:
            return
        if self.sim.era.producer_epoch_bump:
            after = batch.seq + len(batch.records)
            self.unresolved[batch.key] = max(after, self.unresolved.get(batch.key) or 0)
        elif self._current(batch):
            self.unresolved[batch.key] = None

    def _adjust_sequences(self, batch):
        """``adjustSequencesDueToFailedBatch`` (1.1 – 2.4): the failed batch's sequences are
        given back; later batches of the partition move down (and count as reset)."""
        key = batch.key
        if key not in self.seqs:
            return
        count = len(batch.records)
        self.seqs[key] -= count
        for queued in self._sequenced(key):
            if queued is not batch and queued.seq > batch.seq and self._current(queued):
                queued.seq -= count
                queued.seq_reset = True
                self._stamp(queued)

    # -- epoch bump and producer id reset -----------------------------------------------------------
    def request_epoch_bump(self, key):
        """``requestEpochBumpForPartition`` (2.5+): done at the Sender's next pass."""
        if self.bump_keys is None:
            self.bump_keys = {}
        self.bump_keys[key] = None
        self._idle_until = None

    def idempotent_before_send(self):
        """The top of ``Sender.runOnce``: resolve expired sequences, bump the epoch if asked
        (2.5+), and ask for a producer id if there is none. False: nothing may be sent now."""
        if self.unresolved:
            self._resolve_sequences()
        if self.bump_keys is not None:
            self._bump_epoch()
        if self.producer_id is None:
            if not self.pid_in_flight:
                self._init_producer_id()
            return False
        return True

    def _resolve_sequences(self):
        """``maybeResolveSequences`` (2.5+) / ``shouldResetProducerStateAfterResolvingSequences``
        (1.1 – 2.4): a partition with nothing left in flight is resolved when its next sequence
        follows the last acknowledged one; otherwise the epoch is bumped (2.5+) or the producer
        id reset (before)."""
        for key in list(self.unresolved):
            if self._sequenced(key):
                continue
            if self.seqs.get(key, 0) == self.acked_seqs.get(key, -1) + 1:
                del self.unresolved[key]
            elif self.sim.era.producer_epoch_bump:
                self.request_epoch_bump(key)
            else:
                self.reset_producer_id()
                return

    def _bump_epoch(self):
        """``bumpIdempotentProducerEpoch``: epoch + 1 for the whole producer, no request to a
        broker; the partitions that asked restart their sequenced batches at 0."""
        keys, self.bump_keys = self.bump_keys, None
        self.producer_epoch += 1
        for key in keys:
            self._start_sequences_at_beginning(key)
            self.unresolved.pop(key, None)
        self.sim.emit("producer_epoch_bump", producer=self.name, producer_id=self.producer_id,
                      producer_epoch=self.producer_epoch,
                      partitions=[list(self.sim.split_key(k)) for k in keys],
                      reason="a gap in the sequences (OUT_OF_ORDER_SEQUENCE_NUMBER or a batch "
                             "failed after it was sent): the idempotent producer bumps its epoch "
                             "and restarts the partition's sequences at 0 (KIP-360)")

    def reset_producer_id(self, err=None):
        """``resetProducerId`` (1.1 – 2.4): forget the id and every partition's sequences."""
        old = self.producer_id
        self.producer_id = None
        self.seqs.clear()
        self.acked_seqs.clear()
        self.acked_offsets.clear()
        self.unresolved.clear()
        self._idle_until = None
        self.sim.emit("producer_id_reset", producer=self.name, producer_id=old,
                      reason=(f"{err} on the batch after the last acknowledged one"
                              if err else "a sent batch expired and the partition's sequences "
                              "do not follow the last acknowledged one") +
                      ": the idempotent producer resets its producer id and waits for a new "
                      "one (InitProducerId) before sending again")
        # the Sender's next loop asks at once, data to send or not (maybeWaitForProducerId)
        self._init_producer_id()

    def _init_producer_id(self, _=None):
        """``Sender.maybeWaitForProducerId``: InitProducerId to the least loaded broker; an error
        or a disconnect tries again after retry.backoff.ms."""
        if not self.running or self.producer_id is not None:
            return
        self.pid_in_flight = True
        node = self._least_loaded_node()
        self.request(node, INIT_PRODUCER_ID, {"transactional_id": None},
                     self.config["request.timeout.ms"], self._on_init_producer_id, node)

    def _on_init_producer_id(self, node, body, error):
        self.pid_in_flight = False
        err = error or (body or {}).get("error")
        if err:
            self.node_failed(node)
            self.set_timer(self.config["retry.backoff.ms"], self._init_producer_id)
            return
        self.node_ok(node)
        self.producer_id, self.producer_epoch = body["producer_id"], body["producer_epoch"]
        self.part_epochs.clear()
        self.sim.emit("producer_id_set", producer=self.name, producer_id=self.producer_id,
                      producer_epoch=self.producer_epoch, broker=node,
                      reason="InitProducerId answered: sequences start again at 0")
        self._idle_until = None
        self._send_ready()
