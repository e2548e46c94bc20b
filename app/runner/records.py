"""Records as a room's viewers see them: outcomes counted as they settle, acknowledged records
the current leader's log no longer holds (lost so far), the ledger of the newest records and
its filtered pages, and what a producer really does (the acks its records were sent with).

Everything here reads the simulation and never changes it.
"""
from itertools import islice

from .registration import partition_registration

LEDGER_SIZE = 30         # newest records in the ledger
LOST_LIST = 100          # newest lost record ids listed
LEDGER_PAGE = 50         # rows in one page of the ledger asked for by a viewer
LEDGER_SCAN = 50000      # newest records a ledger query looks through (bounds its cost)
INT_MAX = 2147483647     # Integer.MAX_VALUE, the producer's default retries since 2.1


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
        registration = partition_registration(self.sim, key)
        if registration is None:
            return None
        broker = self.sim.brokers.get(registration[1])
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
