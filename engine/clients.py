"""Producers and consumers (§6 client facts, §10, §12 client table).

A producer assigns every record a unique id ``"<name>-<n>"``, partitions it (keyed: murmur2 as
the Java client; unkeyed: round-robin up to 2.3, the sticky partitioner of KIP-480 from 2.4),
and sends one Produce per broker with one batch per partition, at most
``max.in.flight.requests.per.connection`` at a time. Errors are retried per the era's ``retries``
(0 up to 2.0; unbounded within ``delivery.timeout.ms`` from 2.1) after ``retry.backoff.ms``, and
NOT_LEADER / network errors refresh metadata first. A consumer reads every assigned partition
from its leader up to the high watermark.
"""
from .messages import FETCH, LIST_OFFSETS, METADATA, OFFSETS_FOR_LEADER_EPOCH, PRODUCE
from .network import Node

RETRIABLE = {"NOT_LEADER_OR_FOLLOWER", "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
             "REQUEST_TIMED_OUT", "NETWORK_EXCEPTION", "UNKNOWN_TOPIC_OR_PARTITION",
             "LEADER_NOT_AVAILABLE"}
#: Request-level errors after which the client closes the connection and backs off before
#: reconnecting: a refused or reset connection, and its own request timeout (NetworkClient
#: disconnects a node whose in-flight request timed out) — so the next metadata request goes
#: to another broker instead of the one that just hung.
DISCONNECTS = ("NETWORK_EXCEPTION", "REQUEST_TIMED_OUT")
REFRESH_METADATA = {"NOT_LEADER_OR_FOLLOWER", "NETWORK_EXCEPTION", "REQUEST_TIMED_OUT",
                    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE", "FENCED_LEADER_EPOCH",
                    "UNKNOWN_LEADER_EPOCH"}
BATCH_RECORDS = 163  # batch.size 16384 / 100-byte records


def murmur2(data):
    """Kafka's Utils.murmur2 (the default partitioner's hash of the key bytes)."""
    length = len(data)
    seed = 0x9747b28c
    m = 0x5bd1e995
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    tail = length - rest
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def key_partition(key, partitions):
    return (murmur2(str(key).encode()) & 0x7FFFFFFF) % partitions


class Record:
    __slots__ = ("id", "producer", "topic", "partition", "key", "value", "acks", "status", "error",
                 "offset", "sent_ms", "acked_ms", "lost", "leader_epoch", "batch_seq", "batch_count",
                 "attempts")

    def __init__(self, rid, producer, topic, acks, sent_ms, key=None, value=None):
        self.id = rid
        self.producer = producer
        self.topic = topic
        self.partition = None
        self.key = key
        self.value = value
        self.acks = acks
        self.status = "pending"
        self.error = None
        self.offset = None
        self.sent_ms = sent_ms
        self.acked_ms = None
        self.lost = False
        self.leader_epoch = None
        self.batch_seq = None
        self.batch_count = None
        self.attempts = 0

    def __reduce__(self):
        # a flat tuple unpickles several times faster than __slots__ state (snapshots hold
        # every record of the run)
        return (_rebuild_record, (tuple(getattr(self, name) for name in Record.__slots__),))

    def to_dict(self):
        return {"id": self.id, "producer": self.producer, "topic": self.topic,
                "partition": self.partition, "acks": self.acks, "status": self.status,
                "error": self.error, "offset": self.offset, "sent_ms": self.sent_ms,
                "acked_ms": self.acked_ms, "lost": self.lost}


def _rebuild_record(values):
    record = Record.__new__(Record)
    for name, value in zip(Record.__slots__, values):
        setattr(record, name, value)
    return record


class Batch:
    __slots__ = ("key", "records", "acks", "created_ms", "attempts", "seq", "ready_ms", "in_flight")

    def __init__(self, key, acks, created_ms):
        self.key = key
        self.records = []
        self.acks = acks
        self.created_ms = created_ms
        self.attempts = 0
        self.seq = None
        self.ready_ms = created_ms
        self.in_flight = False


def acks_value(acks):
    return {"all": -1, "-1": -1, -1: -1, "1": 1, 1: 1, "0": 0, 0: 0}[acks]


def acks_label(acks):
    return {-1: "all", 1: "1", 0: "0"}[acks]


class ClientBase(Node):
    """Shared client plumbing: metadata refresh (at most every retry.backoff.ms, from a broker
    not in reconnect backoff) and per-node reconnect backoff after a failed connection
    (reconnect.backoff.ms 50, doubling up to reconnect.backoff.max.ms 1000)."""

    RECONNECT_BACKOFF_MS = 50
    RECONNECT_BACKOFF_MAX_MS = 1000

    def __init__(self, sim, name, config):
        Node.__init__(self, name, sim)
        self.name = name
        self.config = config
        self.running = False
        self.leaders = {}           # key -> (leader, leader_epoch)
        self.topic_partitions = {}  # topic -> count
        self.metadata_in_flight = False
        self.metadata_wanted = False
        self.metadata_timer = False
        self.last_metadata_attempt_ms = None
        self.node_backoff = {}      # node -> (until_ms, current backoff)
        self._bootstrap = 0
        self.metadata_ms = None     # when the last metadata answer arrived

    def start_metadata_refresh(self):
        """metadata.max.age.ms: refresh even without errors, so a client that has nothing
        outstanding still learns about new leaders."""
        self.set_timer(self.config["metadata.max.age.ms"], self._metadata_age_tick)

    def _metadata_age_tick(self, _):
        if not self.running:
            return
        age = self.config["metadata.max.age.ms"]
        if self.metadata_ms is None or self.scheduler.now_ms - self.metadata_ms >= age:
            self.refresh_metadata()
        self.set_timer(age, self._metadata_age_tick)

    # -- connections ----------------------------------------------------------------------------
    def node_ready(self, node):
        entry = self.node_backoff.get(node)
        return entry is None or entry[0] <= self.scheduler.now_ms

    def node_failed(self, node):
        previous = self.node_backoff.get(node)
        backoff = self.RECONNECT_BACKOFF_MS if previous is None else \
            min(previous[1] * 2, self.RECONNECT_BACKOFF_MAX_MS)
        self.node_backoff[node] = (self.scheduler.now_ms + backoff, backoff)

    def node_ok(self, node):
        if node in self.node_backoff:
            del self.node_backoff[node]

    # -- metadata ---------------------------------------------------------------------------------
    def refresh_metadata(self, _=None):
        if not self.running:
            return
        if self.metadata_in_flight:
            self.metadata_wanted = True
            return
        now = self.scheduler.now_ms
        backoff = self.config["retry.backoff.ms"]
        if self.last_metadata_attempt_ms is not None and now < self.last_metadata_attempt_ms + backoff:
            if not self.metadata_timer:
                self.metadata_timer = True
                self.set_timer(self.last_metadata_attempt_ms + backoff - now, self._metadata_timer)
            return
        target = self._least_loaded_node()
        self.last_metadata_attempt_ms = now
        self.metadata_in_flight = True
        self.metadata_wanted = False
        self.request(target, METADATA, {"topics": None}, self.config["request.timeout.ms"],
                     self._on_metadata, target)

    def _metadata_timer(self, _):
        self.metadata_timer = False
        self.refresh_metadata()

    def _least_loaded_node(self):
        brokers = self.sim.broker_ids
        for i in range(len(brokers)):
            node = brokers[(self._bootstrap + i) % len(brokers)]
            if self.node_ready(node):
                self._bootstrap += i + 1
                return node
        self._bootstrap += 1
        return brokers[(self._bootstrap - 1) % len(brokers)]

    def _on_metadata(self, node, body, error):
        self.metadata_in_flight = False
        if error or body.get("error"):
            self.node_failed(node)
            self.refresh_metadata()
            return
        self.node_ok(node)
        self.metadata_ms = self.scheduler.now_ms
        counts = {}
        split = self.sim.split_key
        for key, st in body["partitions"].items():
            topic, part = split(key)
            if part + 1 > counts.get(topic, 0):
                counts[topic] = part + 1
            self.leaders[key] = (st["leader"], st["leader_epoch"])
        self.topic_partitions.update(counts)
        self.on_metadata_updated()
        if self.metadata_wanted:
            self.refresh_metadata()

    def on_metadata_updated(self):
        raise NotImplementedError


class Producer(ClientBase):
    def __init__(self, sim, name, spec, config):
        ClientBase.__init__(self, sim, name, config)
        self.spec = spec
        self.acks = acks_value(spec.get("acks") or config["acks"])
        self.topic = spec.get("topic")
        self.queues = {}          # key -> [Batch] (oldest first)
        self.ready_keys = {}      # keys with at least one batch not in flight
        self.unassigned = []      # records created before the topic's metadata was known
        self.in_flight = {}       # broker -> requests outstanding
        self.next_id = 0
        self.seqs = {}            # key -> next sequence (idempotence)
        self.round_robin = 0
        self.sticky = {}          # topic -> partition (KIP-480)
        self.wake_at = None
        self.available = {}       # topic -> partitions with a leader (cache)
        self.idempotent = bool(config.get("enable.idempotence"))
        self.retries = config["retries"]
        self.delivery_timeout_ms = config.get("delivery.timeout.ms")
        self.max_in_flight = config["max.in.flight.requests.per.connection"]
        self.rng = sim.streams.fork(f"producer/{name}")
        self.handlers = {}

    def start(self, _=None):
        if self.running:
            return
        self.running = True
        self.refresh_metadata()
        self.start_metadata_refresh()
        rate = self.spec.get("rate_per_s") or 0
        if rate > 0 and self.topic:
            self._steady_index = 0
            self._steady_start = self.scheduler.now_ms
            self._tick_steady(None)

    def stop(self):
        self.running = False

    # -- steady load ------------------------------------------------------------------------------
    def _tick_steady(self, _):
        """Emit the records due by now; index i is due at start + floor(i * 1000 / rate)."""
        if not self.running:
            return
        stop = self.spec.get("stop_ms")
        now = self.scheduler.now_ms
        if stop is not None and now >= stop:
            return
        rate = self.spec["rate_per_s"]
        while self._steady_start + (self._steady_index * 1000) // rate <= now:
            self.send_record(self.topic, None, None, None, self.acks)
            self._steady_index += 1
        due = self._steady_start + (self._steady_index * 1000) // rate
        self.set_timer(due - now, self._tick_steady)

    # -- the application's send() ------------------------------------------------------------------
    def send_record(self, topic, partition, key, value, acks):
        """KafkaProducer.send(): create the record, partition it, hand it to the sender."""
        rid = f"{self.name}-{self.next_id}"
        self.next_id += 1
        record = Record(rid, self.name, topic, acks_label(acks), self.scheduler.now_ms, key, value)
        record.partition = partition
        self.sim.register_record(record)
        if acks == 0:
            record.status = "pending"
        if topic in self.topic_partitions:
            self._append(record, acks)
        else:
            self.unassigned.append((record, acks))
            self.refresh_metadata()
        return record

    def _available(self, topic):
        """Partitions of the topic with a known leader (recomputed on each metadata update)."""
        cached = self.available.get(topic)
        if cached is None:
            count = self.topic_partitions[topic]
            key = self.sim.key
            live = [p for p in range(count) if self.leaders.get(key(topic, p), (-1,))[0] >= 0]
            cached = self.available[topic] = live or list(range(count))
        return cached

    def _sticky(self):
        return self.spec.get("partitioner", "default") == "default" and self.sim.era.version in ("2.4", "2.6")

    def _choose_partition(self, record):
        """DefaultPartitioner: murmur2 of the key; without a key, round-robin (<= 2.3) or the
        sticky partition (KIP-480, 2.4+)."""
        if record.partition is not None:
            return record.partition
        if record.key is not None:
            return key_partition(record.key, self.topic_partitions[record.topic])
        available = self._available(record.topic)
        if self._sticky():
            current = self.sticky.get(record.topic)
            if current is None or current not in available:
                current = self._new_sticky(record.topic, None)
            return current
        self.round_robin += 1
        return available[(self.round_robin - 1) % len(available)]

    def _new_sticky(self, topic, previous):
        """StickyPartitionCache.nextPartition: a random available partition other than the last."""
        available = [p for p in self._available(topic) if p != previous] or self._available(topic)
        choice = available[self.rng.randrange(len(available))]
        self.sticky[topic] = choice
        return choice

    def _open_batch(self, key):
        queue = self.queues.get(key)
        if queue and not queue[-1].in_flight and queue[-1].attempts == 0 \
                and len(queue[-1].records) < BATCH_RECORDS:
            return queue[-1]
        return None

    def _append(self, record, acks):
        explicit = record.partition is not None or record.key is not None
        part = self._choose_partition(record)
        key = self.sim.key(record.topic, part)
        batch = self._open_batch(key)
        if batch is not None and batch.acks != acks:
            batch = None
        if batch is None and not explicit and self._sticky():
            # onNewBatch: the sticky partition moves on whenever it would need a new batch.
            part = self._new_sticky(record.topic, part)
            key = self.sim.key(record.topic, part)
            batch = self._open_batch(key)
            if batch is not None and batch.acks != acks:
                batch = None
        record.partition = part
        if batch is None:
            batch = Batch(key, acks, self.scheduler.now_ms)
            self.queues.setdefault(key, []).append(batch)
            self.ready_keys[key] = None
        batch.records.append(record)
        self._send_ready()

    def on_metadata_updated(self):
        self.available = {}
        if self.unassigned:
            waiting, self.unassigned = self.unassigned, []
            for record, acks in waiting:
                if record.topic in self.topic_partitions:
                    self._append(record, acks)
                else:
                    self.unassigned.append((record, acks))
        self._send_ready()

    # -- the sender thread ---------------------------------------------------------------------------
    def _send_ready(self, _=None):
        """One pass of the Sender: for every partition with an unsent batch whose leader is
        known and reachable, drain its oldest unsent batch into one Produce per broker."""
        if not self.running or not self.ready_keys:
            return
        now = self.scheduler.now_ms
        per_node = {}
        next_wake = None
        leaders = self.leaders
        for key in list(self.ready_keys):
            batch = None
            for candidate in self.queues[key]:
                if not candidate.in_flight:
                    batch = candidate
                    break
            if batch is None:
                del self.ready_keys[key]
                continue
            if now >= self._expiry_ms(batch):
                self._dequeue(batch)
                self._fail(batch, "REQUEST_TIMED_OUT",
                           f"expired after {now - batch.created_ms} ms without being acknowledged"
                           + (f" (delivery.timeout.ms {self.delivery_timeout_ms})"
                              if self.delivery_timeout_ms is not None else
                              f" (request.timeout.ms {self.config['request.timeout.ms']})"))
                continue
            wake = None
            leader = leaders.get(key, (-1, -1))[0]
            if batch.ready_ms > now:
                wake = batch.ready_ms
            elif leader < 0:
                self.refresh_metadata()
                wake = self._expiry_ms(batch)
            elif not self.node_ready(leader):
                wake = self.node_backoff[leader][0]
            elif self.in_flight.get(leader, 0) < self.max_in_flight:
                per_node.setdefault((leader, batch.acks), []).append(batch)
            if wake is not None and (next_wake is None or wake < next_wake):
                next_wake = wake
        for (node, acks), batches in per_node.items():
            if self.in_flight.get(node, 0) < self.max_in_flight:
                self._send_batches(node, acks, batches)
        if next_wake is not None and (self.wake_at is None or next_wake < self.wake_at
                                      or self.wake_at <= now):
            self.wake_at = next_wake
            self.set_timer(max(next_wake - now, 0), self._wake)

    def _wake(self, _):
        self.wake_at = None
        self._send_ready()

    def _expiry_ms(self, batch):
        if self.delivery_timeout_ms is not None:
            return batch.created_ms + self.delivery_timeout_ms
        return batch.ready_ms + self.config["request.timeout.ms"]

    def _expired(self, batch, now):
        return now >= self._expiry_ms(batch)

    def _send_batches(self, node, acks, batches):
        parts = {}
        for batch in batches:
            batch.in_flight = True
            batch.attempts += 1
            if not any(not b.in_flight for b in self.queues[batch.key]):
                self.ready_keys.pop(batch.key, None)
            if self.idempotent and batch.seq is None:
                batch.seq = self.seqs.get(batch.key, 0)
                self.seqs[batch.key] = batch.seq + len(batch.records)
                for i, record in enumerate(batch.records):
                    record.batch_seq, record.batch_count = batch.seq, len(batch.records)
            for record in batch.records:
                record.attempts = batch.attempts
            parts[batch.key] = {"ids": [r.id for r in batch.records], "seq": batch.seq}
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
                     (node, batches))

    def _dequeue(self, batch):
        queue = self.queues.get(batch.key)
        if queue and batch in queue:
            queue.remove(batch)
        if not any(not b.in_flight for b in queue or ()):
            self.ready_keys.pop(batch.key, None)

    def _on_produce_response(self, ctx, body, error):
        node, batches = ctx
        self.in_flight[node] -= 1
        if error in DISCONNECTS:
            self.node_failed(node)
        elif not error:
            self.node_ok(node)
        refresh = False
        for batch in batches:
            batch.in_flight = False
            result = None if error else body["partitions"].get(batch.key)
            err = error or (result or {}).get("error") or (None if result else "NETWORK_EXCEPTION")
            if err is None:
                self._dequeue(batch)
                self._acked(batch, result["base_offset"])
                continue
            refresh = refresh or err in REFRESH_METADATA
            if self._can_retry(batch, err):
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

    def _can_retry(self, batch, err):
        if err not in RETRIABLE or not self.running:
            return False
        if batch.attempts > self.retries:
            return False
        if self.delivery_timeout_ms is not None and \
                self.scheduler.now_ms >= batch.created_ms + self.delivery_timeout_ms:
            return False
        return True

    def _acked(self, batch, base_offset):
        now = self.scheduler.now_ms
        for i, record in enumerate(batch.records):
            record.status = "acked"
            record.error = None
            record.offset = base_offset + i
            record.acked_ms = now
            self.sim.on_acked(record)

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

    def view(self):
        queued = sum(len(b.records) for q in self.queues.values() for b in q)
        return {"type": "producer", "running": self.running, "sent": self.next_id, "queued": queued,
                "in_flight": dict((str(k), v) for k, v in self.in_flight.items())}


class Consumer(ClientBase):
    def __init__(self, sim, name, spec, config):
        ClientBase.__init__(self, sim, name, config)
        self.spec = spec
        self.topic = spec["topic"]
        self.positions = {}       # key -> next offset to read
        self.last_epochs = {}     # key -> leader epoch of the last record read
        self.fetch_epochs = {}    # key -> leader epoch the position was validated against
        self.resetting = {}       # key -> None: waiting for ListOffsets
        self.validating = {}      # key -> None: waiting for OffsetsForLeaderEpoch (KIP-320)
        self.in_flight = {}       # broker -> True
        self.consumed = sim.consumed.setdefault(name, [])
        self.by_node = None       # leader -> assigned keys (rebuilt on each metadata update)
        self.error = None
        self.handlers = {}

    def assigned(self):
        count = self.topic_partitions.get(self.topic, 0)
        if self.spec.get("partition") is not None:
            return [self.sim.key(self.topic, self.spec["partition"])] if self.spec["partition"] < count else []
        return [self.sim.key(self.topic, p) for p in range(count)]

    def start(self, _=None):
        if self.running:
            return
        self.running = True
        self.refresh_metadata()
        self.start_metadata_refresh()

    def stop(self):
        self.running = False

    def _keys_led_by(self, node):
        by_node = self.by_node
        if by_node is None:
            by_node = self.by_node = {}
            for key in self.assigned():
                by_node.setdefault(self.leaders.get(key, (-1, -1))[0], []).append(key)
        return by_node.get(node, ())

    def on_metadata_updated(self):
        self.by_node = None
        start = self.spec.get("from")
        for key in self.assigned():
            if key not in self.positions and key not in self.resetting:
                if isinstance(start, int):
                    self.positions[key] = start
                else:
                    self._reset(key, start or self.config["auto.offset.reset"])
        self._poll()

    def _reset(self, key, policy):
        if policy == "none":
            self.error = f"OFFSET_OUT_OF_RANGE on {key} with auto.offset.reset=none"
            self.sim.emit("consumer_error", consumer=self.name, reason=self.error)
            self.running = False
            return
        self.resetting[key] = policy
        self.positions.pop(key, None)
        self._list_offsets(key)

    def _list_offsets(self, key):
        leader = self.leaders.get(key, (-1, -1))[0]
        if leader < 0:
            self.set_timer(self.config["retry.backoff.ms"], self._retry_reset, key)
            return
        policy = self.resetting[key]
        self.request(leader, LIST_OFFSETS, {"replica_id": -1, "partitions": {key: policy}},
                     self.config["request.timeout.ms"], self._on_list_offsets, key)

    def _retry_reset(self, key):
        if key in self.resetting and self.running:
            self.refresh_metadata()
            self._list_offsets(key)

    def _on_list_offsets(self, key, body, error):
        answer = None if error else body["partitions"].get(key)
        if error or answer is None or answer["error"]:
            self.set_timer(self.config["retry.backoff.ms"], self._retry_reset, key)
            return
        policy = self.resetting.pop(key, None)
        self.positions[key] = answer["offset"]
        self.fetch_epochs[key] = answer["leader_epoch"]
        self.sim.emit("consumer_reset", consumer=self.name, topic=self.sim.split_key(key)[0],
                      partition=self.sim.split_key(key)[1], offset=answer["offset"],
                      reason=f"auto.offset.reset={policy}: position set to {answer['offset']}")
        self._poll()

    def _poll(self, _=None):
        """Send a Fetch to every leader that has none outstanding (one per broker, like the
        Java consumer's Fetcher)."""
        if not self.running:
            return
        nodes = {}
        for key in self.positions:
            leader = self.leaders.get(key, (-1, -1))[0]
            if leader >= 0:
                nodes[leader] = None
        for node in nodes:
            self._poll_node(node)

    def _poll_node(self, node):
        if not self.running or self.in_flight.get(node):
            return
        if not self.node_ready(node):
            # reconnect backoff: try this node again when it ends
            self.set_timer(self.node_backoff[node][0] - self.scheduler.now_ms, self._poll_node, node)
            return
        parts = {}
        detect = self.sim.era.consumer_truncation_detection
        leaders = self.leaders
        positions = self.positions
        for key in self._keys_led_by(node):
            pos = positions.get(key)
            if pos is None or key in self.validating:
                continue
            leader, epoch = leaders[key]
            if detect and key in self.last_epochs and self.fetch_epochs.get(key, epoch) != epoch:
                self._validate(key, leader, epoch)
                continue
            self.fetch_epochs[key] = epoch
            parts[key] = {"fetch_offset": pos, "current_leader_epoch": epoch if detect else -1}
        if not parts:
            return
        self.in_flight[node] = True
        self.request(node, FETCH, {"replica_id": -1, "max_wait_ms": self.config["fetch.max.wait.ms"],
                                   "min_bytes": 1, "partitions": parts},
                     self.config["request.timeout.ms"], self._on_fetch, (node, parts))

    def _on_fetch(self, ctx, body, error):
        node, parts = ctx
        self.in_flight[node] = False
        if not self.running:
            return
        if error:
            if error in DISCONNECTS:
                self.node_failed(node)
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
            return
        self.node_ok(node)
        refresh = False
        now = self.scheduler.now_ms
        for key, resp in body["partitions"].items():
            if self.positions.get(key) != parts[key]["fetch_offset"]:
                continue
            err = resp["error"]
            if err is None:
                records = resp["records"]
                if records:
                    offset = parts[key]["fetch_offset"]
                    topic, part = self.sim.split_key(key)
                    for i, (_epoch, rid) in enumerate(records):
                        self.consumed.append({"id": rid, "topic": topic, "partition": part,
                                              "offset": offset + i, "at_ms": now})
                        self.sim.on_consumed(self.name, key, offset + i, rid)
                    self.positions[key] = offset + len(records)
                    self.last_epochs[key] = records[-1][0]
            elif err == "OFFSET_OUT_OF_RANGE":
                self._reset(key, self.config["auto.offset.reset"])
            else:
                refresh = True
        if refresh:
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
        else:
            self._poll_node(node)

    # -- KIP-320 client side: detect truncation after a leader change (§10) ---------------------------
    def _validate(self, key, leader, epoch):
        self.validating[key] = None
        self.request(leader, OFFSETS_FOR_LEADER_EPOCH,
                     {"replica_id": -1, "partitions": {key: {"leader_epoch": self.last_epochs[key],
                                                             "current_leader_epoch": epoch}}},
                     self.config["request.timeout.ms"], self._on_validated, (key, epoch))

    def _on_validated(self, ctx, body, error):
        key, epoch = ctx
        self.validating.pop(key, None)
        answer = None if error else body["partitions"].get(key)
        if error or answer is None or answer["error"]:
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
            return
        self.fetch_epochs[key] = epoch
        end = answer["end_offset"]
        position = self.positions.get(key)
        if end == -1:
            self._reset(key, self.config["auto.offset.reset"])
            return
        if position is not None and end < position:
            topic, part = self.sim.split_key(key)
            self.positions[key] = end
            self.sim.emit("consumer_truncation_detected", consumer=self.name, topic=topic, partition=part,
                          offset=end, previous_position=position,
                          reason=f"OffsetsForLeaderEpoch(epoch {self.last_epochs[key]}) -> end offset "
                                 f"{end} < position {position}: the log was truncated; seek to {end}")
        self._poll()

    def view(self):
        return {"type": "consumer", "running": self.running, "positions": dict(self.positions),
                "read": len(self.consumed), "error": self.error}
