"""Control requests from the controller (§9.5): LeaderAndIsr, UpdateMetadata and StopReplica, each
checked against the sender's controller epoch; ControlledShutdown forwarded to the local controller;
and the Metadata request clients send (Kafka's KafkaApis handlers for these).
"""
from engine.server.log import ReplicaLog
from engine.core.messages import DISCONNECTED
from engine.server.partition import Partition


class ControlRequests:
    """Mixin of ``Broker``: handling control requests and Metadata."""

    # -- control requests (§9.5) -------------------------------------------------------------------
    def _stale_controller(self, env):
        body = env.body
        if body["controller_epoch"] < self.known_controller_epoch:
            self.sim.emit("stale_controller_fenced", broker=self.node_id,
                          controller=body["controller_id"], epoch=body["controller_epoch"],
                          reason=f"{env.type} from controller {body['controller_id']} epoch "
                                 f"{body['controller_epoch']} < known controller epoch "
                                 f"{self.known_controller_epoch}: STALE_CONTROLLER_EPOCH")
            self.reply(env, {"error": "STALE_CONTROLLER_EPOCH"})
            return True
        if self.era.broker_epoch and body.get("broker_epoch", -1) not in (-1, self.broker_epoch) \
                and body.get("broker_epoch", -1) < self.broker_epoch:
            self.reply(env, {"error": "STALE_BROKER_EPOCH"})
            return True
        self.known_controller_epoch = body["controller_epoch"]
        self.controller_id = body["controller_id"]
        return False

    def on_leader_and_isr(self, env):
        if not self.running or self._stale_controller(env):
            return
        errors = {}
        leaders, followers = [], []
        for st in env.body["partitions"]:
            key = st["key"]
            if self.node_id not in st["replicas"]:
                errors[key] = "UNKNOWN_TOPIC_OR_PARTITION"
                continue
            part = self.partitions.get(key) or self._create_partition(st)
            if st["leader_epoch"] > part.leader_epoch:
                (leaders if st["leader"] == self.node_id else followers).append((part, st))
            else:
                errors[key] = "STALE_CONTROLLER_EPOCH"
        for part, st in leaders:
            self.make_leader(part, st)
        for part, st in followers:
            self.make_follower(part, st)
        if not self.hw_checkpoint_started:
            self.hw_checkpoint_started = True
            self.set_timer(self.config["replica.high.watermark.checkpoint.interval.ms"],
                           self._hw_checkpoint_task)
        self.reply(env, {"error": None, "partition_errors": errors})

    def _create_partition(self, st):
        key = st["key"]
        log = self.logs.get(key)
        if log is None:
            log = self.logs[key] = ReplicaLog()
        part = Partition(st["topic"], st["partition"], key, st["replicas"], log)
        self.partitions[key] = part
        return part

    def on_update_metadata(self, env):
        if not self.running or self._stale_controller(env):
            return
        body = env.body
        if body.get("live_brokers") is not None:
            self.live_brokers = dict(body["live_brokers"])
        for st in body["partitions"]:
            self.metadata[st["key"]] = st
        self.reply(env, {"error": None})

    def on_stop_replica(self, env):
        if not self.running or self._stale_controller(env):
            return
        for key in env.body["partitions"]:
            self.remove_fetcher_partition(key)
        self.reply(env, {"error": None})

    def on_alter_isr(self, env):
        """KafkaApis.handleAlterIsrRequest: only the active controller answers (docs/model.md §17.7)."""
        if not self.not_serving(env):
            self.controller.on_alter_isr(env)

    def _on_controlled_shutdown(self, env):
        self.controller.on_controlled_shutdown(env)

    def not_serving(self, env):
        """Before registration completes (or while stopping) requests get a network error, as
        from a socket server whose processors are not running yet."""
        if self.running:
            return False
        self.reply(env, {"error": DISCONNECTED})
        return True

    def on_init_producer_id(self, env):
        """InitProducerId without a transactional id (engine 1.5.0): the broker's transaction
        coordinator hands out a new producer id at epoch 0
        (TransactionCoordinator.handleInitProducerId, its no-transactional-id branch)."""
        if self.not_serving(env):
            return
        self.reply(env, {"error": None, "producer_id": self.sim.allocate_producer_id(),
                         "producer_epoch": 0})

    def on_metadata(self, env):
        """Client Metadata from this broker's cache (fed only by UpdateMetadata, §9.5)."""
        if self.not_serving(env):
            return
        topics = env.body.get("topics")
        parts = {k: {"leader": st["leader"], "leader_epoch": st["leader_epoch"], "isr": st["isr"],
                     "replicas": st["replicas"]}
                 for k, st in self.metadata.items() if topics is None or st["topic"] in topics}
        if self.sim.rules_1_4 and not self.era.kraft:
            live = self.live_brokers
            for answer in parts.values():
                if answer["leader"] >= 0 and answer["leader"] not in live:
                    # MetadataCache.getPartitionMetadata (0.10.2 – 2.x) / ZkMetadataCache (3.x):
                    # a leader missing from the cache's alive brokers is LEADER_NOT_AVAILABLE,
                    # leader -1 (the epoch kept); engine 1.3.0 named the dead leader. (KRaft's
                    # cache names any registered leader, fenced or not: no change there.)
                    answer["leader"] = -1
        self.reply(env, {"error": None, "brokers": sorted(self.live_brokers),
                         "controller_id": self.controller_id, "partitions": parts})
