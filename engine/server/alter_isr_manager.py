"""The leader's side of KIP-497 (2.7+): ISR changes proposed to the controller with AlterIsr
(AlterPartition from 3.2) instead of written to ZooKeeper (docs/model.md §17).

Kafka's seams: ``Partition.maybeShrinkIsr`` / ``maybeExpandIsr`` put the partition in a *pending*
state (``PendingShrinkIsr`` / ``PendingExpandIsr``) and hand an item to the broker's
``AlterIsrManager``, which keeps one item per partition and at most one request in flight per
broker (§17.3); the answer commits, reverts or leaves the partition pending (§17.4). Only the
controller writes the state znode, so no ``/isr_change_notification`` is ever created.
"""
from engine.core.messages import ALTER_ISR
from engine.server.partition import can_join_isr, expand_reason, is_out_of_sync, out_of_sync_reason

#: 2.8+ DefaultAlterIsrManager: one-shot retry 50 ms after a top-level error (docs/model.md §17.3).
TOP_LEVEL_RETRY_MS = 50
#: BrokerToControllerRequestThread: no controller known -> look again after 100 ms; a broken
#: connection is re-established after the 50 ms reconnect backoff (docs/model.md §17.3).
NO_CONTROLLER_BACKOFF_MS = 100
RECONNECT_BACKOFF_MS = 50
#: Per-partition errors after which the leader gives up and stays pending (docs/model.md §17.4).
GIVE_UP = ("UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID", "FENCED_LEADER_EPOCH",
           "INVALID_UPDATE_VERSION", "INVALID_REQUEST", "NEW_LEADER_ELECTED")
#: Per-partition errors after which the leader reverts to its committed ISR (3.1+ / KIP-841).
REVERT = ("OPERATION_NOT_ATTEMPTED", "INELIGIBLE_REPLICA")


class AlterIsrManager:
    """Mixin of ``Broker`` (through ``IsrMaintenance``): proposals and the AlterIsr manager."""

    # -- proposals (Partition.maybeShrinkIsr / maybeExpandIsr, docs/model.md §17.2) ---------------
    def alter_isr_shrink(self, part):
        if part.pending is not None or len(part.isr) <= 1:
            return
        now = self.scheduler.now_ms
        leo = part.log.leo
        lag = self.lag_max_ms
        out = [r for r in part.isr if r != self.node_id and r in part.remotes
               and is_out_of_sync(part.remotes[r], leo, now, lag, self.era)]
        if not out:
            return
        reason = "; ".join(out_of_sync_reason(r, part.remotes[r], leo, now, lag) for r in out)
        self._propose(part, "isr_shrink", [r for r in part.isr if r not in out], reason)

    def alter_isr_expand(self, part, rid, remote):
        if part.pending is not None or rid not in part.replicas or rid in part.isr:
            return
        hw = part.log.hw
        if not can_join_isr(remote, hw, part.epoch_start_offset, self.era):
            return
        if self.era.kip841 and rid not in self.cache_eligible():
            return  # isReplicaIsrEligible (KAFKA-14140): not alive in this broker's metadata cache
        self._propose(part, "isr_expand", part.isr + [rid],
                      expand_reason(rid, remote, hw, part.epoch_start_offset, self.era))

    def _propose(self, part, kind, new_isr, reason):
        if part.key in self.alter_isr_unsent:
            # putIfAbsent refused: an earlier item of this partition still awaits its answer
            # (3.0+ after a LeaderAndIsr); the partition stays committed and retries later.
            return
        item = {"key": part.key, "kind": kind, "new_isr": list(new_isr), "isr_before": list(part.isr),
                "leader_epoch": part.leader_epoch, "zk_version": part.zk_version, "reason": reason}
        part.pending = item
        self.alter_isr_unsent[part.key] = item
        self._alter_isr_trigger()

    def alter_isr_reset(self, part, recovery_state):
        """A LeaderAndIsr replaced the partition state (makeLeader / makeFollower)."""
        part.pending = None
        part.recovery_state = recovery_state
        if self.era.clear_pending_bug:
            # KAFKA-12686 (2.7-2.8): clearPending drops the item even while it is in flight.
            self.alter_isr_unsent.pop(part.key, None)

    # -- the manager (AlterIsrManager, docs/model.md §17.3) -------------------------------------------
    def _alter_isr_trigger(self):
        if self.era.alter_isr_send_tick_ms:
            self._schedule_alter_isr_tick()
        else:
            self._maybe_send_alter_isr()

    def _schedule_alter_isr_tick(self):
        """2.7.x "send-alter-isr": fixed rate every 50 ms from the broker's start. Only the ticks
        that can send anything are scheduled (an equivalent, cheaper timeline)."""
        if self.alter_isr_tick_at is not None:
            return
        period = self.era.alter_isr_send_tick_ms
        now = self.scheduler.now_ms
        start = self.alter_isr_started_ms
        at = start + period * ((now - start) // period + 1)
        self.alter_isr_tick_at = at
        self.set_timer(at - now, self._alter_isr_tick)

    def _alter_isr_tick(self, _=None):
        self.alter_isr_tick_at = None
        self._maybe_send_alter_isr()

    def _maybe_send_alter_isr(self, _=None):
        if self.alter_isr_in_flight or not self.alter_isr_unsent or not self.running:
            return
        items = list(self.alter_isr_unsent.values())
        parts = []
        for item in items:
            topic, index = self.sim.split_key(item["key"])
            parts.append({"key": item["key"], "topic": topic, "partition": index,
                          "leader_epoch": item["leader_epoch"], "new_isr": list(item["new_isr"]),
                          "zk_version": item["zk_version"], "leader_recovery_state": 0})
            self._emit_alter_partition("sent", item, None)
        body = {"api": self.era.alter_isr_api, "broker": self.node_id,
                "broker_epoch": self.broker_epoch, "partitions": parts}
        self.alter_isr_in_flight = True
        self._send_alter_isr((body, items))

    def _send_alter_isr(self, req):
        """The broker-to-controller channel: the controller named in the metadata cache; the same
        request is sent again after a disconnect, a timeout or NOT_CONTROLLER."""
        if not self.running:
            return
        if self.controller_id < 0:
            self.set_timer(NO_CONTROLLER_BACKOFF_MS, self._send_alter_isr, req)
            return
        self.request(self.controller_id, ALTER_ISR, req[0],
                     self.config["controller.socket.timeout.ms"], self._on_alter_isr_response, req)

    def _on_alter_isr_response(self, req, body, error):
        _request, items = req
        if error:
            self.set_timer(RECONNECT_BACKOFF_MS, self._send_alter_isr, req)
            return
        top = body.get("error")
        results = body.get("partitions") or {}
        for item in items:
            res = results.get(item["key"])
            self._emit_alter_partition("answered", item, top or (res or {}).get("error"), res)
        if top == "NOT_CONTROLLER" or any(r.get("error") == "NOT_CONTROLLER" for r in results.values()):
            self.set_timer(RECONNECT_BACKOFF_MS, self._send_alter_isr, req)
            return
        self.alter_isr_in_flight = False
        if top:
            # STALE_BROKER_EPOCH, UNKNOWN_SERVER_ERROR...: every item stays queued and is sent again
            # (rebuilt, with the current broker epoch): 2.7 at a later tick, 2.8+ 50 ms later.
            if self.era.alter_isr_send_tick_ms:
                self._schedule_alter_isr_tick()
            else:
                self.set_timer(TOP_LEVEL_RETRY_MS, self._maybe_send_alter_isr)
            return
        unsent = self.alter_isr_unsent
        for item in items:
            res = results.get(item["key"])
            if res is None:
                continue  # not in the answer: stays queued
            if self.era.partition_retry:
                if unsent.get(item["key"]) is item:  # KAFKA-14010: removed before the callback
                    del unsent[item["key"]]
                self._alter_isr_answer(item, res)
            else:
                thrown = self._alter_isr_answer(item, res)
                if self.era.clear_pending_bug:
                    unsent.pop(item["key"], None)  # by partition: KAFKA-12686 loses a newer item
                elif unsent.get(item["key"]) is item:
                    del unsent[item["key"]]
                if thrown:
                    break  # 2.7.x IllegalStateException: the later items stay queued (§17.4)
        if unsent:
            self._alter_isr_trigger()

    def _alter_isr_answer(self, item, res):
        """Partition.handleAlterIsrResponse / handleAlterPartitionUpdate (docs/model.md §17.4).
        True when the answer throws (2.7.x: the refused re-queue of an unexpected error)."""
        part = self.partitions.get(item["key"])
        if part is None or part.pending is not item:
            return False  # a LeaderAndIsr replaced the proposal: the stale answer is ignored
        error = res.get("error")
        if error is None:
            if res["leader_epoch"] != part.leader_epoch or res["zk_version"] < part.zk_version:
                return False  # stays pending
            self._commit_isr(part, item, res)
        elif error in REVERT and self.era.hw_on_commit:
            part.pending = None
        elif error not in GIVE_UP and self.era.partition_retry:
            self.alter_isr_unsent[part.key] = item
        elif error not in GIVE_UP:
            # KAFKA-14010: the re-queue is refused (the item is still queued); 2.7.x throws
            # (engine 1.2.0: no throw, the rest of the batch was handled)
            return self.era.retry_refused_throws and self.sim.rules_1_3
        # otherwise the partition stays pending until a LeaderAndIsr bumps the leader epoch
        return False

    def _commit_isr(self, part, item, res):
        before = list(part.isr)
        part.isr = list(res["isr"])
        part.zk_version = res["zk_version"]
        part.pending = None
        self.sim.emit(item["kind"], topic=part.topic, partition=part.index, broker=self.node_id,
                      isr_before=before, isr=list(part.isr), leader_epoch=part.leader_epoch,
                      zk_version=part.zk_version,
                      reason=f"controller accepted {self.era.alter_isr_api}: {item['reason']}")
        if self.era.hw_on_commit:
            # KAFKA-13091 fixed in 3.1: HW recomputed and delayed produces re-checked on commit.
            if not self.maybe_increment_hw(part, f"ISR {part.isr} committed"):
                self._complete_produces(part.key)

    def _emit_alter_partition(self, phase, item, error, res=None):
        topic, index = self.sim.split_key(item["key"])
        fields = {"phase": phase, "api": self.era.alter_isr_api, "broker": self.node_id,
                  "topic": topic, "partition": index, "proposed_isr": list(item["new_isr"]),
                  "leader_epoch": item["leader_epoch"], "partition_epoch": item["zk_version"]}
        if phase == "answered":
            fields["error"] = error
            if res is not None and error is None:
                fields["isr"] = list(res["isr"])
                fields["new_partition_epoch"] = res["zk_version"]
        self.sim.emit("alter_partition", **fields,
                      reason=f"{item['kind'][4:]} of {topic}-{index} proposed by leader {self.node_id}"
                             + ("" if phase == "sent" else f": {error or 'accepted'}"))
