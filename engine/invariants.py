"""Invariants checked as the state changes, reported as ``violations`` (never as exceptions).

Each check runs at the moment the relevant state changes (an HW move, a state-znode write, a new
leader, a truncation), which is "after every step" without rescanning the cluster per event.
Names follow the docs/scenario-format.md §5; background in docs/model.md §13 and §15.3. In eras and
settings where Kafka really loses data, these checks report the loss — they never prevent it.
"""
from engine.server.leader import SERVING_STATES


class Invariants:
    def __init__(self, sim):
        self.sim = sim
        self.acked = {}            # key -> [Record] acknowledged (acks=1 or all)
        self.consumed = {}         # key -> {offset: {record id: consumer}}
        self.reported_lost = set()
        self.reported_read = set()
        self.reported_divergence = set()
        self.znode_state = {}      # state path -> (leader_epoch, zk version)
        self.controller_epoch = 0
        self.terms = {}            # (broker, incarnation, key) -> [leader_epoch, hw]
        self.verified = {}         # (broker, key) -> offset below which divergence was checked

    def violation(self, invariant, key, detail, records=()):
        topic, part = self.sim.split_key(key) if key else (None, None)
        entry = {"invariant": invariant, "t_ms": self.sim.now_ms, "topic": topic,
                 "partition": part, "detail": detail, "records": list(records)}
        self.sim.violations.append(entry)
        self.sim.emit("violation", topic=topic, partition=part, invariant=invariant,
                      records=list(records)[:50], reason=detail)

    # -- ZooKeeper writes: leader_not_in_isr, epoch_decreased ----------------------------------------
    def on_znode_write(self, path, data, version):
        if path == "/controller_epoch":
            if isinstance(data, int) and data < self.controller_epoch:
                self.violation("epoch_decreased", None,
                               f"/controller_epoch went from {self.controller_epoch} to {data}")
            self.controller_epoch = max(self.controller_epoch, data if isinstance(data, int) else 0)
            return
        if not path.endswith("/state") or not path.startswith("/brokers/topics/"):
            return
        key = self.sim.key_of_state_path(path)
        leader, epoch, isr = data["leader"], data["leader_epoch"], data["isr"]
        if leader != -1 and leader not in isr:
            self.violation("leader_not_in_isr", key, f"{path} names leader {leader} but ISR {isr}")
        previous = self.znode_state.get(path)
        if previous is not None:
            old_epoch, old_version = previous
            if epoch < old_epoch:
                self.violation("epoch_decreased", key,
                               f"leader epoch went from {old_epoch} to {epoch} in {path}")
            if version <= old_version:
                self.violation("epoch_decreased", key,
                               f"zkVersion went from {old_version} to {version} in {path}")
        self.znode_state[path] = (epoch, version)

    def on_partition_state(self, topic, partition, reg):
        """KRaft eras (docs/model.md §20.10): the committed partition registration."""
        key = self.sim.key(topic, partition)
        if reg["leader"] != -1 and reg["leader"] not in reg["isr"]:
            self.violation("leader_not_in_isr", key,
                           f"the metadata log names leader {reg['leader']} but ISR {reg['isr']}")
        previous = self.znode_state.get(key)
        if previous is not None and (reg["leader_epoch"] < previous[0]
                                     or reg["partition_epoch"] <= previous[1]):
            self.violation("epoch_decreased", key,
                           f"leader/partition epoch went from {previous} to "
                           f"{(reg['leader_epoch'], reg['partition_epoch'])} in the metadata log")
        self.znode_state[key] = (reg["leader_epoch"], reg["partition_epoch"])

    # -- high watermarks: hw_above_leo, leader_hw_decreased, replica_divergence --------------------
    def on_leader_hw(self, broker, part, old_hw, new_hw):
        key = part.key
        # A term is one process leading in one epoch: a broker restarted after a power failure
        # can lead again in the *same* epoch (the controller re-sends the unchanged state) with a
        # shorter log; that HW drop is the data loss itself (acked_record_lost), not this rule.
        term_key = (broker.node_id, broker.incarnation, key)
        terms = self.terms
        term = terms[term_key] if term_key in terms else None
        if term is not None and term[0] == part.leader_epoch and new_hw < term[1]:
            self.violation("leader_hw_decreased", key,
                           f"leader {broker.node_id} HW went from {term[1]} to {new_hw} in epoch "
                           f"{part.leader_epoch}")
        self.terms[term_key] = [part.leader_epoch, new_hw]
        self.on_hw(broker, key, part.log)

    @staticmethod
    def reconciled(broker, key):
        """A replica's HW is a claim about committed data only once it acts in the current
        epoch: as leader, or as a follower that finished reconciling its log (a restarted
        replica still holding a stale checkpointed HW is not yet compared)."""
        if not broker.running:
            return False
        part = broker.partitions.get(key)
        return part is not None and part.reconciled

    def on_hw(self, broker, key, log):
        hi = log.hw
        if hi > log.leo:
            self.violation("hw_above_leo", key,
                           f"broker {broker.node_id} has HW {log.hw} > LEO {log.leo}")
        if broker.state not in SERVING_STATES:  # not broker.running, without the property call
            return
        partitions = broker.partitions
        if key not in partitions or not partitions[key].reconciled:
            return
        mark = (broker.node_id, key)
        verified = self.verified
        lo = verified[mark] if mark in verified else 0
        if hi <= lo:
            if hi < lo:
                verified[mark] = hi
            return
        records = log.records
        base = log.log_start_offset
        for other in self.sim.brokers.values():
            # reconciled(other, key), inlined (this runs on every HW move of every replica), with
            # the cheap tests first: most brokers hold no replica of the partition, and most peers
            # have nothing new below both HWs (a leader's HW runs ahead of its followers')
            opartitions = other.partitions
            if key not in opartitions or other is broker:
                continue
            olog = other.logs[key]
            end = olog.hw
            if end > hi:
                end = hi
            if end <= lo or not opartitions[key].reconciled or other.state not in SERVING_STATES:
                continue
            # _compare's common outcome, inlined: the same records over the range
            start = lo  # max(lo, both log start offsets)
            if base > start:
                start = base
            obase = olog.log_start_offset
            if obase > start:
                start = obase
            if start >= end:
                continue
            if end - start == 1:  # the usual one-record step: no slices to build and compare
                if records[start - base] == olog.records[start - obase]:
                    continue
            elif records[start - base:end - base] == olog.records[start - obase:end - obase]:
                continue
            self._compare(key, broker.node_id, log, other.node_id, olog, lo, end)
        verified[mark] = hi

    def _compare(self, key, a_id, a, b_id, b, lo, hi):
        start = max(lo, a.log_start_offset, b.log_start_offset)
        if start >= hi:
            return
        ra = a.records[start - a.log_start_offset:hi - a.log_start_offset]
        rb = b.records[start - b.log_start_offset:hi - b.log_start_offset]
        if ra == rb:
            return
        for i, (x, y) in enumerate(zip(ra, rb)):
            if x[1] != y[1]:
                offset = start + i
                if (key, offset) not in self.reported_divergence:
                    self.reported_divergence.add((key, offset))
                    self.violation("replica_divergence", key,
                                   f"offset {offset} holds {x[1]} (epoch {x[0]}) on broker {a_id} but "
                                   f"{y[1]} (epoch {y[0]}) on broker {b_id}, below both HWs "
                                   f"({a.hw}, {b.hw})", [x[1], y[1]])
                return

    def on_log_reconciled(self, broker, key, log):
        """A replica that starts acting in a new epoch (a new leader, a follower done
        truncating) is compared afresh over its whole committed range."""
        self.verified.pop((broker.node_id, key), None)
        self.on_hw(broker, key, log)

    def on_truncated(self, broker, key):
        log = broker.logs[key]
        mark = self.verified.get((broker.node_id, key))
        if mark is not None and mark > log.leo:
            self.verified[(broker.node_id, key)] = log.leo
        self.check_records(key)

    # -- records: acked_record_lost, consumer_read_lost_record ---------------------------------------
    def on_acked(self, record):
        key = self.sim.key(record.topic, record.partition)
        acked = self.acked
        if key in acked:  # setdefault(key, []).append(record), without a list per call
            acked[key].append(record)
        else:
            acked[key] = [record]

    def on_acked_records(self, key, records):
        """``on_acked`` for a produce batch: its records, in order, all of partition ``key``."""
        acked = self.acked
        if key in acked:
            acked[key].extend(records)
        else:
            acked[key] = list(records)

    def on_consumed(self, consumer, key, offset, record_id):
        # three setdefault()s, without building two empty dicts per record read
        by_offset = self.consumed.get(key)
        if by_offset is None:
            by_offset = self.consumed[key] = {}
        readers = by_offset.get(offset)
        if readers is None:
            by_offset[offset] = {record_id: consumer}
        elif record_id not in readers:
            readers[record_id] = consumer

    def on_consumed_records(self, consumer, key, offset, records):
        """``on_consumed`` for each of ``records`` ((epoch, id) pairs from ``offset`` on), with
        the partition's map looked up once."""
        consumed = self.consumed
        if key in consumed:
            by_offset = consumed[key]
        else:
            by_offset = consumed[key] = {}
        for i, (_epoch, record_id) in enumerate(records, offset):
            if i not in by_offset:
                by_offset[i] = {record_id: consumer}
            else:
                readers = by_offset[i]
                if record_id not in readers:
                    readers[record_id] = consumer

    def leader_log(self, key):
        """The log of the partition's current leader per ZooKeeper, if that broker is up and
        acting as leader; None while the partition is offline or mid-election."""
        quorum = self.sim.quorum
        if quorum is not None:  # KRaft eras: the committed metadata log says who leads
            reg = quorum.image.partitions.get(self.sim.split_key(key))
            leader = reg["leader"] if reg is not None else None
        else:
            state = self.sim.zk_server.tree.nodes.get(self.sim.state_path(key))
            leader = state.data["leader"] if state is not None else None
        if leader is None:
            return None
        broker = self.sim.brokers.get(leader)
        if broker is None or not broker.running:
            return None
        part = broker.partitions.get(key)
        if part is None or not part.is_leader:
            return None
        return part.log

    def check_records(self, key, log=None, cause=None):
        log = log if log is not None else self.leader_log(key)
        if log is None:
            return
        lost = []
        # log.record_at(offset), inlined in both loops: they visit every record of the partition
        records, start, n = log.records, log.log_start_offset, len(log.records)
        reported_lost = self.reported_lost
        for record in self.acked.get(key, ()):
            if record.acks != "all" or record.id in reported_lost:
                continue
            i = record.offset - start
            if not 0 <= i < n or records[i][1] != record.id:
                lost.append(record)
        if lost:
            for record in lost:
                self.reported_lost.add(record.id)
            first = lost[0]
            entry = log.record_at(first.offset)
            self.violation("acked_record_lost", key,
                           f"{len(lost)} record(s) acknowledged with acks=all are not in the "
                           f"leader's log (e.g. {first.id} acked at offset {first.offset} at "
                           f"{first.acked_ms} ms; the leader has "
                           f"{entry[1] if entry else 'nothing'} there, LEO {log.leo})"
                           + (f"; {cause}" if cause else ""), [r.id for r in lost])
        read_lost = []
        for offset, readers in self.consumed.get(key, {}).items():
            i = offset - start
            entry = records[i] if 0 <= i < n else None
            for rid, consumer in readers.items():
                if (entry is None or entry[1] != rid) and rid not in self.reported_read:
                    self.reported_read.add(rid)
                    read_lost.append((rid, consumer, offset))
        if read_lost:
            rid, consumer, offset = read_lost[0]
            self.violation("consumer_read_lost_record", key,
                           f"{len(read_lost)} record(s) read by consumers are gone from the leader's "
                           f"log (e.g. {consumer} read {rid} at offset {offset})",
                           [r[0] for r in read_lost])

    def finalize(self):
        """At the end: mark every acknowledged record that is in no live leader's log as lost
        (an offline partition's record counts as lost only if no replica holds it at all)."""
        for key, records in self.acked.items():
            log = self.leader_log(key)
            if log is not None:
                self.check_records(key, log, "at the end of the run")
                entries, start, n = log.records, log.log_start_offset, len(log.records)
                for record in records:
                    i = record.offset - start  # log.record_at(record.offset), inlined
                    record.lost = not 0 <= i < n or entries[i][1] != record.id
                continue
            logs = [b.logs[key] for b in self.sim.brokers.values() if key in b.logs]
            for record in records:
                record.lost = not any((lg.record_at(record.offset) or (0, None))[1] == record.id
                                      for lg in logs)
                if record.lost and record.acks == "all" and record.id not in self.reported_lost:
                    self.reported_lost.add(record.id)
                    self.violation("acked_record_lost", key,
                                   f"{record.id} (acks=all, offset {record.offset}) is on no replica "
                                   f"at the end of the run", [record.id])
