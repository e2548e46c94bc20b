"""Limits on what a browser may ask a shared server to simulate, checked before the engine sees
a document: cluster size, scenario size, producer rates, records per command. The engine still
validates everything else (field names, types, ranges, operations that make no sense)."""
import json
import re

from engine import eras
from engine.core.budget import CAP_FACTOR, BudgetExceeded, Cap, refusal
from engine.scenario.document import OP_FIELDS

from ..config import DEFAULTS
from ..jobs import JobStopped
from .errors import AppError
from .story_text import retell

ROOM_ID = re.compile(r"^[A-Za-z0-9_-]{4,32}$")
MAX_COMMAND_BYTES = 8192


def json_size(value):
    try:
        return len(json.dumps(value, separators=(",", ":")))
    except (TypeError, ValueError):
        raise AppError("scenario", "is not a JSON document", "a JSON object") from None


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def check_room_id(value):
    if not isinstance(value, str) or not ROOM_ID.match(value):
        raise AppError("room", "is not a room id", "4-32 characters from A-Z a-z 0-9 _ -")
    return value


SURFACE_NAMES = {"live": "live rooms", "save": "saved runs", "import": "imported runs", "link": "links and replays",
                 "fork": "forks", "search_run": "searched runs", "sweep_run": "sweep runs"}


def check_budget(doc, limits, surface):
    """Raise AppError (HTTP 413) when ``doc`` is more simulation work than ``surface`` allows,
    naming the fields that drive the cost, the estimate and the budget (``engine.core.budget``)."""
    budget = limits.get("BUDGETS", DEFAULTS["BUDGETS"])[surface]
    refused = refusal(doc, budget, SURFACE_NAMES[surface])
    if refused is not None:
        raise AppError(*refused, status=413)
    return doc


def run_cap(limits, surface, cancelled=None):
    """The hard cap of one run on ``surface``: a multiple of its budget (the estimate can be low)."""
    return Cap(events=int(limits.get("BUDGETS", DEFAULTS["BUDGETS"])[surface] * CAP_FACTOR), cancelled=cancelled)


def run_capped(sim, t_ms, limits, surface, cancelled=None):
    """Advance ``sim`` to ``t_ms`` under the surface's hard cap; over it -> AppError (413)."""
    try:
        return run_cap(limits, surface, cancelled).run_to(sim, t_ms)
    except BudgetExceeded as exc:
        if exc.what == "time":                     # cancelled, or past the job's time limit
            raise JobStopped(exc.what) from None
        raise AppError("scenario", f"stopped: {exc}", f"a smaller scenario ({SURFACE_NAMES[surface]} are "
                       f"capped at {exc.cap:,} events)", status=413) from None


def check_scenario(doc, limits, surface="live"):
    """Raise AppError when ``doc`` asks for more than this server allows on ``surface``."""
    if not isinstance(doc, dict):
        raise AppError("scenario", "is not a JSON object", "a scenario document (a JSON object)")
    size = json_size(doc)
    if size > limits["MAX_SCENARIO_BYTES"]:
        raise AppError("scenario", f"is {size} bytes of JSON", f"at most {limits['MAX_SCENARIO_BYTES']}")
    brokers = doc.get("brokers", 3)
    count = len(brokers) if isinstance(brokers, list) else brokers if _is_int(brokers) else None
    if count is not None and count > limits["MAX_BROKERS"]:
        raise AppError("brokers", f"{count} brokers", f"at most {limits['MAX_BROKERS']} on this server")
    topics = doc.get("topics")
    if isinstance(topics, list):
        total = sum(t.get("partitions", 1) for t in topics
                    if isinstance(t, dict) and _is_int(t.get("partitions", 1)))
        if total > limits["MAX_PARTITIONS"]:
            raise AppError("topics", f"{total} partitions in all",
                           f"at most {limits['MAX_PARTITIONS']} on this server")
    clients = doc.get("clients")
    if isinstance(clients, list):
        if len(clients) > limits["MAX_CLIENTS"]:
            raise AppError("clients", f"{len(clients)} clients", f"at most {limits['MAX_CLIENTS']}")
        rate = sum(c.get("rate_per_s") or 0 for c in clients
                   if isinstance(c, dict) and _is_int(c.get("rate_per_s") or 0))
        if rate > limits["MAX_RATE_PER_S"]:
            raise AppError("clients", f"producers send {rate} records/s in all",
                           f"at most {limits['MAX_RATE_PER_S']} records/s on this server")
    timeline = doc.get("timeline")
    if isinstance(timeline, list):
        if len(timeline) > limits["MAX_TIMELINE"]:
            raise AppError("timeline", f"has {len(timeline)} operations", f"at most {limits['MAX_TIMELINE']}")
        for i, op in enumerate(timeline):
            if isinstance(op, dict) and op.get("op") == "produce" and _is_int(op.get("count", 1)) \
                    and op.get("count", 1) > limits["MAX_PRODUCE_COUNT"]:
                raise AppError(f"timeline[{i}].count", f"{op['count']} records",
                               f"at most {limits['MAX_PRODUCE_COUNT']} per operation")
    duration = doc.get("duration_ms", 60000)
    if _is_int(duration) and duration > limits["MAX_DURATION_MS"]:
        raise AppError("duration_ms", f"{duration} ms", f"at most {limits['MAX_DURATION_MS']} ms on this server")
    return check_budget(doc, limits, surface)


def check_command(op, sim, limits):
    """Raise AppError when a live command is malformed at the top level or too big; the engine's
    ``Simulation.apply`` checks the rest against the cluster as it is now."""
    if not isinstance(op, dict):
        raise AppError("command", "is not a JSON object", 'an operation such as {"op": "crash", "broker": 1}')
    if json_size(op) > MAX_COMMAND_BYTES:
        raise AppError("command", "is too large", f"at most {MAX_COMMAND_BYTES} bytes of JSON")
    name = op.get("op")
    if name not in OP_FIELDS:
        raise AppError("op", f"{json.dumps(name)[:40]} is not an operation", ", ".join(sorted(OP_FIELDS)))
    if "at_ms" in op:
        raise AppError("at_ms", "live commands run now", "no at_ms (the server schedules them)")
    if name == "produce":
        count = op.get("count", 1)
        if _is_int(count) and count > limits["MAX_PRODUCE_COUNT"]:
            raise AppError("count", f"{count} records", f"at most {limits['MAX_PRODUCE_COUNT']} per command")
        if op.get("producer", "producer") not in sim.clients and len(sim.clients) >= limits["MAX_CLIENTS"]:
            raise AppError("producer", "too many clients", f"at most {limits['MAX_CLIENTS']}")
    if name == "consume" and op.get("consumer") not in sim.clients \
            and len(sim.clients) >= limits["MAX_CLIENTS"]:
        raise AppError("consumer", "too many clients", f"at most {limits['MAX_CLIENTS']}")
    if name == "create_topic":
        partitions = op.get("partitions", 1)
        total = sum(spec["partitions"] for spec in sim.topics.values())
        if _is_int(partitions) and total + partitions > limits["MAX_PARTITIONS"]:
            raise AppError("partitions", f"the cluster would have {total + partitions} partitions",
                           f"at most {limits['MAX_PARTITIONS']} on this server")
    return op


def retarget(doc, version):
    """``doc`` moved to another ``kafka_version``: config keys that era does not know are dropped
    (e.g. delivery.timeout.ms before 2.4). Returns (new document, dropped key names)."""
    known = set(eras.known_keys(version)) if version in eras.VERSIONS else None
    out = json.loads(json.dumps(doc))
    if doc.get("kafka_version") != version:
        retell(out, version)          # its title and guide say which release they describe
    out["kafka_version"] = version
    if known is None:
        return out, []  # the engine names the allowed versions
    dropped = []

    def strip(cfg, where):
        if not isinstance(cfg, dict):
            return cfg
        kept = {}
        for k, v in cfg.items():
            if k in eras.CONFIG and k not in known:
                dropped.append(f"{where}{k}")
            else:
                kept[k] = v
        return kept

    if "config" in out:
        out["config"] = strip(out["config"], "")
    for t in out.get("topics") or []:
        if isinstance(t, dict) and "config" in t:
            t["config"] = strip(t["config"], f"{t.get('name')}: ")
    for c in out.get("clients") or []:
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("config"), dict):
            c["config"] = strip(c["config"], f"{c.get('name')}: ")
        for k in [k for k in c if k in eras.CONFIG and k not in known]:
            dropped.append(f"{c.get('name')}: {k}")
            del c[k]
    for op in out.get("timeline") or []:
        if isinstance(op, dict) and op.get("op") == "consume" and "isolation.level" in op \
                and "isolation.level" not in known:
            del op["isolation.level"]
            dropped.append(f"{op.get('consumer')}: isolation.level")
    return out, dropped


#: a live room's speed: simulated time per wall time ("max": as fast as its share of the CPU)
SPEED_MIN = 0.1
SPEED_MAX = 100.0


def check_speed(value):
    if value == "max":
        return "max"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise AppError("speed", f"{str(value)[:20]!r} is not a speed", f'{SPEED_MIN} to {SPEED_MAX}, or "max"')
    if not SPEED_MIN <= value <= SPEED_MAX:
        raise AppError("speed", f"{value} is out of range", f'{SPEED_MIN} to {SPEED_MAX}, or "max"')
    return float(value)
