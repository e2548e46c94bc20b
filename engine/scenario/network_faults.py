"""The timeline's network faults (docs/scenario-format.md §3, network): ``cut``, ``partition``,
``heal`` and ``slow``, and the node references they take — a broker id, ``"zk"``, a client name
or ``{"rack": name}`` (§4.3). Checked here against the nodes the timeline has reached
(``timeline._Track``); ``isolate`` stays in timeline.py beside the broker checks it shares.
"""
import json

from engine.scenario.fields import ScenarioError, _int, _list
from engine.scenario.racks import node_ref, rack_members

#: Linux's TCP_RTO_MAX: a message held by a cut arrives at most this long after the heal
#: (docs/model.md §16, network) — it may touch a crashed broker's ZooKeeper session that late.
RTO_MAX_MS = 120000


def _node(value, field, track):
    rack = node_ref(value, field, track.scenario)
    if rack is not None:    # {"rack": name}: every node of that rack (scenario format §4.3)
        return rack
    if isinstance(value, (list, dict)):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a node of this cluster",
                            "a broker id, \"zk\", a client name or {\"rack\": name}")
    if value in track.nodes or (isinstance(value, str) and value in track.clients):
        return value
    raise ScenarioError(field, f"{json.dumps(value)} is not a node of this cluster",
                        "a broker id, \"zk\", a client name or {\"rack\": name}")


def _node_ids(node, scenario):
    """The node ids a checked node reference stands for (a rack reference: its members)."""
    if isinstance(node, dict):
        return rack_members(scenario, node["rack"], "rack")
    return [node]


def _op_cut(op, field, scenario, topics, track):
    src = _node(op.get("from"), f"{field}.from", track)
    dst = _node(op.get("to"), f"{field}.to", track)
    if src == dst:
        raise ScenarioError(f"{field}.to", "a node cannot be cut from itself", "another node")
    track.net_faulted = True
    return {"from": src, "to": dst}


def _op_partition(op, field, scenario, topics, track):
    groups = _list(op.get("groups"), f"{field}.groups", 64)
    seen = set()
    out = []
    for gi, group in enumerate(groups):
        _list(group, f"{field}.groups[{gi}]", 1000)
        norm = []
        for node in group:
            node = _node(node, f"{field}.groups[{gi}]", track)
            for member in _node_ids(node, scenario):
                if member in seen:
                    raise ScenarioError(f"{field}.groups[{gi}]", f"{json.dumps(member)} is in two groups",
                                        "each node in at most one group")
                seen.add(member)
            norm.append(node)
        out.append(norm)
    if not out:
        raise ScenarioError(f"{field}.groups", "is empty", "a list of node groups")
    track.net_faulted = True
    return {"groups": out}


def _op_heal(op, field, scenario, topics, track):
    if "rack" in op:    # every link of the rack's nodes, and no other (scenario format §4.3)
        if "from" in op or "to" in op:
            raise ScenarioError(f"{field}.rack", "give rack, or from and to, not both",
                                "rack, from + to, or nothing")
        rack_members(scenario, op["rack"], f"{field}.rack")
        return {"rack": op["rack"]}
    if ("from" in op) != ("to" in op):
        raise ScenarioError(f"{field}", "give both from and to, or neither", "from + to, or nothing")
    if "from" in op:
        return {"from": _node(op["from"], f"{field}.from", track),
                "to": _node(op["to"], f"{field}.to", track)}
    track.net_faulted = False
    for entry in track.crashes.values():
        if entry[1]:  # a ping held by the cut may reach ZooKeeper up to TCP_RTO_MAX from now
            entry[0], entry[1] = (op.get("at_ms") or 0) + RTO_MAX_MS, False
    return {}


def _op_slow(op, field, scenario, topics, track):
    out = {"from": _node(op.get("from"), f"{field}.from", track),
           "to": _node(op.get("to"), f"{field}.to", track),
           "latency_ms": _int(op.get("latency_ms"), f"{field}.latency_ms", 0, 600000)}
    track.max_slow_ms = max(track.max_slow_ms, out["latency_ms"])
    return out
