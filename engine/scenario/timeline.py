"""A scenario's timeline: each operation validated against the scenario and against the broker
and client states the timeline has reached (docs/scenario-format.md §1-§3). Operations that make no
sense (restart a running broker, crash broker 9 of 3, produce to an unknown topic) are rejected at
load time; live commands are checked the same way from ``track_for``.
"""
import copy
import json

from engine.scenario.fields import (CLIENT_NAME, DYNAMIC_TOPIC_KEYS, MAX_COUNT, MAX_DURATION_MS, MAX_TIMELINE,
                              OPS, ScenarioError, StateError, _int, _keys, _list, _obj, _str, acks_text,
                              config_value)
from engine.scenario.network_faults import _node, _op_cut, _op_heal, _op_partition, _op_slow
from engine.scenario.zones import RACK_OPS, check_rack_op
from engine.scenario.validators import _from, _topic
from engine import eras
from engine.kraft.kraft_scenario import check_kraft_op, voter_ids

# -- timeline ---------------------------------------------------------------------------------------
class _Track:
    """Broker and client states along the timeline, to reject operations that make no sense."""

    def __init__(self, scenario):
        self.brokers = {b: "running" for b in scenario["brokers"]}
        self.clients = {c["name"]: c for c in scenario["clients"]}
        self.running_clients = {c["name"] for c in scenario["clients"]}
        self.nodes = set(scenario["brokers"]) | {"zk"} | set(self.clients)
        if "controllers" in scenario:  # KRaft eras: voters instead of ZooKeeper (§20.8)
            self.controllers = {c: "running" for c in voter_ids(scenario)}
            self.nodes = (self.nodes - {"zk"}) | set(self.controllers) | {"controllers"}
        self.lenient = False
        # A crashed broker's ZooKeeper session outlives it; a restart before it surely expired
        # may fail to register (NodeExists) and stop again (docs/model.md §9.2):
        self.scenario = scenario
        self.crashes = {}          # broker -> [latest time its old session was heard, open]
        self.maybe_stopped = set()  # "running" brokers whose last restart may have failed
        self.net_faulted = False   # a cut / isolate / partition / slow not yet undone by a full heal
        self.max_slow_ms = 0       # the slowest latency any `slow` set (a ping may arrive that late)


def _timeline(value, scenario, topics, lenient=False):
    """``lenient``: a recorded session (``"recorded": true``) may hold operations that did not
    apply when they ran (a scripted crash of a broker a user had already crashed); they are kept
    and ignored at run time again, so the replay matches event for event."""
    _list(value, "timeline", MAX_TIMELINE)
    ops = []
    for i, raw in enumerate(value):
        op = _obj(raw, f"timeline[{i}]")
        if op.get("op") not in OPS:
            raise ScenarioError(f"timeline[{i}].op", f"{json.dumps(op.get('op'))} is not an operation",
                                ", ".join(OPS))
        at = _int(op.get("at_ms"), f"timeline[{i}].at_ms", 0, scenario["duration_ms"])
        ops.append((at, i, op))
    ops.sort(key=lambda item: (item[0], item[1]))
    track = _Track(scenario)
    track.lenient = lenient
    out = []
    for at, i, op in ops:
        out.append(check_op(op, f"timeline[{i}]", scenario, topics, track))
    return out


def check_op(op, field, scenario, topics, track):
    """Validate one operation against the scenario (and the tracked states); return it normalised."""
    name = op["op"]
    if "rack" in op and name in RACK_OPS:   # a zone fault: the operation on each node of a rack
        return check_rack_op(op, field, scenario, OP_FIELDS[name] + ("at_ms", "op", "by"),
                             lambda sub: check_op(sub, field, scenario, topics, track))
    if "controllers" in scenario:
        kraft = check_kraft_op(op, field, scenario, track)
        if kraft is not None:
            return kraft
    allowed = OP_FIELDS[name] + ("at_ms", "op", "by")
    _keys(op, field, allowed)
    out = {"at_ms": op.get("at_ms"), "op": name}
    checker = globals()["_op_" + name]
    out.update(checker(op, field, scenario, topics, track))
    if "by" in op:      # who did it in a recorded live session (§2.2); the simulation ignores it
        if op["by"] != "user":
            raise ScenarioError(f"{field}.by", f"{json.dumps(op['by'])[:40]} is not who did it", '"user"')
        out["by"] = "user"
    return out


def _broker_field(op, field, scenario, required=True):
    if "broker" not in op:
        if required:
            raise ScenarioError(f"{field}.broker", "missing", f"one of {scenario['brokers']}")
        return None
    b = op["broker"]
    if isinstance(b, bool) or b not in scenario["brokers"]:
        raise ScenarioError(f"{field}.broker", f"broker {json.dumps(b)} does not exist",
                            f"one of {scenario['brokers']}")
    return b


def _session_may_live(track, broker, at):
    """Could the session of ``broker``'s crashed process still hold /brokers/ids/<id> at ``at``?
    It expires zookeeper.session.timeout.ms after ZooKeeper last heard from it: at the crash at
    the latest, plus one link latency (a ping in flight), plus a ``slow`` link's latency, or —
    when a cut was in force at the crash — up to TCP_RTO_MAX after the full heal that releases a
    held ping. Without a full heal yet, the answer stays yes."""
    entry = track.crashes.get(broker)
    if entry is None:
        return False
    heard, open_ = entry
    if open_:
        return True
    scenario = track.scenario
    timeout = scenario["config"].get("zookeeper.session.timeout.ms",
                                     eras.default(scenario["kafka_version"], "zookeeper.session.timeout.ms"))
    if timeout is None:
        return False  # KRaft: a new incarnation is refused until the old session ends, then registers
    net = scenario.get("network", {})
    slack = net.get("latency_ms", 1) + net.get("jitter_ms", 0) + track.max_slow_ms
    return at is None or at <= heard + slack + timeout


def _expect(track, broker, states, field, what):
    state = track.brokers[broker]
    if state not in states and not track.lenient:
        raise StateError(f"{field}.broker", f"cannot {what} broker {broker}: it is {state} "
                                            f"at that point of the timeline",
                         f"a broker that is {' or '.join(states)}")


def _op_produce(op, field, scenario, topics, track):
    topic = op.get("topic")
    if topic not in topics:
        raise ScenarioError(f"{field}.topic", f"unknown topic {json.dumps(topic)}", ", ".join(topics))
    out = {"topic": topic, "count": _int(op.get("count", 1), f"{field}.count", 1, MAX_COUNT)}
    if op.get("partition") is not None:
        out["partition"] = _int(op["partition"], f"{field}.partition", 0, topics[topic]["partitions"] - 1)
    if "acks" in op:
        out["acks"] = acks_text(op["acks"], f"{field}.acks")
    producer = op.get("producer", "producer")
    _str(producer, f"{field}.producer", 64)
    client = track.clients.get(producer)
    if client is not None and client["type"] != "producer":
        raise ScenarioError(f"{field}.producer", f"{producer!r} is a consumer", "a producer name")
    if client is None and (not CLIENT_NAME.match(producer) or producer == "zk"):
        raise ScenarioError(f"{field}.producer", f"{producer!r} is not a usable client name",
                            "a letter, then letters, digits, . _ -")
    out["producer"] = producer
    for key in ("key", "value"):
        if key in op:
            if op[key] is not None and not isinstance(op[key], (str, int)):
                raise ScenarioError(f"{field}.{key}", "must be a string or integer", "string, integer, null")
            out[key] = op[key]
    return out


def _op_crash(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    mode = op.get("mode", "process")
    if mode not in ("process", "power"):
        raise ScenarioError(f"{field}.mode", f"{json.dumps(mode)} is not a crash mode", '"process" or "power"')
    _expect(track, b, ("running", "paused"), field, "crash")
    track.brokers[b] = "stopped"
    at = op.get("at_ms") or 0
    previous = track.crashes.get(b)
    track.crashes[b] = [at, track.net_faulted or bool(previous and previous[1])]
    track.maybe_stopped.discard(b)
    return {"broker": b, "mode": mode}


def _op_restart(op, field, scenario, topics, track):
    """A restart of a "running" broker is accepted when an earlier restart may have failed to
    register (its old session could still be alive then): the broker may be stopped again."""
    b = _broker_field(op, field, scenario)
    if not (b in track.maybe_stopped and track.brokers[b] == "running"):
        _expect(track, b, ("stopped",), field, "restart")
    track.brokers[b] = "running"
    if _session_may_live(track, b, op.get("at_ms")):
        track.maybe_stopped.add(b)
    else:
        track.maybe_stopped.discard(b)
        track.crashes.pop(b, None)
    return {"broker": b}


def _op_shutdown(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("running",), field, "shut down")
    track.brokers[b] = "stopped"
    if b not in track.maybe_stopped:
        track.crashes.pop(b, None)  # a clean stop closes the session (a failed restart ignores it)
    track.maybe_stopped.discard(b)
    return {"broker": b}


def _op_pause(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("running",), field, "pause")
    out = {"broker": b}
    if op.get("for_ms") is not None:
        out["for_ms"] = _int(op["for_ms"], f"{field}.for_ms", 1, MAX_DURATION_MS)
    else:
        track.brokers[b] = "paused"
    return out


def _op_resume(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("paused",), field, "resume")
    track.brokers[b] = "running"
    return {"broker": b}


def _op_flush(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("running", "paused"), field, "flush")
    return {"broker": b}


def _op_isolate(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    target = op.get("from", "all")
    if isinstance(target, list):
        target = [_node(n, f"{field}.from", track) for n in target]
    elif target not in ("all", "zk", "brokers", "clients"):
        raise ScenarioError(f"{field}.from", f"{json.dumps(target)} is not a target",
                            '"all", "zk", "brokers", "clients" or a list of nodes')
    track.net_faulted = True
    return {"broker": b, "from": target}


def _op_expire_session(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    return {"broker": b}


def _op_elect_preferred(op, field, scenario, topics, track):
    out = {}
    if op.get("topic") is not None:
        if op["topic"] not in topics:
            raise ScenarioError(f"{field}.topic", f"unknown topic {json.dumps(op['topic'])}", ", ".join(topics))
        out["topic"] = op["topic"]
        if op.get("partition") is not None:
            out["partition"] = _int(op["partition"], f"{field}.partition", 0,
                                    topics[op["topic"]]["partitions"] - 1)
    elif op.get("partition") is not None:
        raise ScenarioError(f"{field}.partition", "needs a topic", "topic + partition")
    return out


def _op_consume(op, field, scenario, topics, track):
    name = _str(op.get("consumer", ""), f"{field}.consumer", 64)
    existing = track.clients.get(name)
    if existing is not None and existing["type"] != "consumer":
        raise ScenarioError(f"{field}.consumer", f"{name!r} is a producer", "a consumer name")
    if not CLIENT_NAME.match(name) or name == "zk":
        raise ScenarioError(f"{field}.consumer", f"{name!r} is not a usable client name",
                            "a letter, then letters, digits, . _ -")
    topic = op.get("topic")
    if topic not in topics:
        raise ScenarioError(f"{field}.topic", f"unknown topic {json.dumps(topic)}", ", ".join(topics))
    out = {"consumer": name, "topic": topic}
    if op.get("partition") is not None:
        out["partition"] = _int(op["partition"], f"{field}.partition", 0, topics[topic]["partitions"] - 1)
    if "group" in op:
        out["group"] = _str(op["group"], f"{field}.group")
    if "isolation.level" in op:
        out["isolation.level"] = config_value(scenario["kafka_version"], "isolation.level",
                                              op["isolation.level"], f"{field}.isolation.level",
                                              {"consumer"})
    if "from" in op:
        out["from"] = _from(op["from"], f"{field}.from")
    track.clients.setdefault(name, {"name": name, "type": "consumer"})
    track.nodes.add(name)
    track.running_clients.add(name)
    return out


def _op_stop_client(op, field, scenario, topics, track):
    name = op.get("client")
    if name not in track.clients and name != "producer":
        raise ScenarioError(f"{field}.client", f"unknown client {json.dumps(name)}",
                            ", ".join(track.clients) or "a client name")
    return {"client": name}


def _op_create_topic(op, field, scenario, topics, track):
    spec = {k: v for k, v in op.items() if k not in ("at_ms", "op", "by")}
    topic = _topic(spec, field, scenario)
    if topic["name"] in topics:
        raise ScenarioError(f"{field}.name", f"topic {topic['name']!r} already exists", "a new name")
    topics[topic["name"]] = topic
    return topic


def _op_set_config(op, field, scenario, topics, track):
    topic = op.get("topic")
    if topic not in topics:
        raise ScenarioError(f"{field}.topic", f"unknown topic {json.dumps(topic)}", ", ".join(topics))
    key = op.get("key")
    if key not in DYNAMIC_TOPIC_KEYS:
        raise ScenarioError(f"{field}.key", f"{json.dumps(key)} cannot be changed at run time here",
                            ", ".join(DYNAMIC_TOPIC_KEYS))
    value = config_value(scenario["kafka_version"], key, op.get("value"), f"{field}.value", {"topic"})
    return {"topic": topic, "key": key, "value": value}


def _op_reassign(op, field, scenario, topics, track):
    raise ScenarioError(f"{field}.op", "partition reassignment is not simulated yet",
                        ", ".join(o for o in OPS if o != "reassign"))


OP_FIELDS = {
    "produce": ("topic", "partition", "count", "acks", "producer", "key", "value"),
    "crash": ("broker", "mode", "rack"), "restart": ("broker", "rack"), "shutdown": ("broker", "rack"),
    "pause": ("broker", "for_ms", "rack"), "resume": ("broker", "rack"), "flush": ("broker", "rack"),
    "isolate": ("broker", "from", "rack"), "cut": ("from", "to"), "partition": ("groups",),
    "heal": ("from", "to", "rack"), "slow": ("from", "to", "latency_ms"), "expire_session": ("broker",),
    "elect_preferred": ("topic", "partition"),
    "consume": ("consumer", "topic", "partition", "group", "isolation.level", "from"),
    "stop_client": ("client",),
    "create_topic": ("name", "partitions", "replication_factor", "assignment", "config"),
    "set_config": ("topic", "key", "value"),
    "reassign": ("topic", "partition", "replicas"),
}


def track_for(scenario):
    """A state tracker positioned after the scenario's whole timeline (for live commands)."""
    track = _Track(scenario)
    topics = {t["name"]: t for t in scenario["topics"]}
    for i, op in enumerate(scenario["timeline"]):
        check_op(copy.deepcopy(op), f"timeline[{i}]", scenario, topics, track)
    return track
