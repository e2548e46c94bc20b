"""Producers and consumers (§6 client facts, §10, §12 client table).

A producer assigns every record a unique id ``"<name>-<n>"``, partitions it (keyed: murmur2 as
the Java client; unkeyed: round-robin up to 2.3, the sticky partitioner of KIP-480 from 2.4),
and sends one Produce per broker with one batch per partition, at most
``max.in.flight.requests.per.connection`` at a time. Errors are retried per the era's ``retries``
(0 up to 2.0; unbounded within ``delivery.timeout.ms`` from 2.1) after ``retry.backoff.ms``, and
NOT_LEADER / network errors refresh metadata first. A consumer reads every assigned partition
from its leader up to the high watermark, or — with ``client.rack`` and a rack-aware leader
(KIP-392, ``read_replica``) — from a follower of its rack up to that follower's.

The pieces live along the Java client's seams: ``network_client`` (metadata, reconnect backoff),
``partitioner``, ``sender`` and ``consumer_fetcher``. ``Producer``, ``Consumer``, ``Record`` and
``Batch`` stay defined here: snapshots pickle them by this module path.
"""
from engine.clients.consumer_fetcher import ConsumerFetcher
from engine.clients.idempotence import IdempotentProducer
from engine.clients.network_client import DISCONNECTS, ClientBase  # noqa: F401
from engine.clients.partitioner import Partitioner, key_partition, murmur2  # noqa: F401
from engine.clients.read_replica import PreferredReadReplica
from engine.clients.sender import BATCH_RECORDS, REFRESH_METADATA, RETRIABLE, Sender  # noqa: F401


class Record:
    __slots__ = ("id", "producer", "topic", "partition", "key", "value", "acks", "status", "error",
                 "offset", "sent_ms", "acked_ms", "lost", "leader_epoch", "batch_seq", "batch_count",
                 "attempts", "producer_id", "producer_epoch")

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
        self.producer_id = None      # the idempotent batch's producer id and epoch (engine 1.5.0)
        self.producer_epoch = None

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
    __slots__ = ("key", "records", "acks", "created_ms", "attempts", "seq", "ready_ms", "in_flight",
                 "producer_id", "producer_epoch", "seq_reset")

    def __init__(self, key, acks, created_ms):
        self.key = key
        self.records = []
        self.acks = acks
        self.created_ms = created_ms
        self.attempts = 0
        self.seq = None
        self.ready_ms = created_ms
        self.in_flight = False
        # idempotence under engine 1.5.0 (engine/clients/idempotence.py): the id and epoch the
        # sequence belongs to; seq_reset is ProducerBatch.sequenceHasBeenReset
        self.producer_id = None
        self.producer_epoch = None
        self.seq_reset = False


def acks_value(acks):
    return {"all": -1, "-1": -1, -1: -1, "1": 1, 1: 1, "0": 0, 0: 0}[acks]


ACKS_LABELS = {-1: "all", 1: "1", 0: "0"}


def acks_label(acks):
    return ACKS_LABELS[acks]


class Producer(Partitioner, Sender, IdempotentProducer, ClientBase):
    #: whether unkeyed records use the sticky partitioner (``_sticky``), set on first use; a
    #: class default: older snapshots lack the attribute
    _sticky_partitioner = None
    #: the request-time sensor behind request-latency-avg (engine.metrics.sensors), made on the
    #: first response; a class default: older snapshots lack the attribute
    request_time = None
    #: engine 1.5.0's idempotent producer (producer ids and epochs); False for older snapshots
    idempotence_1_5 = False

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
        # RecordAccumulator's lingerMs (engine 1.5.0: 5 by default in 4.1, KIP-1030); older
        # engines sent every batch at once whatever the key said
        self.linger_ms = config["linger.ms"] if sim.rules_1_5 else 0
        if sim.rules_1_5 and self.delivery_timeout_ms is not None \
                and "delivery.timeout.ms" not in spec.get("config", {}) \
                and "delivery.timeout.ms" not in sim.scenario["config"]:
            # KafkaProducer.configureDeliveryTimeout @ 2.1.0 - 4.1.0: a default below linger.ms
            # + request.timeout.ms is raised to that sum, linger.ms 0 included (an explicit one
            # is a ConfigException)
            self.delivery_timeout_ms = max(self.delivery_timeout_ms,
                                           self.linger_ms + config["request.timeout.ms"])
        self.rng = sim.streams.fork(f"producer/{name}")
        self.handlers = {}
        #: engine 1.5.0: producer id, epoch and per-partition sequences (idempotence.py)
        self.idempotence_1_5 = self.idempotent and sim.rules_1_5
        if self.idempotence_1_5:
            self.init_idempotence(sim)
            if "retries" not in spec.get("config", {}) and "retries" not in sim.scenario["config"]:
                # KafkaProducer.configureRetries @ 1.1.1 - 2.0.1: an idempotent producer whose
                # retries were not set retries Integer.MAX_VALUE times (2.1+: the default)
                self.retries = 2147483647

    def start(self, _=None):
        if self.running:
            return
        self.running = True
        self._idle_until = None
        self.refresh_metadata()
        self.start_metadata_refresh()
        rate = self.spec.get("rate_per_s") or 0
        if rate > 0 and self.topic:
            self._steady_index = 0
            self._steady_start = self.scheduler.now_ms
            self._tick_steady(None)

    def stop(self):
        self.running = False
        self._idle_until = None

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
        start = self._steady_start
        topic, acks = self.topic, self.acks
        while start + (self._steady_index * 1000) // rate <= now:
            self.send_record(topic, None, None, None, acks)
            self._steady_index += 1
        due = start + (self._steady_index * 1000) // rate
        self.set_timer(due - now, self._tick_steady)

    # -- the application's send() ------------------------------------------------------------------
    def send_record(self, topic, partition, key, value, acks):
        """KafkaProducer.send(): create the record, partition it, hand it to the sender."""
        rid = f"{self.name}-{self.next_id}"
        self.next_id += 1
        record = Record(rid, self.name, topic, ACKS_LABELS[acks], self.scheduler.now_ms, key, value)
        record.partition = partition
        self.sim.records[rid] = record   # Simulation.register_record, inlined (once per record)
        if topic in self.topic_partitions:
            self._append(record, acks, True)
        else:
            # waitOnMetadata: requestUpdateForTopic and sender.wakeup() - its poll returns
            if self.sim.rules_1_3:
                self._poll_returned()
            self.unassigned.append((record, acks))
            self.refresh_metadata()
        return record

    def _open_batch(self, key, acks):
        """The partition's last batch, if the record can join it: not sent yet, room left, and
        the same acks."""
        queue = self.queues.get(key)
        if queue:
            last = queue[-1]
            if not last.in_flight and last.attempts == 0 and len(last.records) < BATCH_RECORDS \
                    and last.acks == acks:
                return last
        return None

    def _append(self, record, acks, sent=False):
        """``sent``: called by send() (not for a record that waited for metadata)."""
        topic = record.topic
        keys = self.sim._keys   # Simulation.key without the call, for the unkeyed hot path
        if record.partition is None and record.key is None:
            # _choose_partition for an unkeyed record, inlined with _sticky asked once: this
            # runs for every record of a steady load
            available = self.available.get(topic)
            if available is None:
                available = self._available(topic)
            sticky = self._sticky_partitioner
            if sticky is None:   # fixed for the producer's life: asked once
                sticky = self._sticky_partitioner = self._sticky()
            if sticky:
                part = self.sticky.get(topic)
                if part is None or part not in available:
                    part = self._new_sticky(topic, None, available)
            else:
                self.round_robin += 1
                part = available[(self.round_robin - 1) % len(available)]
            key = keys.get((topic, part)) or self.sim.key(topic, part)
            # _open_batch, inlined for the first look (every record takes it)
            queue = self.queues.get(key)
            batch = None
            if queue:
                last = queue[-1]
                if not last.in_flight and last.attempts == 0 and len(last.records) < BATCH_RECORDS \
                        and last.acks == acks:
                    batch = last
            if batch is None and sticky:
                # onNewBatch: the sticky partition moves on whenever it would need a new batch.
                part = self._new_sticky(topic, part, available)
                key = keys.get((topic, part)) or self.sim.key(topic, part)
                batch = self._open_batch(key, acks)
        else:
            part = self._choose_partition(record)
            key = self.sim.key(topic, part)
            batch = self._open_batch(key, acks)
        record.partition = part
        wakes = sent
        if batch is None:
            batch = Batch(key, acks, self.scheduler.now_ms)
            self.queues.setdefault(key, []).append(batch)
            self.ready_keys[key] = None
            self._idle_until = None
        elif sent and self.sim.rules_1_3:
            # KafkaProducer.doSend wakes the Sender only for a new batch or when batchIsFull:
            # RecordAccumulator.append's "deque.size() > 1 || last.isFull()" (0.10.2.2 - 4.1.0;
            # the deque holds the partition's batches not in flight); engine 1.2.0 took every
            # send() as a return of the Sender's poll
            wakes = len(batch.records) + 1 >= BATCH_RECORDS
            if not wakes:
                unsent = 0
                for queued in self.queues[key]:
                    if not queued.in_flight:
                        unsent += 1
                        if unsent > 1:
                            wakes = True
                            break
        batch.records.append(record)
        if self.linger_ms and len(batch.records) >= BATCH_RECORDS:
            self._idle_until = None   # a lingering batch filled up: sendable now
        if wakes:
            self._poll_returned()   # sender.wakeup(): its poll returns
        self._send_ready()

    def idle_poll_ms(self):
        """An idle Sender's poll blocks up to request.timeout.ms (NetworkClient.poll caps the
        selector's timeout at defaultRequestTimeoutMs); its own timers and send() wake it sooner."""
        return self.config["request.timeout.ms"]

    def wanted_topics(self):
        """KafkaProducer.waitOnMetadata: send() waits (and asks) for the topics it has records for.
        From 2.3 (Metadata.handleMetadataResponse) also every topic the producer has sent to: an
        unknown topic or a leaderless partition of one asks again after retry.backoff.ms."""
        wanted = {record.topic: None for record, _acks in self.unassigned}
        if self.sim.rules_1_3 and self.sim.era.metadata_errors_request_update:
            split = self.sim.split_key
            for key in self.queues:   # every partition the producer has had a batch for
                wanted[split(key)[0]] = None
        return wanted

    def on_metadata_updated(self):
        self._idle_until = None   # leaders may have moved
        self.available = {}
        if self.unassigned:
            waiting, self.unassigned = self.unassigned, []
            for record, acks in waiting:
                if record.topic in self.topic_partitions:
                    self._append(record, acks)
                else:
                    self.unassigned.append((record, acks))
        self._send_ready()

    def view(self):
        queued = sum(len(b.records) for q in self.queues.values() for b in q)
        return {"type": "producer", "running": self.running, "sent": self.next_id, "queued": queued,
                "in_flight": dict((str(k), v) for k, v in self.in_flight.items())}


class Consumer(ConsumerFetcher, PreferredReadReplica, ClientBase):
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
        self.init_read_replicas(config)

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
        """The assigned partitions whose fetches go to ``node``: its leader's, or with a rack the
        broker ``read_target`` picks (not cached then: a preferred replica expires with time)."""
        if self.rack is not None:
            now = self.scheduler.now_ms
            return [key for key in self.assigned()
                    if self.read_target(key, self.leaders.get(key, (-1, -1))[0], now) == node]
        by_node = self.by_node
        if by_node is None:
            by_node = self.by_node = {}
            for key in self.assigned():
                by_node.setdefault(self.leaders.get(key, (-1, -1))[0], []).append(key)
        return by_node.get(node, ())

    def wanted_topics(self):
        return (self.topic,)

    def on_metadata_updated(self):
        self.by_node = None
        if self.rack is not None:
            self.clear_read_replicas_on_new_leader()
        start = self.spec.get("from")
        for key in self.assigned():
            if key not in self.positions and key not in self.resetting:
                if isinstance(start, int):
                    self.positions[key] = start
                else:
                    self._reset(key, start or self.config["auto.offset.reset"])
        self._poll()

    def view(self):
        out = {"type": "consumer", "running": self.running, "positions": dict(self.positions),
               "read": len(self.consumed), "error": self.error}
        if self.rack is not None:   # follower fetching (docs/model.md §21.8): where each is read
            out["rack"] = self.rack
            out["reads"] = self.read_replicas_view()
        return out
