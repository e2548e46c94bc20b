"""ISR maintenance on the leader, as Kafka's Partition does it: shrink (§2) and expansion (§3), each
a conditional ZooKeeper write of the partition state (§2.3), and the high watermark that follows
the ISR (§5.1). Every rule it applies is a pure function of ``partition.py``.
"""
from engine.server.alter_isr_manager import AlterIsrManager
from engine.server.partition import (can_join_isr, candidate_high_watermark, expand_reason, is_out_of_sync,
                        maximal_isr, out_of_sync_reason, partition_state_json)


class IsrMaintenance(AlterIsrManager):
    """Mixin of ``Broker`` (through ``ReplicaLeader``): ISR shrink and expansion, and the high watermark."""
    #: KRaft from engine 1.5.0: the metadata cache's KIP-841 eligible brokers (unfenced, not in
    #: controlled shutdown), kept apart from ``live_brokers`` (unfenced: what clients see);
    #: None: ``live_brokers`` is both
    eligible_brokers = None

    def cache_eligible(self):
        """The brokers ``isReplicaIsrEligible`` accepts in this broker's metadata cache."""
        return self.live_brokers if self.eligible_brokers is None else self.eligible_brokers

    # -- ISR shrink (§2) ------------------------------------------------------------------------
    def maybe_shrink_isr(self, part):
        if self.era.alter_isr:
            return self.alter_isr_shrink(part)  # docs/model.md §17.2
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
        if self.era.alter_isr:
            return self.alter_isr_expand(part, rid, remote)  # docs/model.md §17.2
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
        if self.era.hw_min_isr_gate and len(part.isr) < self.effective_min_isr(part):
            return False  # KAFKA-15583 (3.7): no HW move while under min ISR (docs/model.md §17.5)
        candidate = candidate_high_watermark(self.node_id, log.leo, maximal_isr(part), part.remotes,
                                             self.scheduler.now_ms, self.lag_max_ms,
                                             self.isr_eligible_brokers())
        old = log.hw
        if candidate <= old:
            return False
        log.hw = candidate
        # a cause (format, *args) is formatted only with the move's reason (engine/history.py)
        self.sim.on_leader_hw(self, part, old, candidate, cause)
        self._complete_produces(part.key)
        self._complete_fetches(part.key, False)  # parked consumer fetches
        return True

    def isr_eligible_brokers(self):
        """Partition.isReplicaIsrEligible (KAFKA-15021, 3.6+): the brokers alive in this broker's
        metadata cache — UpdateMetadata's live brokers (ZooKeeper mode), or the unfenced brokers
        not in controlled shutdown of the metadata image (KRaft). None: every broker counts."""
        if self.era.hw_needs_isr_eligible and self.sim.rules_1_3:
            return self.cache_eligible()
        return None  # engine 1.2.0 and eras before 3.6: any caught-up follower holds the HW

    def effective_min_isr(self, part):
        """min.insync.replicas; from 3.7 capped at the replication factor (docs/model.md §17.5)."""
        min_isr = self.sim.log_configs[part.topic]["min.insync.replicas"]
        return min(min_isr, len(part.replicas)) if self.era.hw_min_isr_gate else min_isr
