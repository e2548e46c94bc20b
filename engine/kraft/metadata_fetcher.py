"""The broker as an observer of the metadata log, and what it does with each record
(``BrokerMetadataListener`` / ``MetadataLoader`` and ``ReplicaManager.applyDelta``,
docs/model.md §20.2, §20.7).

The broker fetches committed records from the Raft leader (any voter names it), replays them into
its own image and acts on the partitions it hosts through the same become-leader /
become-follower code the ZooKeeper eras use for LeaderAndIsr. A record with a lower or equal
partition epoch than the local one is ignored (the leader applies its own AlterPartition answer
first); a higher partition epoch with the same leader epoch only installs the ISR.
"""
from engine.core.messages import METADATA_FETCH
from engine.kraft.combined import read_local_log
from engine.kraft.metadata_image import BROKER_CHANGE, PARTITION, PARTITION_CHANGE, REGISTER_BROKER

RETRY_BACKOFF_MS = 20


class MetadataFetcher:
    """Mixin of ``KraftBroker``."""
    #: brokers' records replayed since the last publish (engine 1.4.0); class default for snapshots
    md_brokers_touched = False
    #: MetadataLoader.lastAppliedOffset: the offset of the last published image, -1 before the
    #: first publish (engine 1.5.0's heartbeats report it); class default for snapshots
    published_offset = -1
    #: MetadataLoader's initial catch-up is over: it reached the high watermark (engine 1.5.0)
    md_caught_up = False

    def fetch_metadata(self, _=None):
        if self.state not in ("starting", "running", "shutting_down") or self.md_in_flight:
            return
        if self.colocated_voter is not None:
            read_local_log(self)  # combined mode: one Raft client for both roles (§20.11)
            return
        voters = self.sim.quorum.voter_ids
        target = self.raft_leader if self.raft_leader is not None \
            else voters[self.md_voter_index % len(voters)]
        body = {"replica_id": self.node_id, "epoch": self.raft_epoch, "fetch_offset": self.metadata_offset,
                "last_fetched_epoch": -1}
        self.md_in_flight = True
        self.request(target, METADATA_FETCH, body, self.config["controller.quorum.request.timeout.ms"],
                     self._on_metadata_fetched, target)

    def _on_metadata_fetched(self, target, body, error):
        self.md_in_flight = False
        if self.state not in ("starting", "running", "shutting_down"):
            return
        if error or body is None or body.get("error"):
            if self.sim.rules_1_4:
                if self._after_refusal(target, body, error):
                    self.fetch_metadata()  # handled: the RequestManager is ready at once
                    return
            else:
                hint = (body or {}).get("leader")
                if hint is not None and hint != target and not error:
                    self.raft_leader = hint
                else:
                    self.raft_leader = None
                    self.md_voter_index += 1  # ask the next voter who leads (pollFollowerAsObserver)
            self.set_timer(RETRY_BACKOFF_MS, self.fetch_metadata)
            return
        self.raft_leader = body["leader"]
        self.raft_epoch = body["epoch"]
        self.controller_id = body["leader"]
        self.quorum_hw = body["hw"]
        for record in body["records"]:
            if record["offset"] == self.metadata_offset:
                self.apply_metadata(record)
        if self.metadata_offset >= body["hw"] and self.metadata_offset > 0:
            self.md_caught_up = True  # stillNeedToCatchUp: the high watermark and a record seen
        if self.metadata_offset >= body["hw"] and self.state != "starting":
            self.publish()  # MetadataLoader: one new image per batch, once caught up and registered
        self.fetch_metadata()

    def _after_refusal(self, target, body, error):
        """Engine 1.4.0: a refusal names the voter's epoch and leader, and the observer moves as
        ``KafkaRaftClient.maybeHandleCommonResponse`` -> ``maybeTransition`` @ 3.9.0 / 4.1.0 says:
        to a higher epoch (following the leader named, if any), or to the named leader of its own
        epoch when it knows none; an older epoch (UNKNOWN_LEADER_EPOCH: the voter is behind) is
        ignored. It asks the next voter when it knows no leader, or when the one it follows
        refused without news (a resigned leader names itself). True when it learned a new leader
        to fetch from: Kafka fetches from it at once (the refusal was handled, no backoff); any
        other refusal waits ``controller.quorum.retry.backoff.ms`` (simplification: Kafka asks
        again at once after every refusal it handled)."""
        before = (self.raft_epoch, self.raft_leader)
        if not error and body is not None and body.get("epoch") is not None:
            epoch, leader = body["epoch"], body.get("leader")
            if epoch > self.raft_epoch:
                self.raft_epoch, self.raft_leader = epoch, leader
            elif epoch == self.raft_epoch and leader is not None and self.raft_leader is None:
                self.raft_leader = leader
        moved = (self.raft_epoch, self.raft_leader) != before
        if error or self.raft_leader is None or (self.raft_leader == target and not moved):
            self.raft_leader = None
            self.md_voter_index += 1  # ask the next voter who leads (pollFollowerAsObserver)
            return False
        return moved

    def publish(self):
        self.published_offset = self.metadata_offset - 1  # updateLastAppliedImageProvenance
        if self.md_brokers_touched:
            # engine 1.4.0: the metadata cache (KRaftMetadataCache.setImage) takes the new image's
            # brokers at the publish, before the partitions are applied (its publisher runs first)
            self.md_brokers_touched = False
            self._cache_brokers()
        touched, self.md_touched = self.md_touched, {}
        for topic, index in touched:
            self.apply_partition(topic, index)

    def apply_metadata(self, record):
        self.md_image.replay(record)
        self.metadata_offset = record["offset"] + 1
        kind = record["type"]
        if kind in (REGISTER_BROKER, BROKER_CHANGE):
            if self.sim.rules_1_4:
                self.md_brokers_touched = True  # the cache changes at the next publish
            else:  # engine 1.3.0: the cache changed record by record
                self._cache_brokers()
            reg = self.md_image.brokers.get(self.node_id)
            if reg is not None and reg["broker_epoch"] == self.broker_epoch:
                self.fenced = reg["fenced"]
        elif kind in (PARTITION, PARTITION_CHANGE):
            self.md_touched[(record["topic"], record["partition"])] = None

    def _cache_brokers(self):
        """The metadata cache's brokers. Engine 1.5.0 (``KRaftMetadataCache`` @ 3.9.0 / 4.1.0): the
        alive brokers clients see (``getAliveBrokerNodes``, ``getPartitionReplicaEndpoints``,
        ``getAliveBrokerNode`` for a follower's leader) are the unfenced ones, a broker in
        controlled shutdown included; KIP-841 eligibility (``isBrokerFenced`` /
        ``isBrokerShuttingDown``) keeps the active ones. Engine 1.4.0 used the active ones for both."""
        image = self.md_image
        active = {b: reg["broker_epoch"] for b, reg in image.brokers.items() if image.is_active(b)}
        if self.sim.rules_1_5:
            self.live_brokers = {b: reg["broker_epoch"] for b, reg in image.brokers.items()
                                 if not reg["fenced"]}
            self.eligible_brokers = active
        else:
            self.live_brokers = active

    def apply_partition(self, topic, index):
        reg = self.md_image.partitions[(topic, index)]
        key = self.sim.key(topic, index)
        st = {"key": key, "topic": topic, "partition": index, "replicas": list(reg["replicas"]),
              "leader": reg["leader"], "leader_epoch": reg["leader_epoch"], "isr": list(reg["isr"]),
              "zk_version": reg["partition_epoch"], "controller_epoch": self.raft_epoch,
              "leader_recovery_state": 1 if reg["leader_recovery_state"] == "RECOVERING" else 0}
        self.metadata[key] = st
        if self.node_id not in reg["replicas"] or self.state == "stopped":
            return
        part = self.partitions.get(key) or self._create_partition(st)
        if st["zk_version"] <= part.zk_version:
            return  # not newer than what this broker already has (partition epoch)
        if st["leader"] == self.node_id:
            if st["leader_epoch"] > part.leader_epoch or not part.is_leader:
                self.make_leader(part, st)
            else:
                self._install_isr(part, st)
        elif st["leader_epoch"] > part.leader_epoch:
            self.make_follower(part, st)
        else:
            part.zk_version = st["zk_version"]  # an ISR-only change: the fetcher is not touched
        if self.state == "shutting_down" and self.sim.rules_1_3 and st["leader"] != self.node_id \
                and (st["leader"] == -1 or self.node_id not in st["isr"]):
            # applyLocalFollowersDelta: in controlled shutdown such a follower is stopped
            # (stopPartitions, the log kept); engine 1.2.0 kept fetching
            self.remove_fetcher_partition(key)
        if not self.hw_checkpoint_started:
            self.hw_checkpoint_started = True
            self.set_timer(self.config["replica.high.watermark.checkpoint.interval.ms"],
                           self._hw_checkpoint_task)

    def _install_isr(self, part, st):
        """Partition.makeLeader with the same leader epoch: the new ISR and partition epoch only."""
        before = list(part.isr)
        part.isr = list(st["isr"])
        part.zk_version = st["zk_version"]
        part.pending = None
        if before != part.isr:
            self.sim.emit("isr_updated", topic=part.topic, partition=part.index, broker=self.node_id,
                          isr_before=before, isr=list(part.isr), leader_epoch=part.leader_epoch,
                          partition_epoch=part.zk_version,
                          reason=f"the metadata log changed the ISR to {part.isr} in partition "
                                 f"epoch {part.zk_version} (same leader epoch)")
        self.maybe_increment_hw(part, f"ISR {part.isr} from the metadata log")
