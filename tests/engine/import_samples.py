"""Tool output as each release prints it, written from the code at the release tag (TopicCommand,
BrokerApiVersionsCommand with Node.toString, MetadataQuorumCommand); "\\t" is the tab the tools
print between columns. Shared by the engine, app and browser tests of the importer."""

# 0.10.2.0 TopicCommand.describeTopic (ZooKeeper): "Topic:%s\tPartitionCount:%d\tReplicationFactor:%d
# \tConfigs:%s" with the topic's overrides only; the leader read from the state znode (-1 when the
# controller left the partition leaderless).
DESCRIBE_0_10 = (
    "Topic:orders\tPartitionCount:3\tReplicationFactor:2\tConfigs:min.insync.replicas=2,retention.ms=86400000\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
    "\tTopic: orders\tPartition: 1\tLeader: -1\tReplicas: 2,0\tIsr: 2\n"
    "\tTopic: orders\tPartition: 2\tLeader: 1\tReplicas: 0,1\tIsr: 1\n"
    "Topic:audit\tPartitionCount:1\tReplicationFactor:3\tConfigs:\n"
    "\tTopic: audit\tPartition: 0\tLeader: 0\tReplicas: 0,1,2\tIsr: 0,1,2\n")

# 1.1.0: "\tMarkedForDeletion:true" after Configs on the topic line; "none" and an empty ISR when the
# partition has no state znode.
DESCRIBE_1_1 = (
    "Topic:payments\tPartitionCount:2\tReplicationFactor:3\tConfigs:unclean.leader.election.enable=true\n"
    "\tTopic: payments\tPartition: 0\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,1,2\n"
    "\tTopic: payments\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "Topic:old\tPartitionCount:1\tReplicationFactor:1\tConfigs:\tMarkedForDeletion:true\n"
    "\tTopic: old\tPartition: 0\tLeader: none\tReplicas: 2\tIsr: \n")

# 2.6.0 (admin client): "Topic: %s\tPartitionCount: %d..." with a space after each colon, Configs =
# every entry that is not a default (broker-level overrides too); "Adding Replicas" / "Removing
# Replicas" during a reassignment, when ReplicationFactor is the replicas less the adding ones.
DESCRIBE_2_6 = (
    "Topic: orders\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,"
    "cleanup.policy=compact,delete,segment.bytes=1073741824\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "\tTopic: orders\tPartition: 1\tLeader: 3\tReplicas: 2,3,1\tIsr: 3,1\n"
    "Topic: moving\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: \n"
    "\tTopic: moving\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\tAdding Replicas: 3\tRemoving Replicas: 2\n")

# 3.7.0 (tools/TopicCommand.java): "\tTopicId: <22 characters>" after the name.
DESCRIBE_3_7 = (
    "Topic: orders\tTopicId: 3Bq5oKAbQ6eAE0CzXzQy9g\tPartitionCount: 3\tReplicationFactor: 3\t"
    "Configs: flush.messages=10000,retention.bytes=-1\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1001\tReplicas: 1001,1002,1003\tIsr: 1001,1002,1003\n"
    "\tTopic: orders\tPartition: 1\tLeader: 1002\tReplicas: 1002,1003,1001\tIsr: 1002,1001\n"
    "\tTopic: orders\tPartition: 2\tLeader: 1003\tReplicas: 1003,1001,1002\tIsr: 1003,1001\n")

# 4.1.0: every partition line ends with "\tElr: ...\tLastKnownElr: ..." ("N/A" when the broker did not
# send them). Partition 1 lost its leader: ISR empty, brokers 2 and 3 eligible, 1 the last known.
DESCRIBE_4_1 = (
    "Topic: orders\tTopicId: q1Ghs0TNQ6K2x1-Vc_ZmVA\tPartitionCount: 2\tReplicationFactor: 3\t"
    "Configs: min.insync.replicas=2,unclean.leader.election.enable=false\n"
    "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tLastKnownElr: \n"
    "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3,1\tIsr: \tElr: 2,3\tLastKnownElr: 1\n"
    "Topic: logs\tTopicId: VGhpcyBpcyBhIHRvcGljIQ\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
    "\tTopic: logs\tPartition: 0\tLeader: 2\tReplicas: 2\tIsr: 2\tElr: N/A\tLastKnownElr: N/A\n")

# BrokerApiVersionsCommand: Node.toString (" isFenced: ..." in 4.x) then NodeApiVersions.toString(true).
API_VERSIONS_2_6 = (
    "kafka-1:9092 (id: 1 rack: az-a) -> (\n"
    "\tProduce(0): 0 to 8 [usable: 8],\n"
    "\tFetch(1): 0 to 11 [usable: 11],\n"
    "\tMetadata(3): 0 to 9 [usable: 9]\n"
    ")\n"
    "kafka-2:9092 (id: 2 rack: az-b) -> (\n"
    "\tProduce(0): 0 to 8 [usable: 8],\n"
    "\tDescribeClientQuotas(48): 0 [usable: 0]\n"
    ")\n"
    "kafka-3:9092 (id: 3 rack: az-c) -> (\n"
    "\tProduce(0): 0 to 8 [usable: 8]\n"
    ")\n")

API_VERSIONS_4_1 = (
    "broker-1:9092 (id: 1 rack: null isFenced: false) -> (\n"
    "\tProduce(0): 3 to 12 [usable: 12],\n"
    "\tUNKNOWN(9999): 0 to 1\n"
    ")\n"
    "broker-2:9092 (id: 2 rack: null isFenced: true) -> (\n"
    "\tProduce(0): 3 to 12 [usable: 12]\n"
    ")\n"
    "broker-4:9092 (id: 4 rack: null isFenced: false) -> ERROR: org.apache.kafka.common.errors.DisconnectException: null\n")

# MetadataQuorumCommand.handleDescribeStatus: 3.7 prints the ids; 3.9+ Node.toString of each voter.
QUORUM_3_7 = (
    "ClusterId:              MkU3OEVBNTcwNTJENDM2Qk\n"
    "LeaderId:               3001\n"
    "LeaderEpoch:            12\n"
    "HighWatermark:          4213\n"
    "MaxFollowerLag:         0\n"
    "MaxFollowerLagTimeMs:   0\n"
    "CurrentVoters:          [3000,3001,3002]\n"
    "CurrentObservers:       [1001,1002,1003]\n")

QUORUM_4_1 = (
    "ClusterId:              MkU3OEVBNTcwNTJENDM2Qk\n"
    "LeaderId:               1\n"
    "LeaderEpoch:            7\n"
    "HighWatermark:          812\n"
    "MaxFollowerLag:         0\n"
    "MaxFollowerLagTimeMs:   0\n"
    'CurrentVoters:          [{"id": 1, "directoryId": "J8aAPcfLQt2bqs1JT_rMgQ", "endpoints": ["CONTROLLER://k1:9093"]}, '
    '{"id": 2, "directoryId": "b8wRMd6mSRqQ8mzJcMbUqA", "endpoints": ["CONTROLLER://k2:9093"]}, '
    '{"id": 3, "endpoints": ["CONTROLLER://k3:9093"]}]\n'
    "CurrentObservers:       []\n")


def as_pasted(text):
    """The same output as a terminal hands it over: tabs as runs of spaces, CRLF, trailing blanks."""
    return "\r\n".join("  " + line.replace("\t", "    ") + "  " for line in text.split("\n"))
