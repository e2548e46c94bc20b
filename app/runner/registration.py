"""Where the app reads a partition's registration and the active controller, in either mode.

ZooKeeper eras keep them in znodes (the partition-state znode, ``/controller``); KRaft eras
(docs/model.md §20) in the quorum's committed metadata image (``PartitionRegistration`` replayed
from ``PartitionRecord`` / ``PartitionChangeRecord``) and the Raft leader. A KRaft simulation has no
state znodes at all, so every reader of "the leader and ISR the cluster agreed on" asks here.
"""
from engine.kraft.kraft_view import controller_summary


def partition_registration(sim, key):
    """``(version, leader, leader_epoch, isr)`` of partition ``key``, or None before it exists.
    ``version`` changes whenever the registration is rewritten: the state znode's mzxid in
    ZooKeeper mode, the partition epoch in KRaft (bumped by every PartitionChangeRecord)."""
    if sim.quorum is not None:
        reg = sim.quorum.image.partitions.get(sim.split_key(key))
        if reg is None:
            return None
        return reg["partition_epoch"], reg["leader"], reg["leader_epoch"], reg["isr"]
    node = sim.zk_server.tree.nodes.get(sim.state_path(key))
    if node is None:
        return None
    data = node.data
    return node.mzxid, data["leader"], data["leader_epoch"], data["isr"]


def active_controller(sim):
    """``{"broker": id or None, "epoch": n}``: the ZooKeeper-elected controller broker, or in KRaft
    the active controller voter (the Raft leader) and its Raft epoch."""
    if sim.quorum is not None:
        return controller_summary(sim)
    tree = sim.zk_server.tree
    controller = tree.nodes.get("/controller")
    epoch = tree.nodes.get("/controller_epoch")
    return {"broker": controller.data["brokerid"] if controller else None,
            "epoch": epoch.data if epoch else 0}
