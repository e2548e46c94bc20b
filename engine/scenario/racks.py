"""Racks and availability zones in a scenario (docs/scenario-format.md §4.3, docs/model.md §21).

``racks`` maps node ids (as strings: ``{"1": "az-a"}``) to a rack name, Kafka's ``broker.rack``;
in KRaft eras dedicated controller ids may be named too. ``inter_rack_latency_ms`` is the extra
one-way latency of every link between nodes of two different racks. A node ``racks`` does not
name is in no rack; clients never are.

This module reads both fields, answers "which nodes are in rack X" for the timeline's zone
operations and node references (``{"rack": "az-b"}`` in a node list), and lists the partitions
whose replicas share a rack (``same_rack_partitions``: the page warns about them).
"""
import json

from engine.scenario.fields import ScenarioError, _int, _obj

#: A rack name is Kafka's broker.rack (a free string there); ours is bounded for the page.
MAX_RACK_NAME = 64
MAX_INTER_RACK_LATENCY_MS = 60000   # as network.latency_ms


def load_racks(doc, brokers, controllers):
    """The normalised ``racks`` ({"<id>": name} in id order), or None when the document has none.
    ``controllers``: the dedicated controller ids of a KRaft era (None otherwise, or combined)."""
    if "racks" not in doc:
        return None
    value = _obj(doc["racks"], "racks")
    nodes = set(brokers) | set(controllers or ())
    allowed = "broker ids" + (" and controller ids" if controllers else "") + f" {sorted(nodes)}"
    out = {}
    for key, name in value.items():
        field = f"racks.{key}"
        if not (isinstance(key, str) and key.isdigit() and key == str(int(key))) or int(key) not in nodes:
            raise ScenarioError(field, f"{json.dumps(key)} is not a node of this cluster", allowed)
        out[int(key)] = rack_name(name, field)
    return {str(node): out[node] for node in sorted(out)}


def rack_name(value, field):
    """A rack name: a non-empty string of printable characters, at most MAX_RACK_NAME long."""
    if not isinstance(value, str):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a rack name",
                            f"a string of 1 to {MAX_RACK_NAME} characters")
    if not value or len(value) > MAX_RACK_NAME or not value.isprintable():
        raise ScenarioError(field, f"{json.dumps(value)[:80]} is not a usable rack name",
                            f"1 to {MAX_RACK_NAME} printable characters")
    return value


def load_inter_rack_latency(doc):
    if "inter_rack_latency_ms" not in doc:
        return None
    return _int(doc["inter_rack_latency_ms"], "inter_rack_latency_ms", 0, MAX_INTER_RACK_LATENCY_MS)


# -- lookups over a normalised scenario --------------------------------------------------------------
def rack_of(scenario):
    """{node id: rack name} for every node in a rack ({} when the scenario has no racks)."""
    return {int(node): name for node, name in (scenario.get("racks") or {}).items()}


def rack_names(scenario):
    return sorted(set((scenario.get("racks") or {}).values()))


def rack_members(scenario, rack, field):
    """The node ids of ``rack``, in id order; a rack that names no node is an error."""
    if not isinstance(rack, str):
        raise ScenarioError(field, f"{json.dumps(rack)[:60]} is not a rack name",
                            ", ".join(rack_names(scenario)) or "a rack named in racks")
    nodes = sorted(node for node, name in rack_of(scenario).items() if name == rack)
    if not nodes:
        raise ScenarioError(field, f"no node is in rack {json.dumps(rack)}",
                            ", ".join(rack_names(scenario)) or "a rack named in racks (there are none)")
    return nodes


def node_ref(value, field, scenario):
    """``{"rack": name}`` in a node list or a from/to of a network operation, checked and
    normalised; None when ``value`` is not a rack reference."""
    if not isinstance(value, dict):
        return None
    if set(value) != {"rack"}:
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a node reference",
                            'a node id, a client name or {"rack": name}')
    rack_members(scenario, value["rack"], f"{field}.rack")
    return {"rack": value["rack"]}


MAX_SPREAD_RACKS = 26


def spread_racks(brokers, count, controllers=()):
    """``racks`` dealing ``brokers``, then ``controllers``, round robin in id order into ``count``
    racks named az-a, az-b, ... (a sweep's ``racks`` axis)."""
    names = [f"az-{chr(ord('a') + i)}" for i in range(count)]
    out = {str(b): names[i % count] for i, b in enumerate(sorted(brokers))}
    out.update({str(c): names[i % count] for i, c in enumerate(sorted(controllers))})
    return out


def same_rack_partitions(scenario, topics=None):
    """Partitions with two or more replicas in one rack, as [{"topic", "partition", "rack",
    "replicas"}] in topic and partition order (one entry per crowded rack). A rack failure takes
    several of their replicas at once. ``topics``: {name: topic} to look at instead of the
    scenario's own (a running simulation's, with the topics created since)."""
    if topics is None:
        topics = {t["name"]: t for t in scenario["topics"]}
    out = []
    for name, topic in topics.items():
        for p in range(topic["partitions"]):
            crowded = same_rack_of(scenario, topic["assignment"][str(p)])
            out.extend({"topic": name, "partition": p, "rack": rack, "replicas": replicas}
                       for rack, replicas in crowded.items())
    return out


def same_rack_of(scenario, replicas):
    """{rack: [its replicas]} for each rack holding two or more of ``replicas``, racks in order."""
    racks = scenario.get("racks") or {}
    by_rack = {}
    for replica in replicas:
        rack = racks.get(str(replica))
        if rack is not None:
            by_rack.setdefault(rack, []).append(replica)
    return {rack: members for rack, members in sorted(by_rack.items()) if len(members) > 1}
