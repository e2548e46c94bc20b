"""Load, validate and normalise scenario documents (docs: scenario format §1-§3).

``load(document)`` returns a normalised copy with every default filled in, or raises
``ScenarioError`` naming the field (``topics[1].replication_factor``), what was wrong and what is
allowed. Operations that make no sense (restart a running broker, crash broker 9 of 3, produce to
an unknown topic) are rejected here, at load time, by following the timeline's broker states.
"""
import copy
import json
import re

from . import eras

MAX_BROKERS = 64
MAX_PARTITIONS = 1000
MAX_TIMELINE = 10000
MAX_CLIENTS = 100
MAX_DURATION_MS = 7 * 24 * 3600 * 1000
MAX_RATE = 100000
MAX_COUNT = 100000
TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
CLIENT_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9._-]{0,63}$")

TOP_LEVEL = ("name", "description", "seed", "kafka_version", "brokers", "config", "network", "recorded",
             "topics", "clients", "timeline", "duration_ms")
OPS = ("produce", "crash", "restart", "shutdown", "pause", "resume", "flush", "isolate", "cut",
       "partition", "heal", "slow", "expire_session", "elect_preferred", "consume", "stop_client",
       "create_topic", "set_config", "reassign")
DYNAMIC_TOPIC_KEYS = ("min.insync.replicas", "unclean.leader.election.enable")


class ScenarioError(ValueError):
    def __init__(self, field, message, allowed=None):
        self.field = field
        self.message = message
        self.allowed = allowed
        text = f"{field}: {message}" if field else message
        if allowed:
            text += f" (allowed: {allowed})"
        super().__init__(text)

    def to_dict(self):
        return {"field": self.field, "message": self.message, "allowed": self.allowed}


# -- small typed readers -------------------------------------------------------------------------
def _int(value, field, lo=None, hi=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not an integer",
                            _range(lo, hi) or "an integer")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ScenarioError(field, f"{value} is out of range", _range(lo, hi))
    return value


def _range(lo, hi):
    if lo is None and hi is None:
        return None
    if hi is None:
        return f"an integer >= {lo}"
    if lo is None:
        return f"an integer <= {hi}"
    return f"an integer from {lo} to {hi}"


def _str(value, field, max_len=200):
    if not isinstance(value, str):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a string", "a string")
    if len(value) > max_len:
        raise ScenarioError(field, f"is {len(value)} characters long", f"at most {max_len}")
    return value


def _obj(value, field):
    if not isinstance(value, dict):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not an object", "a JSON object")
    return value


def _list(value, field, max_len):
    if not isinstance(value, list):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a list", "a JSON list")
    if len(value) > max_len:
        raise ScenarioError(field, f"has {len(value)} entries", f"at most {max_len}")
    return value


def _keys(obj, field, allowed):
    for key in obj:
        if key not in allowed:
            raise ScenarioError(f"{field}.{key}" if field else key, "unknown field",
                                ", ".join(allowed))


# -- config values -------------------------------------------------------------------------------
def config_value(version, key, value, field, scopes):
    """Check one config key/value against the era's table (eras.CONFIG)."""
    spec = eras.CONFIG.get(key)
    if spec is None or key not in eras.known_keys(version):
        known = [k for k in eras.known_keys(version) if set(eras.scopes_of(k)) & set(scopes)]
        hint = ""
        if spec is not None:
            hint = f"; Kafka {version} has no {key}"
        raise ScenarioError(field, f"unknown config key {key!r} for kafka_version {version}{hint}",
                            ", ".join(known))
    kind, scope, _defaults, low = spec
    if not set(eras.scopes_of(key)) & set(scopes):
        raise ScenarioError(field, f"{key} is a {scope} config and cannot be set here",
                            "config keys of scope " + ", ".join(sorted(scopes)))
    if kind in ("int", "int?"):
        if kind == "int?" and value is None:
            return None
        return _int(value, field, low, eras.LONG_MAX)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        raise ScenarioError(field, f"{json.dumps(value)} is not a boolean", "true or false")
    if kind == "acks":
        return acks_text(value, field)
    choices = kind.split(":", 1)[1].split("|")
    if value not in choices:
        raise ScenarioError(field, f"{json.dumps(value)} is not a valid {key}", " or ".join(choices))
    return value


def acks_text(value, field):
    mapping = {"all": "all", "-1": "all", -1: "all", "1": "1", 1: "1", "0": "0", 0: "0"}
    if isinstance(value, bool) or value not in mapping:
        raise ScenarioError(field, f"{json.dumps(value)} is not a valid acks", '"0", "1", "all" (or -1)')
    return mapping[value]


# -- the document ---------------------------------------------------------------------------------
def load(document):
    """Validate ``document`` (a dict or JSON text) and return the normalised scenario."""
    if isinstance(document, (str, bytes)):
        try:
            document = json.loads(document)
        except ValueError as exc:
            raise ScenarioError("", f"not valid JSON: {exc}") from None
    doc = _obj(document, "scenario")
    _keys(doc, "", TOP_LEVEL)
    out = {}
    out["name"] = _str(doc.get("name", "untitled"), "name")
    out["description"] = _str(doc.get("description", ""), "description", 20000)
    out["seed"] = _int(doc.get("seed", 0), "seed", 0, 2 ** 63 - 1)
    version = doc.get("kafka_version", "2.6")
    if version not in eras.VERSIONS:
        raise ScenarioError("kafka_version", f"{json.dumps(version)} is not a supported era",
                            ", ".join(f'"{v}"' for v in eras.VERSIONS))
    out["kafka_version"] = version
    out["brokers"] = _brokers(doc.get("brokers", 3))
    out["config"] = _config(version, doc.get("config", {}), "config",
                            {"broker", "topic", "producer", "consumer", "sim"})
    out["network"] = _network(doc.get("network", {}))
    out["duration_ms"] = _int(doc.get("duration_ms", 60000), "duration_ms", 1, MAX_DURATION_MS)
    out["topics"] = _topics(doc.get("topics"), out["brokers"], version)
    topics = {t["name"]: t for t in out["topics"]}
    out["clients"] = _clients(doc.get("clients", []), topics, version, out["duration_ms"])
    recorded = doc.get("recorded", False)
    if not isinstance(recorded, bool):
        raise ScenarioError("recorded", f"{json.dumps(recorded)} is not a boolean", "true or false")
    out["timeline"] = _timeline(doc.get("timeline", []), out, topics, lenient=recorded)
    if recorded:
        out["recorded"] = True
    _check_lag_vs_fetch_wait(out)
    return out


def _brokers(value):
    if isinstance(value, list):
        _list(value, "brokers", MAX_BROKERS)
        if not value:
            raise ScenarioError("brokers", "is empty", "1 or more broker ids")
        for i, b in enumerate(value):
            _int(b, f"brokers[{i}]", 0, 10 ** 9)
        if len(set(value)) != len(value):
            raise ScenarioError("brokers", "has duplicate ids", "distinct integer ids")
        return sorted(value)
    return list(range(_int(value, "brokers", 1, MAX_BROKERS)))


def _config(version, value, field, scopes):
    cfg = _obj(value, field)
    return {k: config_value(version, k, v, f"{field}.{k}", scopes) for k, v in cfg.items()}


def _network(value):
    net = _obj(value, "network")
    _keys(net, "network", ("latency_ms", "jitter_ms"))
    return {"latency_ms": _int(net.get("latency_ms", 1), "network.latency_ms", 0, 60000),
            "jitter_ms": _int(net.get("jitter_ms", 0), "network.jitter_ms", 0, 60000)}


def kafka_assignment(brokers, partitions, replication_factor):
    """AdminUtils.assignReplicasToBrokersRackUnaware with a fixed start index of 0."""
    n = len(brokers)
    shift = 0
    out = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = p % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out[str(p)] = replicas
    return out


def _topics(value, brokers, version):
    if value is None:
        value = [{"name": "t", "partitions": 1, "replication_factor": min(3, len(brokers))}]
    _list(value, "topics", 100)
    out, names = [], set()
    total = 0
    for i, raw in enumerate(value):
        out.append(_topic(raw, f"topics[{i}]", brokers, version))
        if out[-1]["name"] in names:
            raise ScenarioError(f"topics[{i}].name", f"duplicate topic {out[-1]['name']!r}",
                                "distinct names")
        names.add(out[-1]["name"])
        total += out[-1]["partitions"]
    if total > MAX_PARTITIONS:
        raise ScenarioError("topics", f"{total} partitions in all", f"at most {MAX_PARTITIONS}")
    return out


def _topic(raw, field, brokers, version):
    t = _obj(raw, field)
    _keys(t, field, ("name", "partitions", "replication_factor", "assignment", "config"))
    name = _str(t.get("name"), f"{field}.name", 249) if "name" in t else None
    if not name or not TOPIC_NAME.match(name) or name in (".", ".."):
        raise ScenarioError(f"{field}.name", f"{name!r} is not a legal Kafka topic name",
                            "1-249 characters from a-z A-Z 0-9 . _ -")
    partitions = _int(t.get("partitions", 1), f"{field}.partitions", 1, MAX_PARTITIONS)
    rf = _int(t.get("replication_factor", min(3, len(brokers))), f"{field}.replication_factor",
              1, len(brokers))
    config = _config(version, t.get("config", {}), f"{field}.config", {"topic"})
    if "assignment" in t:
        assignment = _assignment(t["assignment"], f"{field}.assignment", partitions, brokers)
        rf = len(assignment["0"])
    else:
        assignment = kafka_assignment(brokers, partitions, rf)
    return {"name": name, "partitions": partitions, "replication_factor": rf,
            "assignment": assignment, "config": config}


def _assignment(raw, field, partitions, brokers):
    a = _obj(raw, field)
    out = {}
    for p in range(partitions):
        if str(p) not in a:
            raise ScenarioError(field, f"partition {p} has no replica list",
                                f"a replica list for every partition 0..{partitions - 1}")
    for key, replicas in a.items():
        if not key.isdigit() or int(key) >= partitions:
            raise ScenarioError(f"{field}.{key}", "no such partition", f"0..{partitions - 1}")
        _list(replicas, f"{field}.{key}", MAX_BROKERS)
        if not replicas or len(set(replicas)) != len(replicas):
            raise ScenarioError(f"{field}.{key}", "needs distinct broker ids", "a non-empty list")
        for r in replicas:
            if r not in brokers:
                raise ScenarioError(f"{field}.{key}", f"broker {json.dumps(r)} does not exist",
                                    f"broker ids {brokers}")
        out[str(int(key))] = list(replicas)
    sizes = {len(v) for v in out.values()}
    if len(sizes) != 1:
        raise ScenarioError(field, "replica lists differ in length", "one replication factor")
    return {str(p): out[str(p)] for p in range(partitions)}


PRODUCER_KEYS = ("name", "type", "topic", "acks", "rate_per_s", "start_ms", "stop_ms", "partitioner")
CONSUMER_KEYS = ("name", "type", "topic", "group", "isolation.level", "auto.offset.reset",
                 "start_ms", "stop_ms", "partition", "from")


def _clients(value, topics, version, duration_ms):
    _list(value, "clients", MAX_CLIENTS)
    out, names = [], set()
    for i, raw in enumerate(value):
        field = f"clients[{i}]"
        c = _obj(raw, field)
        name = _str(c.get("name", ""), f"{field}.name", 64)
        if not CLIENT_NAME.match(name) or name == "zk":
            raise ScenarioError(f"{field}.name", f"{name!r} is not a usable client name",
                                "a letter, then letters, digits, . _ - (not \"zk\")")
        if name in names:
            raise ScenarioError(f"{field}.name", f"duplicate client {name!r}", "distinct names")
        names.add(name)
        kind = c.get("type")
        if kind not in ("producer", "consumer"):
            raise ScenarioError(f"{field}.type", f"{json.dumps(kind)} is not a client type",
                                '"producer" or "consumer"')
        out.append(_client(c, field, kind, topics, version, duration_ms))
    return out


def _client(c, field, kind, topics, version, duration_ms):
    scope = {kind}
    fixed = PRODUCER_KEYS if kind == "producer" else CONSUMER_KEYS
    spec = {"name": c["name"], "type": kind}
    config = {}
    items = list(c.items())
    if isinstance(c.get("config"), dict):
        # the normalised form keeps client config keys under "config"
        items = [(k, v) for k, v in items if k != "config"] + list(c["config"].items())
    for key, value in items:
        if key in ("name", "type"):
            continue
        if key == "acks" and value is None and kind == "producer":
            continue            # the normalised form writes "acks": null for "the era's default"
        if key in fixed and key not in ("acks", "isolation.level", "auto.offset.reset"):
            spec[key] = value
        else:
            config[key] = config_value(version, key, value, f"{field}.{key}", scope)
    topic = spec.get("topic")
    if topic not in topics:
        raise ScenarioError(f"{field}.topic", f"unknown topic {json.dumps(topic)}",
                            ", ".join(topics) or "a topic of the scenario")
    spec["config"] = config
    spec["start_ms"] = _int(spec.get("start_ms", 0), f"{field}.start_ms", 0, duration_ms)
    if spec.get("stop_ms") is not None:
        spec["stop_ms"] = _int(spec["stop_ms"], f"{field}.stop_ms", spec["start_ms"], MAX_DURATION_MS)
    if kind == "producer":
        spec["acks"] = config.pop("acks", None)
        spec["rate_per_s"] = _int(spec.get("rate_per_s", 0) or 0, f"{field}.rate_per_s", 0, MAX_RATE)
        partitioner = spec.get("partitioner", "default")
        if partitioner not in ("default", "round_robin"):
            raise ScenarioError(f"{field}.partitioner", f"{json.dumps(partitioner)} is unknown",
                                '"default" (the era\'s) or "round_robin"')
        spec["partitioner"] = partitioner
    else:
        if spec.get("partition") is not None:
            _int(spec["partition"], f"{field}.partition", 0, topics[topic]["partitions"] - 1)
        if "group" in spec:
            _str(spec["group"], f"{field}.group", 200)
        spec["from"] = _from(spec.get("from"), f"{field}.from")
    return spec


def _from(value, field):
    if value is None or value in ("earliest", "latest"):
        return value
    return _int(value, field, 0)


# -- timeline ---------------------------------------------------------------------------------------
class _Track:
    """Broker and client states along the timeline, to reject operations that make no sense."""

    def __init__(self, scenario):
        self.brokers = {b: "running" for b in scenario["brokers"]}
        self.clients = {c["name"]: c for c in scenario["clients"]}
        self.running_clients = {c["name"] for c in scenario["clients"]}
        self.nodes = set(scenario["brokers"]) | {"zk"} | set(self.clients)
        self.lenient = False


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
    allowed = OP_FIELDS[name] + ("at_ms", "op")
    _keys(op, field, allowed)
    out = {"at_ms": op.get("at_ms"), "op": name}
    checker = globals()["_op_" + name]
    out.update(checker(op, field, scenario, topics, track))
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


def _expect(track, broker, states, field, what):
    state = track.brokers[broker]
    if state not in states and not track.lenient:
        raise ScenarioError(f"{field}.broker", f"cannot {what} broker {broker}: it is {state} "
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
    return {"broker": b, "mode": mode}


def _op_restart(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("stopped",), field, "restart")
    track.brokers[b] = "running"
    return {"broker": b}


def _op_shutdown(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    _expect(track, b, ("running",), field, "shut down")
    track.brokers[b] = "stopped"
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


def _node(value, field, track):
    if value in track.nodes or (isinstance(value, str) and value in track.clients):
        return value
    raise ScenarioError(field, f"{json.dumps(value)} is not a node of this cluster",
                        "a broker id, \"zk\" or a client name")


def _op_isolate(op, field, scenario, topics, track):
    b = _broker_field(op, field, scenario)
    target = op.get("from", "all")
    if isinstance(target, list):
        target = [_node(n, f"{field}.from", track) for n in target]
    elif target not in ("all", "zk", "brokers", "clients"):
        raise ScenarioError(f"{field}.from", f"{json.dumps(target)} is not a target",
                            '"all", "zk", "brokers", "clients" or a list of nodes')
    return {"broker": b, "from": target}


def _op_cut(op, field, scenario, topics, track):
    src = _node(op.get("from"), f"{field}.from", track)
    dst = _node(op.get("to"), f"{field}.to", track)
    if src == dst:
        raise ScenarioError(f"{field}.to", "a node cannot be cut from itself", "another node")
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
            if node in seen:
                raise ScenarioError(f"{field}.groups[{gi}]", f"{json.dumps(node)} is in two groups",
                                    "each node in at most one group")
            seen.add(node)
            norm.append(node)
        out.append(norm)
    if not out:
        raise ScenarioError(f"{field}.groups", "is empty", "a list of node groups")
    return {"groups": out}


def _op_heal(op, field, scenario, topics, track):
    if ("from" in op) != ("to" in op):
        raise ScenarioError(f"{field}", "give both from and to, or neither", "from + to, or nothing")
    if "from" in op:
        return {"from": _node(op["from"], f"{field}.from", track),
                "to": _node(op["to"], f"{field}.to", track)}
    return {}


def _op_slow(op, field, scenario, topics, track):
    return {"from": _node(op.get("from"), f"{field}.from", track),
            "to": _node(op.get("to"), f"{field}.to", track),
            "latency_ms": _int(op.get("latency_ms"), f"{field}.latency_ms", 0, 600000)}


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
    spec = {k: v for k, v in op.items() if k not in ("at_ms", "op")}
    topic = _topic(spec, field, scenario["brokers"], scenario["kafka_version"])
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
    "crash": ("broker", "mode"), "restart": ("broker",), "shutdown": ("broker",),
    "pause": ("broker", "for_ms"), "resume": ("broker",), "flush": ("broker",),
    "isolate": ("broker", "from"), "cut": ("from", "to"), "partition": ("groups",),
    "heal": ("from", "to"), "slow": ("from", "to", "latency_ms"), "expire_session": ("broker",),
    "elect_preferred": ("topic", "partition"),
    "consume": ("consumer", "topic", "partition", "group", "isolation.level", "from"),
    "stop_client": ("client",),
    "create_topic": ("name", "partitions", "replication_factor", "assignment", "config"),
    "set_config": ("topic", "key", "value"),
    "reassign": ("topic", "partition", "replicas"),
}


def _check_lag_vs_fetch_wait(scenario):
    """KafkaConfig requires replica.fetch.wait.max.ms < replica.lag.time.max.ms (§7)."""
    cfg = scenario["config"]
    version = scenario["kafka_version"]
    lag = cfg.get("replica.lag.time.max.ms", eras.default(version, "replica.lag.time.max.ms"))
    wait = cfg.get("replica.fetch.wait.max.ms", eras.default(version, "replica.fetch.wait.max.ms"))
    if wait >= lag:
        raise ScenarioError("config.replica.fetch.wait.max.ms",
                            f"{wait} must be less than replica.lag.time.max.ms {lag}",
                            f"an integer < {lag}")


def track_for(scenario):
    """A state tracker positioned after the scenario's whole timeline (for live commands)."""
    track = _Track(scenario)
    topics = {t["name"]: t for t in scenario["topics"]}
    for i, op in enumerate(scenario["timeline"]):
        check_op(copy.deepcopy(op), f"timeline[{i}]", scenario, topics, track)
    return track
