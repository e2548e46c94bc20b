"""Scenario fields of the KRaft eras (docs/scenario-format.md §4.2, docs/model.md §20.8).

``controllers``: a list of dedicated controller ids, or ``"combined"`` (every broker is also a
voter, §20.11); default three dedicated voters 3000, 3001, 3002.
Operations that act on a dedicated controller take ``"controller": id`` (in combined mode they are
refused: the broker's operations act on its controller); ``"controllers"`` names every voter in
network operations. ZooKeeper operations are errors in these eras, with a message that says so.
"""
import json

from engine.scenario.fields import MAX_DURATION_MS, ScenarioError, StateError, _int, _keys, _list
from engine.scenario.racks import node_ref

DEFAULT_CONTROLLERS = [3000, 3001, 3002]
COMBINED = "combined"
MAX_CONTROLLERS = 9
CONTROLLER_OPS = {"crash": ("controller", "mode"), "restart": ("controller",),
                  "shutdown": ("controller",), "pause": ("controller", "for_ms"),
                  "resume": ("controller",), "isolate": ("controller", "from")}


def load_controllers(doc, version_is_kraft, brokers):
    value = doc.get("controllers")
    if not version_is_kraft:
        if value is not None:
            raise ScenarioError("controllers", "only KRaft eras have a controller quorum",
                                'kafka_version "3.9-kraft" or "4.1"')
        return None
    if value is None:
        ids = list(DEFAULT_CONTROLLERS)
    elif value == "combined":
        return COMBINED  # every broker is also a voter (process.roles=broker,controller, §20.11)
    else:
        _list(value, "controllers", MAX_CONTROLLERS)
        if not value:
            raise ScenarioError("controllers", "is empty", "1 or more controller ids")
        ids = [_int(c, f"controllers[{i}]", 0, 10 ** 9) for i, c in enumerate(value)]
        if len(set(ids)) != len(ids):
            raise ScenarioError("controllers", "has duplicate ids", "distinct integer ids")
    clash = sorted(set(ids) & set(brokers))
    if clash:
        raise ScenarioError("controllers", f"ids {clash} are also broker ids",
                            "ids that are not broker ids")
    return sorted(ids)


def voter_ids(scenario):
    if scenario["controllers"] == COMBINED:
        return list(scenario["brokers"])
    return list(scenario["controllers"])


def check_config(scenario):
    level = scenario["config"].get("eligible.leader.replicas.version")
    if level is not None and level not in (0, 1):
        raise ScenarioError("config.eligible.leader.replicas.version", f"{level} is not a level", "0 or 1")


def check_kraft_op(op, field, scenario, track):
    """KRaft-specific checks; the normalised operation, or None to validate it as usual."""
    name = op["op"]
    if name == "expire_session":
        raise ScenarioError(f"{field}.op", "expire_session is a ZooKeeper operation and KRaft eras "
                                           "have no ZooKeeper", "crash, pause or isolate a broker or "
                                                                "a controller")
    if name == "elect_preferred":
        raise ScenarioError(f"{field}.op", "elect_preferred writes a ZooKeeper znode; not modelled "
                                           "in KRaft eras", "another operation")
    if name == "isolate" and op.get("from") == "zk":
        raise ScenarioError(f"{field}.from", "KRaft eras have no ZooKeeper", '"controllers", "all", '
                                             '"brokers", "clients" or a list of nodes')
    if "controller" not in op:
        if name == "isolate" and op.get("from") == "controllers":
            return {"at_ms": op.get("at_ms"), "op": name, "broker": _broker(op, field, scenario),
                    "from": "controllers"}
        return None
    if scenario["controllers"] == COMBINED:
        # One process hosts both roles: stopping, pausing or isolating "the controller" is
        # doing it to the broker (§20.11).
        raise ScenarioError(f"{field}.controller", 'in combined mode each controller lives in a '
                                                   "broker's process: act on it with \"broker\"",
                            f'"broker": one of {scenario["brokers"]}')
    if name not in CONTROLLER_OPS:
        raise ScenarioError(f"{field}.controller", f"{name} does not act on a controller",
                            ", ".join(CONTROLLER_OPS))
    _keys(op, field, CONTROLLER_OPS[name] + ("at_ms", "op", "by"))
    cid = op["controller"]
    voters = voter_ids(scenario)
    if isinstance(cid, bool) or cid not in voters:
        raise ScenarioError(f"{field}.controller", f"controller {json.dumps(cid)} does not exist",
                            f"one of {voters}")
    out = {"at_ms": op.get("at_ms"), "op": name, "controller": cid}
    _track_controller(track, name, cid, field)
    if name == "crash":
        mode = op.get("mode", "process")
        if mode not in ("process", "power"):
            raise ScenarioError(f"{field}.mode", f"{json.dumps(mode)} is not a crash mode",
                                '"process" or "power"')
        out["mode"] = mode
    elif name == "pause" and op.get("for_ms") is not None:
        out["for_ms"] = _int(op["for_ms"], f"{field}.for_ms", 1, MAX_DURATION_MS)
        track.controllers[cid] = "running"
    elif name == "isolate":
        out["from"] = _isolate_target(op.get("from", "all"), f"{field}.from", track)
    if "by" in op:
        out["by"] = "user"
    return out


def _track_controller(track, name, cid, field):
    states = track.controllers
    need = {"crash": ("running", "paused"), "restart": ("stopped",), "shutdown": ("running",),
            "pause": ("running",), "resume": ("paused",)}.get(name)
    if need and states[cid] not in need and not track.lenient:
        raise StateError(f"{field}.controller", f"cannot {name} controller {cid}: it is "
                                                f"{states[cid]} at that point of the timeline",
                         f"a controller that is {' or '.join(need)}")
    after = {"crash": "stopped", "shutdown": "stopped", "restart": "running", "pause": "paused",
             "resume": "running"}.get(name)
    if after:
        states[cid] = after
    if name == "isolate":
        track.net_faulted = True


def _isolate_target(target, field, track):
    if isinstance(target, list):
        out = []
        for n in target:
            rack = node_ref(n, field, track.scenario)   # {"rack": name} (scenario format §4.3)
            if rack is None and (isinstance(n, list) or n not in track.nodes):
                raise ScenarioError(field, f"{json.dumps(n)} is not a node of this cluster",
                                    "a broker id, a controller id, \"controllers\", a client name "
                                    "or {\"rack\": name}")
            out.append(rack or n)
        return out
    if target not in ("all", "brokers", "clients", "controllers"):
        raise ScenarioError(field, f"{json.dumps(target)} is not a target",
                            '"all", "brokers", "clients", "controllers" or a list of nodes')
    return target


def _broker(op, field, scenario):
    b = op.get("broker")
    if isinstance(b, bool) or b not in scenario["brokers"]:
        raise ScenarioError(f"{field}.broker", f"broker {json.dumps(b)} does not exist",
                            f"one of {scenario['brokers']}")
    return b
