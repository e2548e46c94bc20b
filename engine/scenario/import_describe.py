"""Read the output of ``kafka-topics.sh --describe`` (docs/scenario-format.md §7.1), as every
release from 0.10 to 4.1 prints it (TopicCommand: core/.../admin/TopicCommand.scala up to 3.6,
tools/.../TopicCommand.java from 3.7):

* a topic line per topic: ``Topic:orders<TAB>PartitionCount:3<TAB>ReplicationFactor:3<TAB>
  Configs:...`` up to 2.3 (no space after the colons; 1.1-2.3 may add ``MarkedForDeletion:true``),
  ``Topic: orders<TAB>PartitionCount: 3<TAB>...`` from 2.4, with ``TopicId: ...`` after the name
  from 2.8 (when the topic has an id);
* a partition line per partition, indented: ``Topic: orders<TAB>Partition: 0<TAB>Leader: 1<TAB>
  Replicas: 1,2,3<TAB>Isr: 1,2`` - the leader ``none`` without one (``-1`` in the ZooKeeper tools
  of 0.10-2.x when the state znode says so), ``Adding Replicas`` / ``Removing Replicas`` during a
  reassignment (2.4+), ``Elr`` / ``LastKnownElr`` (``N/A`` when the broker does not send them)
  from 3.8/4.x, and an ``Offline`` column, which Confluent Platform's kafka-topics adds.

``Configs`` lists ``key=value`` entries separated by commas; a value that is itself a list
(``cleanup.policy=compact,delete``) continues after a comma with no ``=``.
"""
import re
from dataclasses import dataclass, field as dfield

from engine.scenario.fields import TOPIC_NAME
from engine.scenario.import_text import BROKER_ID_MAX, ImportRefused, broker_ids, integer, where

SOURCE = "describe"
_KEY = re.compile(r"(?:^|(?<=\s))(Adding\s+Replicas|Removing\s+Replicas|TopicId|Topic|PartitionCount|Partition|"
                  r"ReplicationFactor|Configs|MarkedForDeletion|Leader|Replicas|Isr|LastKnownElr|Elr|Offline):")
TOPIC_KEYS = ("Topic", "TopicId", "PartitionCount", "ReplicationFactor", "Configs", "MarkedForDeletion")
TOPIC_REQUIRED = ("Topic", "PartitionCount", "ReplicationFactor", "Configs")
PARTITION_KEYS = ("Topic", "Partition", "Leader", "Replicas", "Isr", "Adding Replicas", "Removing Replicas",
                  "Elr", "LastKnownElr", "Offline", "MarkedForDeletion")
PARTITION_REQUIRED = ("Topic", "Partition", "Leader", "Replicas", "Isr")
TOPIC_LINE = "Topic: NAME  PartitionCount: N  ReplicationFactor: N  Configs: key=value,..."
PARTITION_LINE = "Topic: NAME  Partition: N  Leader: ID  Replicas: ID,ID  Isr: ID,ID"
_TOPIC_ID = re.compile(r"^[A-Za-z0-9_-]{22}$")
_CONFIG = re.compile(r"^([a-z0-9][a-z0-9._-]*)=(.*)$")
_OTHER_KEY = re.compile(r"(?:^|\s)([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)?):")
WHOLE_OUTPUT = ("the whole output of kafka-topics.sh --describe (without --under-replicated-partitions, "
                "--unavailable-partitions or --topics-with-overrides)")


@dataclass
class PartitionDescription:
    line: int
    partition: int
    leader: object                  # a broker id, or None (Leader: none / -1)
    replicas: list
    isr: list
    adding: list = dfield(default_factory=list)
    removing: list = dfield(default_factory=list)
    elr: object = None              # a list, or None (no column, or N/A)
    last_known_elr: object = None
    offline: list = dfield(default_factory=list)


@dataclass
class TopicDescription:
    line: int
    name: str
    partition_count: int
    replication_factor: int
    configs: list                   # [(key, value text)], in the order printed
    topic_id: object = None
    marked_for_deletion: bool = False
    partitions: dict = dfield(default_factory=dict)


def parse_describe(lines):
    """The topics of a describe output, given as ``numbered_lines``; refuses the first line that
    is not what TopicCommand prints, naming it."""
    topics, current = [], None
    for number, text in lines:
        columns = _columns(text, number)
        if "PartitionCount" in columns:
            _finish(current)
            current = _topic(columns, number)
            if any(t.name == current.name for t in topics):
                raise ImportRefused(where(SOURCE, number), f"topic {current.name} is described twice",
                                    "one topic line per topic")
            topics.append(current)
        elif "Partition" in columns:
            part = _partition(columns, number)
            name = columns["Topic"]
            if current is None or current.name != name:
                before = f"the topic line before it is for {current.name}" if current else "no topic line comes before it"
                raise ImportRefused(where(SOURCE, number), f"a partition line of topic {name}, but {before}",
                                    f"the topic line of {name} first: {WHOLE_OUTPUT}")
            _add_partition(current, part, number)
        else:
            raise ImportRefused(where(SOURCE, number), f"{_cut(text)!r} is neither a topic line nor a partition line",
                                f"'{TOPIC_LINE}' or '{PARTITION_LINE}'")
    _finish(current)
    if not topics:
        raise ImportRefused(SOURCE, "holds no topic", f"{WHOLE_OUTPUT}, with at least one topic")
    return topics


def _cut(text, n=60):
    text = text.strip()
    return text if len(text) <= n else text[:n] + "..."


def _columns(text, number):
    """``{column: value}`` of one line; its text must start with a column and name each once."""
    matches = list(_KEY.finditer(text))
    field = where(SOURCE, number)
    if not matches:
        raise ImportRefused(field, f"{_cut(text)!r} is neither a topic line nor a partition line",
                            f"'{TOPIC_LINE}' or '{PARTITION_LINE}'")
    if text[:matches[0].start()].strip():
        raise ImportRefused(field, f"{_cut(text[:matches[0].start()])!r} before the first column",
                            f"a line that starts with Topic: ('{TOPIC_LINE}' or '{PARTITION_LINE}')")
    out = {}
    for i, match in enumerate(matches):
        key = re.sub(r"\s+", " ", match.group(1))
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        if key in out:
            raise ImportRefused(field, f"the column {key} appears twice", "each column once")
        out[key] = text[match.end():end].strip()
        other = _OTHER_KEY.search(out[key])
        if other:
            raise ImportRefused(field, f"{other.group(1)} is not a column of kafka-topics.sh --describe",
                                ", ".join(PARTITION_KEYS + TOPIC_KEYS[1:5]))
    return out


def _check_keys(columns, allowed, required, field, kind, expected):
    for key in columns:
        if key not in allowed:
            raise ImportRefused(field, f"{key} is not a column of a {kind} line", expected)
    for key in required:
        if key not in columns:
            raise ImportRefused(field, f"this {kind} line has no {key} column", expected)


def _topic_name(value, field):
    if not TOPIC_NAME.match(value) or value in (".", ".."):
        raise ImportRefused(field, f"{_cut(value)!r} is not a Kafka topic name",
                            "Topic: 1-249 characters from a-z A-Z 0-9 . _ -")
    return value


def _topic(columns, number):
    field = where(SOURCE, number)
    _check_keys(columns, TOPIC_KEYS, TOPIC_REQUIRED, field, "topic", f"'{TOPIC_LINE}'")
    name = _topic_name(columns["Topic"], field)
    topic_id = columns.get("TopicId")
    if topic_id is not None and not _TOPIC_ID.match(topic_id):
        raise ImportRefused(field, f"TopicId {_cut(topic_id)!r} is not a topic id",
                            "TopicId: 22 characters of URL-safe base64")
    marked = columns.get("MarkedForDeletion")
    if marked is not None and marked != "true":
        raise ImportRefused(field, f"MarkedForDeletion: {_cut(marked)!r}", "MarkedForDeletion: true")
    return TopicDescription(
        line=number, name=name, topic_id=topic_id, marked_for_deletion=marked == "true",
        partition_count=integer(columns["PartitionCount"], field, "PartitionCount", 1, 10 ** 6),
        replication_factor=integer(columns["ReplicationFactor"], field, "ReplicationFactor", 1, 10 ** 4),
        configs=_configs(columns["Configs"], field))


def _configs(value, field):
    """``key=value,key=value``; a token without ``=`` continues the value before it (a list)."""
    if not value:
        return []
    if re.search(r"\s", value):
        raise ImportRefused(field, f"Configs {_cut(value)!r} holds spaces",
                            "Configs: key=value entries separated by commas, as the last column")
    entries = []
    for token in value.split(","):
        match = _CONFIG.match(token)
        if match:
            if any(k == match.group(1) for k, _ in entries):
                raise ImportRefused(field, f"Configs sets {match.group(1)} twice", "each config key once")
            entries.append([match.group(1), match.group(2)])
        elif entries:
            entries[-1][1] += "," + token
        else:
            raise ImportRefused(field, f"Configs {_cut(value)!r} does not start with key=value",
                                "Configs: key=value entries separated by commas (or nothing)")
    return [tuple(e) for e in entries]


def _partition(columns, number):
    field = where(SOURCE, number)
    _check_keys(columns, PARTITION_KEYS, PARTITION_REQUIRED, field, "partition", f"'{PARTITION_LINE}'")
    _topic_name(columns["Topic"], field)
    part = PartitionDescription(
        line=number, partition=integer(columns["Partition"], field, "Partition", 0, 10 ** 6),
        leader=_leader(columns["Leader"], field),
        replicas=broker_ids(columns["Replicas"], field, "Replicas", allow_empty=False),
        isr=broker_ids(columns["Isr"], field, "Isr"),
        adding=broker_ids(columns.get("Adding Replicas", ""), field, "Adding Replicas"),
        removing=broker_ids(columns.get("Removing Replicas", ""), field, "Removing Replicas"),
        elr=_optional_ids(columns.get("Elr"), field, "Elr"),
        last_known_elr=_optional_ids(columns.get("LastKnownElr"), field, "LastKnownElr"),
        offline=broker_ids(columns.get("Offline", ""), field, "Offline"))
    _check_members(part, field)
    return part


def _leader(value, field):
    if value in ("none", "-1"):
        return None
    return integer(value, field, "Leader: a broker id, or none", 0, BROKER_ID_MAX)


def _optional_ids(value, field, column):
    if value is None or value == "N/A":
        return None
    return broker_ids(value, field, column)


def _check_members(part, field):
    """Kafka never prints a leader, ISR member or ELR member that is not a replica."""
    replicas = set(part.replicas)
    if part.leader is not None and part.leader not in replicas:
        raise ImportRefused(field, f"Leader {part.leader} is not one of Replicas {_join(part.replicas)}",
                            "a leader among the replicas, or none")
    for column, ids in (("Isr", part.isr), ("Adding Replicas", part.adding), ("Removing Replicas", part.removing),
                        ("Elr", part.elr or []), ("LastKnownElr", part.last_known_elr or []),
                        ("Offline", part.offline)):
        stray = [i for i in ids if i not in replicas]
        if stray:
            raise ImportRefused(field, f"{column} names broker {_join(stray)}, which is not one of Replicas "
                                       f"{_join(part.replicas)}", f"{column}: brokers among the replicas")


def _join(ids):
    return ",".join(str(i) for i in ids)


def _add_partition(topic, part, number):
    field = where(SOURCE, number)
    if part.partition >= topic.partition_count:
        raise ImportRefused(field, f"partition {part.partition} of {topic.name}, which has PartitionCount "
                                   f"{topic.partition_count} (line {topic.line})",
                            f"Partition: 0 to {topic.partition_count - 1}")
    if part.partition in topic.partitions:
        raise ImportRefused(field, f"partition {part.partition} of {topic.name} is described twice "
                                   f"(line {topic.partitions[part.partition].line})", "one line per partition")
    topic.partitions[part.partition] = part


def _finish(topic):
    """A topic's lines are complete: one line for every partition, and one replica count that
    matches its ReplicationFactor (the simulator has one replication factor per topic)."""
    if topic is None:
        return
    field = where(SOURCE, topic.line)
    missing = [p for p in range(topic.partition_count) if p not in topic.partitions]
    if missing:
        shown = _join(missing[:10]) + (",..." if len(missing) > 10 else "")
        raise ImportRefused(field, f"topic {topic.name} has PartitionCount {topic.partition_count} but no line for "
                                   f"partition {shown}", WHOLE_OUTPUT)
    counts = {p: len(d.replicas) for p, d in sorted(topic.partitions.items())}
    if len(set(counts.values())) > 1:
        first = topic.partitions[0]
        odd = next(d for d in topic.partitions.values() if len(d.replicas) != len(first.replicas))
        during = " (a reassignment is in progress: Replicas holds the adding replicas too)" if odd.adding or first.adding else ""
        raise ImportRefused(where(SOURCE, odd.line),
                            f"partition {odd.partition} of {topic.name} has {len(odd.replicas)} replicas but partition 0 "
                            f"has {len(first.replicas)}{during}; the simulator gives each topic one replication factor",
                            "the same number of replicas in every partition of a topic")
    size = len(topic.partitions[0].replicas)
    effective = {size} | {size - len(d.adding) for d in topic.partitions.values()}
    if topic.replication_factor not in effective:
        raise ImportRefused(field, f"topic {topic.name} has ReplicationFactor {topic.replication_factor} but its "
                                   f"partitions have {size} replicas", f"ReplicationFactor: {size}")
