"""A partition's leader, leader epoch and ISR as the cluster's metadata has them, in either mode:
the state znode in ZooKeeper eras, the registration the committed metadata log gives in KRaft
eras (docs/scenario-format.md §4.2). The live view, its refresh window, the loss check and the
time series all ask this one question, so none of them reads ZooKeeper in a KRaft run.
"""

EMPTY = {"leader": -1, "leader_epoch": -1, "isr": []}


def partition_state(sim, key):
    """(state, version): ``state`` has at least ``leader``, ``leader_epoch`` and ``isr`` (EMPTY
    before the partition exists); ``version`` changes with every write of it (the znode's mzxid,
    or the partition epoch in KRaft), None before the partition exists."""
    if getattr(sim, "quorum", None) is not None:
        reg = sim.quorum.image.partitions.get(sim.split_key(key))
        return (reg, reg["partition_epoch"]) if reg is not None else (EMPTY, None)
    node = sim.zk_server.tree.nodes.get(sim.state_path(key))
    return (node.data, node.mzxid) if node is not None else (EMPTY, None)


def active_controller(sim):
    """{"broker": id | None, "epoch": n}: the broker holding /controller and the controller epoch,
    or in KRaft eras the active controller (the Raft leader) and the Raft epoch."""
    quorum = getattr(sim, "quorum", None)
    if quorum is not None:
        return {"broker": quorum.active, "epoch": quorum.raft_epoch}
    tree = sim.zk_server.tree
    controller = tree.nodes.get("/controller")
    epoch = tree.nodes.get("/controller_epoch")
    return {"broker": controller.data["brokerid"] if controller else None, "epoch": epoch.data if epoch else 0}
