"""Load, validate and normalise scenario documents (docs/scenario-format.md §1-§3).

``load(document)`` returns a normalised copy with every default filled in, or raises
``ScenarioError`` naming the field (``topics[1].replication_factor``), what was wrong and what is
allowed. Operations that make no sense (restart a running broker, crash broker 9 of 3, produce to
an unknown topic) are rejected here, at load time, by following the timeline's broker states.

The document's parts live in ``scenario_fields`` (the error type, limits and typed readers),
``scenario_validators`` (topics and clients) and ``scenario_timeline`` (the timeline); every name they
define stays importable from here.
"""
import json

from engine import eras
from engine.kraft.kraft_scenario import check_config, load_controllers
from engine.scenario.fields import (CLIENT_NAME, DYNAMIC_TOPIC_KEYS, MAX_BROKERS, MAX_CLIENTS,  # noqa: F401
                              MAX_COUNT, MAX_DURATION_MS, MAX_PARTITIONS, MAX_RATE, MAX_TIMELINE, OPS,
                              TOP_LEVEL, TOPIC_NAME, ScenarioError, _int, _keys, _list, _obj, _range,
                              _str, _config, acks_text, config_value)
from engine.scenario.validators import (CONSUMER_KEYS, PRODUCER_KEYS, _assignment, _client,  # noqa: F401
                                  _clients, _from, _topic, _topics, kafka_assignment)
from engine.scenario.racks import load_inter_rack_latency, load_racks
from engine.scenario.timeline import OP_FIELDS, _Track, _timeline, check_op, track_for  # noqa: F401


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
    controllers = load_controllers(doc, version in eras.KRAFT_VERSIONS, out["brokers"])
    if controllers is not None:
        out["controllers"] = controllers  # KRaft eras only (docs/scenario-format.md §4.2)
    racks = load_racks(doc, out["brokers"], controllers if isinstance(controllers, list) else None)
    if racks is not None:   # docs/scenario-format.md §4.3: absent keys keep old documents as they were
        out["racks"] = racks
    latency = load_inter_rack_latency(doc)
    if latency is not None or racks is not None:
        out["inter_rack_latency_ms"] = latency or 0
    out["config"] = _config(version, doc.get("config", {}), "config",
                            {"broker", "topic", "producer", "consumer", "sim"})
    out["network"] = _network(doc.get("network", {}))
    out["duration_ms"] = _int(doc.get("duration_ms", 60000), "duration_ms", 1, MAX_DURATION_MS)
    out["topics"] = _topics(doc.get("topics"), out)
    topics = {t["name"]: t for t in out["topics"]}
    out["clients"] = _clients(doc.get("clients", []), topics, version, out["duration_ms"])
    recorded = doc.get("recorded", False)
    if not isinstance(recorded, bool):
        raise ScenarioError("recorded", f"{json.dumps(recorded)} is not a boolean", "true or false")
    out["timeline"] = _timeline(doc.get("timeline", []), out, topics, lenient=recorded)
    if recorded:
        out["recorded"] = True
    _check_lag_vs_fetch_wait(out)
    if controllers is not None:
        check_config(out)
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


def _network(value):
    net = _obj(value, "network")
    _keys(net, "network", ("latency_ms", "jitter_ms"))
    return {"latency_ms": _int(net.get("latency_ms", 1), "network.latency_ms", 0, 60000),
            "jitter_ms": _int(net.get("jitter_ms", 0), "network.jitter_ms", 0, 60000)}


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
