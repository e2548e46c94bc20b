"""Pure partition rules: lag, ISR shrink and expansion, high watermark, truncation (§2, §3, §5, §8).

These functions hold no state of their own and never look at a clock; the broker calls them with
the numbers and records the result. Each docstring names its section of docs/model.md and the era
differences, and every function has exhaustive unit tests in ``tests/engine/test_partition.py``.
"""
from engine.server.log import UNDEFINED

#: Kafka initialises lastCaughtUpTimeMs to 0 = the Unix epoch, i.e. "never" next to the wall
#: clock. Simulated time starts at 0, so "never" needs its own value.
NEVER_MS = -(2 ** 62)


class RemoteReplica:
    """What a leader knows about one follower (Replica.scala / ReplicaState, §1.2)."""
    __slots__ = ("leo", "log_start_offset", "last_caught_up_ms", "last_fetch_leader_leo",
                 "last_fetch_time_ms")

    def __init__(self):
        self.leo = UNDEFINED
        self.log_start_offset = UNDEFINED
        self.last_caught_up_ms = NEVER_MS
        self.last_fetch_leader_leo = UNDEFINED
        self.last_fetch_time_ms = NEVER_MS

    def to_dict(self):
        return {"leo": self.leo, "last_caught_up_ms": self.last_caught_up_ms,
                "last_fetch_leader_leo": self.last_fetch_leader_leo,
                "last_fetch_time_ms": self.last_fetch_time_ms}


def update_fetch_state(remote, fetch_offset, leader_leo, now_ms):
    """Record a follower fetch at ``fetch_offset`` read when the leader LEO was ``leader_leo``.

    KAFKA-4485 rule (0.10.2+, §2.2): caught up now if the fetch reached the leader's current
    LEO; otherwise caught up as of the *previous* fetch if it reached the LEO the leader had then.
    """
    if fetch_offset >= leader_leo:
        if now_ms > remote.last_caught_up_ms:
            remote.last_caught_up_ms = now_ms
    elif fetch_offset >= remote.last_fetch_leader_leo:
        if remote.last_fetch_time_ms > remote.last_caught_up_ms:
            remote.last_caught_up_ms = remote.last_fetch_time_ms
    remote.last_fetch_leader_leo = leader_leo
    remote.last_fetch_time_ms = now_ms
    remote.leo = fetch_offset


def is_out_of_sync(remote, leader_leo, now_ms, lag_max_ms, era):
    """§2.2: not caught up for more than replica.lag.time.max.ms; from 2.1 (KAFKA-7152) a
    follower whose LEO equals the leader's LEO is never out of sync."""
    if era.out_of_sync_needs_leo_behind and remote.leo == leader_leo:
        return False
    return now_ms - remote.last_caught_up_ms > lag_max_ms


def out_of_sync_reason(replica_id, remote, leader_leo, now_ms, lag_max_ms):
    return (f"follower {replica_id} not caught up for {now_ms - remote.last_caught_up_ms} ms > "
            f"replica.lag.time.max.ms {lag_max_ms} (follower LEO {remote.leo}, "
            f"leader LEO {leader_leo})")


def can_join_isr(remote, leader_hw, epoch_start_offset, era):
    """§3: a non-ISR follower joins once its LEO reaches the leader's HW — not the LEO — and,
    from 2.1 (KAFKA-7128), also the leader-epoch start offset."""
    if remote.leo < leader_hw:
        return False
    if era.expand_needs_epoch_start_offset and remote.leo < epoch_start_offset:
        return False
    return True


def expand_reason(replica_id, remote, leader_hw, epoch_start_offset, era):
    text = f"follower {replica_id} LEO {remote.leo} >= leader HW {leader_hw}"
    if era.expand_needs_epoch_start_offset:
        text += f" and >= leader epoch start offset {epoch_start_offset} (KAFKA-7128)"
    return text


def candidate_high_watermark(leader_id, leader_leo, isr, remotes, now_ms, lag_max_ms,
                             eligible=None):
    """§5.1 (0.10.2-2.6): min LEO over the leader, the ISR and every follower caught up within
    replica.lag.time.max.ms. A member with unknown LEO (-1) makes the candidate -1.

    ``eligible`` (KAFKA-15021, 3.6+, §17.5): the brokers whose replicas may join the ISR; a
    caught-up follower outside the ISR and not among them does not hold the HW. None: all may."""
    hw = leader_leo
    for rid, remote in remotes.items():
        if rid in isr or (now_ms - remote.last_caught_up_ms <= lag_max_ms
                          and (eligible is None or rid in eligible)):
            if remote.leo < hw:
                hw = remote.leo
    return hw


def hw_truncation_offset(hw, leo):
    """Pre-KIP-101 become-follower truncation (§8.1a): to the local HW."""
    return min(hw, leo)


def kip101_truncation_offset(end_offset, leo, hw):
    """§8.1b (0.11-1.1): UNDEFINED -> the HW; an end offset at or past our LEO -> no-op."""
    if end_offset == UNDEFINED:
        return hw
    if end_offset >= leo:
        return leo
    return end_offset


def kip279_truncation(leader_epoch, end_offset, leo, hw, own_end_offset_for):
    """§8.1c (2.0+): returns (offset, done). ``own_end_offset_for(epoch)`` is the follower's own
    cache lookup. When the follower never saw the leader's epoch it truncates to its own end of
    the nearest epoch and asks again (done=False)."""
    if end_offset == UNDEFINED:
        return hw, True
    if leader_epoch == UNDEFINED:
        return min(end_offset, leo), True
    follower_epoch, follower_end = own_end_offset_for(leader_epoch)
    if follower_end == UNDEFINED:
        return min(end_offset, leo), True
    if follower_epoch != leader_epoch:
        return min(follower_end, leo), False
    return min(follower_end, end_offset, leo), True


class Partition:
    """One broker's view of one partition (Partition.scala, §1.2). The log outlives the object:
    it belongs to the broker's disk and survives crashes; this object does not."""
    __slots__ = ("topic", "index", "key", "replicas", "log", "leader_id", "leader_epoch",
                 "controller_epoch", "zk_version", "isr", "remotes", "epoch_start_offset",
                 "isr_write_in_flight", "is_leader", "term_start_hw", "isr_update_failed",
                 "reconciled", "pending", "recovery_state")

    def __init__(self, topic, index, key, replicas, log):
        self.topic = topic
        self.index = index
        self.key = key
        self.replicas = list(replicas)
        self.log = log
        self.leader_id = -1
        self.leader_epoch = -1
        self.controller_epoch = -1
        self.zk_version = -1
        self.isr = []            # followers keep an empty ISR (makeFollower)
        self.remotes = {}        # leader only: follower id -> RemoteReplica
        self.epoch_start_offset = 0
        self.isr_write_in_flight = False
        self.is_leader = False
        self.term_start_hw = 0
        self.isr_update_failed = False  # a conditional ISR write failed; until next LeaderAndIsr
        self.reconciled = False  # acting in the current epoch: leader, or follower done truncating
        # AlterIsr eras only (docs/model.md §17.2): the proposal awaiting the controller, or None
        self.pending = None
        self.recovery_state = 0  # KIP-704: 0 RECOVERED, 1 RECOVERING (3.3+, docs/model.md §17.6)

    def view(self):
        return {"leader": self.leader_id, "leader_epoch": self.leader_epoch, "isr": list(self.isr),
                "zk_version": self.zk_version, "is_leader": self.is_leader,
                "epoch_start_offset": self.epoch_start_offset,
                "remotes": {str(r): rem.to_dict() for r, rem in self.remotes.items()}}


def maximal_isr(part):
    """docs/model.md §17.2: the committed ISR plus a newcomer whose expansion is pending; a
    pending shrink still counts the leaving replica (Partition.maximalIsr, 2.7+). Without
    AlterIsr (``pending`` always None) it is the ISR."""
    try:
        pending = part.pending
    except AttributeError:  # a Partition pickled before AlterIsr support: no slot value
        return part.isr
    if pending is not None and pending["kind"] == "isr_expand":
        return list(pending["new_isr"])
    return part.isr


def isr_state(part):
    """``isr_state`` of docs/scenario-format.md §4.1: committed, maximal and the pending kind."""
    pending = part.pending
    return {"committed": list(part.isr), "maximal": list(maximal_isr(part)),
            "pending": None if pending is None else pending["kind"][4:]}


def partition_state_json(leader, leader_epoch, isr, controller_epoch, recovery_state=0):
    """The JSON of /brokers/topics/<t>/partitions/<p>/state (ZkData TopicPartitionStateZNode).
    KIP-704 (3.2+): ``leader_recovery_state`` is written only when RECOVERING (docs/model.md §17.6)."""
    data = {"controller_epoch": controller_epoch, "leader": leader, "version": 1,
            "leader_epoch": leader_epoch, "isr": list(isr)}
    if recovery_state:
        data["leader_recovery_state"] = recovery_state
    return data
