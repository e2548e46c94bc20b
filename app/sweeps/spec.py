"""The sweep document: validation, normalisation, the grid's cells and each run's scenario.

A sweep document (JSON)::

    {
      "id": "minisr-vs-era",                     optional; default "sw-" + hash of the document
      "name": "min ISR vs era", "description": "...",
      "base": {scenario document} | "library-scenario-name",      default: see DEFAULT_BASE
      "grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"],
               "min.insync.replicas": [1, 2], "unclean.leader.election.enable": [false, true]},
      "seeds": 100 | {"first": 0, "count": 100},
      "faults": "default" | "none" | a profile name | {profile},
      "fault_profiles": {"procs": {"from": "none", "crash_process": [1.0, 2000, 30000]}},
      "fault_phase": {"start_ms": 1000, "end_ms": 36000}    (or "end_fraction": 0.6, the default)
    }

Grid axes (each a non-empty list of values; cells are their cartesian product, in the
document's order): ``kafka_version``, ``brokers``, ``duration_ms``, ``replication_factor`` and
``partitions`` (every topic), ``rate_per_s`` (every producer), ``latency_ms`` and ``jitter_ms``
(the network), ``racks`` (a number of racks, 0 to 26: the brokers, and a KRaft cell's dedicated
controllers, dealt round robin in id order into racks ``az-a``, ``az-b``, ...; 0 for none; or a
``racks`` object, docs/scenario-format.md §4.3) and ``inter_rack_latency_ms``, ``faults`` (profile
names), and any Kafka config key the engine knows: topic keys
(``min.insync.replicas``, ``unclean.leader.election.enable``) go into every topic's config,
producer keys (``acks``, ``retries``, ``enable.idempotence`` ...) onto every producer, consumer
keys onto every consumer, broker and simulator keys into the scenario's config.

A fault profile gives, per kind (``engine.tools.faults.KINDS``: crash_process, crash_power, pause,
partition, cut, isolate_zk, expire_session, slow, controller, zone), ``[rate per simulated minute, min duration
ms, max duration ms]`` (or ``{"rate_per_min", "min_ms", "max_ms"}``); kinds not given come from
``"from"``: ``"default"`` (``engine.tools.faults.DEFAULT_PROFILE``, the default) or ``"none"`` (rate 0).
Built-in profile names: ``default`` and ``none``. In KRaft cells (docs/model.md §20)
``isolate_zk`` cuts a broker from the controller quorum, ``expire_session`` is never drawn and
``controller`` crashes, pauses or isolates one controller voter; ``controller`` is spelled out (and
allowed) only in a sweep with a KRaft era. ``zone`` crashes or isolates a whole rack (docs/model.md
§21.5); it is spelled out (and allowed) only in a sweep whose base has ``racks`` or whose grid
has a ``racks`` axis.

Every run of cell C with seed s is C's scenario with ``seed = s`` and a timeline = the base's
timeline + ``engine.tools.faults.fault_timeline(scenario, profile, s, start_ms, end_ms, session)``: a
fault phase drawn from the seed, then a healing phase at ``end_ms`` (heal every link, restart
stopped brokers after their session timeout) so the cluster must converge by the end. Every cell
uses the same seeds, so cells are compared on the same fault draws (common random numbers).

``validate(doc)`` returns the normalised document (every default spelled out) or raises
``SweepError(field, message, allowed)``.
"""
import copy
import hashlib
import itertools
import json
import re

from engine import eras
from engine.scenario.document import ScenarioError, load
from engine.kraft.kraft_scenario import DEFAULT_CONTROLLERS
from engine.scenario.library import library
from engine.scenario.racks import MAX_SPREAD_RACKS, spread_racks
from engine.tools.sweep_run import loadable, run_scenario  # noqa: F401  (run_scenario: one definition, also run by workers)

from .fields import SweepError, _int, _short  # noqa: F401  (SweepError: the sweep error, imported from here)
from .profiles import (BUILTIN_PROFILES, DEFAULT_END_FRACTION, DEFAULT_START_MS, FAULTS_AXIS,  # noqa: F401
                       PROFILE_NAME, _phase, _profiles)

SWEEP_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
TOP_LEVEL = ("id", "name", "description", "base", "grid", "seeds", "faults", "fault_profiles",
             "fault_phase")
SCENARIO_AXES = ("kafka_version", "brokers", "duration_ms", "replication_factor", "partitions",
                 "rate_per_s", "latency_ms", "jitter_ms", "racks", "inter_rack_latency_ms")
DEFAULT_BASE = {
    "name": "sweep base: 3 brokers, 3 partitions at RF 3, 100 records/s",
    "brokers": 3,
    "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
    "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 100}],
    "duration_ms": 60000,
}
LIMITS = {"max_cells": 4096, "max_values": 64, "max_seeds": 1_000_000, "max_runs": 2_000_000,
          "max_duration_ms": 3_600_000}


def canonical(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# -- the document ----------------------------------------------------------------------------------
def validate(doc, limits=None):
    """The normalised sweep document, or SweepError naming the field."""
    limits = {**LIMITS, **(limits or {})}
    if isinstance(doc, (str, bytes)):
        try:
            doc = json.loads(doc)
        except ValueError as exc:
            raise SweepError("document", f"not valid JSON: {exc}", "a JSON object") from None
    if not isinstance(doc, dict):
        raise SweepError("document", f"{_short(doc)} is not a JSON object", "a sweep document (JSON object)")
    for key in doc:
        if key not in TOP_LEVEL:
            raise SweepError(key, "unknown field", ", ".join(TOP_LEVEL))
    out = {}
    out["name"] = _text(doc.get("name", "sweep"), "name", 200)
    out["description"] = _text(doc.get("description", ""), "description", 5000)
    base = _base(doc.get("base"), limits)
    grid = _grid(doc.get("grid", {}), limits)
    out["seeds"] = _seeds(doc.get("seeds", 10), limits)
    versions = dict(grid).get("kafka_version") or [load(base)["kafka_version"]]
    racks = "racks" in base or any(axis == "racks" for axis, _values in grid)
    profiles, default_name = _profiles(doc, grid, any(v in eras.KRAFT_VERSIONS for v in versions), racks)
    out["base"] = base
    out["grid"] = grid
    out["faults"] = default_name
    out["fault_profiles"] = profiles
    out["fault_phase"] = _phase(doc.get("fault_phase", {}))
    n_cells = 1
    for _axis, values in grid:
        n_cells *= len(values)
    if n_cells > limits["max_cells"]:
        raise SweepError("grid", f"makes {n_cells} cells", f"at most {limits['max_cells']}")
    runs = n_cells * out["seeds"]["count"]
    if runs > limits["max_runs"]:
        raise SweepError("seeds", f"{n_cells} cells x {out['seeds']['count']} seeds = {runs} runs",
                         f"at most {limits['max_runs']} runs")
    given = doc.get("id")
    if given is None:
        out["id"] = "sw-" + hashlib.sha256(canonical(out).encode()).hexdigest()[:12]
    else:
        if not isinstance(given, str) or not SWEEP_ID.match(given):
            raise SweepError("id", f"{_short(given)} is not a sweep id",
                             "1-40 characters a-z 0-9 -, starting with a letter or digit")
        out["id"] = given
    for cell in cells(out):          # every cell must make a valid scenario (faults aside)
        _check_cell(out, cell, limits)
    return out


def _text(value, field, max_len):
    if not isinstance(value, str) or len(value) > max_len:
        raise SweepError(field, f"{_short(value)} is not a text of at most {max_len} characters",
                         f"text of at most {max_len} characters")
    return value


def _base(value, limits):
    if value is None:
        value = DEFAULT_BASE
    if isinstance(value, str):
        lib = library()
        if value not in lib:
            raise SweepError("base", f"{value[:60]!r} is not a library scenario", ", ".join(lib))
        value = lib[value]
    if not isinstance(value, dict):
        raise SweepError("base", f"{_short(value)} is not a scenario", "a scenario document or a library name")
    try:
        scenario = load(value)
    except ScenarioError as exc:
        raise SweepError(f"base.{exc.field}" if exc.field else "base", exc.message, exc.allowed) from None
    if scenario["duration_ms"] > limits["max_duration_ms"]:
        raise SweepError("base.duration_ms", f"{scenario['duration_ms']} ms is too long",
                         f"at most {limits['max_duration_ms']} ms")
    raw = copy.deepcopy(value)
    raw.pop("seed", None)
    return raw


def _axis_kind(axis):
    if axis in SCENARIO_AXES or axis == FAULTS_AXIS:
        return axis
    if axis in eras.CONFIG:
        return "config"
    return None


def allowed_axes():
    return list(SCENARIO_AXES) + [FAULTS_AXIS] + list(eras.CONFIG)


def _grid(value, limits):
    if not isinstance(value, dict):
        raise SweepError("grid", f"{_short(value)} is not an object", "an object: axis -> list of values")
    out = []
    for axis, values in value.items():
        field = f"grid.{axis}"
        if _axis_kind(axis) is None:
            raise SweepError(field, "unknown axis", ", ".join(allowed_axes()))
        if not isinstance(values, list) or not values:
            raise SweepError(field, f"{_short(values)} is not a non-empty list", "a list of values")
        if len(values) > limits["max_values"]:
            raise SweepError(field, f"has {len(values)} values", f"at most {limits['max_values']}")
        canon = [_axis_value(axis, v, f"{field}[{i}]") for i, v in enumerate(values)]
        if len({canonical(v) for v in canon}) != len(canon):
            raise SweepError(field, "has duplicate values", "distinct values")
        out.append([axis, canon])
    return out


def _axis_value(axis, value, field):
    kind = _axis_kind(axis)
    if kind == "kafka_version":
        if value not in eras.VERSIONS:
            raise SweepError(field, f"{_short(value)} is not a supported era",
                             ", ".join(f'"{v}"' for v in eras.VERSIONS))
        return value
    if kind == FAULTS_AXIS:
        if not isinstance(value, str) or not PROFILE_NAME.match(value):
            raise SweepError(field, f"{_short(value)} is not a fault profile name",
                             "default, none, or a name defined in fault_profiles")
        return value
    if kind in ("brokers", "replication_factor", "partitions"):
        return _int(value, field, 1, 1000)
    if kind in ("duration_ms", "rate_per_s", "latency_ms", "jitter_ms"):
        return _int(value, field, 1 if kind == "duration_ms" else 0, 10 ** 9)
    if kind == "inter_rack_latency_ms":
        return _int(value, field, 0, 60000)
    if kind == "racks":
        if isinstance(value, dict):
            return value        # checked with the cell's scenario
        return _int(value, field, 0, MAX_SPREAD_RACKS)
    version = next(v for v in reversed(eras.VERSIONS) if axis in eras.known_keys(v))
    try:
        return eras_value(version, axis, value, field)
    except ScenarioError as exc:
        raise SweepError(field, exc.message, exc.allowed) from None


def eras_value(version, key, value, field):
    from engine.scenario.document import config_value
    return config_value(version, key, value, field, set(eras.scopes_of(key)))


def _seeds(value, limits):
    if isinstance(value, int) and not isinstance(value, bool):
        return {"first": 0, "count": _int(value, "seeds", 1, limits["max_seeds"])}
    if not isinstance(value, dict) or set(value) - {"first", "count"} or "count" not in value:
        raise SweepError("seeds", f"{_short(value)} is not a seed range",
                         'a count, or {"first": integer, "count": integer}')
    return {"first": _int(value.get("first", 0), "seeds.first", 0, 2 ** 53),
            "count": _int(value["count"], "seeds.count", 1, limits["max_seeds"])}


# -- cells ------------------------------------------------------------------------------------------
def cells(sweep):
    """The grid's cells, in order: ``{"cell_id", "settings", "scenario", "profile",
    "fault_start_ms", "fault_end_ms", "session_timeout_ms"}``. ``scenario`` is normalised, seed 0,
    without the fault timeline."""
    axes = sweep["grid"]
    names = [a for a, _v in axes]
    out = []
    for cell_id, values in enumerate(itertools.product(*[v for _a, v in axes])):
        settings = dict(zip(names, values))
        profile = settings.get(FAULTS_AXIS, sweep["faults"])
        try:
            scenario = loadable(load(apply_settings(sweep["base"], settings)))
        except SweepError as exc:     # first: a SweepError is a ScenarioError too
            raise SweepError(exc.field, f"cell {canonical(settings)}: {exc.message}", exc.allowed) from None
        except ScenarioError as exc:
            raise SweepError("grid", f"cell {canonical(settings)} makes an invalid scenario: "
                                     f"{exc.field}: {exc.message}", exc.allowed) from None
        phase = sweep["fault_phase"]
        end = phase["end_ms"] if phase["end_ms"] is not None else int(scenario["duration_ms"] * phase["end_fraction"])
        out.append({"cell_id": cell_id, "settings": settings, "scenario": scenario, "profile": profile,
                    "fault_start_ms": phase["start_ms"], "fault_end_ms": end,
                    "session_timeout_ms": session_timeout(scenario)})
    return out


def _check_cell(sweep, cell, limits):
    scenario = cell["scenario"]
    where = f"cell {canonical(cell['settings'])}"
    if scenario["duration_ms"] > limits["max_duration_ms"]:
        raise SweepError("grid.duration_ms", f"{where}: {scenario['duration_ms']} ms is too long",
                         f"at most {limits['max_duration_ms']} ms")
    if not cell["fault_start_ms"] < cell["fault_end_ms"] < scenario["duration_ms"]:
        raise SweepError("fault_phase", f"{where}: the fault phase {cell['fault_start_ms']}.."
                                        f"{cell['fault_end_ms']} ms does not fit a {scenario['duration_ms']} ms run",
                         "start_ms < end_ms < duration_ms")
    restart = cell["fault_end_ms"] + cell["session_timeout_ms"] + 500 + 200 * (len(scenario["brokers"]) - 1)
    if restart >= scenario["duration_ms"]:
        raise SweepError("fault_phase", f"{where}: stopped brokers restart at {restart} ms (fault phase end + "
                                        f"session timeout {cell['session_timeout_ms']} ms + 500 ms), after the "
                                        f"run ends at {scenario['duration_ms']} ms: the healing phase cannot converge",
                         f"end_ms below {scenario['duration_ms'] - cell['session_timeout_ms'] - 500 - 200 * (len(scenario['brokers']) - 1)}")


def session_timeout(scenario):
    # KRaft eras (docs/model.md §20.4): the broker session of the controller, not of ZooKeeper
    key = "broker.session.timeout.ms" if scenario["kafka_version"] in eras.KRAFT_VERSIONS \
        else "zookeeper.session.timeout.ms"
    value = scenario["config"].get(key)
    return value if value is not None else eras.default(scenario["kafka_version"], key)


def apply_settings(base, settings):
    """The base scenario (raw document) with one cell's settings applied."""
    doc = copy.deepcopy(base)
    for axis, value in settings.items():
        if axis in (FAULTS_AXIS, "racks"):
            continue
        if axis in ("kafka_version", "brokers", "duration_ms", "inter_rack_latency_ms"):
            doc[axis] = value
        elif axis in ("latency_ms", "jitter_ms"):
            doc.setdefault("network", {})[axis] = value
        elif axis in ("replication_factor", "partitions"):
            for i, topic in enumerate(doc.get("topics") or []):
                if "assignment" in topic:
                    raise SweepError(f"grid.{axis}", f"topic {topic.get('name')!r} of the base has an explicit "
                                                     "assignment", "a base whose topics have no assignment")
                topic[axis] = value
            if not doc.get("topics"):
                doc["topics"] = [{"name": "t", "partitions": 1, "replication_factor": 3, axis: value}]
        elif axis == "rate_per_s":
            _each_client(doc, ("producer",), axis, value, axis)
        else:
            scope = eras.CONFIG[axis][1]
            if scope == "topic" and doc.get("topics"):
                for topic in doc["topics"]:
                    topic.setdefault("config", {})[axis] = value
            elif scope in ("producer", "consumer", "client"):
                kinds = ("producer", "consumer") if scope == "client" else (scope,)
                _each_client(doc, kinds, axis, value, axis)
            else:
                doc.setdefault("config", {})[axis] = value
    if "racks" in settings:   # last: a count deals out the cell's brokers and controllers
        _apply_racks(doc, settings["racks"])
    return doc


def _apply_racks(doc, value):
    if isinstance(value, dict):
        doc["racks"] = value
        return
    doc.pop("racks", None)
    if value:
        brokers = doc.get("brokers", 3)
        brokers = sorted(brokers) if isinstance(brokers, list) else list(range(brokers))
        controllers = ()
        if doc.get("kafka_version", "2.6") in eras.KRAFT_VERSIONS and doc.get("controllers") != "combined":
            controllers = doc.get("controllers") or DEFAULT_CONTROLLERS
        doc["racks"] = spread_racks(brokers, value, controllers)


def _each_client(doc, kinds, key, value, axis):
    found = False
    for client in doc.get("clients") or []:
        if client.get("type") in kinds:
            found = True
            if isinstance(client.get("config"), dict) and key in client["config"]:
                client["config"][key] = value
            else:
                client[key] = value
    if not found:
        raise SweepError(f"grid.{axis}", f"the base scenario has no {' or '.join(kinds)} to set {key} on",
                         "a base scenario with such a client")


def cell_label(settings):
    return ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in settings.items()) or "all runs"

