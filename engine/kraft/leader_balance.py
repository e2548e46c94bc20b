"""Automatic preferred-leader balancing on the active controller (docs/model.md §20.5).

``ReplicationControlManager`` keeps ``imbalancedPartitions``: every partition whose leader is not
its preferred replica (the first of its assignment, ``PartitionRegistration.hasPreferredLeader``).
``maybeBalancePartitionLeaders`` runs a PREFERRED election for each of them
(``PartitionChangeBuilder.electPreferredLeader``): the preferred replica becomes leader if it is
in the ISR and acceptable (registered, unfenced, not shutting down); otherwise nothing changes.
Unlike the ZooKeeper controller, ``leader.imbalance.per.broker.percentage`` plays no part.

When it runs (``auto.leader.rebalance.enable``, ``leader.imbalance.check.interval.seconds``):

* 3.9.0: armed after every controller write event that leaves a partition imbalanced, to run one
  interval later (``QuorumController.maybeScheduleNextBalancePartitionLeaders``); once run, the
  next write event arms it again if something is still imbalanced.
* 4.1.0: a periodic task every interval from the controller's activation
  (``PeriodicTaskControlManager``, task ``electPreferred``; KAFKA-17793).

Simplification: ``maxElectionsPerImbalance`` (1000 elections per run) is never reached.
"""


class LeaderBalance:
    """Mixin of ``QuorumController``."""

    balance_armed = False

    def balance_interval_ms(self):
        """None when balancing is off (engine 1.2.0 never balanced in KRaft eras)."""
        if not self.sim.rules_1_3 or not self.config["auto.leader.rebalance.enable"]:
            return None
        return self.config["leader.imbalance.check.interval.seconds"] * 1000

    def imbalanced(self):
        return [key for key, reg in sorted(self.image.partitions.items())
                if reg["leader"] != reg["replicas"][0]]

    def start_balance_task(self):
        interval = self.balance_interval_ms()
        if interval is not None and self.era.periodic_leader_balance:
            self.voter.set_timer(interval, self._periodic_balance, interval)

    def after_write_event(self):
        """3.9: ControllerWriteEvent.run ends with maybeScheduleNextBalancePartitionLeaders."""
        interval = self.balance_interval_ms()
        if interval is None or self.era.periodic_leader_balance or self.balance_armed \
                or not self.imbalanced():
            return
        self.balance_armed = True
        self.voter.set_timer(interval, self._deferred_balance)

    def _deferred_balance(self, _=None):
        if not self._alive():
            return
        self.balance_armed = False
        self.operation(self.balance_leaders)

    def _periodic_balance(self, interval):
        if not self._alive():
            return
        self.operation(self.balance_leaders)
        self.voter.set_timer(interval, self._periodic_balance, interval)

    def balance_leaders(self):
        """maybeBalancePartitionLeaders: one PREFERRED election per imbalanced partition."""
        for topic, partition in self.imbalanced():
            reg = self.image.partitions[(topic, partition)]
            self.change_partition(topic, partition, reg["isr"], "automatic preferred leader "
                                  "balancing (leader.imbalance.check.interval.seconds)",
                                  preferred=True)
