"""The active controller (``QuorumController``, docs/model.md §20.3-§20.6).

It runs on the Raft leader once that leader has committed its epoch's first record. Every
decision is a list of records appended to the metadata log and replayed into the controller's
own image at once (Kafka replays its own writes before they commit); the answer to the request
that caused them goes out when they are committed (``QuorumController`` defers responses to the
batch's end offset). Partition changes are built by ``partition_change.build_change``;
registration, heartbeats and fencing are in ``broker_control``.
"""
from engine.core.messages import ALTER_PARTITION, BROKER_HEARTBEAT, BROKER_REGISTRATION
from engine.kraft.broker_control import BrokerControl
from engine.kraft.java_order import timeline_order
from engine.kraft.leader_balance import LeaderBalance
from engine.kraft.metadata_image import (NO_OP, PARTITION, PARTITION_CHANGE, TOPIC, MetadataImage)
from engine.kraft.partition_change import build_change, change_text, merge, new_registration


class QuorumController(BrokerControl, LeaderBalance):
    def __init__(self, sim, voter):
        self.sim = sim
        self.voter = voter
        self.config = sim.config
        self.era = sim.era
        self.image = MetadataImage()
        for record in voter.log:
            self.image.replay(record)
        self.deferred = []        # (offset that must commit, request envelope, answer)
        self.contact = {}         # broker -> last heartbeat received (ms)
        self.reported = {}        # broker -> CurrentMetadataOffset of its last heartbeat
        self.cs_offset = {}       # broker -> end offset of the batch that began its shutdown
        self.running = True
        self.new_tracker()

    @property
    def now_ms(self):
        return self.sim.now_ms

    def activate(self):
        self.operation(self._activate)

    def _activate(self):
        brokers = list(self.image.brokers)
        if self.sim.rules_1_4:  # CCM.activate walks brokerRegistrations, a TimelineHashMap
            brokers = timeline_order(brokers)
        for broker in brokers:
            reg = self.image.brokers[broker]
            if reg["fenced"] and self.tracked_sessions():
                continue  # CCM.activate @ 4.1.0: the tracker starts with the unfenced brokers only
            self.touch(broker)  # CCM.activate: a fresh session for everyone
            if self.tracker is not None:
                self.tracker.update(broker, reg["broker_epoch"], self.now_ms,
                                    activation=self.sim.rules_1_5)
        self.voter.set_timer(self.config["metadata.max.idle.interval.ms"], self._no_op_tick)
        self.start_fence_checks()
        self.start_balance_task()
        self.maybe_create_topics()

    def stop(self):
        self.running = False
        for _offset, env, _answer in self.deferred:
            self.voter.reply(env, {"error": "NOT_CONTROLLER"})
        self.deferred = []

    def _alive(self):
        return self.running and self.voter.controller is self

    # -- writing records -----------------------------------------------------------------------------
    def operation(self, run, *args):
        """ControllerWriteEvent: everything one operation writes is one batch of the metadata log
        (``QuorumController.appendRecords``), so brokers replay its records together (§20.1).
        engine 1.2.0: one record per batch, each sent and committed on its own."""
        if not self.sim.rules_1_3 or self.voter.batch_base is not None:
            return run(*args)  # no batches, or already inside this operation's batch
        self.voter.begin_batch()
        result = run(*args)
        self.voter.end_batch()
        self.after_write_event()
        return result

    def write(self, kind, fields):
        record = self.voter.append(kind, fields)
        self.image.replay(record)
        return record

    def reply_after_commit(self, env, answer):
        end = self.voter.next_offset()  # what this operation wrote, lingering or not
        if end <= self.voter.hw:
            self.voter.reply(env, answer)
        else:
            self.deferred.append((end, env, answer))

    def on_commit(self, hw):
        ready = [d for d in self.deferred if d[0] <= hw]
        self.deferred = [d for d in self.deferred if d[0] > hw]
        for _end, env, answer in ready:
            self.voter.reply(env, answer)

    def _no_op_tick(self, _=None):
        """metadata.max.idle.interval.ms: the log (and parked fetches) never stay idle longer."""
        if not self._alive():
            return
        self.operation(self.write, NO_OP, {})
        self.voter.set_timer(self.config["metadata.max.idle.interval.ms"], self._no_op_tick)

    # -- requests routed by the voter ------------------------------------------------------------------
    def handle(self, env):
        self.operation(self._handle, env)

    def _handle(self, env):
        if env.type == BROKER_REGISTRATION:
            self.on_broker_registration(env)
        elif env.type == BROKER_HEARTBEAT:
            self.on_broker_heartbeat(env)
        elif env.type == ALTER_PARTITION:
            self.on_alter_partition(env)

    # -- topics (CreateTopics from the scenario, simplified: the controller creates them) --------------
    def maybe_create_topics(self):
        sim = self.sim
        if not sim.pending_topics or not self.image.unfenced():
            return
        running = [b for b, br in sim.brokers.items() if br.state in ("starting", "running")]
        if any(not self.image.is_active(b) for b in running):
            return  # as in ZooKeeper eras: once every broker that is up has registered
        pending, sim.pending_topics = sim.pending_topics, []
        for topic in pending:
            self.create_topic(topic)

    def create_topic(self, topic):
        self.write(TOPIC, {"name": topic["name"]})
        for p in range(topic["partitions"]):
            replicas = topic["assignment"][str(p)]
            isr = [b for b in replicas if self.image.is_active(b)]
            reg = new_registration(replicas, isr, isr[0] if isr else -1)
            fields = {"topic": topic["name"], "partition": p, **reg}
            fields["text"] = "PartitionRecord " + change_text(topic["name"], p, reg)
            self.write(PARTITION, fields)

    # -- partition changes -----------------------------------------------------------------------------
    def min_isr(self, topic, reg):
        return min(self.sim.topic_config(topic, "min.insync.replicas"), len(reg["replicas"]))

    def elr_enabled(self):
        return self.config.get("eligible.leader.replicas.version", 0) >= 1

    def unclean_enabled(self, topic):
        return self.era.kraft_unclean and self.sim.topic_config(topic, "unclean.leader.election.enable")

    def change_partition(self, topic, partition, target_isr, reason, extra_acceptable=None,
                         excluded=None, unclean_shutdown=(), preferred=False):
        """Build and write one PartitionChangeRecord; returns the record or None (no-op)."""
        reg = self.image.partitions[(topic, partition)]

        def acceptable(b):
            if b == excluded:
                return False
            return b == extra_acceptable or self.image.is_active(b)

        change, kind = build_change(reg, target_isr, acceptable, self.elr_enabled(),
                                    self.min_isr(topic, reg), self.unclean_enabled(topic),
                                    preferred=preferred, unclean_shutdown=unclean_shutdown)
        if change is None:
            return None
        after = merge(reg, change)
        fields = {"topic": topic, "partition": partition, **change,
                  "leader_epoch": after["leader_epoch"], "partition_epoch": after["partition_epoch"],
                  "text": "PartitionChangeRecord " + change_text(topic, partition, after),
                  "reason": reason}
        if kind is not None:
            fields["election"] = kind  # told as leader_elected when the record commits
        return self.write(PARTITION_CHANGE, fields)

    def remove_from_isrs(self, broker, reason, unclean_shutdown=False):
        """generateLeaderAndIsrUpdates: the broker leaves every ISR it is in; partitions it led
        elect a new leader (a fenced or shutting-down broker is never acceptable)."""
        for (topic, partition), reg in sorted(self.image.partitions.items()):
            in_elr = unclean_shutdown and broker in reg["elr"]
            if broker not in reg["isr"] and reg["leader"] != broker and not in_elr:
                continue
            target = [r for r in reg["isr"] if r != broker]
            self.change_partition(topic, partition, target, reason, excluded=broker,
                                  unclean_shutdown=(broker,) if unclean_shutdown else ())

    def elect_leaderless(self, broker, reason):
        """handleBrokerUnfenced: leaderless partitions elect again, the broker counted acceptable."""
        for topic, partition in self.image.leaderless():
            reg = self.image.partitions[(topic, partition)]
            self.change_partition(topic, partition, reg["isr"], reason, extra_acceptable=broker)

    def leads_anything(self, broker):
        return any(reg["leader"] == broker for reg in self.image.partitions.values())

    # -- AlterPartition (ReplicationControlManager.alterPartition) ---------------------------------------
    def on_alter_partition(self, env):
        body = env.body
        reg_broker = self.image.brokers.get(body["broker"])
        if reg_broker is None or reg_broker["broker_epoch"] != body["broker_epoch"]:
            self.voter.reply(env, {"error": "STALE_BROKER_EPOCH", "partitions": {}})
            return
        answers = {}
        for req in body["partitions"]:
            answers[req["key"]] = self._alter_one(body["broker"], req)
        self.reply_after_commit(env, {"error": None, "partitions": answers})

    def _alter_one(self, broker, req):
        reg = self.image.partitions.get((req["topic"], req["partition"]))
        if reg is None:
            return {"error": "UNKNOWN_TOPIC_OR_PARTITION"}
        error = validate_alter(self.image, broker, reg, req, self.sim.rules_1_3)
        if error is not None:
            return {"error": error}
        if req["new_isr"] != reg["isr"] or (reg["leader_recovery_state"] == "RECOVERING"
                                            and req.get("leader_recovery_state", 0) == 0):
            change = {"isr": list(req["new_isr"])}
            if self.elr_enabled():
                shrink, _kind = build_change(reg, req["new_isr"], lambda b: b == broker, True,
                                             self.min_isr(req["topic"], reg))
                for field in ("elr", "last_known_elr"):
                    if shrink and field in shrink:
                        change[field] = shrink[field]
            if reg["leader_recovery_state"] == "RECOVERING":
                change["leader_recovery_state"] = "RECOVERED"
            after = merge(reg, change)
            self.write(PARTITION_CHANGE, {
                "topic": req["topic"], "partition": req["partition"], **change,
                "leader_epoch": after["leader_epoch"], "partition_epoch": after["partition_epoch"],
                "text": "PartitionChangeRecord " + change_text(req["topic"], req["partition"], after),
                "reason": f"AlterPartition from leader {broker}: ISR {reg['isr']} -> {req['new_isr']}"})
            reg = after
        return {"error": None, "leader": reg["leader"], "leader_epoch": reg["leader_epoch"],
                "isr": list(reg["isr"]), "zk_version": reg["partition_epoch"]}


def validate_alter(image, broker, reg, req, no_recovered_to_recovering=True):
    """validateAlterPartitionData at 3.9.0 / 4.1.0, in Kafka's order (docs/model.md §20.5).
    ``no_recovered_to_recovering``: False is engine 1.2.0, which let a leader move a RECOVERED
    partition back to RECOVERING."""
    if req["leader_epoch"] > reg["leader_epoch"] or req["zk_version"] > reg["partition_epoch"]:
        return "NOT_CONTROLLER"  # KAFKA-14154: the leader knows more than this controller
    if req["leader_epoch"] < reg["leader_epoch"]:
        return "FENCED_LEADER_EPOCH"
    if reg["leader"] != broker:
        return "INVALID_REQUEST"
    if req["zk_version"] < reg["partition_epoch"]:
        return "INVALID_UPDATE_VERSION"
    if broker not in req["new_isr"] or any(r not in reg["replicas"] for r in req["new_isr"]):
        return "INVALID_REQUEST"
    if req.get("leader_recovery_state", 0) == 1 and len(req["new_isr"]) > 1:
        return "INVALID_REQUEST"
    if no_recovered_to_recovering and req.get("leader_recovery_state", 0) == 1 \
            and reg["leader_recovery_state"] == "RECOVERED":
        return "INVALID_REQUEST"
    if any(not image.is_active(r) for r in req["new_isr"]):
        return "INELIGIBLE_REPLICA"
    return None
