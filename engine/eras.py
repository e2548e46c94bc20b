"""Kafka protocol eras as feature flags and defaults (docs/model.md §0, §12; docs/scenario-format.md §4).

Eras are not forks: the broker, controller and clients ask ``era.<flag>`` at the ~dozen places
where Kafka's behaviour changed. Each flag names the KIP or JIRA that introduced the change.
"""
from dataclasses import dataclass

VERSIONS = ("0.10", "1.1", "2.0", "2.0.1", "2.4", "2.6", "2.7", "3.0", "3.3", "3.7", "3.9-kraft", "4.1")
#: ZooKeeper-mode eras and KRaft eras (docs/model.md §20): the quorum controller replaces ZooKeeper.
ZK_VERSIONS = VERSIONS[:VERSIONS.index("3.9-kraft")]
KRAFT_VERSIONS = VERSIONS[len(ZK_VERSIONS):]
LONG_MAX = 9223372036854775807
#: replica.selector.class values (org.apache.kafka.common.replica): the rack-aware one names a
#: follower in the consumer's rack; LeaderSelector, like no selector at all, always the leader.
RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
LEADER_SELECTOR = "org.apache.kafka.common.replica.LeaderSelector"
REPLICA_SELECTORS = (LEADER_SELECTOR, RACK_AWARE_SELECTOR)
INT_MAX = 2147483647


@dataclass(frozen=True)
class Era:
    version: str
    #: How a replica becomes follower (§8.1): "hw" truncates to the local high watermark
    #: (pre-KIP-101, 0.10.2); "kip101" asks OffsetsForLeaderEpoch for an end offset (0.11-1.1);
    #: "kip279" gets (epoch, end offset) back and walks epochs (2.0+).
    truncation: str
    #: Record batches carry the leader epoch and brokers keep a leader-epoch cache (KIP-101, 0.11).
    epoch_cache: bool
    #: KAFKA-7415 (2.1, backported to 2.0.1): a new leader writes (epoch, LEO) into its cache at
    #: election time.
    epoch_entry_on_become_leader: bool
    #: KIP-320 (2.1): fetches carry current_leader_epoch; FENCED/UNKNOWN_LEADER_EPOCH.
    kip320_fencing: bool
    #: KAFKA-7152 (2.1): a replica whose LEO equals the leader's LEO is never out of sync.
    out_of_sync_needs_leo_behind: bool
    #: KAFKA-7128 (2.1, and 2.0.1): to join the ISR a follower must also reach the leader-epoch
    #: start offset.
    expand_needs_epoch_start_offset: bool
    #: KAFKA-7164 (2.1, and 2.0.1): every accepted LeaderAndIsr restarts the fetcher; up to 2.0.0
    #: only a new leader id does (§8.1).
    refetch_on_epoch_bump: bool
    #: <= 2.0: OFFSET_OUT_OF_RANGE with a shorter leader log and unclean election disabled halts
    #: the broker ("Exiting because log truncation is not allowed") (§7).
    halt_on_unclean_truncation: bool
    #: 1.1+: the controller always keeps the last ISR member; <= 1.0 only with unclean disabled (§9.3).
    controller_keeps_last_isr_member: bool
    #: KAFKA-6082 (2.1): controller ZK writes are fenced by the /controller_epoch zkVersion.
    controller_writes_fenced: bool
    #: KIP-380 / KAFKA-7235 (2.2): broker epoch = czxid of /brokers/ids/N; bounced brokers detected.
    broker_epoch: bool
    #: KIP-320 client side (2.3): consumers detect log truncation after a leader change.
    consumer_truncation_detection: bool
    #: KAFKA-7538 (2.5): read-lock double check for ISR changes (cosmetic in a simulator).
    isr_double_checked_locking: bool
    #: Error code 6 was NOT_LEADER_FOR_PARTITION until 2.6 renamed it NOT_LEADER_OR_FOLLOWER.
    not_leader_error_name: str
    #: Idempotent producers exist from 0.11.
    idempotence: bool
    #: Client defaults that changed across eras (§12 client table).
    producer_retries: int
    delivery_timeout: bool
    #: KAFKA-7482 (1.1.0 - 2.0.x): a controlled-shutdown election's LeaderAndIsr goes to the live
    #: replicas *not* shutting down (PartitionStateMachine.leaderForControlledShutdown @ 1.1.1 /
    #: 2.0.1: isReplicaOnline without includeShuttingDownBrokers), so the old leader is not told;
    #: 0.10 and 2.1+ tell it too (docs/model.md §9.8; engine 1.3.0).
    shutdown_election_skips_shutting_down: bool = False
    # -- ZooKeeper-mode AlterIsr / AlterPartition eras (docs/model.md §17) ----------------------
    #: KIP-497 (2.7): the leader asks the controller (AlterIsr) instead of writing ZooKeeper;
    #: pending ISR states, maximal ISR; no /isr_change_notification.
    alter_isr: bool = False
    #: The request's name: "AlterIsr" (2.7-3.1), "AlterPartition" (3.2+).
    alter_isr_api: str = "AlterIsr"
    #: 2.7.x AlterIsrManagerImpl sends from a 50 ms fixed-rate task; 2.8+ sends at once (0).
    alter_isr_send_tick_ms: int = 0
    #: KAFKA-12686 (2.7-2.8): makeLeader/makeFollower clearPending the queued item, even in flight.
    clear_pending_bug: bool = False
    #: KAFKA-13091 fixed (3.1): the HW is recomputed (and delayed produces completed) on commit.
    hw_on_commit: bool = False
    #: KAFKA-14140 / KIP-841 in ZK mode (3.3): controller INELIGIBLE_REPLICA check, leader
    #: proposes only followers alive in its metadata cache; KAFKA-14154 strict validation.
    kip841: bool = False
    #: KIP-704 (3.2, ZK IBP >= 3.2-IV0): unclean elections write leader_recovery_state 1.
    leader_recovery: bool = False
    #: KAFKA-14010 fixed (3.2.1/3.3): a partition-level "retry" answer is re-queued.
    partition_retry: bool = False
    #: 2.7.x: that refused re-queue throws IllegalStateException out of the answer loop, so the
    #: rest of the batch stays queued, unanswered (KAFKA-14010; 3.0 only warns).
    retry_refused_throws: bool = False
    #: KAFKA-15583 (3.7): the HW does not move while committed ISR < min(min.insync.replicas, RF).
    hw_min_isr_gate: bool = False
    #: KAFKA-15021 (3.6): a caught-up follower outside the ISR holds the HW only if it may join
    #: the ISR (Partition.isReplicaIsrEligible): alive in the metadata cache (ZooKeeper mode);
    #: unfenced and not in controlled shutdown (KRaft).
    hw_needs_isr_eligible: bool = False
    # -- KRaft eras (docs/model.md §20) -------------------------------------------------------------
    #: KIP-500/595/631: a Raft quorum of controllers and a metadata log instead of ZooKeeper.
    kraft: bool = False
    #: KIP-996 (4.0): a voter whose timer expires first asks for pre-votes (Prospective state).
    pre_vote: bool = False
    #: KIP-966 Part 1: Eligible Leader Replicas; the default of eligible.leader.replicas.version.
    elr_default: int = 0
    #: KAFKA-12670 (3.9.0): the KRaft controller honours unclean.leader.election.enable.
    kraft_unclean: bool = False
    #: KAFKA-17793 (4.0): stale brokers are fenced by a periodic task every session/8 (else exact).
    fence_check_period_divisor: int = 0
    #: KAFKA-17793 (4.0): preferred-leader balancing is a periodic task from activation (else armed
    #: after a write event that leaves a partition off its preferred leader).
    periodic_leader_balance: bool = False
    #: KAFKA-14145 / KIP-1166 (4.1): a HW move completes parked metadata fetches at once.
    hw_completes_fetch: bool = False
    #: KAFKA-18345 (4.1): a lost election waits out its timeout; earlier: binary exponential backoff.
    election_backoff: bool = False
    #: Heartbeat RPC timeout: session/2 (KAFKA-14392, 3.3.2-4.0) or the interval (KAFKA-19294, 4.1).
    heartbeat_timeout_is_interval: bool = False
    #: 4.0 RCM.handleBrokerShutdown: a re-registering broker leaves every ISR (and, after an unclean
    #: shutdown with ELR on, every ELR); 3.9 only writes the new registration.
    reregister_shutdown: bool = False
    # -- clients (docs/model.md §6, §10) ----------------------------------------------------------
    #: KIP-320 client Metadata (2.2): a metadata answer whose leader epoch for a partition is older
    #: than the last one seen keeps the cached leader (Metadata.updatePartitionInfo /
    #: updateLatestMetadata); up to 2.1 the answer replaces it.
    client_rejects_stale_metadata: bool = False
    #: KAFKA-14317 (3.5.0): requests failed by the client's own request timeout complete as
    #: REQUEST_TIMED_OUT (ClientResponse.wasTimedOut); up to 3.4 as disconnected (NETWORK_EXCEPTION).
    client_timeout_is_timed_out: bool = False
    #: 2.4.x brokers answer a partition without a live leader (LEADER_NOT_AVAILABLE) with no leader
    #: epoch (MetadataCache.getPartitionMetadata @ 2.4.1: Optional.empty(); from 2.6 the epoch is
    #: set), so the client forgets its last seen epoch and takes the leaderless partition
    #: (Metadata.updatePartitionInfo @ 2.4.1, its "no epoch" branch).
    leaderless_metadata_without_epoch: bool = False
    #: unkeyed records go to a sticky partition (KIP-480): DefaultPartitioner with its
    #: StickyPartitionCache from 2.4.0 to 3.2, the built-in partitioner of KIP-794 from 3.3.0
    #: (sticky for batch.size bytes). Engine 1.2.0 kept it to eras "2.4" and "2.6" only.
    sticky_partitioner: bool = False
    #: 2.3.0 Metadata.handleMetadataResponse: an InvalidMetadataException on any topic or
    #: partition of the answer (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE) calls
    #: requestUpdate(), for a producer too (its topics: those it sent to); up to 2.2 only the
    #: consumer's ConsumerCoordinator listener asks again for unavailable topics.
    metadata_errors_request_update: bool = False
    #: KIP-360 (2.5): a leader with no state for a producer takes any first sequence (before:
    #: UNKNOWN_PRODUCER_ID unless it is 0), and the idempotent producer answers a sequence gap by
    #: bumping its own epoch and retrying the batch (before: it failed the batch and asked
    #: InitProducerId for a new producer id) (docs/model.md §6; engine 1.5.0).
    producer_epoch_bump: bool = False
    #: KAFKA-12152 (2.7.1, 2.8.0): after an epoch bump every partition restarts its sequences at 0
    #: once its batches in flight are done (TransactionManager.maybeUpdateProducerIdAndEpoch);
    #: 2.5 - 2.7.0 only the partitions that asked, or that had a batch in flight.
    partition_producer_epoch: bool = False
    #: 2.7 (KIP-588): a produce with an older producer epoch is INVALID_PRODUCER_EPOCH, before
    #: PRODUCER_FENCED.
    invalid_producer_epoch: bool = False
    # -- follower fetching, KIP-392 (docs/model.md §21.8) -----------------------------------------
    #: KIP-392 (2.4): consumers send their client.rack (FetchRequest v11); a leader whose
    #: replica.selector.class picks a follower names it as the preferred read replica, and a
    #: follower serves consumers up to its own high watermark.
    follower_fetching: bool = False
    #: KAFKA-13767 (3.2.0, 3.3.0): a leader answers a fetch that names a preferred read replica at once;
    #: before, the empty answer waited in the fetch purgatory for fetch.max.wait.ms.
    preferred_replica_answers_now: bool = False
    #: KAFKA-14372 (3.3.2, 3.4.0): only ISR followers may be preferred read replicas.
    preferred_replica_in_isr: bool = False
    #: KAFKA-14379 (3.3.2, 3.5.0): the consumer forgets the preferred read replica on an error that
    #: asks for new metadata, on a failed fetch request, and when the replica left its metadata.
    preferred_replica_cleared_on_error: bool = False
    #: KAFKA-14334 (3.3.2, 3.4.0): a follower whose high watermark moves completes the consumer
    #: fetches parked on it; before, they waited for fetch.max.wait.ms.
    follower_hw_completes_fetch: bool = False

    @property
    def isr_expiration_divisor(self):
        """isr-expiration runs every replica.lag.time.max.ms / 2 from 0.10.2 (KAFKA-4485, §2.1)."""
        return 2


_OLD = dict(truncation="hw", epoch_cache=False, epoch_entry_on_become_leader=False,
            kip320_fencing=False, out_of_sync_needs_leo_behind=False,
            expand_needs_epoch_start_offset=False, refetch_on_epoch_bump=False,
            halt_on_unclean_truncation=True, controller_keeps_last_isr_member=False,
            controller_writes_fenced=False, broker_epoch=False,
            consumer_truncation_detection=False, isr_double_checked_locking=False,
            not_leader_error_name="NOT_LEADER_FOR_PARTITION", idempotence=False,
            producer_retries=0, delivery_timeout=False)
_KIP101 = {**_OLD, "truncation": "kip101", "epoch_cache": True,
           "controller_keeps_last_isr_member": True, "idempotence": True,
           "shutdown_election_skips_shutting_down": True}
_KIP279 = {**_KIP101, "truncation": "kip279"}  # 2.0.0 exactly
# 2.0.1: three 2.1 fixes backported to the 2.0 branch (KAFKA-7128, KAFKA-7164, KAFKA-7415)
_KIP279_FIXED = {**_KIP279, "expand_needs_epoch_start_offset": True, "refetch_on_epoch_bump": True,
                 "epoch_entry_on_become_leader": True}
_KIP320 = {**_KIP279, "epoch_entry_on_become_leader": True, "kip320_fencing": True,
           "out_of_sync_needs_leo_behind": True, "expand_needs_epoch_start_offset": True,
           "refetch_on_epoch_bump": True, "halt_on_unclean_truncation": False,
           "controller_writes_fenced": True, "broker_epoch": True,
           "consumer_truncation_detection": True, "producer_retries": INT_MAX,
           "delivery_timeout": True, "client_rejects_stale_metadata": True,
           "metadata_errors_request_update": True,
           "shutdown_election_skips_shutting_down": False}  # KAFKA-7482 fixed in 2.1.0
_KIP537 = {**_KIP320, "isr_double_checked_locking": True, "sticky_partitioner": True,
           "not_leader_error_name": "NOT_LEADER_OR_FOLLOWER", "follower_fetching": True,
           "producer_epoch_bump": True}   # KIP-360 (2.5)

_ALTER_ISR_27 = {**_KIP537, "alter_isr": True, "alter_isr_send_tick_ms": 50,
                 "clear_pending_bug": True, "retry_refused_throws": True,
                 "partition_producer_epoch": True, "invalid_producer_epoch": True}
_ALTER_ISR_30 = {**_ALTER_ISR_27, "alter_isr_send_tick_ms": 0, "clear_pending_bug": False,
                 "retry_refused_throws": False}
_ALTER_PARTITION_33 = {**_ALTER_ISR_30, "alter_isr_api": "AlterPartition", "hw_on_commit": True,
                       "kip841": True, "leader_recovery": True, "partition_retry": True,
                       # KIP-392 fixes of 3.3.0 and 3.3.2 (docs/model.md §21.8)
                       "preferred_replica_answers_now": True, "preferred_replica_in_isr": True,
                       "preferred_replica_cleared_on_error": True, "follower_hw_completes_fetch": True}
_ALTER_PARTITION_37 = {**_ALTER_PARTITION_33, "hw_min_isr_gate": True, "hw_needs_isr_eligible": True,
                       "client_timeout_is_timed_out": True}
_KRAFT_39 = {**_ALTER_PARTITION_37, "kraft": True, "kraft_unclean": True, "election_backoff": True}
_KRAFT_41 = {**_KRAFT_39, "pre_vote": True, "elr_default": 1, "fence_check_period_divisor": 8,
             "periodic_leader_balance": True,
             "hw_completes_fetch": True, "election_backoff": False,
             "heartbeat_timeout_is_interval": True, "reregister_shutdown": True}

ERAS = {
    "0.10": Era("0.10", **_OLD),  # 0.10.2: KAFKA-4485 lag rule, truncate to HW
    "1.1": Era("1.1", **_KIP101),
    "2.0": Era("2.0", **_KIP279),  # 2.0.0: none of the 2.0.1 fixes below
    "2.0.1": Era("2.0.1", **_KIP279_FIXED),
    "2.4": Era("2.4", **_KIP320, leaderless_metadata_without_epoch=True, sticky_partitioner=True,
               follower_fetching=True),
    "2.6": Era("2.6", **_KIP537),  # KIP-537 defaults live in CONFIG below
    "2.7": Era("2.7", **_ALTER_ISR_27),        # rules of 2.7.2 (docs/model.md §17)
    "3.0": Era("3.0", **_ALTER_ISR_30),        # rules of 3.0.2
    "3.3": Era("3.3", **_ALTER_PARTITION_33),  # rules of 3.3.2
    "3.7": Era("3.7", **_ALTER_PARTITION_37),  # rules of 3.7.x
    "3.9-kraft": Era("3.9-kraft", **_KRAFT_39),  # rules of 3.9.0 in KRaft mode (docs/model.md §20)
    "4.1": Era("4.1", **_KRAFT_41),            # rules of 4.1.0 (KRaft only)
}


def _all(value):
    return {v: value for v in VERSIONS}


def _kraft(value, zk=None):
    """``value`` in the KRaft eras, ``zk`` (None = key absent) in the ZooKeeper eras."""
    return {v: (value if v in KRAFT_VERSIONS else zk) for v in VERSIONS}


def _from(first, value, before=None):
    """``value`` from era ``first`` on; ``before`` (None = key absent) in earlier eras."""
    idx = VERSIONS.index(first)
    return {v: (value if i >= idx else before) for i, v in enumerate(VERSIONS)}


# key -> (kind, scope, defaults per era (None = the era does not know the key), constraint)
# kinds: "int", "bool", "enum:<a>|<b>", "acks"; scope: broker, topic (also broker), producer,
# consumer, client (producer and consumer), sim
CONFIG = {
    "replica.lag.time.max.ms": ("int", "broker", _from("2.6", 30000, 10000), 1),
    "min.insync.replicas": ("int", "topic", _all(1), 1),
    "unclean.leader.election.enable": ("bool", "topic", {**_all(False), "0.10": True}, None),
    "replica.fetch.wait.max.ms": ("int", "broker", _all(500), 0),
    "replica.fetch.min.bytes": ("int", "broker", _all(1), 1),
    "replica.fetch.max.bytes": ("int", "broker", _all(1048576), 1),
    "replica.fetch.response.max.bytes": ("int", "broker", _all(10485760), 1),
    "replica.fetch.backoff.ms": ("int", "broker", _all(1000), 0),
    "replica.socket.timeout.ms": ("int", "broker", _all(30000), 1),
    "replica.high.watermark.checkpoint.interval.ms": ("int", "broker", _all(5000), 1),
    "num.replica.fetchers": ("int", "broker", _all(1), 1),
    "zookeeper.session.timeout.ms": ("int", "broker", {**_from("2.6", 18000, 6000), **{v: None for v in KRAFT_VERSIONS}}, 300),
    "auto.leader.rebalance.enable": ("bool", "broker", _all(True), None),
    "leader.imbalance.check.interval.seconds": ("int", "broker", _all(300), 1),
    "leader.imbalance.per.broker.percentage": ("int", "broker", _all(10), 0),
    "controlled.shutdown.enable": ("bool", "broker", _all(True), None),
    "controlled.shutdown.max.retries": ("int", "broker", _all(3), 0),
    "controlled.shutdown.retry.backoff.ms": ("int", "broker", _all(5000), 0),
    "controller.socket.timeout.ms": ("int", "broker", _all(30000), 1),
    "log.flush.interval.messages": ("int", "topic", _all(LONG_MAX), 1),
    "log.flush.interval.ms": ("int?", "topic", _all(None), 1),
    # producer
    # KIP-679 (3.0): acks=all and idempotence by default (effective from 3.0.1, KAFKA-13598)
    "acks": ("acks", "producer", _from("3.0", "all", "1"), None),
    "retries": ("int", "producer", {v: ERAS[v].producer_retries for v in VERSIONS}, 0),
    "delivery.timeout.ms": ("int", "producer", _from("2.4", 120000), 1),
    "request.timeout.ms": ("int", "client", _all(30000), 1),
    # KIP-1030 (4.0): ProducerConfig's linger.ms default 0 -> 5 (applied from engine 1.5.0)
    "linger.ms": ("int", "producer", {**_all(0), "4.1": 5}, 0),
    "max.in.flight.requests.per.connection": ("int", "producer", _all(5), 1),
    "retry.backoff.ms": ("int", "client", _all(100), 0),
    "enable.idempotence": ("bool", "producer",
                           {**_from("1.1", False), **{v: True for v in VERSIONS[VERSIONS.index("3.0"):]}},
                           None),
    "metadata.max.age.ms": ("int", "client", _all(300000), 1),
    # consumer
    "auto.offset.reset": ("enum:latest|earliest|none", "consumer", _all("latest"), None),
    "isolation.level": ("enum:read_uncommitted|read_committed", "consumer",
                        _from("1.1", "read_uncommitted"), None),
    "fetch.max.wait.ms": ("int", "consumer", _all(500), 0),
    "fetch.min.bytes": ("int", "consumer", _all(1), 1),
    # KIP-392 follower fetching (2.4): ConsumerConfig.CLIENT_RACK_CONFIG defaults to "" (no rack);
    # KafkaConfig.ReplicaSelectorClassProp to null, i.e. no selector: consumers read from leaders
    "client.rack": ("str", "consumer", _from("2.4", ""), None),
    "replica.selector.class": ("enum:" + "|".join(REPLICA_SELECTORS), "broker", _from("2.4", None),
                               None),
    # KRaft (docs/model.md §20.9): KafkaConfig / QuorumConfig defaults of 3.9.0 and 4.1.0
    "broker.heartbeat.interval.ms": ("int", "broker", _kraft(2000), 1),
    "broker.session.timeout.ms": ("int", "broker", _kraft(9000), 1),
    "controller.quorum.election.timeout.ms": ("int", "broker", _kraft(1000), 1),
    "controller.quorum.fetch.timeout.ms": ("int", "broker", _kraft(2000), 1),
    "controller.quorum.election.backoff.max.ms": ("int", "broker", _kraft(1000), 1),
    "controller.quorum.request.timeout.ms": ("int", "broker", _kraft(2000), 1),
    "metadata.max.idle.interval.ms": ("int", "broker", _kraft(500), 1),
    "controller.quorum.append.linger.ms": ("int", "broker", _kraft(25), 0),
    "eligible.leader.replicas.version": ("int", "broker", {**_kraft(None), "4.1": 1}, 0),
    "metadata.version": ("enum:3.9-IV0|4.1-IV1", "broker", {**_kraft(None), "3.9-kraft": "3.9-IV0",
                                                             "4.1": "4.1-IV1"}, None),
    # simulator knobs (not Kafka's): the model of the machine under the broker
    "sim.record.size.bytes": ("int", "sim", _all(100), 1),
    "sim.os.dirty.expire.ms": ("int", "sim", _all(30000), 0),
    "sim.os.dirty.writeback.interval.ms": ("int", "sim", _all(5000), 1),
}

#: Keys of scope "client" whose consumer default differs from the producer's (ConsumerConfig vs
#: ProducerConfig; docs/model.md §12). The consumer's request.timeout.ms was 305000 ("chosen to be
#: higher than the default of max.poll.interval.ms", ConsumerConfig @ 0.10.2.2 and 1.1.1) until
#: 2.0.0 made it 30000 (KAFKA-7050); the producer's is 30000 in every era. Engine 1.5.0 on.
CONSUMER_DEFAULTS = {
    "request.timeout.ms": {**_all(30000), "0.10": 305000, "1.1": 305000},
}


def consumer_defaults(version):
    """The consumer's own defaults of ``CONSUMER_DEFAULTS`` in era ``version``."""
    return {k: per_era[version] for k, per_era in CONSUMER_DEFAULTS.items()}


#: Keys whose default is unset (None) from the era named on: Kafka knows them there, with no value.
UNSET_DEFAULT_FROM = {"log.flush.interval.ms": VERSIONS[0], "replica.selector.class": "2.4"}


def known_keys(version):
    """Config keys the era knows. Those of ``UNSET_DEFAULT_FROM`` default to unset (None)."""
    index = VERSIONS.index(version)
    return [k for k, (_kind, _scope, defaults, _c) in CONFIG.items()
            if defaults[version] is not None or
            (k in UNSET_DEFAULT_FROM and index >= VERSIONS.index(UNSET_DEFAULT_FROM[k]))]


def default(version, key):
    return CONFIG[key][2][version]


def scopes_of(key):
    scope = CONFIG[key][1]
    return ("producer", "consumer") if scope == "client" else (scope,)


def defaults(version, scope=None):
    return {k: CONFIG[k][2][version] for k in known_keys(version)
            if scope is None or set(scopes_of(k)) & set(scope)}
