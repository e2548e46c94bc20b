"""The seed articles' walkthroughs (issue 33, item 3): six library stories told step by step.

Each walkthrough follows one story of ``engine/scenario/library`` and retells, moment by moment,
what the Chinese articles in ``shared/seeds`` explain: the ISR shrink by the ``isr-expiration``
task, the ISR expansion on a follower's fetch, ``isr-change-propagation`` and the controller's
watch, a broker's failure and the ISR change that follows, HW and LEO with the follower's HW one
fetch behind, and ``min.insync.replicas`` with NOT_ENOUGH_REPLICAS.

A step is a moment of the run (``t_ms``, read from the run itself), a short title, one to three
sentences that say what happens and why, and the Kafka method or config that does it, written as
Kafka writes it (never translated). Titles and narration are gettext msgids (``N_``) translated in
``translations/zh_CN/LC_MESSAGES/messages.po``; ``app.guides.localized`` reads them in the
request's language. Every step carries claims (``app.guides.claims``) that a test checks against
the run, so a step never says what the run on screen does not do.
"""
from collections import namedtuple

from ..i18n.errors import N_
from .claims import Acked, Quiet, event, state

Walkthrough = namedtuple("Walkthrough", "id story partition title article steps")
_Step = namedtuple("Step", "t_ms title text kafka claims window_ms")


def Step(t_ms, title, text, kafka, claims, window_ms=0):
    return _Step(t_ms, title, text, kafka, tuple(claims), window_ms)


ISR_SHRINK = Walkthrough(
    "isr-shrink", "isr-shrink-slow-follower", "orders-0",
    N_("ISR shrink by the isr-expiration task"),
    N_("Article “How Kafka shrinks the ISR” §1: ReplicaManager#maybeShrinkIsr"),
    (
        Step(5000, N_("Follower 2 is cut off"),
             N_("Broker 2 loses its links to the other brokers. Its ZooKeeper session is fine, so the controller "
                "notices nothing: only the leader can see that follower 2 stops fetching."),
             "ReplicaFetcherThread", [event("fault", op="isolate", broker=2)]),
        Step(30006, N_("The check at 30 s: not yet"),
             N_("The leader's isr-expiration task runs every replica.lag.time.max.ms / 2 = 15 s. Follower 2 last "
                "caught up about 25 s ago, less than 30000 ms, so it stays in the ISR and the HW cannot pass its LEO."),
             "replica.lag.time.max.ms", [state(0, isr=[0, 1, 2], hw=100)]),
        Step(35001, N_("acks=all requests time out"),
             N_("The acks=all produce requests wait for every ISR member, follower 2 included. After request.timeout.ms "
                "(30 s) the leader answers REQUEST_TIMED_OUT."),
             "DelayedProduce", [event("produce_error", error="REQUEST_TIMED_OUT", broker=0)]),
        Step(45006, N_("The leader removes follower 2 from the ISR"),
             N_("The next isr-expiration run finds that follower 2 has not caught up for more than 30000 ms. The leader "
                "writes ISR [0, 1] to /brokers/topics/orders/partitions/0/state (zkVersion +1, leader epoch unchanged) "
                "and, as the ISR now has one member less, raises the HW to the smallest LEO of [0, 1]."),
             "ReplicaManager#maybeShrinkIsr",
             [event("isr_shrink", broker=0, isr=[0, 1], leader_epoch=0), event("high_watermark", broker=0, hw=110)]),
        Step(50000, N_("The heal changes nothing at once"),
             N_("The links come back, but follower 2's fetch is stuck in TCP's retransmission backoff on the new "
                "connection its fetcher opened after replica.socket.timeout.ms. It reaches the leader about 11 s later."),
             "replica.socket.timeout.ms", [event("fault", op="heal"), state(0, isr=[0, 1])]),
        Step(52506, N_("The ISR change is propagated"),
             N_("The isr-change-propagation task (every 2500 ms) sees an ISR change older than 5000 ms and creates "
                "/isr_change_notification/isr_change_0000000000; the controller reads it and sends UpdateMetadata."),
             "ReplicaManager#maybePropagateIsrChanges",
             [event("isr_change_notification", stage="created", broker=0,
                    path="/isr_change_notification/isr_change_0000000000")]),
        Step(61357, N_("Follower 2 rejoins the ISR"),
             N_("Its fetch gets through; it catches up within milliseconds and its LEO reaches the leader's HW, so the "
                "leader adds it back (isr_expand)."),
             "Partition#maybeExpandIsr", [event("isr_expand", broker=0, isr=[0, 1, 2])]),
    ))

ISR_EXPAND = Walkthrough(
    "isr-expand", "isr-expansion", "orders-0",
    N_("ISR expansion: a restarted follower rejoins"),
    N_("Article “How Kafka shrinks the ISR” §2: Partition#maybeExpandIsr"),
    (
        Step(5000, N_("Follower 2 crashes"),
             N_("Broker 2 stops. Its ZooKeeper session lives on until it expires; until then nothing in the cluster "
                "changes, and acks=all writes wait for it."),
             "zookeeper.session.timeout.ms", [event("broker_stopped", broker=2)]),
        Step(18017, N_("Its session expires"),
             N_("No heartbeat for zookeeper.session.timeout.ms (18 s): ZooKeeper deletes the ephemeral /brokers/ids/2 "
                "and the controller's watch on /brokers/ids fires."),
             "zookeeper.session.timeout.ms", [event("session_expired", broker=2)]),
        Step(18026, N_("The controller removes broker 2 from the ISR"),
             N_("For a dead follower the controller does the shrink itself: it moves replica 2 to OfflineReplica, "
                "writes ISR [0, 1] with the leader epoch +1 and sends LeaderAndIsr to the leader."),
             "KafkaController#onBrokerFailure",
             [event("isr_shrink", by="controller", isr=[0, 1], leader_epoch=1)]),
        Step(40011, N_("Broker 2 restarts as a follower"),
             N_("It registers again; the controller sends it LeaderAndIsr: follow broker 0 in epoch 1. It first "
                "reconciles its log with OffsetsForLeaderEpoch, then fetches."),
             "ReplicaManager#becomeLeaderOrFollower", [event("become_follower", broker=2, leader=0, leader_epoch=1)]),
        Step(40018, N_("Follower 2 rejoins the ISR"),
             N_("There is no timer for an expansion: the leader checks on each fetch of a follower outside the ISR. Once "
                "its LEO reaches the leader's HW (not the LEO) and the start offset of the leader's epoch (KAFKA-7128), "
                "the leader writes ISR [0, 1, 2] to ZooKeeper."),
             "Partition#maybeExpandIsr", [event("isr_expand", broker=0, isr=[0, 1, 2])]),
        Step(47506, N_("The expansion is announced"),
             N_("7.5 s later, with no further ISR change for 5000 ms, the leader's isr-change-propagation task "
                "creates an isr_change_ notification; the controller then updates every broker's metadata."),
             "ReplicaManager#maybePropagateIsrChanges", [event("isr_change_notification", stage="created", broker=0)]),
    ))

PROPAGATION = Walkthrough(
    "isr-propagation", "isr-change-propagation", "orders-0",
    N_("isr-change-propagation and the controller's watch"),
    N_("Article “How Kafka shrinks the ISR” §3–4: maybePropagateIsrChanges, /isr_change_notification"),
    (
        Step(3000, N_("Follower 2 is cut off"),
             N_("Broker 2 can no longer reach the leader, broker 1. In 0.10 replica.lag.time.max.ms is 10000 ms, so "
                "the leader's isr-expiration task runs every 5 s."),
             "replica.lag.time.max.ms", [event("fault", op="isolate", broker=2)]),
        Step(15006, N_("The leader shrinks the ISR in ZooKeeper"),
             N_("Follower 2 has not caught up for over 10000 ms: leader 1 writes ISR [1, 0] straight to the partition's "
                "state znode. Nobody watches that znode, so the controller and the other brokers do not know yet; the "
                "leader records the change in isrChangeSet."),
             "Partition#maybeShrinkIsr", [event("isr_shrink", broker=1, isr=[1, 0])]),
        Step(17506, N_("The blackout: 5 s without ISR changes"),
             N_("The isr-change-propagation task runs every 2500 ms, but propagates only once the last ISR change is "
                "older than 5000 ms (or 60000 ms after the last propagation), so that a burst of changes makes one "
                "notification. At 17.5 s and 20 s it waits."),
             "ReplicaManager#maybePropagateIsrChanges", [Quiet("isr_change_notification", 22505)]),
        Step(22506, N_("A sequential znode announces the change"),
             N_("7.5 s after the shrink the task creates the persistent sequential znode "
                "/isr_change_notification/isr_change_0000000000 holding orders-0, then clears isrChangeSet."),
             "ReplicaManager#maybePropagateIsrChanges",
             [event("isr_change_notification", stage="created", broker=1,
                    path="/isr_change_notification/isr_change_0000000000")]),
        Step(22512, N_("The controller's watch fires"),
             N_("The controller watches the children of /isr_change_notification. It reads the notifications, "
                "re-reads the state of each partition named, sends UpdateMetadata to every live broker and deletes the "
                "notifications: only now do the metadata caches (and the clients) see the new ISR."),
             "IsrChangeNotificationListener", [event("isr_change_notification", stage="processed", broker=0)]),
        Step(40157, N_("The follower rejoins"),
             N_("After the heal at 40 s the follower's fetch gets through and it catches up: the leader expands the ISR "
                "back to [1, 0, 2] in ZooKeeper."),
             "Partition#maybeExpandIsr", [event("isr_expand", broker=1, isr=[1, 0, 2])]),
        Step(47512, N_("The same path once more"),
             N_("The expansion travels the same way: a notification 7.3 s later, read by the controller within "
                "milliseconds."),
             "IsrChangeNotificationListener",
             [event("isr_change_notification", stage="processed", broker=0, notifications=["isr_change_0000000001"])]),
    ))

BROKER_FAILURE = Walkthrough(
    "broker-failure", "broker-failure-clean-election", "orders-0",
    N_("A broker's failure and the ISR change that follows"),
    N_("Article “How Kafka shrinks the ISR” §4: a broker goes down"),
    (
        Step(5000, N_("The leader crashes"),
             N_("Broker 1, leader of orders-0, stops. Producers get no answer and retry; the cluster does nothing yet, "
                "because its ZooKeeper session is still alive."),
             "zookeeper.session.timeout.ms", [event("broker_stopped", broker=1)]),
        Step(18017, N_("Its session expires"),
             N_("After zookeeper.session.timeout.ms (18 s) without a heartbeat ZooKeeper expires the session and deletes "
                "the ephemeral /brokers/ids/1."),
             "zookeeper.session.timeout.ms", [event("session_expired", broker=1)]),
        Step(18022, N_("The controller sees the broker leave"),
             N_("The controller's watch on /brokers/ids fires; it re-reads the list of live brokers and handles broker 1 "
                "as dead."),
             "KafkaController#onBrokerFailure", [event("broker_change", broker=0, dead=[1])]),
        Step(18026, N_("A clean election shrinks the ISR"),
             N_("orders-0 has lost its leader: the controller picks the first replica in assignment order that is alive "
                "and in the ISR (broker 2) and writes leader 2, ISR [2, 0], leader epoch 1 in one step."),
             "PartitionLeaderElectionAlgorithms#offlinePartitionLeaderElection",
             [event("leader_elected", leader=2, kind="clean", isr=[2, 0], leader_epoch=1)]),
        Step(18027, N_("Broker 2 leads in epoch 1"),
             N_("LeaderAndIsr reaches the brokers: 2 becomes leader and broker 0 follows it. Records acknowledged with "
                "acks=all were on both, so none is lost."),
             "ReplicaManager#becomeLeaderOrFollower", [event("become_leader", broker=2, leader_epoch=1)]),
        Step(45018, N_("The old leader returns as a follower"),
             N_("Broker 1 restarts at 45 s, follows broker 2, catches up and rejoins the ISR; leadership stays with 2 "
                "until a preferred leader election."),
             "Partition#maybeExpandIsr", [event("isr_expand", broker=2, isr=[2, 0, 1])]),
    ))

HW_LEO = Walkthrough(
    "hw-leo", "hw-follower-one-fetch-behind", "orders-0",
    N_("HW and LEO: the follower's HW one fetch behind"),
    N_("Article “Kafka: the ISR high-watermark question (1)”: how the leader and the follower update HW and LEO"),
    (
        Step(5000, N_("One record, acks=all"),
             N_("Producer p1 sends one record to orders-0 (leader 0, follower 1). Both replicas have LEO 0 and HW 0."),
             "acks=all", [event("fault", op="produce", producer="p1")]),
        Step(5003, N_("The leader appends: LEO 1, HW 0"),
             N_("The leader writes the record at offset 0; its LEO (the next offset to write) becomes 1. The HW stays 0: "
                "the record is not committed until every ISR member has it."),
             "Partition#appendRecordsToLeader", [state(0, leo=1, hw=0)]),
        Step(5004, N_("The follower fetches: LEO 1, HW 0"),
             N_("The follower's waiting fetch returns the record: its LEO becomes 1. It sets its HW to min(leader HW, "
                "own LEO) = min(0, 1) = 0."),
             "ReplicaFetcherThread#processPartitionData", [state(1, leo=1, hw=0)]),
        Step(5005, N_("The next fetch moves the leader's HW"),
             N_("The follower fetches again at offset 1, which tells the leader its LEO is 1. The leader's HW becomes "
                "the smallest LEO in the ISR: 1. The record is committed and the acks=all request is answered."),
             "Partition#maybeIncrementLeaderHW",
             [event("high_watermark", broker=0, hw_before=0, hw=1), state(1, hw=0), Acked("p1")], window_ms=1),
        Step(5506, N_("The follower learns HW 1, one round later"),
             N_("That fetch found no new data and waited replica.fetch.wait.max.ms (500 ms) at the leader. Its response "
                "carries HW 1: only now does the follower's HW reach 1, one fetch round behind the leader's."),
             "replica.fetch.wait.max.ms", [state(1, hw=1)]),
        Step(10003, N_("Three more records, fetch by fetch"),
             N_("At 10 s three records arrive. The follower's fetch returns as soon as the first is appended, so the "
                "leader's HW moves to 2 while its LEO is already 4, and the follower's HW is still 1."),
             "Partition#maybeIncrementLeaderHW",
             [event("high_watermark", broker=0, hw=2), state(0, leo=4, hw=2), state(1, leo=2, hw=1)]),
        Step(10506, N_("Leader and follower agree again"),
             N_("The next fetch takes the rest (leader HW 4 at 10.005 s); the follower hears of HW 4 after one more "
                "500 ms wait. In between, a follower that became leader would start from an older HW: the root of "
                "KIP-101's truncation problems."),
             "replica.fetch.wait.max.ms", [state(0, hw=4), state(1, leo=4, hw=4)]),
    ))

MIN_ISR = Walkthrough(
    "min-isr", "not-enough-replicas", "orders-0",
    N_("min.insync.replicas and NOT_ENOUGH_REPLICAS"),
    N_("Article “Kafka source analysis (7): reliable sends”: min.insync.replicas"),
    (
        Step(3000, N_("Both followers crash"),
             N_("RF 3, min.insync.replicas=2. Brokers 1 and 2 stop; until their sessions expire they stay in the ISR, "
                "so acks=all requests wait and time out while acks=1 ones succeed."),
             "min.insync.replicas", [event("broker_stopped", broker=1), event("broker_stopped", broker=2)]),
        Step(18026, N_("The controller shrinks the ISR"),
             N_("Both sessions expire at 18 s. The controller removes broker 1 from the ISR (leader epoch 1), then "
                "broker 2."),
             "KafkaController#onBrokerFailure", [event("isr_shrink", by="controller", isr=[0, 2], leader_epoch=1)]),
        Step(18030, N_("ISR = [0]: the waiting requests fail"),
             N_("With the ISR down to the leader alone the HW jumps to the LEO and the waiting acks=all requests "
                "complete, but the ISR has 1 < 2 members: they are answered NOT_ENOUGH_REPLICAS_AFTER_APPEND although "
                "the data is written."),
             "Partition#checkEnoughReplicasReachOffset",
             [event("isr_shrink", isr=[0], leader_epoch=2),
              event("produce_error", error="NOT_ENOUGH_REPLICAS_AFTER_APPEND", producer="strict")]),
        Step(18032, N_("acks=all is refused before the append"),
             N_("Every new acks=all request is now rejected before it is written: the ISR size 1 is below "
                "min.insync.replicas 2, so the leader throws NotEnoughReplicasException and the producer sees "
                "NOT_ENOUGH_REPLICAS."),
             "Partition#appendRecordsToLeader", [event("produce_error", error="NOT_ENOUGH_REPLICAS", producer="strict")]),
        Step(25000, N_("acks=1 still succeeds"),
             N_("min.insync.replicas only guards acks=all: the acks=1 producer keeps writing to the leader alone, and "
                "those records would be lost if the leader failed now."),
             "acks=1", [Acked("relaxed")], window_ms=1000),
        Step(40018, N_("A follower returns: acks=all works again"),
             N_("Broker 1 restarts, catches up and rejoins: ISR [0, 1] has 2 members again, so acks=all writes are "
                "accepted and acknowledged."),
             "Partition#maybeExpandIsr", [event("isr_expand", isr=[0, 1]), Acked("strict")], window_ms=1000),
    ))

#: in the seed articles' order; ``id`` is what a link names (``?walk=``), ``story`` the library story
WALKTHROUGHS = (ISR_SHRINK, ISR_EXPAND, PROPAGATION, BROKER_FAILURE, HW_LEO, MIN_ISR)
