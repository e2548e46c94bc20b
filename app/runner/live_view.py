"""What a room's viewers see, as a flat map of entities (``"b:1"``, ``"p:orders-0"``, ``"z:/controller"``).

This is ``engine.view.cluster_view`` cut into pieces that can be diffed one by one, with two
parts made incremental because the engine's versions walk every record on each call (fine for
one result, too slow 30 times a second on a long run):

* ``RecordDigest``: record outcomes counted as they settle, instead of ``records_summary``'s
  pass over every record; it also notices acknowledged records (acks=1 as well as acks=all)
  that are no longer in the current leader's log, i.e. lost so far.
* ``MessageTap``: every message sent since the last frame, from the network's observer hook; the
  view's in-flight list only shows messages that happen to be on the wire at frame time, and with
  a 1 ms link that is almost never.

Everything here reads the simulation and never changes it.
"""
from collections import deque
from itertools import islice

from .refresh import PartitionRefresh
from engine.view import broker_view, links_view, partition_view, zk_view

LOG_TAIL = 12            # record ids per replica sent each frame (the detail view asks for more)
LEDGER_SIZE = 30         # newest records in the ledger
LOST_LIST = 100          # newest lost record ids listed
LEDGER_PAGE = 50         # rows in one page of the ledger asked for by a viewer
LEDGER_SCAN = 50000      # newest records a ledger query looks through (bounds its cost)
INT_MAX = 2147483647     # Integer.MAX_VALUE, the producer's default retries since 2.1
MESSAGES_PER_FRAME = 120


# -- messages --------------------------------------------------------------------------------------
class MessageTap:
    """The network observer: remembers what was sent or dropped since the last drain.

    It lives inside the simulation (``sim.network.observer``), so it must survive a snapshot:
    pickling keeps no messages and a restored simulation gets a fresh, detached tap.
    """
    __slots__ = ("sent",)

    def __init__(self):
        self.sent = deque(maxlen=4096)

    def __call__(self, kind, env):
        if kind == "deliver" or env.source == env.target:
            return  # deliveries are implied; a broker talking to itself has nothing to draw
        label = env.type
        if label.startswith("Zk") and isinstance(env.body, dict) and env.body.get("op"):
            label = f"{label}:{env.body['op']}"
        self.sent.append((env.id, env.source, env.target, label, env.sent_at_ms, env.deliver_at_ms,
                          1 if kind == "drop" else 0))

    def drain(self):
        out = list(self.sent)
        self.sent.clear()
        return out

    def __reduce__(self):
        return (MessageTap, ())


_PRIORITY = {"LeaderAndIsr": 0, "UpdateMetadata": 0, "StopReplica": 0, "ControlledShutdown": 0,
             "OffsetsForLeaderEpoch": 1, "Produce": 2, "Metadata": 3, "ListOffsets": 3, "Fetch": 4}


def _priority(msg):
    label = msg[3]
    base = label[:-8] if label.endswith("Response") else label
    if msg[6]:
        return -1  # drops show a fault at work
    if base.startswith("Zk"):
        return 5 if base.endswith(":ping") or base == "ZkWatchEvent" else 1
    return _PRIORITY.get(base, 3)


def sample_messages(messages, limit=MESSAGES_PER_FRAME):
    """At most ``limit`` messages, the rarer kinds first (control requests, drops, ZooKeeper writes),
    in sending order. Returns (kept, skipped count)."""
    if len(messages) <= limit:
        return messages, 0
    ranked = sorted(range(len(messages)), key=lambda i: (_priority(messages[i]), i))[:limit]
    ranked.sort()
    return [messages[i] for i in ranked], len(messages) - limit


# -- records -----------------------------------------------------------------------------------------
LOSS_EVENTS = frozenset(("truncation", "become_leader", "leader_elected", "partition_offline"))


class RecordDigest:
    """Record outcomes by status, error and producer, updated from the records that settled since
    the last call; plus acknowledged records that the current leader's log no longer holds."""

    def __init__(self, sim):
        self.sim = sim
        self.seen = 0
        self.pending = []
        self.counts = {"acked": 0, "failed": 0, "unacknowledged": 0}
        self.errors = {}
        self.by_producer = {}
        self.acks_sent = {}         # producer -> {acks label}: what its records really asked for
        self.acked_by_key = {}      # key -> [Record] in ack order
        self.checked = {}           # key -> how many of acked_by_key[key] were compared
        self.lost_by_key = {}       # key -> {record id} not in the leader's log at the last check
        self.lost_version = 0
        self.finalized = False
        self._pending_scan_at = 0
        self._lost_cache = (None, 0, [], {}, set())

    def _producer(self, name):
        entry = self.by_producer.get(name)
        if entry is None:
            entry = self.by_producer[name] = {"acked": 0, "failed": 0, "unacknowledged": 0}
        return entry

    def update(self, frame_no, dirty_keys=()):
        sim = self.sim
        records = sim.records
        n = len(records)
        if n > self.seen:
            fresh = list(islice(reversed(records.values()), n - self.seen))
            fresh.reverse()
            self.seen = n
            for record in fresh:
                self.acks_sent.setdefault(record.producer, set()).add(record.acks)
            self.pending.extend(fresh)
        # a long outage can leave many records pending: rescan those at most every 8th frame
        if len(self.pending) < 4000 or frame_no >= self._pending_scan_at:
            self._pending_scan_at = frame_no + 8
            still = []
            for record in self.pending:
                status = record.status
                if status == "pending":
                    still.append(record)
                    continue
                self.counts[status] = self.counts.get(status, 0) + 1
                self._producer(record.producer)[status] += 1
                if status == "failed" and record.error:
                    self.errors[record.error] = self.errors.get(record.error, 0) + 1
                elif status == "acked":
                    key = sim.key(record.topic, record.partition)
                    self.acked_by_key.setdefault(key, []).append(record)
            self.pending = still
        for key in dirty_keys:
            self.checked[key] = 0
        for key, acked in self.acked_by_key.items():
            start = self.checked.get(key, 0)
            if start < len(acked):
                self._check(key, acked, start)

    def _leader_log(self, key):
        node = self.sim.zk_server.tree.nodes.get(self.sim.state_path(key))
        if node is None:
            return None
        broker = self.sim.brokers.get(node.data["leader"])
        if broker is None or not broker.running:
            return None
        part = broker.partitions.get(key)
        return part.log if part is not None and part.is_leader else None

    def _check(self, key, acked, start):
        log = self._leader_log(key)
        if log is None:
            return  # offline: nothing to compare with yet (the end of the run decides)
        before = self.lost_by_key.get(key, frozenset())
        lost = set() if start == 0 else set(before)
        for record in islice(acked, start, None):
            entry = log.record_at(record.offset)
            if entry is None or entry[1] != record.id:
                lost.add(record.id)
        if lost != before:
            self.lost_version += 1
        self.lost_by_key[key] = lost
        self.checked[key] = len(acked)

    def finalize(self):
        """At the end of the run the engine has marked every lost record (acks=1 included)."""
        if self.finalized:
            return
        self.update(1 << 60)
        self.finalized = True
        for key, acked in self.acked_by_key.items():
            self.lost_by_key[key] = {r.id for r in acked if r.lost}
        self.lost_version += 1

    def lost_ids(self):
        out = set(self.sim.invariants.reported_lost)
        for ids in self.lost_by_key.values():
            out |= ids
        return out

    def _lost_parts(self):
        version = (self.lost_version, len(self.sim.invariants.reported_lost))
        if self._lost_cache[0] != version:
            lost = self.lost_ids()
            per = {}
            for rid in lost:
                name = rid.rpartition("-")[0]
                per[name] = per.get(name, 0) + 1
            newest = sorted(lost, key=_record_order)[-LOST_LIST:]
            self._lost_cache = (version, len(lost), newest, per, lost)
        return self._lost_cache

    def summary(self):
        _v, count, newest, per, _ids = self._lost_parts()
        by_producer = {}
        for name, entry in self.by_producer.items():
            by_producer[name] = {**entry, "lost": per.get(name, 0)}
        return {**self.counts, "pending": len(self.pending), "total": self.seen,
                "errors": dict(self.errors), "lost": count,
                "lost_acks_all": len(self.sim.invariants.reported_lost),
                "by_producer": by_producer, "lost_ids": newest}

    def ledger(self, limit=LEDGER_SIZE):
        lost = self._lost_parts()[4]
        out = [_ledger_row(r, lost) for r in islice(reversed(self.sim.records.values()), limit)]
        out.reverse()
        return out

    def ledger_page(self, status=None, producer=None, partition=None, error=None, page=0):
        """One page (newest first) of the records that pass the filters, among the newest
        LEDGER_SCAN records: ``status`` is acked, failed, pending, unacknowledged or lost;
        ``partition`` is a "topic-N" key. Returns (rows, matched, scanned)."""
        lost = self._lost_parts()[4]
        rows, matched, scanned = [], 0, 0
        first = page * LEDGER_PAGE
        for r in islice(reversed(self.sim.records.values()), LEDGER_SCAN):
            scanned += 1
            is_lost = bool(r.lost or r.id in lost)
            if status == "lost":
                if not is_lost:
                    continue
            elif status is not None and r.status != status:
                continue
            if producer is not None and r.producer != producer:
                continue
            if error is not None and r.error != error:
                continue
            if partition is not None and (r.partition is None or f"{r.topic}-{r.partition}" != partition):
                continue
            if first <= matched < first + LEDGER_PAGE:
                rows.append(_ledger_row(r, lost))
            matched += 1
        return rows, matched, scanned


def _ledger_row(r, lost):
    return [r.id, r.producer, r.topic, r.partition, r.acks, r.status, r.error, r.offset,
            r.sent_ms, r.acked_ms, bool(r.lost or r.id in lost)]


def producer_settings(client, acks_sent):
    """What a producer really does: the acks its records were sent with (a console send picks
    its own acks, so the config's acks alone would misreport it) and the settings that decide
    whether a failed batch is retried, reordered or duplicated."""
    config_acks = {-1: "all", 1: "1", 0: "0"}.get(getattr(client, "acks", None), "1")
    sent = sorted(acks_sent or (), key=("all", "1", "0").index)
    retries = getattr(client, "retries", None)
    return {"acks": "/".join(sent) if sent else config_acks, "acks_config": config_acks,
            "idempotence": bool(getattr(client, "idempotent", False)),
            "retries": str(retries) if retries is not None else None,   # a string: no precision lost
            "retries_max": retries == INT_MAX,
            "max_in_flight": getattr(client, "max_in_flight", None),
            "delivery_timeout_ms": getattr(client, "delivery_timeout_ms", None)}


def _record_order(rid):
    name, _, n = rid.rpartition("-")
    return (name, int(n) if n.isdigit() else 0)


# -- partitions ----------------------------------------------------------------------------------------
def partition_entity(sim, key, tail=LOG_TAIL):
    """One partition as ``engine.view.partition_view`` draws it (same fields and meanings), with
    the newest ``tail`` record ids as ``[first offset, [ids]]`` (the epochs are in the runs) and
    ``lag`` always present (None where the leader tracks no lag)."""
    view = partition_view(sim, key, 0)
    view["replicas"] = list(view["replicas"])
    for entry in view["replica_state"]:
        entry.setdefault("lag", None)
        log = sim.brokers[entry["broker"]].logs.get(key)
        if log is None:
            entry["tail"] = [0, []]
            continue
        first = max(log.log_start_offset, log.leo - tail)
        entry["tail"] = [first, [rid for _e, rid in log.read(first, tail)]]
    return view


def partition_detail(sim, key, tail=200):
    """The focused partition with a long tail of ``[offset, epoch, id]`` per replica (inspect)."""
    view = partition_entity(sim, key, tail=0)
    for entry in view["replica_state"]:
        log = sim.brokers[entry["broker"]].logs.get(key)
        entry.pop("tail", None)
        if log is None:
            entry["records"] = []
            continue
        first = max(log.log_start_offset, log.leo - tail)
        entry["records"] = [[first + i, e, rid] for i, (e, rid) in enumerate(log.read(first, tail))]
    return view


# -- the whole picture -------------------------------------------------------------------------------
class LiveView:
    """Entities of one simulation, frame after frame."""

    def __init__(self, sim):
        self.sim = sim
        self.digest = RecordDigest(sim)
        self.tap = MessageTap()
        sim.network.observer = self.tap
        self.frame_no = 0
        self.history_seen = len(sim.history)
        self.violations_seen = 0
        self.refresh = PartitionRefresh()

    def meta(self):
        sim = self.sim
        sc = sim.scenario
        return {"name": sc["name"], "description": sc["description"], "seed": sc["seed"],
                "kafka_version": sc["kafka_version"], "duration_ms": sc["duration_ms"],
                "brokers": list(sim.broker_ids),
                "topics": [{"name": name, "partitions": spec["partitions"],
                            "replication_factor": spec["replication_factor"],
                            "config": dict(sim.topic_configs.get(name, {}))}
                           for name, spec in sim.topics.items()],
                "config": dict(sim.config), "network": dict(sc["network"]),
                "commands": len(sim.commands)}

    def new_history(self):
        """History events since the last call, as (index, event) pairs."""
        history = self.sim.history
        start, end = self.history_seen, len(history)
        self.history_seen = end
        fresh = history[start:end]
        if any(e["type"] == "fault" for e in fresh):
            fresh = [self._with_origin(e) if e["type"] == "fault" else e for e in fresh]
        return start, fresh

    def _with_origin(self, event):
        """A copy of a timeline operation's event saying who asked for it: a live command of a
        viewer ("user") or the scenario's timeline ("scenario"); the page labels them apart."""
        mine = any(c["at_ms"] == event["t_ms"] and c["op"] == event.get("op") for c in self.sim.commands[-200:])
        return {**event, "origin": "user" if mine else "scenario"}

    def new_violations(self):
        v = self.sim.violations
        start, self.violations_seen = self.violations_seen, len(v)
        return v[start:]

    def entities(self, dirty_keys=()):
        sim = self.sim
        self.frame_no += 1
        tree = sim.zk_server.tree
        controller = tree.nodes.get("/controller")
        epoch = tree.nodes.get("/controller_epoch")
        out = {"meta": self.meta(),
               "controller": {"broker": controller.data["brokerid"] if controller else None,
                              "epoch": epoch.data if epoch else 0},
               "links": links_view(sim)}
        for broker in sim.brokers.values():
            out[f"b:{broker.node_id}"] = broker_view(sim, broker)
        keys = [sim.key(topic, p) for topic, spec in sim.topics.items() for p in range(spec["partitions"])]
        drawn = self.refresh.entities(sim, keys, dirty_keys or (), partition_entity)
        for key, entity in drawn.items():
            out["p:" + key] = entity
        for node in zk_view(sim):
            path = node.pop("path")
            out["z:" + path] = node
        for name, client in sim.clients.items():
            view = client.view()
            spec = getattr(client, "spec", {}) or {}
            view["topic"] = spec.get("topic")
            if view["type"] == "producer":
                view.update(producer_settings(client, self.digest.acks_sent.get(name)))
                view["rate_per_s"] = spec.get("rate_per_s") or 0
            else:
                view["isolation_level"] = client.config.get("isolation.level", "read_uncommitted") \
                    if hasattr(client, "config") else None
            out["c:" + name] = view
        if sim.finished and not self.digest.finalized:
            self.digest.finalize()   # the engine settled every record's fate at the end of the run
        else:
            self.digest.update(self.frame_no, dirty_keys)
        out["records"] = self.digest.summary()
        out["ledger"] = self.digest.ledger()
        return out

    def messages(self):
        kept, skipped = sample_messages(self.tap.drain())
        return [list(m) for m in kept], skipped
