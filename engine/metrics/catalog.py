"""Which of Kafka's own metrics a run shows, by era, with their JMX names and units
(docs/model.md §22.1).

Each entry names the MBean an SRE would scrape, what kind of Yammer or client metric it is, how the
cluster value is made from the per-process values, and the eras in which Kafka has it. A metric
an era's Kafka does not have is not in that era's list: ``UnderMinIsrPartitionCount`` came with
KIP-164 (1.0), ``AtMinIsrPartitionCount`` with KIP-427 (2.3), the ZooKeeper controller's
``ActiveBrokerCount`` / ``FencedBrokerCount`` with KIP-748 (3.1), the KRaft broker's
``last-applied-record-lag-ms`` with the KRaft eras; the KRaft controller has no
``LeaderElectionRateAndTimeMs`` (QuorumControllerMetrics @ 3.9.0 and 4.1.0 has none).
"""
from engine import eras

_ALL = eras.VERSIONS
_ZK = eras.ZK_VERSIONS
_KRAFT = eras.KRAFT_VERSIONS


def _from(first, within=_ALL):
    return tuple(v for v in within if eras.VERSIONS.index(v) >= eras.VERSIONS.index(first))


#: kinds: "gauge" (one number), "meter" ([Count, OneMinuteRate]), "timer" ([Count,
#: OneMinuteRate, Mean, Max]), "client" ({client-id: number}).
#: agg: how the cluster value is made: "sum" over the processes that answer, "max" over them,
#: "image" (every KRaft controller publishes the same committed image: its value once).
METRICS = (
    {"id": "under_replicated", "mbean": "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
     "kind": "gauge", "unit": "partitions", "agg": "sum", "eras": _ALL,
     "what": "partitions a broker leads whose ISR is smaller than the replica set"},
    {"id": "under_min_isr", "mbean": "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount",
     "kind": "gauge", "unit": "partitions", "agg": "sum", "eras": _from("1.1"),
     "what": "partitions a broker leads whose ISR is below min.insync.replicas (KIP-164)"},
    {"id": "at_min_isr", "mbean": "kafka.server:type=ReplicaManager,name=AtMinIsrPartitionCount",
     "kind": "gauge", "unit": "partitions", "agg": "sum", "eras": _from("2.4"),
     "what": "partitions a broker leads whose ISR is exactly min.insync.replicas (KIP-427)"},
    {"id": "isr_shrinks", "mbean": "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec",
     "kind": "meter", "unit": "shrinks/s", "agg": "sum", "eras": _ALL,
     "what": "ISR shrinks the leaders committed"},
    {"id": "isr_expands", "mbean": "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec",
     "kind": "meter", "unit": "expands/s", "agg": "sum", "eras": _ALL,
     "what": "ISR expansions the leaders committed"},
    {"id": "max_lag", "mbean": "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica",
     "kind": "gauge", "unit": "messages", "agg": "max", "eras": _ALL,
     "what": "largest leader HW - follower LEO after the last fetch response, over followers"},
    {"id": "active_controller", "mbean": "kafka.controller:type=KafkaController,name=ActiveControllerCount",
     "kind": "gauge", "unit": "controllers", "agg": "sum", "eras": _ALL,
     "what": "processes that believe they are the active controller: 1 when healthy"},
    {"id": "offline_partitions", "mbean": "kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
     "kind": "gauge", "unit": "partitions", "agg": "sum", "eras": _ZK,
     "what": "partitions whose leader is not a live broker, as the active controller counts them"},
    {"id": "offline_partitions", "mbean": "kafka.controller:type=KafkaController,name=OfflinePartitionsCount",
     "kind": "gauge", "unit": "partitions", "agg": "image", "eras": _KRAFT,
     "what": "partitions without a leader in the committed metadata image"},
    {"id": "active_brokers", "mbean": "kafka.controller:type=KafkaController,name=ActiveBrokerCount",
     "kind": "gauge", "unit": "brokers", "agg": "sum", "eras": _from("3.3", _ZK),
     "what": "live or shutting-down brokers known to the active controller"},
    {"id": "fenced_brokers", "mbean": "kafka.controller:type=KafkaController,name=FencedBrokerCount",
     "kind": "gauge", "unit": "brokers", "agg": "sum", "eras": _from("3.3", _ZK),
     "what": "always 0 in the ZooKeeper controller"},
    {"id": "active_brokers", "mbean": "kafka.controller:type=KafkaController,name=ActiveBrokerCount",
     "kind": "gauge", "unit": "brokers", "agg": "image", "eras": _KRAFT,
     "what": "registered brokers that are not fenced"},
    {"id": "fenced_brokers", "mbean": "kafka.controller:type=KafkaController,name=FencedBrokerCount",
     "kind": "gauge", "unit": "brokers", "agg": "image", "eras": _KRAFT,
     "what": "registered brokers that are fenced"},
    {"id": "leader_election", "mbean": "kafka.controller:type=ControllerStats,name=LeaderElectionRateAndTimeMs",
     "kind": "timer", "unit": "events/s", "agg": "sum", "eras": _ZK,
     "what": "BrokerChange events the controller processed, and how long each took (ms)"},
    {"id": "unclean_elections", "mbean": "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec",
     "kind": "meter", "unit": "elections/s", "agg": "sum", "eras": _ZK,
     "what": "unclean leader elections the controller made"},
    {"id": "unclean_elections", "mbean": "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec",
     "kind": "meter", "unit": "elections/s", "agg": "image", "eras": _KRAFT,
     "what": "unclean leader elections in the committed metadata log"},
    {"id": "metadata_lag", "mbean": "kafka.server:type=broker-metadata-metrics", "attribute": "last-applied-record-lag-ms",
     "kind": "gauge", "unit": "ms", "agg": "max", "eras": _KRAFT,
     "what": "now - append time of the last metadata record a broker applied"},
    {"id": "record_error_rate", "mbean": "kafka.producer:type=producer-metrics,client-id=*", "attribute": "record-error-rate",
     "kind": "client", "unit": "records/s", "agg": "client", "eras": _ALL,
     "what": "records whose send failed, per second over the sample windows"},
    {"id": "request_latency_avg", "mbean": "kafka.producer:type=producer-metrics,client-id=*", "attribute": "request-latency-avg",
     "kind": "client", "unit": "ms", "agg": "client", "eras": _ALL,
     "what": "mean time from sending a produce request to its response"},
)


#: the JMX attributes shown, per kind (Yammer's names; a client metric names its own)
ATTRIBUTES = {"gauge": "Value", "meter": "Count, OneMinuteRate",
              "timer": "Count, OneMinuteRate, Mean, Max"}


def metrics_of(version):
    """The metrics of era ``version``, in display order (JSON-ready dicts without the era list)."""
    return [{"attribute": ATTRIBUTES.get(m["kind"]), **{k: v for k, v in m.items() if k != "eras"}}
            for m in METRICS if version in m["eras"]]


def ids_of(version):
    return [m["id"] for m in METRICS if version in m["eras"]]
