"""Every library scenario does what its description promises, in that order and at the times
Kafka's rules give (issue: the picture tells the truth — a story may not contradict its run).

Each story is a list of steps: an event type, the fields it must carry and the window of
simulated time it must fall in. The windows come from the era's timers, not from the run:
``zookeeper.session.timeout.ms`` (6 s before 2.6, 18 s in 2.6), ``replica.lag.time.max.ms``
(10 s / 30 s) with its isr-expiration check every half of it, the isr-change-propagation task
(every 2.5 s, after 5 s without changes), and a few milliseconds of network latency.
"""
import pytest

from engine.scenario.library import library
from engine.simulation import Simulation

LATENCY_SLACK_MS = 100          # a handful of request round trips on the default 1-2 ms links


def step(type_, lo=0, hi=None, **fields):
    return {"type": type_, "lo": lo, "hi": hi, "fields": fields}


def at(type_, t_ms, **fields):
    """An event caused directly at ``t_ms`` (a timeline operation, or a reply a few ms later)."""
    return step(type_, t_ms, t_ms + LATENCY_SLACK_MS, **fields)


def session_expiry(crash_ms, session_ms, broker):
    """ZooKeeper expires a session ``session_ms`` after the last heartbeat it received: at most
    that long after the broker stopped (earlier when the last ping came before the crash)."""
    return step("session_expired", crash_ms, crash_ms + session_ms + LATENCY_SLACK_MS, broker=broker)


def first_isr_check_after(t_ms, lag_ms):
    """The leader's isr-expiration task runs every ``lag_ms / 2`` from broker start (Kafka's
    ReplicaManager schedules it with that period); the shrink happens at the first run after
    the follower has been out of sync for longer than ``lag_ms``."""
    period = lag_ms // 2
    first = ((t_ms + lag_ms) // period + 1) * period
    return step("isr_shrink", first, first + LATENCY_SLACK_MS)


def isr_change_notification_after(t_ms):
    """isr-change-propagation (every 2500 ms) writes the notification once 5000 ms passed
    without further ISR changes: 5 to 7.5 s after the change."""
    return step("isr_change_notification", t_ms + 5000, t_ms + 7500 + LATENCY_SLACK_MS, stage="created")


#: TCP retransmissions of a held segment, ms after it was first sent: 200 ms doubling, capped
#: at 120 s (Linux tcp_retransmit_timer, RFC 6298; docs/model.md §16)
RETRANSMISSIONS_MS = [200, 600, 1400, 3000, 6200, 12600, 25400, 51000, 102200, 204600]


def retransmitted(sent_lo, sent_hi, heal_ms):
    """The first retransmission at or after a heal of a segment first sent in [sent_lo, sent_hi]:
    the earliest and latest instant it can be, over that range of send times."""
    times = []
    for sent in (sent_lo, sent_hi):
        times.append(next(sent + o for o in RETRANSMISSIONS_MS if sent + o >= heal_ms))
    for o in RETRANSMISSIONS_MS:  # a send time in the range whose retransmission lands right on the heal
        if sent_lo + o <= heal_ms <= sent_hi + o:
            times.append(heal_ms)
    return min(times), max(times)


def after_retransmission(type_, sent_lo, sent_hi, heal_ms, extra_ms=LATENCY_SLACK_MS, **fields):
    lo, hi = retransmitted(sent_lo, sent_hi, heal_ms)
    return step(type_, lo, hi + extra_ms, **fields)


def notification_after_retransmission(sent_lo, sent_hi, heal_ms):
    """isr_change_notification_after the ISR change a retransmission after the heal causes."""
    lo, hi = retransmitted(sent_lo, sent_hi, heal_ms)
    return step("isr_change_notification", lo + 5000, hi + 7500 + LATENCY_SLACK_MS, stage="created")


STORIES = {
    "isr-shrink-slow-follower": [
        at("fault", 5000, op="isolate", broker=2),
        dict(first_isr_check_after(5000, 30000), fields={"isr": [0, 1], "leader_epoch": 0, "zk_version": 1}),
        at("fault", 50000, op="heal"),
        # the fetch in flight at 5 s (sent 4.5-5 s: replica.fetch.wait.max.ms 500) times out after
        # replica.socket.timeout.ms 30 s; the retry goes 1 s later (replica.fetch.backoff.ms) on a
        # new connection and gets through at its first retransmission after the heal
        after_retransmission("isr_expand", 35500, 36000, 50000, isr=[0, 1, 2], leader_epoch=0),
        notification_after_retransmission(35500, 36000, 50000),
    ],
    "isr-expansion": [
        at("broker_stopped", 5000, broker=2),
        session_expiry(5000, 18000, broker=2),
        step("isr_shrink", 5000, 23200, by="controller", isr=[0, 1], leader_epoch=1),
        at("fault", 40000, op="restart", broker=2),
        at("isr_expand", 40000, isr=[0, 1, 2], leader_epoch=1),
    ],
    "isr-change-propagation": [
        at("fault", 3000, op="isolate", broker=2),
        dict(first_isr_check_after(3000, 10000), fields={"isr": [1, 0], "leader_epoch": 0}),
        isr_change_notification_after(15000),
        step("isr_change_notification", 20000, 22700, stage="processed", partitions=["orders-0"]),
        at("fault", 40000, op="heal"),
        # the follower's fetch in flight at 3 s times out 30 s later; the retry (33.5-34 s) gets
        # through at its first retransmission after the heal
        after_retransmission("isr_expand", 33500, 34000, 40000, isr=[1, 0, 2]),
        notification_after_retransmission(33500, 34000, 40000),
    ],
    "broker-failure-clean-election": [
        at("broker_stopped", 5000, broker=1),
        session_expiry(5000, 18000, broker=1),
        step("leader_elected", 5000, 23200, kind="clean", leader=2, leader_epoch=1, isr=[2, 0]),
        at("fault", 45000, op="restart", broker=1),
        at("isr_expand", 45000, isr=[2, 0, 1]),
    ],
    "not-enough-replicas": [
        at("broker_stopped", 3000, broker=1),
        session_expiry(3000, 18000, broker=2),
        step("isr_shrink", 3000, 21200, by="controller", isr=[0]),
        step("produce_failed", 3000, 21300, producer="strict", error="NOT_ENOUGH_REPLICAS"),
        at("fault", 40000, op="restart", broker=1),
        at("isr_expand", 40000, isr=[0, 1]),
    ],
    "acks1-loss-on-failover": [
        at("fault", 5000, op="isolate", broker=1),
        at("broker_stopped", 10000, broker=1),
        session_expiry(10000, 18000, broker=1),
        step("leader_elected", 10000, 28200, kind="clean", leader=2, previous_leader=1),
        at("fault", 40000, op="restart", broker=1),
        at("truncation", 40000, broker=1),
    ],
    "unclean-election-loss": [
        session_expiry(3000, 18000, broker=2),
        step("isr_shrink", 3000, 21200, by="controller", isr=[0]),
        at("broker_stopped", 30000, broker=0),
        at("fault", 32000, op="restart", broker=2),
        step("leader_elected", 32000, 48200, kind="unclean", leader=2, isr=[2]),
        step("violation", 32000, 48300, invariant="acked_record_lost"),
        at("fault", 55000, op="restart", broker=0),
        at("truncation", 55000, broker=0),
    ],
    "kip101-scenario-1-v0.10": [
        at("fault", 4000, op="isolate", broker=3),
        at("broker_stopped", 5000, broker=1),
        session_expiry(5000, 6000, broker=1),
        step("leader_elected", 5000, 11200, leader=2, kind="clean", leader_epoch=1),
        step("truncation", 5000, 11300, broker=3, removed=1),
        at("broker_stopped", 13000, broker=2),
        step("leader_elected", 13000, 19200, leader=3, kind="clean", leader_epoch=2),
        step("violation", 13000, 19300, invariant="acked_record_lost"),
    ],
    "kip101-scenario-1-v2.6": [
        at("broker_stopped", 5000, broker=1),
        step("leader_elected", 5000, 23200, leader=2, kind="clean", leader_epoch=1),
        at("broker_stopped", 26000, broker=2),
        step("leader_elected", 26000, 44200, leader=3, kind="clean", leader_epoch=2),
    ],
    "kip101-scenario-2-v0.10": [
        at("truncation", 11000, broker=2, cause="power_failure"),
        at("fault", 20000, op="restart", broker=2),
        at("leader_elected", 20000, leader=2, kind="unclean"),
        at("violation", 20000, invariant="acked_record_lost"),
        at("fault", 30000, op="restart", broker=1),
        at("violation", 30000, invariant="replica_divergence"),
    ],
    "kip101-scenario-2-v2.6": [
        at("truncation", 11000, broker=2, cause="power_failure"),
        at("leader_elected", 32000, leader=2, kind="clean"),
        at("violation", 32000, invariant="acked_record_lost"),
        at("fault", 45000, op="restart", broker=1),
        at("truncation", 45000, broker=1, to_offset=1),
    ],
    "kip279-fast-leader-changes-v1.1": [
        at("leader_elected", 11300, kind="preferred", leader=2, leader_epoch=2),
        at("broker_stopped", 11700, broker=2),
        step("leader_elected", 11700, 17800, kind="clean", leader=1, leader_epoch=3),
        at("fault", 50000, op="restart", broker=2),
        at("violation", 50000, invariant="replica_divergence"),
    ],
    "kip279-fast-leader-changes-v2.0": [
        at("leader_elected", 11300, kind="preferred", leader=2, leader_epoch=2),
        step("leader_elected", 11700, 17800, kind="clean", leader=1, leader_epoch=3),
        at("fault", 50000, op="restart", broker=2),
        at("truncation", 50000, broker=2, to_offset=1),
    ],
    "controller-failover-session-expiry": [
        at("fault", 5000, op="isolate", broker=0),
        step("zk_disconnected", 5000 + 12000, 5000 + 18000, broker=0),
        session_expiry(5000, 18000, broker=0),
        step("controller_elected", 5000, 23200, broker=1, epoch=2),
        step("leader_elected", 5000, 23300, partition=0, leader=1),
        at("fault", 35000, op="heal"),
        # its client pings every 6 s; at the 18 s ping it has heard nothing for 12 s (2/3 of the
        # session timeout) and pings on a new connection: retransmitted 25.4 s later, after the heal
        after_retransmission("controller_resigned", 18000, 18010, 35000, broker=0),
        after_retransmission("broker_registered", 18000, 18010, 35000, broker=0),
    ],
    "zombie-leader-after-pause": [
        at("fault", 5000, op="pause", broker=1),
        session_expiry(5000, 18000, broker=1),
        step("leader_elected", 5000, 23200, leader=2, leader_epoch=1),
        at("fault", 30000, op="resume", broker=1),
        at("zk_session_lost", 30000, broker=1),
        at("broker_registered", 30000, broker=1),
        at("truncation", 30000, broker=1),
    ],
    "jepsen-partition-v0.10": [
        at("fault", 3000, op="isolate", broker=1),
        dict(first_isr_check_after(3000, 10000), fields={"isr": [1]}),
        at("fault", 25000, op="isolate", broker=1, **{"from": "zk"}),
        session_expiry(25000, 6000, broker=1),
        step("leader_elected", 25000, 31200, kind="unclean", leader=2),
        step("violation", 25000, 31300, invariant="acked_record_lost"),
    ],
    "controlled-shutdown": [
        at("fault", 5000, op="shutdown", broker=1),
        at("leader_elected", 5000, kind="controlled_shutdown", partition=1, leader=2),
        at("broker_stopped", 5000, broker=1, state="stopped"),
        at("fault", 15000, op="restart", broker=1),
        at("isr_expand", 15000, isr=[0, 2, 1]),
        at("leader_elected", 30000, kind="preferred", partition=1, leader=1),
    ],
    "preferred-leader-election": [
        at("broker_stopped", 3000, broker=2),
        step("leader_elected", 3000, 21200, kind="clean", partition=2, leader=0),
        at("fault", 25000, op="restart", broker=2),
        at("isr_expand", 25000, partition=2, isr=[0, 1, 2]),
        # the imbalance check runs 5 s after the controller started, then every 20 s (the
        # scenario's leader.imbalance.check.interval.seconds): the first run past the rejoin
        step("auto_rebalance", 45000, 45000 + LATENCY_SLACK_MS, partitions=["orders-2"]),
        at("leader_elected", 45000, kind="preferred", partition=2, leader=2),
    ],
    # its own era is 2.6: the leader's own write, announced 5-7.5 s later (docs/model.md §4.2)
    "isr-shrink-zookeeper-vs-controller": [
        at("fault", 3000, op="isolate", broker=2),
        dict(first_isr_check_after(3000, 10000), fields={"isr": [1, 0], "leader_epoch": 0, "zk_version": 1}),
        isr_change_notification_after(15000),
        step("isr_change_notification", 20000, 22700, stage="processed", partitions=["orders-0"]),
    ],
    # 3.3: AlterPartition round trips (docs/model.md §17); the expand waits for the paused controller
    "pending-expand-controller-away": [
        at("fault", 2000, op="isolate", broker=2),
        step("alter_partition", 15000, 15100, phase="sent", proposed_isr=[1], api="AlterPartition"),
        step("isr_shrink", 15000, 15100, isr=[1]),
        step("produce_error", 15000, 16100, error="NOT_ENOUGH_REPLICAS"),
        at("fault", 20000, op="pause", broker=0),
        # the held fetch gets through at TCP's retransmission after the 27 s heal (docs/model.md §16)
        at("alter_partition", 27400, phase="sent", proposed_isr=[1, 2]),
        step("produce_error", 27500, 30000, error="NOT_ENOUGH_REPLICAS"),
        at("alter_partition", 30000, phase="answered", proposed_isr=[1, 2], error=None, isr=[1, 2]),
        at("isr_expand", 30000, isr=[1, 2]),
    ],
    "ineligible-replica-refused": [
        at("fault", 2000, op="isolate", broker=3),
        step("isr_shrink", 15000, 15100, isr=[1, 2]),
        at("fault", 27300, op="shutdown", broker=3),
        at("alter_partition", 27400, phase="sent", proposed_isr=[1, 2, 3], api="AlterPartition"),
        at("alter_partition", 27400, phase="answered", error="INELIGIBLE_REPLICA"),
        step("broker_stopped", 30300, 30400, broker=3),
    ],
    # KRaft (docs/model.md §20): 3.9-kraft, a split vote then a retry after 1-2 s (§20.1); the
    # broker that died during the failover is fenced 9 s after the new controller's activation
    "controller-failover-kraft": [
        at("fault", 10000, op="crash", controller=3000),
        step("raft_fetch_timeout", 10000 + 1500, 10000 + 2000 + LATENCY_SLACK_MS),
        step("raft_leader_elected", 11500, 10000 + 2000 + 2000 + 100 + LATENCY_SLACK_MS, epoch=3),
        step("controller_activated", 11500, 14200),
        # the partition changes come first in the fencing batch, then the fence record
        step("leader_elected", 11500 + 9000, 14200 + 9000 + LATENCY_SLACK_MS, partition=1, kind="clean"),
        step("broker_fenced", 11500 + 9000, 14200 + 9000 + LATENCY_SLACK_MS, broker=1),
    ],
    # fenced 9 s after its last heartbeat (sent every 2 s), then a zombie until the heal
    "broker-cut-off-from-controllers": [
        at("fault", 10000, op="isolate", broker=0),
        step("leader_elected", 10000 + 7000, 10000 + 9000 + LATENCY_SLACK_MS, leader=1, kind="clean"),
        step("broker_fenced", 10000 + 7000, 10000 + 9000 + LATENCY_SLACK_MS, broker=0),
        at("fault", 30000, op="heal"),
        step("broker_unfenced", 30000, 33000, broker=0),
        step("isr_expand", 30000, 35000, isr=[1, 2, 0]),
    ],
    # 4.1: KIP-966, the worked example of docs/model.md §20.6
    "last-isr-member-elr": [
        at("fault", 5000, op="shutdown", broker=2),
        at("partition_change", 5000, isr=[0, 1]),
        at("fault", 20000, op="shutdown", broker=1),
        at("partition_change", 20000, isr=[0], elr=[1]),
        at("fault", 35000, op="crash", broker=0),
        step("partition_change", 35000 + 7000, 35000 + 9000 + 1125 + LATENCY_SLACK_MS, leader=-1, isr=[],
             elr=[0, 1], last_known_elr=[0]),
        step("leader_elected", 50000, 50000 + 300, leader=1, kind="elr"),
    ],
    # 4.1: the shutdown travels in heartbeats; granted within one heartbeat interval
    "rolling-restart": [
        at("fault", 10000, op="shutdown", broker=0),
        at("controlled_shutdown_started", 10000, broker=0),
        step("controlled_shutdown_granted", 10000, 10000 + 2000 + LATENCY_SLACK_MS, broker=0),
        at("fault", 15000, op="restart", broker=0),
        # 4.1 (KAFKA-17793, KAFKA-19130): the session of the last heartbeat (at most 2 s after 10 s,
        # at the grant) is still valid for 9 s, fenced or not: the new incarnation is refused and
        # retries every broker.heartbeat.interval.ms until it expires
        step("registration_rejected", 15000, 15000 + 300, broker=0, error="DUPLICATE_BROKER_REGISTRATION"),
        step("broker_unfenced", 10000 + 9000, 10000 + 2000 + 9000 + 2000 + 600, broker=0),
        at("fault", 30000, op="shutdown", broker=1),
        step("controlled_shutdown_granted", 30000, 30000 + 2000 + LATENCY_SLACK_MS, broker=1),
        at("fault", 50000, op="shutdown", broker=2),
        step("controlled_shutdown_granted", 50000, 50000 + 2000 + LATENCY_SLACK_MS, broker=2),
        # restarted at 55 s, broker 2 too waits for its old session (4.1) before it can rejoin
        step("isr_expand", 50000 + 9000, 50000 + 2000 + 9000 + 2000 + 1000, isr=[0, 1, 2]),
    ],
    # docs/model.md §21.9: az-b (brokers 2, 3) crashes at 10 s; the controller learns it when the
    # sessions expire and every partition keeps an ISR of two in the other zones
    "lose-one-zone": [
        at("fault", 10000, op="crash", rack="az-b", brokers=[2, 3]),
        session_expiry(10000, 18000, broker=2),
        session_expiry(10000, 18000, broker=3),
        step("leader_elected", 10000, 28200, kind="clean", partition=2, previous_leader=2, leader=1, isr=[1, 5]),
        step("isr_shrink", 10000, 28200, by="controller", partition=0, isr=[5, 1]),
        step("isr_shrink", 10000, 28200, by="controller", partition=1, isr=[0, 4]),
        at("fault", 45000, op="restart", rack="az-b"),
        at("isr_expand", 45000, partition=0, isr=[5, 1, 2]),
    ],
    # the same outage with two replicas of orders-1 and orders-2 in az-b: one in-sync replica left
    "two-replicas-in-one-zone": [
        at("fault", 10000, op="crash", rack="az-b", brokers=[2, 3]),
        session_expiry(10000, 18000, broker=2),
        step("leader_elected", 10000, 28200, kind="clean", partition=2, leader=4, isr=[4]),
        step("isr_shrink", 10000, 28200, by="controller", partition=1, isr=[1]),
        step("produce_error", 10000, 45000, partition=1, error="NOT_ENOUGH_REPLICAS"),
        at("fault", 45000, op="restart", rack="az-b"),
        at("isr_expand", 45000, partition=1, isr=[1, 2]),
    ],
    # broker 1 away for maintenance: orders-1's ISR [2, 3] lives in az-b alone; az-b fails at 15 s
    # and broker 1, back at 40 s, is elected uncleanly; az-b's brokers truncate when they return
    "two-replicas-in-one-zone-unclean": [
        at("fault", 5000, op="shutdown", broker=1),
        at("leader_elected", 5000, kind="controlled_shutdown", partition=1, leader=2, isr=[2, 3]),
        at("fault", 15000, op="crash", rack="az-b", brokers=[2, 3]),
        session_expiry(15000, 18000, broker=2),
        step("partition_offline", 15000, 33200, partition=1),
        at("fault", 40000, op="restart", broker=1),
        at("leader_elected", 40000, kind="unclean", partition=1, leader=1, isr=[1]),
        at("fault", 55000, op="restart", rack="az-b"),
        at("truncation", 55000, partition=1, broker=2),
    ],
    # 2.6: the leader's HW covers a record once the follower's next fetch reports its LEO (one
    # waiting fetch brings the record, the next one tells the leader); the follower learns the HW
    # one fetch later (tests/app/test_walkthroughs.py checks the follower's side)
    "hw-follower-one-fetch-behind": [
        at("fault", 5000, op="produce", count=1, acks="all"),
        step("high_watermark", 5000, 5000 + LATENCY_SLACK_MS, broker=0, hw_before=0, hw=1),
        at("fault", 10000, op="produce", count=3, acks="all"),
        step("high_watermark", 10000, 10000 + LATENCY_SLACK_MS, broker=0, hw=4),
    ],
    # 3.7, KIP-392 (docs/model.md §21.8): the first redirect is answered at once (KAFKA-13767);
    # the failed fetch to the stopped follower sends the consumer back at once (KAFKA-14379)
    "follower-fetch-zone": [
        step("consumer_read_replica", 0, 300, consumer="reader-b", replica=1, leader=0),
        at("fault", 20000, op="shutdown", broker=1),
        at("isr_shrink", 20000, isr=[0, 2]),
        at("consumer_read_replica", 20000, consumer="reader-b", replica=None),
        at("fault", 35000, op="restart", broker=1),
        step("isr_expand", 35000, 35000 + 1000, isr=[0, 2, 1]),
        step("consumer_read_replica", 35000, 35000 + 1000, consumer="reader-b", replica=1, leader=0),
    ],
}

#: What the end of each story shows: which acknowledged records are lost, and by which rule.
OUTCOMES = {
    "broker-failure-clean-election": lambda lost, run: not lost,
    "not-enough-replicas": lambda lost, run: not lost,
    "isr-shrink-zookeeper-vs-controller": lambda lost, run: not lost and not run["violations"],
    "pending-expand-controller-away": lambda lost, run: not lost and not run["violations"],
    "ineligible-replica-refused": lambda lost, run: not lost and not run["violations"],
    "isr-expansion": lambda lost, run: not lost,
    "hw-follower-one-fetch-behind": lambda lost, run: not lost and not run["violations"],
    # acks=1 records acknowledged while the leader was cut off (5-10 s) and nothing else
    "acks1-loss-on-failover": lambda lost, run: lost and all(5000 <= r["acked_ms"] <= 10000 and r["acks"] == "1"
                                                            for r in lost),
    "kip101-scenario-1-v0.10": lambda lost, run: [r["id"] for r in lost] == ["p1-99"],
    "kip101-scenario-1-v2.6": lambda lost, run: not lost and not run["violations"],
    "kip279-fast-leader-changes-v2.0": lambda lost, run: [r["id"] for r in lost] == ["p2-0"] and not run["violations"],
    # the zombie's acks=1 records are lost; no acks=all record is
    "zombie-leader-after-pause": lambda lost, run: lost and all(r["acks"] == "1" for r in lost),
    # everything acknowledged by the leader alone, after it shrank the ISR to itself at 15 s
    "jepsen-partition-v0.10": lambda lost, run: lost and min(r["acked_ms"] for r in lost) > 15000,
    "unclean-election-loss": lambda lost, run: lost and min(r["acked_ms"] for r in lost) > 3000,
    "controller-failover-kraft": lambda lost, run: not lost and not run["violations"],
    # only the zombie's acks=1 records, acknowledged after the fence moved leadership away
    "broker-cut-off-from-controllers": lambda lost, run: lost and all(r["acks"] == "1" and r["acked_ms"] > 17000
                                                                     for r in lost),
    "last-isr-member-elr": lambda lost, run: not lost and not run["violations"],
    "rolling-restart": lambda lost, run: not lost and not run["violations"],
    "lose-one-zone": lambda lost, run: not lost and not run["violations"],
    "two-replicas-in-one-zone": lambda lost, run: not lost and not run["violations"],
    # what orders-1 acknowledged while its ISR was [2, 3], both in az-b
    "two-replicas-in-one-zone-unclean": lambda lost, run: lost and all(r["partition"] == 1 and 5000 < r["acked_ms"] < 15000
                                                                       for r in lost),
    # nothing lost; reader-b read every record reader-a did but the newest few, most of them from
    # broker 1 (its az-b follower), none from it once its shutdown was done (20 s + a few ms)
    "follower-fetch-zone": lambda lost, run: not lost and not run["violations"] and _zone_reads_ok(run),
}


def _zone_reads_ok(run):
    a, b = run["consumed"]["reader-a"], run["consumed"]["reader-b"]
    from_follower = [r for r in b if r.get("replica") == 1]
    return ([r["offset"] for r in b] == list(range(len(b))) and len(a) - 5 <= len(b) <= len(a)
            and len(from_follower) > len(b) // 2
            and not any(20000 + 100 < r["at_ms"] < 35000 for r in from_follower))


def _matches(event, want):
    if event["type"] != want["type"]:
        return False
    if not want["lo"] <= event["t_ms"] <= (want["hi"] if want["hi"] is not None else float("inf")):
        return False
    return all(event.get(k) == v for k, v in want["fields"].items())


def unmet_steps(history, steps):
    """The first step not found in order (with what the run had of that type), or None."""
    position = 0
    for number, want in enumerate(steps, 1):
        found = next((i for i in range(position, len(history)) if _matches(history[i], want)), None)
        if found is None:
            seen = [(e["t_ms"], {k: e.get(k) for k in want["fields"]}) for e in history[position:]
                    if e["type"] == want["type"]][:5]
            return f"step {number}: no {want['type']} {want['fields']} in [{want['lo']}, {want['hi']}] ms " \
                   f"after event {position}; the run had {seen}"
        position = found + 1
    return None


RUNS = {}


def run_of(name):
    if name not in RUNS:
        RUNS[name] = Simulation(library()[name]).run()
    return RUNS[name]


def test_every_library_scenario_has_a_checked_story():
    assert set(STORIES) == set(library())


@pytest.mark.parametrize("name", sorted(STORIES))
def test_the_story_happens_as_told(name):
    assert unmet_steps(run_of(name)["history"], STORIES[name]) is None, unmet_steps(run_of(name)["history"],
                                                                                   STORIES[name])


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_the_story_ends_as_told(name):
    run = run_of(name)
    lost = [r for r in run["records"] if r["lost"]]
    assert OUTCOMES[name](lost, run), [(r["id"], r["acks"], r["acked_ms"]) for r in lost[:10]]


def test_the_checker_fails_on_a_story_out_of_order():
    history = [{"t_ms": 10, "type": "a"}, {"t_ms": 20, "type": "b"}]
    assert unmet_steps(history, [step("a"), step("b")]) is None
    assert "step 2" in unmet_steps(history, [step("b"), step("a")])
    assert "step 1" in unmet_steps(history, [step("a", 11, 30)])


FAULT_OPS = ("crash", "pause", "isolate", "cut", "partition", "expire_session")


def _fault_times(doc):
    return [op["at_ms"] for op in doc["timeline"] if op["op"] in FAULT_OPS]


@pytest.mark.parametrize("name", sorted(n for n, doc in library().items() if _fault_times(doc)))
def test_the_last_fault_has_its_consequence_inside_the_run_in_every_era(name):
    """A user who switches a story to another era still sees its punchline: every crash, pause
    or cut is followed by at least one session timeout of that era (plus time to elect). Stories
    without such a fault (hw-follower-one-fetch-behind: two produce requests) have nothing to wait for."""
    from engine import eras
    doc = library()[name]
    faults = _fault_times(doc)
    for version in eras.VERSIONS:
        session_ms = eras.CONFIG["zookeeper.session.timeout.ms"][2][version] \
            or eras.CONFIG["broker.session.timeout.ms"][2][version]  # KRaft eras: fencing, §20.4
        assert doc["duration_ms"] >= max(faults, default=0) + session_ms + 5000, version
