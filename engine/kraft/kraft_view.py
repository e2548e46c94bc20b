"""The KRaft parts of the live view and of the run result (docs/scenario-format.md §4.2,
docs/model.md §20.9): the quorum, the metadata log, brokers' registration state and partitions'
registrations as the committed metadata log has them.
"""
from engine.kraft.metadata_image import NO_OP, record_text

LOG_VIEW = 60


def raft_epoch(sim):
    return max([v.epoch for v in sim.quorum.voters.values()] + [0])


def controller_summary(sim):
    quorum = sim.quorum
    active = quorum.voters.get(quorum.active)
    return {"broker": quorum.active, "epoch": active.epoch if active else raft_epoch(sim)}


def _leader_log(sim):
    voters = sim.quorum.voters.values()
    leaders = [v for v in voters if v.running and v.role == "leader"]
    source = max(leaders, key=lambda v: v.epoch) if leaders else max(voters, key=lambda v: len(v.log))
    return source.log


def quorum_view(sim):
    quorum = sim.quorum
    hw = quorum.high_watermark()
    log = _leader_log(sim)
    records = []
    for record in log[-LOG_VIEW:]:
        entry = dict(record)
        entry.pop("log_time_ms", None)   # the metrics' append time (docs/model.md §22.8), not shown
        entry["committed"] = record["offset"] < hw
        entry["text"] = record.get("text") or record_text(record)
        records.append(entry)
    return {"active": quorum.active, "raft_epoch": raft_epoch(sim), "high_watermark": hw,
            "log_len": len(log), "voters": [v.view() for v in quorum.voters.values()],
            "log": records}


def broker_fields(sim, broker):
    """What a KRaft broker adds to its view: the controller's record of it and its metadata lag."""
    reg = sim.quorum.image.brokers.get(broker.node_id)
    controller = sim.quorum.active_controller()
    deadline = None
    if controller is not None and reg is not None and not reg["fenced"] \
            and broker.node_id in controller.contact:
        deadline = controller.contact[broker.node_id] + sim.config["broker.session.timeout.ms"]
    offset = broker.metadata_offset if broker.state != "stopped" else 0
    return {"broker_epoch": reg["broker_epoch"] if reg else -1,
            "fenced": True if reg is None else reg["fenced"],
            "in_controlled_shutdown": bool(reg and reg["in_controlled_shutdown"]),
            "metadata_offset": offset, "metadata_lag": sim.quorum.high_watermark() - offset,
            "session_deadline_ms": deadline}


def partition_state(sim, key):
    """The committed registration of one partition, or an empty one before its PartitionRecord."""
    reg = sim.quorum.image.partitions.get(sim.split_key(key))
    if reg is None:
        return {"leader": -1, "leader_epoch": -1, "isr": [], "partition_epoch": -1, "elr": [],
                "last_known_elr": [], "leader_recovery_state": "RECOVERED"}
    return reg


def partition_fields(reg):
    return {"partition_epoch": reg["partition_epoch"], "elr": list(reg["elr"]),
            "last_known_elr": list(reg["last_known_elr"]),
            "leader_recovery_state": reg["leader_recovery_state"]}


def controller_result(sim):
    quorum = sim.quorum
    return {"active": quorum.active, "raft_epoch": raft_epoch(sim),
            "voters": {str(v.node_id): {"role": v.role if v.running else "stopped", "epoch": v.epoch,
                                        "log_end_offset": len(v.log), "high_watermark": v.hw}
                       for v in quorum.voters.values()}}


def metadata_log_result(sim):
    out = []
    for record in sim.quorum.committed_log:
        entry = {k: v for k, v in record.items() if k not in ("text", "log_time_ms")}
        out.append(entry)
    return out


def no_op_count(sim):
    return sum(1 for r in sim.quorum.committed_log if r["type"] == NO_OP)
