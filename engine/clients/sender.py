"""The producer's Sender (§6 client facts, §12 client table).

For every partition with an unsent batch whose leader is known and reachable, the oldest unsent
batch is drained into one Produce per broker, at most ``max.in.flight.requests.per.connection`` at
a time. From engine 1.5.0 a batch that is not full waits ``linger.ms`` first, and a broker with a
sendable batch takes the lingering ones of its other partitions along (RecordAccumulator.ready /
drain). Errors are retried per the era's ``retries`` (0 up to 2.0; unbounded within
``delivery.timeout.ms`` from 2.1) after ``retry.backoff.ms``; NOT_LEADER and network errors
refresh metadata first.
"""
from engine.core.messages import PRODUCE
from engine.clients.network_client import DISCONNECTS
from engine.metrics import sensors

BATCH_RECORDS = 163  # batch.size 16384 / 100-byte records

RETRIABLE = {"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
             "REQUEST_TIMED_OUT", "NETWORK_EXCEPTION", "UNKNOWN_TOPIC_OR_PARTITION",
             "LEADER_NOT_AVAILABLE"}
#: answers TransactionManager.canRetry may retry (engine/clients/idempotence.py, engine 1.5.0)
IDEMPOTENCE_ERRORS = {"OUT_OF_ORDER_SEQUENCE_NUMBER", "UNKNOWN_PRODUCER_ID"}
REFRESH_METADATA = {"NOT_LEADER_OR_FOLLOWER", "NETWORK_EXCEPTION", "REQUEST_TIMED_OUT",
                    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE", "FENCED_LEADER_EPOCH",
                    "UNKNOWN_LEADER_EPOCH"}


class Sender:
    """Mixin of ``Producer``: draining batches into Produce requests, and their responses."""

    # -- the sender thread ---------------------------------------------------------------------------
    #: Set after a pass that changed nothing but, perhaps, the wake-up timer (every ready
    #: partition waited for an in-flight slot to its leader, a retry backoff or a reconnect
    #: backoff): (until, next_wake), ``until`` the earliest time one of those partitions' batches
    #: expires or stops waiting. Until then, and while nothing the pass reads changes (each change
    #: sets it back to None), a pass would do the same again, so it is skipped when that would not
    #: move the timer either. A class default: older snapshots lack the attribute.
    _idle_until = None
    #: linger.ms as the engine applies it (engine 1.5.0); a class default: older snapshots
    linger_ms = 0

    def _send_ready(self, _=None):
        """One pass of the Sender: for every partition with an unsent batch whose leader is
        known and reachable, drain its oldest unsent batch into one Produce per broker."""
        if not self.running or not self.ready_keys:
            return
        idempotence = self.idempotence_1_5
        if idempotence and not self.idempotent_before_send():
            return   # no producer id: nothing is sent until InitProducerId answers (1.1 - 2.4)
        now = self.scheduler.now_ms
        idle = self._idle_until
        if idle is not None and now < idle[0]:
            wake_at = self.wake_at
            if idle[1] is None or (wake_at is not None and now < wake_at <= idle[1]):
                return   # the pass would find what the last one found, and leave the timer
        per_node = {}
        next_wake = None
        quiet = True        # nothing sent, expired or dropped, no metadata asked for
        first_expiry = None
        leaders = self.leaders
        queues = self.queues
        ready_keys = self.ready_keys
        in_flight = self.in_flight
        max_in_flight = self.max_in_flight
        backoff = self.node_backoff
        # per leader, fixed for the pass: -1 a free in-flight slot, 0 none, else backed off until
        node_state = {}
        # _expiry_ms and node_ready, inlined: a pass looks at every partition with a queued
        # batch, most of them waiting for a free in-flight slot to their leader
        delivery_timeout = self.delivery_timeout_ms
        request_timeout = self.config["request.timeout.ms"]
        # max.in.flight.requests.per.connection 1 guarantees order: a partition with a batch in
        # flight is muted (Sender guaranteeMessageOrder, 0.10.2.0 - 4.1.0); engine 1.2.0 did not
        mute = max_in_flight == 1 and self.sim.rules_1_3
        # linger.ms (engine 1.5.0; 0 under older engines): a batch not yet sendable waits
        linger = self.linger_ms
        candidates = []      # (leader, batch) to drain, in the order of ready_keys
        lingering = []       # (leader, batch) not sendable yet, its leader free to take it
        ready_nodes = {}     # leaders with at least one sendable batch
        for key in list(ready_keys):
            for batch in queues[key]:
                if not batch.in_flight:
                    break
            else:
                del ready_keys[key]
                quiet = False
                continue
            expiry = batch.created_ms + delivery_timeout if delivery_timeout is not None \
                else batch.ready_ms + request_timeout
            if linger and delivery_timeout is None and not batch.attempts:
                # up to 2.0 (ProducerBatch.maybeExpire @ 0.10.2.2 - 2.0.0): a batch not retried
                # expires request.timeout.ms after its creation plus linger.ms
                expiry += linger
            if now >= expiry:
                quiet = False
                self._dequeue(batch)
                if idempotence:
                    self.idempotent_expired(batch)
                self._fail(batch, "REQUEST_TIMED_OUT",
                           f"expired after {now - batch.created_ms} ms without being acknowledged"
                           + (f" (delivery.timeout.ms {self.delivery_timeout_ms})"
                              if self.delivery_timeout_ms is not None else
                              f" (request.timeout.ms {self.config['request.timeout.ms']})"))
                continue
            if first_expiry is None or expiry < first_expiry:
                first_expiry = expiry
            if mute and any(queued.in_flight for queued in queues[key]):
                continue   # muted until its batch in flight completes; the answer wakes the pass
            if idempotence and self.drain_blocked(key, batch):
                continue   # waits for the partition's older batches; their answers wake the pass
            wake = None
            if batch.ready_ms > now:
                wake = batch.ready_ms
            else:
                leader = leaders.get(key, (-1, -1))[0]
                if leader < 0:
                    quiet = False
                    self.refresh_metadata()
                    wake = expiry
                else:
                    state = node_state.get(leader)
                    if state is None:
                        entry = backoff.get(leader)
                        if entry is not None and entry[0] > now:
                            state = entry[0]
                        else:
                            state = -1 if in_flight.get(leader, 0) < max_in_flight else 0
                        node_state[leader] = state
                    if state < 0:
                        if linger and not self._sendable(batch, queues[key], now, linger):
                            # lingers: sent with its leader's next drain, or at created + linger
                            lingering.append((leader, batch))
                            wake = batch.created_ms + linger
                        else:
                            quiet = False
                            ready_nodes[leader] = None
                            candidates.append((leader, batch))
                    elif state:
                        wake = state
            if wake is not None:
                if next_wake is None or wake < next_wake:
                    next_wake = wake
        if lingering:
            # RecordAccumulator.drain takes the first batch of every partition the ready node
            # leads, lingering or not (drainBatchesForOneNode checks backoff and mute, not linger)
            drained = [entry for entry in lingering if entry[0] in ready_nodes]
            if drained:
                quiet = False
                candidates = self._in_queue_order(candidates + drained)
        for leader, batch in candidates:
            group = per_node.get((leader, batch.acks))
            if group is None:
                per_node[(leader, batch.acks)] = [batch]
            else:
                group.append(batch)
        for (node, acks), batches in per_node.items():
            if self.in_flight.get(node, 0) < self.max_in_flight:
                self._send_batches(node, acks, batches)
        if next_wake is not None and (self.wake_at is None or next_wake < self.wake_at
                                      or self.wake_at <= now):
            self.wake_at = next_wake
            self.set_timer(max(next_wake - now, 0), self._wake)
        if quiet and first_expiry is not None:
            self._idle_until = (first_expiry if next_wake is None or first_expiry < next_wake
                                else next_wake, next_wake)
        else:
            self._idle_until = None

    @staticmethod
    def _sendable(batch, queue, now, linger):
        """RecordAccumulator.batchReady @ 0.10.2.2 - 4.1.0: the partition's first unsent batch
        is sendable when it is full (batch.size reached, another batch queued behind it, or
        closed for appends: a retried batch was drained once), or it has waited linger.ms since
        it was created. Buffer exhaustion, flush() and close() are not modelled (§16)."""
        if batch.attempts or len(batch.records) >= BATCH_RECORDS or now >= batch.created_ms + linger:
            return True
        unsent = 0
        for queued in queue:
            if not queued.in_flight:
                unsent += 1
                if unsent > 1:
                    return True
        return False

    def _in_queue_order(self, entries):
        """Sendable and piggy-backing lingering batches in the pass's partition order."""
        order = {key: i for i, key in enumerate(self.ready_keys)}
        return sorted(entries, key=lambda entry: order.get(entry[1].key, len(order)))

    def _wake(self, _):
        self.wake_at = None
        self._send_ready()

    def _expiry_ms(self, batch):
        if self.delivery_timeout_ms is not None:
            return batch.created_ms + self.delivery_timeout_ms
        return batch.ready_ms + self.config["request.timeout.ms"] + \
            (self.linger_ms if not batch.attempts else 0)

    def _expired(self, batch, now):
        return now >= self._expiry_ms(batch)

    def _send_batches(self, node, acks, batches):
        self._idle_until = None
        parts = {}
        queues = self.queues
        idempotent = self.idempotent
        for batch in batches:
            key = batch.key
            records = batch.records
            batch.in_flight = True
            attempts = batch.attempts = batch.attempts + 1
            for queued in queues[key]:
                if not queued.in_flight:
                    break
            else:   # every batch of the partition is in flight: nothing ready there
                self.ready_keys.pop(key, None)
            if idempotent and batch.seq is None:
                if self.idempotence_1_5:
                    self.assign_sequence(batch)
                else:
                    batch.seq = self.seqs.get(key, 0)
                    self.seqs[key] = batch.seq + len(records)
                    for record in records:
                        record.batch_seq, record.batch_count = batch.seq, len(records)
            for record in records:
                record.attempts = attempts
            parts[key] = {"ids": [r.id for r in records], "seq": batch.seq}
            if batch.producer_id is not None:   # engine 1.5.0: the id and epoch travel along
                parts[key]["pid"] = batch.producer_id
                parts[key]["epoch"] = batch.producer_epoch
        body = {"acks": acks, "timeout_ms": self.config["request.timeout.ms"], "producer": self.name,
                "partitions": parts}
        if acks == 0:
            self.send(node, PRODUCE, body)
            for batch in batches:
                self._dequeue(batch)
                for record in batch.records:
                    record.status = "unacknowledged"
            return
        self.in_flight[node] = self.in_flight.get(node, 0) + 1
        self.request(node, PRODUCE, body, self.config["request.timeout.ms"], self._on_produce_response,
                     (node, batches, self.scheduler.now_ms))

    def _dequeue(self, batch):
        self._idle_until = None
        queue = self.queues.get(batch.key)
        if queue and batch in queue:
            queue.remove(batch)
        for queued in queue or ():
            if not queued.in_flight:
                break
        else:   # nothing left to send for the partition
            self.ready_keys.pop(batch.key, None)

    def _on_produce_response(self, ctx, body, error):
        node, batches = ctx[0], ctx[1]
        if error is None and len(ctx) > 2:
            self._record_request_latency(self.scheduler.now_ms - ctx[2])
        self._idle_until = None
        self.in_flight[node] -= 1
        if error in DISCONNECTS:
            self.node_failed(node)
        elif not error and node in self.node_backoff:   # node_ok has a backoff to clear
            self.node_ok(node)
        refresh = False
        # Sender.completeBatch requests a metadata update for an InvalidMetadataException only:
        # the broker's own REQUEST_TIMED_OUT (a TimeoutException) leaves the metadata alone; a
        # timed-out connection asks through handleServerDisconnect (engine 1.2.0 asked for both)
        broker_timeout = self.sim.rules_1_3
        for batch in batches:
            batch.in_flight = False
            result = None if error else body["partitions"].get(batch.key)
            err = error or (result or {}).get("error") or (None if result else "NETWORK_EXCEPTION")
            if err is None:
                self._dequeue(batch)
                self._acked(batch, result["base_offset"])
                if self.idempotence_1_5:
                    self.idempotent_completed(batch, result["base_offset"])
                continue
            if err in REFRESH_METADATA and not (broker_timeout and err == "REQUEST_TIMED_OUT"
                                                and not error):
                refresh = True
            if self.idempotence_1_5:
                self._idempotent_answer(batch, err, result)
            elif self._can_retry(batch, err):
                batch.ready_ms = self.scheduler.now_ms + self.config["retry.backoff.ms"]
                self.ready_keys[batch.key] = None
                for record in batch.records:
                    record.error = err
            else:
                self._dequeue(batch)
                self._fail(batch, err, None)
        if refresh:
            self.refresh_metadata()
        self._send_ready()

    def _idempotent_answer(self, batch, err, result):
        """Engine 1.5.0, an idempotent producer's failed batch: ``Sender.completeBatch`` with
        ``canRetry`` (retries and delivery timeout, then the error: retriable, or what
        ``TransactionManager.canRetry`` says of OUT_OF_ORDER_SEQUENCE_NUMBER and
        UNKNOWN_PRODUCER_ID), then ``failBatch`` / ``handleFailedBatch`` (engine/clients/idempotence.py)."""
        retry = self._can_retry(batch, None)
        if retry and err not in RETRIABLE:
            retry = err in IDEMPOTENCE_ERRORS and self.idempotent_can_retry(batch, err, result)
        if retry and not self.sim.era.producer_epoch_bump and not self._current(batch):
            # 1.1 - 2.4: a batch of a producer id reset meanwhile is not retried
            self._dequeue(batch)
            self._fail(batch, "OUT_OF_ORDER_SEQUENCE_NUMBER",
                       f"{err}, and the producer id changed from {batch.producer_id} to "
                       f"{self.producer_id} meanwhile: the batch is dropped")
            return
        if retry:
            batch.ready_ms = self.scheduler.now_ms + self.config["retry.backoff.ms"]
            self.ready_keys[batch.key] = None
            for record in batch.records:
                record.error = err
            return
        self._dequeue(batch)
        self._fail(batch, err, None)
        # adjustSequenceNumbers: the batch had attempts left (Kafka counts attempts from 0)
        self.idempotent_failed(batch, err, batch.attempts - 1 < self.retries)

    def _record_request_latency(self, latency_ms):
        """SenderMetrics.recordLatency: every produce response that arrived (not a disconnect, not
        a timeout) goes into the request-time sensor (docs/model.md §22.5). Kafka's own metric
        state: nothing in the engine reads it back; a request sent before a snapshot that lacked
        the send time is not recorded."""
        if self.request_time is None:
            self.request_time = sensors.new_stat()
        sensors.record(self.request_time, latency_ms, self.scheduler.now_ms)

    def _can_retry(self, batch, err):
        """``err`` None: only the retries left and the delivery timeout (engine 1.5.0)."""
        if (err is not None and err not in RETRIABLE) or not self.running:
            return False
        if batch.attempts > self.retries:
            return False
        if self.delivery_timeout_ms is not None and \
                self.scheduler.now_ms >= batch.created_ms + self.delivery_timeout_ms:
            return False
        return True

    def _acked(self, batch, base_offset):
        now = self.scheduler.now_ms
        offset = base_offset
        records = batch.records
        for record in records:
            record.status = "acked"
            record.error = None
            record.offset = offset
            record.acked_ms = now
            offset += 1
        # the whole batch at once: its records share the partition (on_acked once per record
        # was a call chain per record)
        self.sim.on_acked_records(batch.key, records)

    def _fail(self, batch, err, detail):
        for record in batch.records:
            record.status = "failed"
            record.error = err
        self.sim.emit("produce_failed", topic=self.sim.split_key(batch.key)[0],
                      partition=self.sim.split_key(batch.key)[1], producer=self.name, error=err,
                      records=[r.id for r in batch.records], attempts=batch.attempts,
                      reason=detail or (f"{err} after {batch.attempts} attempt(s); retries="
                                        f"{self.retries}" + (f", delivery.timeout.ms={self.delivery_timeout_ms}"
                                                             if self.delivery_timeout_ms else "")))
