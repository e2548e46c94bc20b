"""The leader side of a partition: becoming leader, serving fetches and produces, ISR shrink and
expansion as conditional ZooKeeper writes, the high watermark, and the two purgatories.

A mixin of ``Broker``; every rule it applies is a pure function of ``partition.py``.
"""
from .partition import (NEVER_MS, RemoteReplica, can_join_isr, candidate_high_watermark, expand_reason,
                        is_out_of_sync, out_of_sync_reason, partition_state_json,
                        update_fetch_state)


class DelayedOp:
    """A parked request in the fetch or produce purgatory (DelayedFetch / DelayedProduce)."""
    __slots__ = ("env", "parts", "done", "follower", "results")

    def __init__(self, env, parts, follower=False, results=None):
        self.env = env
        self.parts = parts   # key -> fetch offset (fetch) or [required_offset, error, pending] (produce)
        self.done = False
        self.follower = follower
        self.results = results  # produce: the per-partition answer being built


class ReplicaLeader:
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
                      reason=f"LeaderAndIsr from controller {self.controller_id}: leader in epoch "
                             f"{part.leader_epoch}; HW starts at the local {log.hw} and waits for "
                             f"every ISR member to fetch once")
        self.sim.on_new_leader(self, part)
        self.maybe_increment_hw(part, "became leader")

    # -- ISR shrink (§2) ------------------------------------------------------------------------
    def maybe_shrink_isr(self, part):
        if part.isr_write_in_flight or len(part.isr) <= 1:
            return
        now = self.scheduler.now_ms
        leo = part.log.leo
        lag = self.lag_max_ms
        out = [r for r in part.isr if r != self.node_id
               and is_out_of_sync(part.remotes[r], leo, now, lag, self.era)]
        if not out:
            return
        reason = "; ".join(out_of_sync_reason(r, part.remotes[r], leo, now, lag) for r in out)
        self.write_isr(part, [r for r in part.isr if r not in out], "isr_shrink", reason)

    # -- ISR expansion (§3) -----------------------------------------------------------------------
    def maybe_expand_isr(self, part, rid, remote):
        if part.isr_write_in_flight or rid not in part.replicas:
            return
        hw = part.log.hw
        if can_join_isr(remote, hw, part.epoch_start_offset, self.era):
            self.write_isr(part, part.isr + [rid], "isr_expand",
                           expand_reason(rid, remote, hw, part.epoch_start_offset, self.era))

    # -- the conditional ZooKeeper write (§2.3) -----------------------------------------------------
    def write_isr(self, part, new_isr, kind, reason):
        """Leader-written ISR change: setData on the state znode, expecting our cached zkVersion.
        The leader epoch is *not* bumped (§9.6). Until it succeeds nothing changes locally."""
        part.isr_write_in_flight = True
        data = partition_state_json(self.node_id, part.leader_epoch, new_isr, part.controller_epoch)
        path = self.sim.state_path(part.key)
        ctx = (part, part.leader_epoch, part.zk_version, list(part.isr), new_isr, kind, reason, data, path)
        self.zk.call("set", {"path": path, "value": data, "version": part.zk_version},
                     self._on_isr_written, ctx)

    def _on_isr_written(self, ctx, result, error):
        part, epoch, version, isr_before, new_isr, kind, reason, data, path = ctx
        if error == "BADVERSION":
            # A re-sent write may have landed: same content means success (checkLeaderAndIsrZkData).
            self.zk.call("get", {"path": path}, self._on_isr_recheck, ctx)
            return
        self._isr_write_done(ctx, None if error else result["stat"]["version"], error)

    def _on_isr_recheck(self, ctx, result, error):
        data = ctx[7]
        if not error and result["data"] == data:
            self._isr_write_done(ctx, result["stat"]["version"], None)
        else:
            self._isr_write_done(ctx, None, "BADVERSION")

    def _isr_write_done(self, ctx, new_version, error):
        part, epoch, version, isr_before, new_isr, kind, reason, _data, _path = ctx
        if self.partitions.get(part.key) is not part or not part.is_leader \
                or part.leader_epoch != epoch:
            return  # a LeaderAndIsr replaced this state while the write was in flight
        part.isr_write_in_flight = False
        if error:
            part.isr_update_failed = True
            why = (f"Cached zkVersion [{version}] not equal to that in zookeeper, skip updating ISR"
                   if error == "BADVERSION" else f"ZooKeeper error {error}, skip updating ISR")
            self.sim.emit("isr_update_failed", topic=part.topic, partition=part.index,
                          broker=self.node_id, isr_before=isr_before, isr=new_isr, wanted=kind,
                          reason=f"{why} (wanted {kind}: {reason})")
            return
        part.isr = list(new_isr)
        part.zk_version = new_version
        self.record_isr_change(part.key)
        self.sim.emit(kind, topic=part.topic, partition=part.index, broker=self.node_id,
                      isr_before=isr_before, isr=list(new_isr), leader_epoch=part.leader_epoch,
                      zk_version=new_version, reason=reason)
        self.maybe_increment_hw(part, f"ISR now {new_isr}")
        if kind == "isr_shrink":
            self.maybe_shrink_isr(part)

    # -- high watermark (§5.1) ----------------------------------------------------------------------
    def maybe_increment_hw(self, part, cause):
        log = part.log
        candidate = candidate_high_watermark(self.node_id, log.leo, part.isr, part.remotes,
                                             self.scheduler.now_ms, self.lag_max_ms)
        old = log.hw
        if candidate <= old:
            return False
        log.hw = candidate
        self.sim.on_leader_hw(self, part, old, candidate, cause)
        self._complete_produces(part.key)
        self._complete_consumer_fetches(part.key)
        return True

    # -- produce (§6) ---------------------------------------------------------------------------------
    def on_produce(self, env):
        if self.not_serving(env):
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
            min_isr = self.sim.topic_config(part.topic, "min.insync.replicas")
            if acks == -1 and len(part.isr) < min_isr:
                results[key] = {"error": "NOT_ENOUGH_REPLICAS", "base_offset": -1}
                self.sim.emit("produce_error", topic=part.topic, partition=part.index,
                              broker=self.node_id, error="NOT_ENOUGH_REPLICAS",
                              producer=body["producer"], records=batch["ids"],
                              reason=f"acks=all and ISR {part.isr} has {len(part.isr)} < "
                                     f"min.insync.replicas {min_isr}: rejected before append")
                continue
            answer = self.check_sequence(part, body["producer"], batch)
            if answer is not None:
                results[key] = answer
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
        base = log.append(part.leader_epoch, batch["ids"], self.era.epoch_cache)
        if batch.get("seq") is not None:
            batches = self._producer_batches(part, producer)
            batches.append((batch["seq"], len(batch["ids"]), base))
            del batches[:-5]
        if log.unflushed_since >= self.sim.topic_config(part.topic, "log.flush.interval.messages"):
            log.flush()
        self.sim.on_append(self, part, base, batch["ids"])
        self._complete_follower_fetches(part.key)
        self.maybe_increment_hw(part, f"append at offset {base}")
        return base

    def check_sequence(self, part, producer, batch):
        """Idempotent producer (0.11+, §6): the leader keeps the last 5 batches per producer; a
        retried batch among them is answered with its original offset, a gap in the sequence is
        OUT_OF_ORDER_SEQUENCE_NUMBER. Returns None when the batch should be appended."""
        seq = batch.get("seq")
        if seq is None:
            return None
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

    def _producer_batches(self, part, producer):
        """Producer state is rebuilt from the replica's own log (so it survives failover)."""
        table = self.producer_state.setdefault(part.key, {})
        batches = table.get(producer)
        if batches is None:
            batches = table[producer] = self.sim.producer_batches_in_log(part.log, producer)
        return batches

    def _try_complete_produce(self, op):
        """checkEnoughReplicasReachOffset for every pending partition of a DelayedProduce."""
        pending = False
        for key, status in op.parts.items():
            if not status[2]:
                continue
            part = self.partitions.get(key)
            if part is None or not part.is_leader:
                status[1], status[2] = "NOT_LEADER_OR_FOLLOWER", False
                continue
            if part.log.hw >= status[0]:
                min_isr = self.sim.topic_config(part.topic, "min.insync.replicas")
                if len(part.isr) < min_isr:
                    status[1] = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
                    self.sim.emit("produce_error", topic=part.topic, partition=part.index,
                                  broker=self.node_id, error="NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                                  producer=op.env.body["producer"],
                                  records=op.env.body["partitions"][key]["ids"],
                                  reason=f"HW {part.log.hw} reached the batch end {status[0]} but ISR "
                                         f"{part.isr} has {len(part.isr)} < min.insync.replicas "
                                         f"{min_isr}; the data is written and committed anyway")
                status[2] = False
            else:
                pending = True
        if pending:
            return False
        self._reply_produce(op)
        return True

    def _reply_produce(self, op):
        op.done = True
        results = op.results
        for key, status in op.parts.items():
            if status[1]:
                results[key] = {"error": status[1], "base_offset": results[key]["base_offset"]}
        self.reply(op.env, {"error": None, "partitions": results})

    def _complete_produces(self, key):
        ops = self.produce_purgatory.get(key)
        if not ops:
            return
        keep = []
        for op in ops:
            if not op.done and not self._try_complete_produce(op):
                keep.append(op)
        if keep:
            self.produce_purgatory[key] = keep
        else:
            del self.produce_purgatory[key]

    def _expire_produce(self, op):
        if op.done:
            return
        for key, status in op.parts.items():
            if status[2]:
                status[1], status[2] = "REQUEST_TIMED_OUT", False
                part = self.partitions.get(key)
                self.sim.emit("produce_error", topic=self.sim.split_key(key)[0],
                              partition=self.sim.split_key(key)[1], broker=self.node_id,
                              error="REQUEST_TIMED_OUT", producer=op.env.body["producer"],
                              records=op.env.body["partitions"][key]["ids"],
                              reason=f"acks=all: HW {part.log.hw if part else '?'} did not reach "
                                     f"{status[0]} within the request timeout "
                                     f"{op.env.body['timeout_ms']} ms")
        self._reply_produce(op)

    # -- fetch (§7 leader side, §10 consumers) ------------------------------------------------------
    def on_fetch(self, env):
        """Fetch from a follower (replica_id >= 0) or a consumer (-1). The HW put in the answer is
        read *before* the follower's new position is recorded (§5.2); a fetch that finds nothing
        is parked for up to max_wait_ms (DelayedFetch)."""
        if self.not_serving(env):
            return
        body = env.body
        replica_id = body["replica_id"]
        follower = replica_id >= 0
        now = self.scheduler.now_ms
        responses = {}
        ready = False
        max_records = self.sim.max_fetch_records
        partitions = self.partitions
        fencing = self.era.kip320_fencing
        for key, req in body["partitions"].items():
            part = partitions.get(key)
            if part is None or not part.is_leader:
                responses[key] = {"error": "NOT_LEADER_OR_FOLLOWER"}
                ready = True
                continue
            if fencing:
                current = req["current_leader_epoch"]
                if current != -1 and current != part.leader_epoch:
                    responses[key] = {"error": "FENCED_LEADER_EPOCH" if current < part.leader_epoch
                                      else "UNKNOWN_LEADER_EPOCH"}
                    ready = True
                    continue
            log = part.log
            leo = log.leo
            hw = log.hw
            offset = req["fetch_offset"]
            if offset > leo or offset < log.log_start_offset:
                responses[key] = {"error": "OFFSET_OUT_OF_RANGE", "leo": leo}
                ready = True
                continue
            if follower:
                remote = part.remotes.get(replica_id)
                if remote is None:
                    responses[key] = {"error": "NOT_LEADER_OR_FOLLOWER"}
                    ready = True
                    continue
                records = log.read(offset, max_records) if offset < leo else ()
                old_leo = remote.leo
                update_fetch_state(remote, offset, leo, now)
                if replica_id not in part.isr:
                    self.maybe_expand_isr(part, replica_id, remote)
                if offset != old_leo:
                    self.maybe_increment_hw(part, f"follower {replica_id} fetched at offset {offset}")
            else:
                records = log.read(offset, min(max_records, hw - offset)) if offset < hw else ()
            if records:
                ready = True
            responses[key] = {"error": None, "hw": hw, "leo": leo,
                              "log_start_offset": log.log_start_offset, "records": records,
                              "leader_epoch": part.leader_epoch}
        if ready or body["max_wait_ms"] <= 0 or not responses:
            self.reply(env, {"error": None, "partitions": responses})
            return
        op = DelayedOp(env, {k: r["fetch_offset"] for k, r in body["partitions"].items()}, follower)
        table = self.fetch_purgatory
        for key in op.parts:
            table.setdefault(key, []).append(op)
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

    def _complete_follower_fetches(self, key):
        """New data completes parked follower fetches (an HW change alone does not, §5.2)."""
        ops = self.fetch_purgatory.get(key)
        if ops:
            self._complete_fetch_ops(key, ops, follower=True)

    def _complete_consumer_fetches(self, key):
        ops = self.fetch_purgatory.get(key)
        if ops:
            self._complete_fetch_ops(key, ops, follower=False)

    def _complete_fetch_ops(self, key, ops, follower):
        keep = []
        for op in ops:
            if op.done:
                continue
            if op.follower == follower:
                self._finish_fetch(op)
            else:
                keep.append(op)
        if keep:
            self.fetch_purgatory[key] = keep
        else:
            del self.fetch_purgatory[key]

    def complete_all_delayed(self, key):
        """Leadership moved: parked produces and fetches for the partition complete now."""
        ops = self.fetch_purgatory.pop(key, None)
        for op in ops or ():
            if not op.done:
                self._finish_fetch(op)
        self._complete_produces(key)

    def _expire_fetch(self, op):
        if not op.done:
            self._finish_fetch(op)

    def _finish_fetch(self, op):
        """DelayedFetch.onComplete: read again (no second follower-state update) and answer."""
        op.done = True
        body = op.env.body
        max_records = self.sim.max_fetch_records
        responses = {}
        for key, offset in op.parts.items():
            part = self.partitions.get(key)
            error = self._fetch_error(part, body["partitions"][key])
            if error:
                responses[key] = {"error": error}
                continue
            log = part.log
            if offset > log.leo:
                responses[key] = {"error": "OFFSET_OUT_OF_RANGE", "leo": log.leo}
                continue
            bound = log.leo if op.follower else log.hw
            records = log.read(offset, min(max_records, bound - offset)) if offset < bound else []
            responses[key] = {"error": None, "hw": log.hw, "leo": log.leo,
                              "log_start_offset": log.log_start_offset, "records": records,
                              "leader_epoch": part.leader_epoch}
        self.reply(op.env, {"error": None, "partitions": responses})

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

