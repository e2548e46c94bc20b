"""Shareable links that carry a scenario: compact, URL-safe, needing no server state.

A link code is ``"1"`` (the format version) followed by base64url (no padding) of::

    checksum (6 bytes) + raw DEFLATE of the canonical JSON {"e": engine version, "s": scenario}

where the checksum is the first 6 bytes of SHA-256("isrlab-link/1" + compressed bytes): it
catches truncated and altered codes before anything is decompressed. The scenario inside is the
normalised document (``engine.load``), so every default is spelled out; decoding validates it
with ``engine.load`` again — a scenario from a link is checked exactly like any other input.
Decompression is bounded (``MAX_SCENARIO_BYTES``), so a crafted code cannot inflate without limit.

The moment and selection a link opens at (``t``, a partition ``p`` such as ``orders-0``, a
broker ``b``) travel as URL query parameters beside the code (``link_query``/``parse_focus``),
for scenario links (``/l/<code>``) and short links to saved runs (``/s/<slug>``) alike.

Errors are ``LinkError`` with ``field``, ``message`` and ``allowed``, like ``ScenarioError``.
"""
import base64
import binascii
import hashlib
import json
import re
import zlib

from engine.scenario.document import ScenarioError, load
from engine.simulation import ENGINE_VERSION

from ..errors import UserError
from ..jsonbounds import UnsafeJSON, loads_checked

VERSION = "1"
CHECK_BYTES = 6
MAX_CODE_CHARS = 16_000
MAX_SCENARIO_BYTES = 262_144
_B64 = re.compile(r"^[A-Za-z0-9_-]*$")


class LinkError(UserError):
    """A link code that is damaged, truncated, altered or carries what this server refuses."""


def _checksum(payload):
    return hashlib.sha256(b"isrlab-link/" + VERSION.encode() + payload).digest()[:CHECK_BYTES]


def _validated(doc):
    try:
        return load(doc)
    except ScenarioError as exc:
        raise LinkError(f"scenario.{exc.field}" if exc.field else "scenario", exc.message, exc.allowed) from None


def encode_scenario(doc, engine_version=ENGINE_VERSION):
    """The link code of ``doc`` (validated first). Raises LinkError."""
    scenario = _validated(doc)
    text = json.dumps({"e": engine_version, "s": scenario}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode()
    if len(text) > MAX_SCENARIO_BYTES:
        raise LinkError("scenario", f"is {len(text)} bytes as JSON, too large for a link",
                        f"at most {MAX_SCENARIO_BYTES} bytes; save the run and share its short link")
    squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = squeezer.compress(text) + squeezer.flush()
    code = VERSION + base64.urlsafe_b64encode(_checksum(payload) + payload).decode().rstrip("=")
    if len(code) > MAX_CODE_CHARS:
        raise LinkError("scenario", f"makes a link of {len(code)} characters",
                        f"at most {MAX_CODE_CHARS}; save the run and share its short link")
    return code


def decode_scenario(code):
    """``{"scenario": normalised document, "engine_version": the engine that made the link}``.
    Raises LinkError naming what is wrong; never anything else."""
    if not isinstance(code, str) or not code:
        raise LinkError("link", "is empty", "a link code made by ISR Lab")
    if len(code) > MAX_CODE_CHARS:
        raise LinkError("link", f"is {len(code)} characters long", f"at most {MAX_CODE_CHARS}")
    if code[0] != VERSION:
        raise LinkError("link", f"has an unknown format {code[0]!r}",
                        f"format {VERSION} (a code starting with {VERSION!r})")
    body = code[1:]
    if not _B64.match(body):
        bad = next(c for c in body if not (c.isascii() and (c.isalnum() or c in "-_")))
        raise LinkError("link", f"contains {bad!r}, which is not base64url", "letters, digits, '-' and '_'")
    if len(body) % 4 == 1:
        raise LinkError("link", "is truncated (its length is impossible)", "the complete link")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise LinkError("link", "is not valid base64url", "the complete link") from None
    if len(raw) <= CHECK_BYTES:
        raise LinkError("link", "is truncated", "the complete link")
    check, payload = raw[:CHECK_BYTES], raw[CHECK_BYTES:]
    if check != _checksum(payload):
        raise LinkError("link", "is damaged or truncated (its checksum does not match)",
                        "the link exactly as it was shared")
    inflater = zlib.decompressobj(-15)
    try:
        text = inflater.decompress(payload, MAX_SCENARIO_BYTES + 1)
    except zlib.error:
        raise LinkError("link", "does not decompress", "a link code made by ISR Lab") from None
    if len(text) > MAX_SCENARIO_BYTES or inflater.unconsumed_tail:
        raise LinkError("link", f"holds more than {MAX_SCENARIO_BYTES} bytes", "a smaller scenario")
    if not inflater.eof:
        raise LinkError("link", "is truncated (its data ends early)", "the complete link")
    try:
        envelope = loads_checked(text, "link")          # nesting and text bounded like any input
    except UnsafeJSON as exc:
        raise LinkError("link", f"holds a scenario that {exc.message}", exc.allowed) from None
    except ValueError:
        raise LinkError("link", "does not hold JSON", "a link code made by ISR Lab") from None
    if not isinstance(envelope, dict) or not isinstance(envelope.get("s"), dict):
        raise LinkError("link", "does not hold a scenario", "a link code made by ISR Lab")
    made_by = envelope.get("e")
    return {"scenario": _validated(envelope["s"]),
            "engine_version": made_by if isinstance(made_by, str) else None}


# -- the moment and selection a link opens at --------------------------------------------------------
def link_query(t_ms=None, partition=None, broker=None, lang=None):
    """The query of a link's moment and selection, and its language (``lang=zh-CN``: the link opens
    in the language of the one who made it, app/i18n)."""
    parts = []
    if t_ms is not None:
        parts.append(f"t={int(t_ms)}")
    if partition is not None:
        parts.append("p=" + _quote(partition))
    if broker is not None:
        parts.append(f"b={int(broker)}")
    if lang is not None:
        parts.append("lang=" + _quote(lang))
    return ("?" + "&".join(parts)) if parts else ""


def _quote(text):
    from urllib.parse import quote
    return quote(str(text), safe="")


def scenario_link(code, t_ms=None, partition=None, broker=None, lang=None):
    return f"/l/{code}" + link_query(t_ms, partition, broker, lang)


def run_link(slug, t_ms=None, partition=None, broker=None, lang=None):
    return f"/s/{slug}" + link_query(t_ms, partition, broker, lang)


def parse_focus(args, scenario, end_ms):
    """``{"t_ms", "partition", "broker"}`` from query arguments ``t``, ``p``, ``b`` (each may be
    absent: None), checked against the scenario. Raises LinkError."""
    out = {"t_ms": None, "partition": None, "broker": None}
    t = args.get("t")
    if t not in (None, ""):
        if not (isinstance(t, str) and t.isdigit() and len(t) <= 12):
            raise LinkError("t", f"{str(t)[:20]!r} is not a time", f"milliseconds from 0 to {end_ms}")
        if int(t) > end_ms:
            raise LinkError("t", f"{t} ms is after the end of the run", f"0 to {end_ms}")
        out["t_ms"] = int(t)
    p = args.get("p")
    if p not in (None, ""):
        keys = [f"{topic['name']}-{i}" for topic in scenario.get("topics", [])
                for i in range(topic["partitions"])]
        if p not in keys:
            raise LinkError("p", f"{str(p)[:60]!r} is not a partition of this scenario",
                            ", ".join(keys[:20]) + (" ..." if len(keys) > 20 else ""))
        out["partition"] = p
    b = args.get("b")
    if b not in (None, ""):
        brokers = scenario.get("brokers", [])
        if not (isinstance(b, str) and b.isdigit() and len(b) <= 6) or int(b) not in brokers:
            raise LinkError("b", f"{str(b)[:20]!r} is not a broker of this scenario",
                            ", ".join(str(x) for x in brokers))
        out["broker"] = int(b)
    return out
