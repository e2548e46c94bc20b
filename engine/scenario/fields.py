"""Scenario documents' limits, their one error type and the typed readers every validator uses
(docs/scenario-format.md §1-§3).

``ScenarioError`` names the field (``topics[1].replication_factor``), what was wrong and what is
allowed; the readers (``_int``, ``_str``, ``_keys``...) raise it. ``config_value`` checks a config
key and value against the era's table (``engine.eras``).
"""
import json
import re

from engine import eras

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
             "topics", "clients", "timeline", "duration_ms", "controllers", "racks",
             "inter_rack_latency_ms")
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


class StateError(ScenarioError):
    """An operation on a node whose state at that point of the timeline does not allow it
    (restarting a running broker): a zone operation (docs/scenario-format.md §4.3) leaves such
    a node out instead of refusing."""


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
    if kind == "str":
        return config_text(value, field)
    choices = kind.split(":", 1)[1].split("|")
    if value is None and key in eras.UNSET_DEFAULT_FROM:
        return None   # Kafka's null: the key left unset (replica.selector.class: no selector)
    if value not in choices:
        raise ScenarioError(field, f"{json.dumps(value)} is not a valid {key}", " or ".join(choices))
    return value


#: A free-text config value (client.rack: Kafka takes any string) is bounded for the page.
MAX_CONFIG_TEXT = 64


def config_text(value, field):
    """A string config value: empty (unset) or up to MAX_CONFIG_TEXT printable characters."""
    if not isinstance(value, str):
        raise ScenarioError(field, f"{json.dumps(value)[:60]} is not a string",
                            f"a string of at most {MAX_CONFIG_TEXT} printable characters")
    if len(value) > MAX_CONFIG_TEXT or not value.isprintable():
        raise ScenarioError(field, f"{json.dumps(value)[:80]} is not a usable value",
                            f"at most {MAX_CONFIG_TEXT} printable characters")
    return value


def acks_text(value, field):
    mapping = {"all": "all", "-1": "all", -1: "all", "1": "1", 1: "1", "0": "0", 0: "0"}
    if isinstance(value, bool) or value not in mapping:
        raise ScenarioError(field, f"{json.dumps(value)} is not a valid acks", '"0", "1", "all" (or -1)')
    return mapping[value]


def _config(version, value, field, scopes):
    cfg = _obj(value, field)
    return {k: config_value(version, k, v, f"{field}.{k}", scopes) for k, v in cfg.items()}
