"""Message envelope and the request/response types that travel over the simulated network.

Bodies are plain JSON-able dicts (cheap to build, drawn as-is by the web view). The fields of
each body follow the Kafka request of the same name (docs/model.md §7, §9.5); the comments list them.
"""

# ZooKeeper client <-> server
ZK_REQUEST = "ZkRequest"      # {session, xid, op, args}  op: connect|ping|close|create|get|set|
#                               delete|exists|get_children|multi
ZK_RESPONSE = "ZkResponse"    # {session, xid, op, result, error}
ZK_WATCH = "ZkWatchEvent"     # {session, type, path}

# controller -> broker
LEADER_AND_ISR = "LeaderAndIsr"  # {controller_id, controller_epoch, broker_epoch, partitions: [state]}
UPDATE_METADATA = "UpdateMetadata"  # {controller_id, controller_epoch, partitions: [state], live_brokers}
STOP_REPLICA = "StopReplica"    # {controller_id, controller_epoch, partitions: [[topic, p]], delete}
# broker -> controller
CONTROLLED_SHUTDOWN = "ControlledShutdown"  # {broker, broker_epoch}
#: KIP-497 (2.7+; "AlterPartition" from 3.2, same api key): {api, broker, broker_epoch,
#: partitions: [{key, topic, partition, leader_epoch, new_isr, zk_version, leader_recovery_state}]}
#: -> {error, partitions: {key: {error, leader, leader_epoch, isr, zk_version}}} (docs/model.md §17)
ALTER_ISR = "AlterIsr"

# replication and clients
FETCH = "Fetch"  # {replica_id, max_wait_ms, min_bytes, partitions: {tp: {fetch_offset, log_start_offset, current_leader_epoch}}}
OFFSETS_FOR_LEADER_EPOCH = "OffsetsForLeaderEpoch"  # {replica_id, partitions: {tp: {leader_epoch, current_leader_epoch}}}
PRODUCE = "Produce"  # {acks, timeout_ms, producer, partitions: {tp: [record ids]}}
METADATA = "Metadata"  # {topics}
LIST_OFFSETS = "ListOffsets"  # {partitions: {tp: "earliest"|"latest"}}
#: an idempotent producer's new producer id (clients 1.1 - 2.4 after resetProducerId; engine 1.5.0):
#: {transactional_id: None} -> {error, producer_id, producer_epoch}
INIT_PRODUCER_ID = "InitProducerId"

RESPONSE_SUFFIX = "Response"

#: Synthesised when the target's process is gone: the OS refuses the connection (RST).
DISCONNECTED = "NETWORK_EXCEPTION"
#: A machine back from a power failure answers a peer's retransmission on a connection it no
#: longer knows with a TCP reset: every request the peer still awaits on it fails. {incarnation}
CONNECTION_RESET = "ConnectionReset"


class Envelope:
    """One message on the wire. ``correlation_id`` links a response to its request."""
    __slots__ = ("id", "source", "target", "type", "body", "sent_at_ms", "deliver_at_ms",
                 "correlation_id", "is_request")

    def __init__(self, msg_id, source, target, type_, body, sent_at_ms, deliver_at_ms,
                 correlation_id, is_request):
        self.id = msg_id
        self.source = source
        self.target = target
        self.type = type_
        self.body = body
        self.sent_at_ms = sent_at_ms
        self.deliver_at_ms = deliver_at_ms
        self.correlation_id = correlation_id
        self.is_request = is_request

    def to_dict(self):
        return {"id": self.id, "source": self.source, "target": self.target, "type": self.type,
                "sent_at_ms": self.sent_at_ms, "deliver_at_ms": self.deliver_at_ms,
                "correlation_id": self.correlation_id}

    def __repr__(self):
        return f"<{self.type} {self.source}->{self.target} @{self.deliver_at_ms}>"


def response_type(request_type):
    return request_type + RESPONSE_SUFFIX

# KRaft eras (docs/model.md §20): controller quorum (KIP-595) and broker <-> controller (KIP-631)
VOTE = "Vote"  # {candidate_id, candidate_epoch, last_offset_epoch, last_offset, pre_vote}
BEGIN_QUORUM_EPOCH = "BeginQuorumEpoch"  # {leader, epoch}
END_QUORUM_EPOCH = "EndQuorumEpoch"  # {leader, epoch, preferred_successors}
#: Fetch of the metadata log (__cluster_metadata) by voters and by brokers (observers); a Fetch
#: whose source or target is a controller is always a metadata fetch.
METADATA_FETCH = "Fetch"  # {replica_id, epoch, fetch_offset, last_fetched_epoch}
BROKER_REGISTRATION = "BrokerRegistration"  # {broker, incarnation, previous_broker_epoch}
BROKER_HEARTBEAT = "BrokerHeartbeat"  # {broker, broker_epoch, current_metadata_offset, want_fence, want_shut_down}
ALTER_PARTITION = "AlterPartition"  # as ALTER_ISR, sent to the active controller
