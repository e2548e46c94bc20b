"""``PartitionChangeBuilder`` as a pure function (docs/model.md §20.5, §20.6).

Kafka's controller never edits a partition in place: it builds a ``PartitionChangeRecord`` that
names only the fields that change, and every broker merges it (``PartitionRegistration.merge``):
the partition epoch goes up by one for every record, the leader epoch only when the record sets
``leader`` (-2 in Kafka means "unchanged"; here the key is simply absent). The order of the steps
follows ``PartitionChangeBuilder.build`` at 4.1.0 (ELR first, then the election, then the ISR);
with ELR off it reduces to the 3.9.0 builder (no leader-epoch bump on an ISR shrink, KAFKA-15021).
"""

RECOVERED = "RECOVERED"
RECOVERING = "RECOVERING"


def new_registration(replicas, isr, leader):
    """A ``PartitionRecord`` at topic creation (ReplicationControlManager.buildPartitionRegistration):
    leader epoch 0, partition epoch 0."""
    return {"replicas": list(replicas), "isr": list(isr), "leader": leader, "leader_epoch": 0,
            "partition_epoch": 0, "elr": [], "last_known_elr": [],
            "leader_recovery_state": RECOVERED}


def merge(reg, change):
    """PartitionRegistration.merge: every field the record carries replaces the current one."""
    out = dict(reg)
    for field in ("isr", "elr", "last_known_elr", "leader_recovery_state", "replicas"):
        if field in change:
            out[field] = list(change[field]) if isinstance(change[field], list) else change[field]
    if "leader" in change:
        out["leader"] = change["leader"]
        out["leader_epoch"] = reg["leader_epoch"] + 1
    out["partition_epoch"] = reg["partition_epoch"] + 1
    return out


def _ordered(replicas, members):
    return [r for r in replicas if r in members]


def build_change(reg, target_isr, acceptable, elr_enabled=False, min_isr=1, unclean=False,
                 preferred=False, unclean_shutdown=()):
    """The record fields (without topic/partition) or None for a no-op, and the election kind
    ("clean", "elr", "last_known_leader", "unclean", "preferred" or None when the leader stays
    or the partition stays/gets leaderless).

    ``acceptable(b)``: registered, unfenced and not in controlled shutdown (isAcceptableLeader).
    """
    replicas = reg["replicas"]
    target_isr = list(target_isr)
    # maybePopulateTargetElr (4.x): below min ISR, whoever leaves the ISR joins the ELR.
    target_elr = list(reg["elr"])
    target_lke = list(reg["last_known_elr"])
    if elr_enabled:
        if len(target_isr) >= min_isr:
            target_elr, target_lke = [], []
        else:
            joined = set(reg["elr"]) | set(reg["isr"])
            target_elr = _ordered(replicas, joined - set(target_isr) - set(unclean_shutdown))
    leader, kind, recovery = _elect(reg, target_isr, target_elr, target_lke, acceptable,
                                    elr_enabled, unclean, preferred)
    if kind in ("elr",):
        target_isr = [leader]
        target_elr = [r for r in target_elr if r != leader]
    elif kind in ("unclean", "last_known_leader"):
        target_isr, target_elr, target_lke = [leader], [], []
    change = {}
    if leader != reg["leader"]:
        change["leader"] = leader
    if target_isr != reg["isr"] and (target_isr or elr_enabled):
        change["isr"] = target_isr
    if elr_enabled:
        lke = _last_known_leader(reg, change, target_lke, leader)
        if target_elr != reg["elr"]:
            change["elr"] = target_elr
        if lke != reg["last_known_elr"]:
            change["last_known_elr"] = lke
    if recovery is not None and recovery != reg["leader_recovery_state"]:
        change["leader_recovery_state"] = recovery
    return (change or None), kind


def _elect(reg, target_isr, target_elr, target_lke, acceptable, elr_enabled, unclean, preferred):
    """tryElection / electAnyLeader / electPreferredLeader: (leader, kind, recovery state)."""
    replicas = reg["replicas"]
    current = reg["leader"]

    def valid(b):
        if not acceptable(b):
            return False
        return b in target_isr or (elr_enabled and not target_isr and b in target_elr)

    if preferred and valid(replicas[0]):
        return replicas[0], ("preferred" if replicas[0] != current else None), None
    if current != -1 and valid(current):
        return current, None, None
    for b in replicas:
        if valid(b):
            return b, ("clean" if b in target_isr else "elr"), None
    if elr_enabled and not target_isr and not target_elr and len(target_lke) == 1 \
            and acceptable(target_lke[0]):
        return target_lke[0], "last_known_leader", RECOVERING  # KAFKA-19522 fixed: acceptable only
    if unclean and not preferred:
        for b in replicas:
            if acceptable(b):
                return b, "unclean", RECOVERING
    return -1, None, None


def _last_known_leader(reg, change, target_lke, leader):
    """maybeUpdateLastKnownLeader: an empty ISR remembers who led just before; a leader clears it."""
    isr_after = change.get("isr", reg["isr"])
    if not isr_after and reg["leader"] != -1 and target_lke != [reg["leader"]]:
        return [reg["leader"]]
    if leader != -1 and target_lke:
        return []
    return target_lke


def change_text(topic, partition, reg):
    """The short line the view and the CLI print for a partition's state after a record."""
    text = (f"{topic}-{partition} leader {reg['leader']} isr {reg['isr']} "
            f"epoch {reg['leader_epoch']}/{reg['partition_epoch']}")
    if reg["elr"] or reg["last_known_elr"]:
        text += f" elr {reg['elr']} lke {reg['last_known_elr']}"
    return text
