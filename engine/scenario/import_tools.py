"""Read the two optional companions of an import (docs/scenario-format.md §7.2, §7.3):

``kafka-broker-api-versions.sh`` prints, for each broker, ``Node.toString`` and its API versions
(BrokerApiVersionsCommand, NodeApiVersions.toString(true))::

    kafka-1:9092 (id: 1 rack: az-a) -> (
        Produce(0): 0 to 9 [usable: 9],
        ...
    )

``rack: null`` when ``broker.rack`` is unset; 4.x adds ``isFenced: false`` inside the brackets; a
broker it could not ask is ``... -> ERROR: <message>``.

``kafka-metadata-quorum.sh describe --status`` (MetadataQuorumCommand, 3.3+) prints ``Key: value``
lines; ``CurrentVoters`` is ``[1,2,3]`` up to 3.8 and, from 3.9, ``[{"id": 1, "directoryId": "...",
"endpoints": ["CONTROLLER://host:9093"]}, ...]`` - JSON either way. ``CurrentObservers`` (the
brokers that fetch the metadata log) has the same shape; ``LeaderId`` is the active controller.
"""
import json
import re
from dataclasses import dataclass, field as dfield

from engine.scenario.import_text import BROKER_ID_MAX, ImportRefused, integer, where

API_VERSIONS = "api-versions"
QUORUM = "quorum"
_NODE = re.compile(r"^\s*(?P<host>\S+):(?P<port>[0-9]+)\s+\(id:\s*(?P<id>-?[0-9]+)\s+rack:\s*(?P<rack>.*?)"
                   r"(?:\s+isFenced:\s*(?P<fenced>true|false))?\)\s*->\s*(?P<rest>.*)$")
_API = re.compile(r"^\s*[A-Za-z]+\(-?[0-9]+\):\s+\S.*$")
NODE_LINE = "host:9092 (id: 1 rack: az-a) -> ("
API_LINE = "an API line such as 'Produce(0): 0 to 9 [usable: 9],'"
QUORUM_KEYS = ("ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag", "MaxFollowerLagTimeMs",
               "CurrentVoters", "CurrentObservers")
_QUORUM_LINE = re.compile(r"^\s*([A-Za-z]+):\s*(.*)$")


@dataclass
class BrokerList:
    racks: dict = dfield(default_factory=dict)        # id -> rack name or None
    lines: dict = dfield(default_factory=dict)        # id -> line number
    unreachable: list = dfield(default_factory=list)  # ids the tool got an ERROR from
    fenced: list = dfield(default_factory=list)       # ids with isFenced: true (4.x)


@dataclass
class Quorum:
    voters: list
    observers: list
    leader: object                                    # the active controller's id, or None
    line: int


def parse_api_versions(lines):
    """Broker ids and racks from ``kafka-broker-api-versions.sh``, given as ``numbered_lines``."""
    out, open_at = BrokerList(), None
    for number, text in lines:
        if open_at is not None:
            if text.strip() == ")":
                open_at = None
            elif not _API.match(text):
                raise ImportRefused(where(API_VERSIONS, number), f"{text.strip()[:60]!r} is not an API version",
                                    f"{API_LINE}, or ')' closing the list of broker {open_at[1]}")
            continue
        match = _NODE.match(text)
        if not match:
            raise ImportRefused(where(API_VERSIONS, number), f"{text.strip()[:60]!r} is not a broker line",
                                f"'{NODE_LINE}' (Node.toString, then its API versions)")
        broker = _node(match, number, out)
        rest = match.group("rest").strip()
        if rest == "(":
            open_at = (number, broker)
        elif rest.startswith("ERROR:"):
            out.unreachable.append(broker)
        else:
            raise ImportRefused(where(API_VERSIONS, number), f"{rest[:40]!r} after '->'",
                                "'(' opening the API versions, or 'ERROR: ...'")
    if open_at is not None:
        raise ImportRefused(where(API_VERSIONS, open_at[0]), f"the API versions of broker {open_at[1]} are not "
                                                             "closed by ')'", "the whole output of the tool")
    if not out.racks:
        raise ImportRefused(API_VERSIONS, "names no broker", f"the output of kafka-broker-api-versions.sh: '{NODE_LINE}'")
    return out


def _node(match, number, out):
    field = where(API_VERSIONS, number)
    broker = integer(match.group("id"), field, "id: a broker id", 0, BROKER_ID_MAX)
    rack = match.group("rack").strip()
    if not rack:
        raise ImportRefused(field, "rack is empty", "rack: a name, or null")
    rack = None if rack == "null" else rack
    if broker in out.racks and out.racks[broker] != rack:
        raise ImportRefused(field, f"broker {broker} has rack {rack} here but {out.racks[broker]} on line "
                                   f"{out.lines[broker]}", "one rack per broker")
    out.racks[broker] = rack
    out.lines.setdefault(broker, number)
    if match.group("fenced") == "true" and broker not in out.fenced:
        out.fenced.append(broker)
    return broker


def parse_quorum(lines):
    """The voters, observers and active controller of ``kafka-metadata-quorum.sh describe
    --status``, given as ``numbered_lines``."""
    values = {}
    for number, text in lines:
        field = where(QUORUM, number)
        match = _QUORUM_LINE.match(text)
        if not match or match.group(1) not in QUORUM_KEYS:
            raise ImportRefused(field, f"{text.strip()[:60]!r} is not a line of describe --status",
                                "Key: value with a key among " + ", ".join(QUORUM_KEYS))
        if match.group(1) in values:
            raise ImportRefused(field, f"{match.group(1)} appears twice", "each key once")
        values[match.group(1)] = (number, match.group(2).strip())
    if "CurrentVoters" not in values:
        raise ImportRefused(QUORUM, "has no CurrentVoters line",
                            "the output of kafka-metadata-quorum.sh describe --status")
    number, text = values["CurrentVoters"]
    voters = _replica_ids(text, where(QUORUM, number), "CurrentVoters")
    if not voters:
        raise ImportRefused(where(QUORUM, number), "CurrentVoters is empty", "at least one voter")
    observers = []
    if "CurrentObservers" in values:
        obs_number, obs_text = values["CurrentObservers"]
        observers = _replica_ids(obs_text, where(QUORUM, obs_number), "CurrentObservers")
    leader = None
    if "LeaderId" in values:
        lead_number, lead_text = values["LeaderId"]
        leader = integer(lead_text, where(QUORUM, lead_number), "LeaderId: a voter's id, or -1", -1, BROKER_ID_MAX)
        leader = None if leader < 0 else leader
    return Quorum(voters=voters, observers=observers, leader=leader, line=number)


def _replica_ids(text, field, key):
    """``[1,2,3]`` or ``[{"id": 1, ...}, ...]``: the ids, in the order printed."""
    allowed = f'{key}: [1,2,3] or [{{"id": 1, ...}}, ...]'
    try:
        value = json.loads(text)
    except ValueError:
        raise ImportRefused(field, f"{key} {text[:60]!r} is not a list of ids", allowed) from None
    if not isinstance(value, list):
        raise ImportRefused(field, f"{key} {text[:60]!r} is not a list", allowed)
    ids = []
    for item in value:
        raw = item.get("id") if isinstance(item, dict) else item
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= BROKER_ID_MAX:
            raise ImportRefused(field, f"{key} holds {json.dumps(item)[:60]}, which has no node id", allowed)
        if raw in ids:
            raise ImportRefused(field, f"{key} names node {raw} twice", "distinct ids")
        ids.append(raw)
    return ids
