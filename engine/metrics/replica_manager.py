"""A broker's ReplicaManager and ReplicaFetcherManager gauges (docs/model.md §22.3), read from its
partitions and fetchers as Kafka's gauges read them:

* ``UnderReplicatedPartitions``: ``Partition.isUnderReplicated`` over the partitions the broker
  leads: the (committed) ISR is smaller than the replica set (@ 0.10.2.2 - 4.1.0; from 2.7 the
  committed ``isrState.isr``, which a pending AlterIsr/AlterPartition does not change yet);
* ``UnderMinIsrPartitionCount`` / ``AtMinIsrPartitionCount``: the ISR below / exactly at the
  topic's ``min.insync.replicas`` on a partition it leads; from 3.7 (KAFKA-15583) at the
  *effective* min ISR, ``min(min.insync.replicas, replicas)``;
* ``MaxLag``: the largest ``FetcherLagMetrics.lag`` over the partitions its fetchers follow.

A process that is down, or paused (a scrape of a JVM in a GC pause gets no answer), reports
nothing: ``answering`` says which do.
"""
#: broker states with a live process (its JMX answers once the JVM is up, before registration)
PROCESS_UP = ("starting", "running", "shutting_down")


def answering(node):
    """The process is up and not paused."""
    return node.state in PROCESS_UP and not node.paused


def min_isr(sim, part):
    """The topic's min.insync.replicas (capped at the replica count from 3.7), read without
    touching the simulation's per-topic config cache."""
    overrides = sim.topic_configs.get(part.topic, {})
    value = overrides.get("min.insync.replicas", sim.config["min.insync.replicas"])
    if sim.era.hw_min_isr_gate:          # Partition.effectiveMinIsr (KAFKA-15583, 3.7+)
        value = min(value, len(part.replicas))
    return value


def isr_gauges(sim, broker):
    """(UnderReplicatedPartitions, UnderMinIsrPartitionCount, AtMinIsrPartitionCount)."""
    under = below = at = 0
    for part in broker.partitions.values():
        if not part.is_leader:
            continue
        size = len(part.isr)
        if size < len(part.replicas):
            under += 1
        floor = min_isr(sim, part)
        if size < floor:
            below += 1
        elif size == floor:
            at += 1
    return under, below, at


def max_lag(broker):
    """AbstractFetcherManager's MaxLag: the largest lag over every fetcher's partitions (0 if none)."""
    lag = 0
    for fetcher in broker.fetchers.values():
        for state in fetcher.partitions.values():
            value = getattr(state, "lag", 0)   # a FetchState pickled before the slot existed: unset
            if value > lag:
                lag = value
    return lag


def metadata_lag_ms(sim, broker):
    """KRaft ``last-applied-record-lag-ms`` (BrokerServerMetrics @ 3.9.0, 4.1.0): now minus the
    append time of the last metadata record the broker applied; None before it applied one (or
    for a record stored without its time)."""
    offset = getattr(broker, "metadata_offset", 0)
    log = sim.quorum.committed_log
    if offset <= 0 or offset > len(log):
        return None
    appended = log[offset - 1].get("log_time_ms")
    return None if appended is None else sim.now_ms - appended
