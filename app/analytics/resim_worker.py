"""Executor side of re-simulation: replay a stored run, optionally changed ("what if"), and ask
a question of the result.

Standard library and the engine only (shipped to executors by value, like app.sweeps.worker).

A stored run is its scenario document, so replaying it on any executor reproduces it exactly
(``history_sha256`` proves it for sweep runs). A question is ``{"property": {...}, "what_if":
{...}}``:

* ``property``: one of ``engine.tools.search.PROPERTIES`` (no_acked_loss, no_acked_all_loss,
  no_violation, invariant <name>, max_offline_ms <ms>, no_error <Kafka error>) or one asked
  here over the whole result: ``converges`` (every broker up, every partition led with a full
  ISR at the end) and ``max_unclean_elections`` <n>.
* ``what_if`` (optional): ``kafka_version`` (replay under another era's rules), ``keep_config``
  (default true: every config the run did not set keeps the value the run's own era gave it, so
  only the rules change, e.g. "0.10" truncation to the high watermark under the run's timeouts)
  and ``set`` (config keys -> values, applied like sweep axes).
"""
import copy
import json

from engine import eras
from engine.scenario.document import ScenarioError
from engine.tools.search import check_property
from engine.simulation import Simulation
from engine.result import history_digest

RESULT_FIELDS = ("source", "ref", "sweep_id", "cell_id", "kafka_version", "status", "broken", "broken_before",
                 "lost", "violations", "digest_match", "detail")
LOCAL_PROPERTIES = ("converges", "max_unclean_elections")




def _set_key(doc, key, value):
    scope = eras.CONFIG[key][1]
    if scope == "topic":
        for topic in doc["topics"]:
            topic.setdefault("config", {})[key] = value
    elif scope in ("producer", "consumer", "client"):
        kinds = ("producer", "consumer") if scope == "client" else (scope,)
        for client in doc["clients"]:
            if client["type"] in kinds:
                if key == "acks" and client["type"] == "producer":
                    client["acks"] = value
                else:
                    client.setdefault("config", {})[key] = value
    else:
        doc["config"][key] = value


def _explicit_keys(doc):
    keys = set(doc["config"])
    for topic in doc["topics"]:
        keys |= set(topic.get("config", {}))
    for client in doc["clients"]:
        keys |= set(client.get("config", {}))
        if client.get("acks") is not None:
            keys.add("acks")
    return keys


def what_if(scenario, change):
    """The scenario changed by ``change``; returns (scenario, notes)."""
    doc = copy.deepcopy(scenario)
    notes = []
    old = doc["kafka_version"]
    new = change.get("kafka_version") or old
    if new != old:
        explicit = _explicit_keys(doc)
        if change.get("keep_config", True):
            for key in eras.known_keys(new):
                if key in explicit or key == "acks":
                    continue
                before = eras.default(old, key) if key in eras.known_keys(old) else None
                if before is not None and before != eras.default(new, key):
                    _set_key(doc, key, before)
        known = set(eras.known_keys(new))
        dropped = sorted(k for k in _explicit_keys(doc) if k not in known)
        for key in dropped:
            doc["config"].pop(key, None)
            for topic in doc["topics"]:
                topic.get("config", {}).pop(key, None)
            for client in doc["clients"]:
                client.get("config", {}).pop(key, None)
        if dropped:
            notes.append(f"Kafka {new} has no {', '.join(dropped)}: dropped")
        doc["kafka_version"] = new
    for key, value in (change.get("set") or {}).items():
        _set_key(doc, key, value)
    return doc, notes


def check(prop, result):
    """(broken, detail) of a property on a result document."""
    name = prop.get("name")
    if name == "converges":
        bad = [k for k, p in result["partitions"].items() if p["offline"] or set(p["isr"]) != set(p["replicas"])]
        down = [b for b, s in result["brokers"].items() if s["state"] != "running"]
        if not bad and not down:
            return False, None
        return True, f"not converged at {result['end_ms']} ms: partitions {bad[:5]} offline or under-replicated, " \
                     f"brokers {down} not running"
    if name == "max_unclean_elections":
        n = sum(1 for e in result["history"] if e["type"] == "leader_elected" and e.get("kind") == "unclean")
        return (n > prop["param"], f"{n} unclean election(s) > {prop['param']}" if n > prop["param"] else None)
    broken, evidence = check_property(prop, result)
    return broken, (f"{evidence['t_ms']} ms: {evidence['detail']}" if broken else None)


def _counts(result):
    lost = sum(1 for r in result["records"] if r["lost"] and r["status"] == "acked")
    return lost, len(result["violations"])


def resimulate(row, question):
    """One stored run: row = (source, ref, sweep_id, cell_id, kafka_version, scenario_json,
    history_sha256). Returns a tuple in RESULT_FIELDS order."""
    source, ref, sweep_id, cell_id, version, scenario_json, digest = row[:7]
    prop = question["property"]
    change = question.get("what_if")
    notes = []
    try:
        scenario = json.loads(scenario_json)
        original = Simulation(scenario).run()
        broken_before, before_detail = check(prop, original)
        digest_match = (history_digest(original["history"]) == digest) if digest else None
        if change:
            changed, notes = what_if(scenario, change)
            result = Simulation(changed).run()
            broken, detail = check(prop, result)
        else:
            result, broken, detail = original, broken_before, before_detail
    except ScenarioError as exc:
        return (source, ref, sweep_id, cell_id, version, "invalid", False, False, 0, 0, None,
                f"{exc}"[:1000])
    except Exception as exc:  # noqa: BLE001 - an engine failure on a stored run is a finding
        return (source, ref, sweep_id, cell_id, version, "error", False, False, 0, 0, None,
                f"{type(exc).__name__}: {exc}"[:1000])
    lost, violations = _counts(result)
    text = "; ".join(([detail] if detail else []) + notes) or None
    return (source, ref, sweep_id, cell_id, version, "ok", bool(broken), bool(broken_before), lost, violations,
            digest_match, text[:1000] if text else None)


def resimulate_many(rows, question):
    from engine.tools.cli import tune_gc
    tune_gc()
    for row in rows:
        yield resimulate(row, question)


def replay_history(scenario_json, end_ms=None):
    """The full history of a stored run, re-simulated (to ``end_ms`` for a run saved early)."""
    sim = Simulation(json.loads(scenario_json))
    if end_ms is not None:
        sim.advance_to(end_ms)
        return list(sim.history)
    return sim.run()["history"]
