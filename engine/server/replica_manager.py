"""The broker's periodic tasks, as Kafka's ReplicaManager and LogManager schedule them: ISR
expiration (§2), ISR change propagation to the controller through /isr_change_notification (§4.2),
high watermark checkpoints, page-cache writeback and log flushes.
"""
ISR_CHANGE_CHECK_MS = 2500       # ReplicaManager isr-change-propagation period (§4.2)
ISR_CHANGE_BLACKOUT_MS = 5000    # IsrChangePropagationBlackOut
ISR_CHANGE_MAX_DELAY_MS = 60000  # IsrChangePropagationInterval


class ReplicaManagerTasks:
    """Mixin of ``Broker``: the scheduled tasks of ReplicaManager and LogManager."""

    # -- periodic tasks ------------------------------------------------------------------------------
    def _isr_expiration_task(self, period):
        for part in self.partitions.values():
            if part.is_leader:
                self.maybe_shrink_isr(part)
        self.set_timer(period, self._isr_expiration_task, period)

    def record_isr_change(self, key):
        self.isr_change_set[key] = None
        self.last_isr_change_ms = self.scheduler.now_ms

    def _isr_change_propagation_task(self, _=None):
        """maybePropagateIsrChanges (§4.2): 5 s of quiet, but never more than 60 s late."""
        now = self.scheduler.now_ms
        if self.isr_change_set and (self.last_isr_change_ms + ISR_CHANGE_BLACKOUT_MS < now or
                                    self.last_isr_propagation_ms + ISR_CHANGE_MAX_DELAY_MS < now):
            keys = list(self.isr_change_set)
            parts = [{"topic": self.sim.split_key(k)[0], "partition": self.sim.split_key(k)[1]}
                     for k in keys]
            quiet = now - self.last_isr_change_ms
            reason = (f"{quiet} ms since the last ISR change > blackout {ISR_CHANGE_BLACKOUT_MS} ms"
                      if self.last_isr_change_ms + ISR_CHANGE_BLACKOUT_MS < now else
                      f"{now - self.last_isr_propagation_ms} ms since the last propagation > "
                      f"{ISR_CHANGE_MAX_DELAY_MS} ms")
            self.zk.call("create", {"path": "/isr_change_notification/isr_change_",
                                    "value": {"version": 1, "partitions": parts}, "sequence": True,
                                    "makepath": True},
                         self._on_isr_notification_created, (keys, reason))
            self.isr_change_set = {}
            self.last_isr_propagation_ms = now
        self.set_timer(ISR_CHANGE_CHECK_MS, self._isr_change_propagation_task)

    def _on_isr_notification_created(self, ctx, result, error):
        keys, reason = ctx
        if error:
            return
        self.sim.emit("isr_change_notification", broker=self.node_id, stage="created",
                      path=result["path"], partitions=keys, reason=reason)

    def _hw_checkpoint_task(self, _=None):
        self.checkpoint_hw()
        self.set_timer(self.config["replica.high.watermark.checkpoint.interval.ms"],
                       self._hw_checkpoint_task)

    def checkpoint_hw(self):
        """replication-offset-checkpoint: rewritten with every hosted partition's HW (§5.3)."""
        self.hw_checkpoint = {k: p.log.hw for k, p in self.partitions.items()}

    def _writeback_task(self, _=None):
        """The OS writes dirty pages older than ``sim.os.dirty.expire.ms`` back to disk (Linux's
        vm.dirty_expire_centisecs = 3000, every vm.dirty_writeback_centisecs = 500). Kafka itself
        does not fsync by default (§5.3), so this is what a power failure keeps."""
        now = self.scheduler.now_ms
        expire = self.config["sim.os.dirty.expire.ms"]
        for log in self.logs.values():
            log.writeback(now, expire)
        self.set_timer(self.config["sim.os.dirty.writeback.interval.ms"], self._writeback_task)

    def _flush_task(self, _=None):
        for log in self.logs.values():
            log.flush()
        self.set_timer(self.config["log.flush.interval.ms"], self._flush_task)

    def flush(self):
        for log in self.logs.values():
            log.flush()
