"""The leader side of a partition: becoming leader, serving fetches and produces, ISR shrink and
expansion as conditional ZooKeeper writes, the high watermark, and the two purgatories.

A mixin of ``Broker``; every rule it applies is a pure function of ``partition.py``. ISR shrink,
expansion and the high watermark are in ``isr_maintenance``, the purgatories' completion and expiry
in ``purgatory``; ``DelayedOp`` stays here (snapshots pickle it by this module path).
"""
from engine.server.isr_maintenance import IsrMaintenance
from engine.server.partition import NEVER_MS, RemoteReplica, update_fetch_state
from engine.server.producer_log import batches_in_log, entry_in_log
from engine.server.producer_state import check_batch, record_append
from engine.server.purgatory import Purgatory
from engine.server.read_replica import ReadReplicaSelection

#: The states in which a broker serves requests (``Broker.running``; hot handlers test it inline).
SERVING_STATES = ("running", "shutting_down")


class DelayedOp:
    """A parked request in the fetch or produce purgatory (DelayedFetch / DelayedProduce)."""
    __slots__ = ("env", "parts", "done", "follower", "results")

    def __init__(self, env, parts, follower=False, results=None):
        self.env = env
        self.parts = parts   # key -> fetch offset (fetch) or [required_offset, error, pending] (produce)
        self.done = False
        self.follower = follower
        self.results = results  # produce: the per-partition answer being built


class ReplicaLeader(IsrMaintenance, Purgatory, ReadReplicaSelection):
    # -- becoming leader (Partition.makeLeader, §2.2 reset, §1.3) ---------------------------------
    def make_leader(self, part, st):
        now = self.scheduler.now_ms
        was_leader = part.is_leader
        part.is_leader = True
        part.leader_id = self.node_id
        part.leader_epoch = st["leader_epoch"]
        part.controller_epoch = st["controller_epoch"]
        part.zk_version = st["zk_version"]
        part.isr = list(st["isr"])
        part.replicas = list(st["replicas"])
        part.isr_update_failed = False
        if self.era.alter_isr:
            self.alter_isr_reset(part, 0)  # KIP-704: the leader marks itself RECOVERED (§17.6)
        self.remove_fetcher_partition(part.key)
        log = part.log
        if self.era.epoch_entry_on_become_leader:
            log.assign_epoch(part.leader_epoch, log.leo)
        part.epoch_start_offset = log.leo
        remotes = {}
        for rid in part.replicas:
            if rid == self.node_id:
                continue
            remote = part.remotes.get(rid) if was_leader else None
            if remote is None:
                remote = RemoteReplica()
            else:
                remote.last_fetch_leader_leo = log.leo
                remote.last_fetch_time_ms = now
            remote.last_caught_up_ms = now if rid in part.isr else NEVER_MS
            remotes[rid] = remote
        part.remotes = remotes
        part.term_start_hw = log.hw
        part.reconciled = True
        self.producer_state.pop(part.key, None)  # rebuilt from this replica's log when needed
        self.sim.emit("become_leader", topic=part.topic, partition=part.index, broker=self.node_id,
                      leader_epoch=part.leader_epoch, isr=list(part.isr), leo=log.leo, hw=log.hw,
                      reason=f"{self.leadership_source()}: leader in epoch "
                             f"{part.leader_epoch}; HW starts at the local {log.hw} and waits for "
                             f"every ISR member to fetch once")
        self.sim.on_new_leader(self, part)
        self.maybe_increment_hw(part, "became leader")

    # -- produce (§6) ---------------------------------------------------------------------------------
    def on_produce(self, env):
        if self.state not in SERVING_STATES:  # not self.running, without the property call
            self.not_serving(env)
            return
        body = env.body
        acks = body["acks"]
        results = {}
        delayed = {}
        for key, batch in body["partitions"].items():
            part = self.partitions.get(key)
            if part is None or not part.is_leader:
                results[key] = {"error": "NOT_LEADER_OR_FOLLOWER", "base_offset": -1}
                continue
            if acks == -1:   # min.insync.replicas matters to acks=all only
                min_isr = self.effective_min_isr(part)  # admission: the committed ISR (§17.2)
                if len(part.isr) < min_isr:
                    results[key] = {"error": "NOT_ENOUGH_REPLICAS", "base_offset": -1}
                    self.sim.emit("produce_error", topic=part.topic, partition=part.index,
                                  broker=self.node_id, error="NOT_ENOUGH_REPLICAS",
                                  producer=body["producer"], records=batch["ids"],
                                  reason=f"acks=all and ISR {part.isr} has {len(part.isr)} < "
                                         f"min.insync.replicas {min_isr}: rejected before append")
                    continue
            if batch.get("seq") is not None:   # check_sequence answers None without a sequence
                answer = self.check_sequence(part, body["producer"], batch)
                if answer is not None:
                    results[key] = answer
                    if acks == -1 and "duplicate" in answer and self.sim.rules_1_3:
                        # A duplicate still waits for the HW to pass the original batch
                        # (docs/model.md §6); engine 1.2.0 answered it at once.
                        delayed[key] = [answer["base_offset"] + len(batch["ids"]), None, True]
                    continue
            base = self.append_as_leader(part, batch, body["producer"])
            results[key] = {"error": None, "base_offset": base}
            if acks == -1:
                delayed[key] = [base + len(batch["ids"]), None, True]
        if acks == 0:
            return  # acks=0 gets no response at all (§6 step 5)
        if delayed:
            op = DelayedOp(env, delayed, results=results)
            if not self._try_complete_produce(op):
                for key in delayed:
                    self.produce_purgatory.setdefault(key, []).append(op)
                self.set_deadline(body["timeout_ms"], self._expire_produce, op)
            return
        self.reply(env, {"error": None, "partitions": results})

    def append_as_leader(self, part, batch, producer):
        log = part.log
        entry = None
        if "pid" in batch:   # engine 1.5.0: state per producer id, with its epoch (before the append)
            entry = self._producer_entry(part, producer, batch["pid"])
        base = log.append(part.leader_epoch, batch["ids"], self.era.epoch_cache)
        if batch.get("seq") is not None:
            if "pid" in batch:
                self.producer_state[part.key][(producer, batch["pid"])] = record_append(
                    entry, batch["epoch"], batch["seq"], len(batch["ids"]), base)
            else:
                batches = self._producer_batches(part, producer)
                batches.append((batch["seq"], len(batch["ids"]), base))
                del batches[:-5]
        if log.unflushed_since >= self.sim.log_configs[part.topic]["log.flush.interval.messages"]:
            log.flush()
        self.sim.on_append(self, part, base, batch["ids"])
        self._complete_fetches(part.key, True)  # new data: parked follower fetches
        self.maybe_increment_hw(part, ("append at offset %s", base))
        return base

    def check_sequence(self, part, producer, batch):
        """Idempotent producer (0.11+, §6): the leader keeps the last 5 batches per producer; a
        retried batch among them is answered with its original offset, a gap in the sequence is
        OUT_OF_ORDER_SEQUENCE_NUMBER. Returns None when the batch should be appended."""
        seq = batch.get("seq")
        if seq is None:
            return None
        if "pid" in batch:
            # engine 1.5.0: producer ids and epochs (docs/model.md §6, engine/server/producer_state.py)
            return check_batch(self._producer_entry(part, producer, batch["pid"]), batch["epoch"],
                               seq, len(batch["ids"]), self.era, part.log.log_start_offset)
        batches = self._producer_batches(part, producer)
        if not batches:
            return None
        for base_seq, _count, base_offset in batches:
            if base_seq == seq:
                return {"error": None, "base_offset": base_offset, "duplicate": True}
        last_seq, last_count, _ = batches[-1]
        if seq != last_seq + last_count:
            return {"error": "OUT_OF_ORDER_SEQUENCE_NUMBER", "base_offset": -1}
        return None

    def _producer_entry(self, part, producer, producer_id):
        """Engine 1.5.0: this replica's state for one producer id, rebuilt from its own log when
        it has none yet (so it survives failover, as far as the batches survived)."""
        table = self.producer_state.setdefault(part.key, {})
        ident = (producer, producer_id)
        if ident not in table:
            table[ident] = entry_in_log(self.sim.records, part.log, producer, producer_id)
        return table[ident]

    def _producer_batches(self, part, producer):
        """Producer state is rebuilt from the replica's own log (so it survives failover)."""
        table = self.producer_state.setdefault(part.key, {})
        batches = table.get(producer)
        if batches is None:
            batches = table[producer] = batches_in_log(self.sim.records, part.log, producer)
        return batches

    # -- fetch (§7 leader side, §10 consumers) ------------------------------------------------------
    def on_fetch(self, env):
        """Fetch from a follower (replica_id >= 0) or a consumer (-1). The HW put in the answer is
        read *before* the follower's new position is recorded (§5.2); a fetch that finds nothing
        is parked for up to max_wait_ms (DelayedFetch)."""
        if self.state not in SERVING_STATES:  # not self.running, without the property call
            self.not_serving(env)
            return
        body = env.body
        replica_id = body["replica_id"]
        follower = replica_id >= 0
        now = self.scheduler.now_ms
        # KIP-392 (§21.8): a consumer that sends its rack may read from a follower, and its leader
        # may name one; None for every other fetch (and before 2.4)
        rack = body.get("rack_id") if self.era.follower_fetching else None
        unwatched = None   # keys a parked fetch answers but no HW move of theirs completes
        reads = {}   # key -> (error answer,) or (None, hw, leo, start, records, leader epoch)
        fetch_offsets = {}
        ready = False
        max_records = self.sim.max_fetch_records
        partitions = self.partitions
        fencing = self.era.kip320_fencing
        # The hottest handler of a run: locals instead of attribute lookups, no dict.get calls,
        # answers built only when the fetch is answered now (most park), and the cause of an HW
        # move formatted only when the HW moves.
        for key, req in body["partitions"].items():
            part = partitions[key] if key in partitions else None
            if part is None or not part.is_leader:
                if rack is not None and part is not None:
                    answer = self.follower_read(part, req)
                    reads[key] = (answer,)
                    if answer["error"] or answer["records"]:
                        ready = True
                    else:
                        fetch_offsets[key] = req["fetch_offset"]   # parks here until its HW moves
                    continue
                reads[key] = ({"error": "NOT_LEADER_OR_FOLLOWER"},)
                ready = True
                continue
            if fencing:
                current = req["current_leader_epoch"]
                if current != -1 and current != part.leader_epoch:
                    reads[key] = ({"error": "FENCED_LEADER_EPOCH" if current < part.leader_epoch
                                   else "UNKNOWN_LEADER_EPOCH"},)
                    ready = True
                    continue
            if rack is not None:
                preferred = self.preferred_read_replica(part, rack, req["fetch_offset"], now)
                if preferred is not None:
                    reads[key] = (self.redirect_answer(part, preferred),)
                    if self.era.preferred_replica_answers_now:
                        ready = True   # KAFKA-13767 (3.3.0)
                    else:
                        # up to 3.2 the empty answer parks like any other (DelayedFetch skips
                        # the partition: only the wait, or another partition, completes it)
                        fetch_offsets[key] = req["fetch_offset"]
                        unwatched = unwatched or {}
                        unwatched[key] = None
                    continue
            log = part.log
            leo = log.leo
            hw = log.hw
            offset = req["fetch_offset"]
            start = log.log_start_offset
            if offset > leo or offset < start:
                reads[key] = ({"error": "OFFSET_OUT_OF_RANGE", "leo": leo},)
                ready = True
                continue
            if follower:
                remotes = part.remotes
                if replica_id not in remotes:
                    reads[key] = ({"error": "NOT_LEADER_OR_FOLLOWER"},)
                    ready = True
                    continue
                remote = remotes[replica_id]
                if offset < leo:
                    i = offset - start
                    records = log.records[i:i + max_records]
                else:
                    records = ()
                old_leo = remote.leo
                update_fetch_state(remote, offset, leo, now)
                if replica_id not in part.isr:
                    self.maybe_expand_isr(part, replica_id, remote)
                if offset != old_leo:
                    self.maybe_increment_hw(part, ("follower %s fetched at offset %s",
                                                   replica_id, offset))
            elif offset < hw:
                i = offset - start
                n = hw - offset
                records = log.records[i:i + (max_records if max_records < n else n)]
            else:
                records = ()
            if records:
                ready = True
            reads[key] = (None, hw, leo, start, records, part.leader_epoch)
            fetch_offsets[key] = offset   # what a parked fetch reads from (no error: it parks)
        if ready or not reads or body["max_wait_ms"] <= 0:
            responses = {}
            for key, read in reads.items():
                if read[0] is None:
                    _, hw, leo, start, records, epoch = read
                    responses[key] = {"error": None, "hw": hw, "leo": leo, "log_start_offset": start,
                                      "records": records, "leader_epoch": epoch}
                else:
                    responses[key] = read[0]
            self.reply(env, {"error": None, "partitions": responses})
            return
        op = DelayedOp(env, fetch_offsets, follower)
        table = self.fetch_purgatory
        for key in fetch_offsets:
            if unwatched is not None and key in unwatched:
                continue
            if key in table:
                table[key].append(op)
            else:
                table[key] = [op]
        self.set_deadline(body["max_wait_ms"], self._expire_fetch, op)

    def _fetch_error(self, part, req):
        if part is None or not part.is_leader:
            return "NOT_LEADER_OR_FOLLOWER"
        if self.era.kip320_fencing:
            current = req.get("current_leader_epoch", -1)
            if current != -1:
                if current < part.leader_epoch:
                    return "FENCED_LEADER_EPOCH"
                if current > part.leader_epoch:
                    return "UNKNOWN_LEADER_EPOCH"
        return None

    # -- OffsetsForLeaderEpoch and ListOffsets ------------------------------------------------------
    def on_offsets_for_leader_epoch(self, env):
        if self.not_serving(env):
            return
        out = {}
        for key, req in env.body["partitions"].items():
            part = self.partitions.get(key)
            error = self._fetch_error(part, req)
            if error:
                out[key] = {"error": error}
                continue
            epoch, end = part.log.end_offset_for(req["leader_epoch"], self.era)
            out[key] = {"error": None, "leader_epoch": epoch, "end_offset": end}
        self.reply(env, {"error": None, "partitions": out})

    def on_list_offsets(self, env):
        if self.not_serving(env):
            return
        replica = env.body.get("replica_id", -1) >= 0
        out = {}
        for key, which in env.body["partitions"].items():
            part = self.partitions.get(key)
            if part is None or not part.is_leader:
                out[key] = {"error": "NOT_LEADER_OR_FOLLOWER"}
                continue
            log = part.log
            if which == "earliest":
                offset = log.log_start_offset
            else:
                offset = log.leo if replica else log.hw
            out[key] = {"error": None, "offset": offset, "leo": log.leo,
                        "log_start_offset": log.log_start_offset, "leader_epoch": part.leader_epoch}
        self.reply(env, {"error": None, "partitions": out})

