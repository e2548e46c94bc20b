"""The metadata image: what replaying the metadata log yields (docs/model.md §20.2, §20.5).

Kafka's controller and every broker build the same image from the same records
(``MetadataDelta.replay`` into ``ClusterImage`` / ``TopicsImage``); here one small class does it
for both. Records are plain dicts ``{"offset", "epoch", "type", ...fields}`` with Kafka's record
names (``MetadataRecordType``) and its field names in snake case.
"""
from engine.kraft.partition_change import change_text, merge

REGISTER_BROKER = "RegisterBrokerRecord"
BROKER_CHANGE = "BrokerRegistrationChangeRecord"
TOPIC = "TopicRecord"
PARTITION = "PartitionRecord"
PARTITION_CHANGE = "PartitionChangeRecord"
NO_OP = "NoOpRecord"
LEADER_CHANGE = "LeaderChangeMessage"


class MetadataImage:
    """Brokers' registrations and partitions' registrations after the records replayed so far."""

    def __init__(self):
        self.brokers = {}     # id -> {broker_epoch, fenced, in_controlled_shutdown, offset}
        self.partitions = {}  # (topic, partition) -> registration (partition_change.new_registration)
        self.topics = {}      # name -> partition count
        self.offset = 0       # records replayed (the next offset)

    def replay(self, record):
        kind = record["type"]
        if kind == REGISTER_BROKER:
            self.brokers[record["broker"]] = {
                "broker_epoch": record["broker_epoch"], "fenced": record["fenced"],
                "in_controlled_shutdown": record["in_controlled_shutdown"],
                "offset": record["offset"], "incarnation": record.get("incarnation")}
        elif kind == BROKER_CHANGE:
            reg = self.brokers.get(record["broker"])
            if reg is not None and reg["broker_epoch"] == record["broker_epoch"]:
                if record.get("fenced"):
                    reg["fenced"] = record["fenced"] == 1
                if "in_controlled_shutdown" in record:
                    reg["in_controlled_shutdown"] = bool(record["in_controlled_shutdown"])
        elif kind == TOPIC:
            self.topics.setdefault(record["name"], 0)
        elif kind == PARTITION:
            self.partitions[(record["topic"], record["partition"])] = registration_of(record)
            self.topics[record["topic"]] = self.topics.get(record["topic"], 0) + 1
        elif kind == PARTITION_CHANGE:
            key = (record["topic"], record["partition"])
            if key in self.partitions:
                self.partitions[key] = merge(self.partitions[key], record)
        self.offset = record["offset"] + 1

    # -- questions the controller and the brokers ask --------------------------------------------------
    def is_active(self, broker):
        """ClusterControlManager.isActive: registered, unfenced, not in controlled shutdown."""
        reg = self.brokers.get(broker)
        return reg is not None and not reg["fenced"] and not reg["in_controlled_shutdown"]

    def unfenced(self):
        return sorted(b for b, reg in self.brokers.items() if not reg["fenced"])

    def leaderless(self):
        return [k for k, reg in sorted(self.partitions.items()) if reg["leader"] == -1]


def registration_of(record):
    return {"replicas": list(record["replicas"]), "isr": list(record["isr"]),
            "leader": record["leader"], "leader_epoch": record["leader_epoch"],
            "partition_epoch": record["partition_epoch"], "elr": list(record.get("elr", [])),
            "last_known_elr": list(record.get("last_known_elr", [])),
            "leader_recovery_state": record.get("leader_recovery_state", "RECOVERED")}


def record_text(record):
    """A short human summary of one record (the quorum panel's log list)."""
    kind = record["type"]
    if kind == REGISTER_BROKER:
        return f"RegisterBrokerRecord broker {record['broker']} epoch {record['broker_epoch']} fenced"
    if kind == BROKER_CHANGE:
        what = []
        if record.get("fenced") == 1:
            what.append("fenced")
        elif record.get("fenced") == -1:
            what.append("unfenced")
        if record.get("in_controlled_shutdown"):
            what.append("in controlled shutdown")
        return f"BrokerRegistrationChangeRecord broker {record['broker']} " + " ".join(what)
    if kind == TOPIC:
        return f"TopicRecord {record['name']}"
    if kind == PARTITION:
        return f"{kind} " + change_text(record["topic"], record["partition"], registration_of(record))
    if kind == PARTITION_CHANGE:  # the controller writes its text with the resulting state
        return f"{kind} {record['topic']}-{record['partition']}"
    if kind == LEADER_CHANGE:
        return f"LeaderChange leader {record['leader']} epoch {record['epoch']}"
    return kind
