"""Validators for a scenario's topics and clients sections (docs/scenario-format.md §1-§3):
topics (replica assignments as given, or placed as Kafka does: ``engine.scenario.placement``),
topic configs, producers and consumers.
"""
import json

from engine import eras
from engine.scenario.fields import (CLIENT_NAME, MAX_BROKERS, MAX_CLIENTS, MAX_DURATION_MS, MAX_PARTITIONS,
                              MAX_RATE, TOPIC_NAME, ScenarioError, _config, _int, _keys, _list, _obj,
                              _str, config_value)
from engine.scenario.placement import kafka_assignment, place_topic  # noqa: F401  (kafka_assignment: document)


def _topics(value, scenario):
    """``scenario``: the document loaded so far (brokers, era, seed, racks): what placing a
    topic without an assignment needs."""
    brokers = scenario["brokers"]
    if value is None:
        value = [{"name": "t", "partitions": 1, "replication_factor": min(3, len(brokers))}]
    _list(value, "topics", 100)
    out, names = [], set()
    total = 0
    for i, raw in enumerate(value):
        out.append(_topic(raw, f"topics[{i}]", scenario))
        if out[-1]["name"] in names:
            raise ScenarioError(f"topics[{i}].name", f"duplicate topic {out[-1]['name']!r}",
                                "distinct names")
        names.add(out[-1]["name"])
        total += out[-1]["partitions"]
    if total > MAX_PARTITIONS:
        raise ScenarioError("topics", f"{total} partitions in all", f"at most {MAX_PARTITIONS}")
    return out


def _topic(raw, field, scenario):
    brokers, version = scenario["brokers"], scenario["kafka_version"]
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
        assignment = place_topic(scenario, name, partitions, rf, field, version in eras.KRAFT_VERSIONS)
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
