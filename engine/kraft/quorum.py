"""The controller quorum as a whole (docs/model.md §20.1, §20.2): its voters, which one is the
active controller, and the records the quorum has committed.

Raft never loses a committed record, so the committed prefix is one list for the whole run:
whichever leader advances the high watermark appends the newly committed records here, and the
history tells the story from them (``partition_change``, ``broker_fenced``...). Voter ids come
from the scenario's ``controllers`` (default 3000, 3001, 3002: Kafka's docs and test clusters
number dedicated controllers from 3000, so they never collide with broker ids).
"""
from engine.kraft.combined import colocate
from engine.kraft.metadata_image import (BROKER_CHANGE, PARTITION, PARTITION_CHANGE, REGISTER_BROKER,
                             MetadataImage)
from engine.kraft.quorum_controller import QuorumController
from engine.kraft.raft import QuorumVoter


class Quorum:
    def __init__(self, sim, voter_ids):
        self.sim = sim
        self.voter_ids = list(voter_ids)
        self.voters = {}
        self.committed_log = []        # every committed record, in offset order
        self.image = MetadataImage()   # the committed image (what the metadata log says now)
        self.active = None             # the active controller's id
        self.raft_epoch = 0

    def add_voter(self, index, vid):
        voter = QuorumVoter(self.sim, vid, self.voter_ids, self)
        self.voters[vid] = voter
        self.sim.network.add_node(vid, voter)
        self.sim.scheduler.schedule_boot(index, voter.start)
        return voter

    def add_colocated_voter(self, broker):
        """Combined mode (§20.11): the voter shares the broker's process, id and network node;
        the broker starts it."""
        voter = QuorumVoter(self.sim, broker.node_id, self.voter_ids, self)
        self.voters[broker.node_id] = voter
        colocate(self.sim, broker, voter)
        return voter

    # -- commits -----------------------------------------------------------------------------------
    def on_commit(self, voter):
        """The leader's high watermark moved: the records below it are committed for good."""
        self.raft_epoch = max(self.raft_epoch, voter.epoch)
        while len(self.committed_log) < voter.hw:
            record = voter.log[len(self.committed_log)]
            self.committed_log.append(record)
            self.image.replay(record)
            self._tell(record)
        if voter.controller is None and voter.role == "leader":
            self._activate(voter)
        elif voter.controller is not None:
            voter.controller.on_commit(voter.hw)

    def _activate(self, voter):
        """QuorumController.claim: the Raft leader has replayed its epoch's first record."""
        self.active = voter.node_id
        self.sim.emit("controller_activated", controller=voter.node_id, epoch=voter.epoch,
                      reason=f"controller {voter.node_id} committed its LeaderChange record of "
                             f"epoch {voter.epoch}: it replays the log and becomes the active "
                             f"controller; every registered broker gets a fresh session")
        voter.controller = QuorumController(self.sim, voter)
        voter.controller.activate()

    def deactivate(self, voter, reason):
        voter.controller.stop()
        voter.controller = None
        if self.active == voter.node_id:
            self.active = None
            self.sim.emit("controller_deactivated", controller=voter.node_id, epoch=voter.epoch,
                          reason=reason)

    def active_controller(self):
        voter = self.voters.get(self.active)
        return voter.controller if voter is not None else None

    # -- the story of the committed records --------------------------------------------------------
    def _tell(self, record):
        sim = self.sim
        kind = record["type"]
        if kind == PARTITION_CHANGE:
            fields = {k: record[k] for k in ("leader", "elr", "last_known_elr",
                                             "leader_recovery_state") if k in record}
            reg = self.image.partitions[(record["topic"], record["partition"])]
            if record.get("election"):
                sim.emit("leader_elected", topic=record["topic"], partition=record["partition"],
                         leader=reg["leader"], leader_epoch=reg["leader_epoch"], isr=list(reg["isr"]),
                         kind=record["election"], controller=self.active,
                         reason=f"{record.get('reason')}: {record['election']} election of "
                                f"{reg['leader']} (PartitionChangeBuilder, assignment order)")
            sim.emit("partition_change", topic=record["topic"], partition=record["partition"],
                     offset=record["offset"], isr=list(reg["isr"]), **fields,
                     leader_epoch=reg["leader_epoch"], partition_epoch=reg["partition_epoch"],
                     reason=record.get("reason", "PartitionChangeRecord committed"))
            sim.invariants.on_partition_state(record["topic"], record["partition"], reg)
        elif kind == PARTITION:
            reg = self.image.partitions[(record["topic"], record["partition"])]
            sim.invariants.on_partition_state(record["topic"], record["partition"], reg)
        elif kind == REGISTER_BROKER:
            sim.emit("broker_registered", broker=record["broker"], broker_epoch=record["broker_epoch"],
                     clean=record.get("clean", True),
                     reason=f"RegisterBrokerRecord at offset {record['offset']}: broker epoch "
                            f"{record['broker_epoch']}, fenced until it has caught up")
        elif kind == BROKER_CHANGE:
            self._tell_broker_change(record)

    def _tell_broker_change(self, record):
        broker = record["broker"]
        reason = record.get("reason", "BrokerRegistrationChangeRecord committed")
        if record.get("fenced") == 1:
            self.sim.emit("broker_fenced", broker=broker, broker_epoch=record["broker_epoch"],
                          reason=reason)
        elif record.get("fenced") == -1:
            self.sim.emit("broker_unfenced", broker=broker, broker_epoch=record["broker_epoch"],
                          reason=reason)
        if record.get("in_controlled_shutdown"):
            self.sim.emit("controlled_shutdown_started", broker=broker,
                          broker_epoch=record["broker_epoch"], reason=reason)

    # -- views -------------------------------------------------------------------------------------
    def high_watermark(self):
        return len(self.committed_log)
