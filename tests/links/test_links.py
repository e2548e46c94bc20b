"""Scenario links: scenario -> link -> scenario is exact (and replays the same run), and a bad,
truncated or tampered link is a clear LinkError naming the field — never another exception."""
import base64
import hashlib
import json
import random
import zlib

import pytest

from app.replay import links
from app.replay.links import LinkError, decode_scenario, encode_scenario, parse_focus
from engine import load
from engine.scenario.library import library
from engine.simulation import ENGINE_VERSION, Simulation
from tests.replay.scenarios import random_scenario

LIBRARY = library()


def _history(doc):
    return json.dumps(Simulation(doc).run()["history"], sort_keys=True)


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_library_scenario_round_trips_and_replays_the_same_run(name):
    doc = LIBRARY[name]
    code = encode_scenario(doc)
    assert code[0] == "1" and all(c.isalnum() or c in "-_" for c in code)
    back = decode_scenario(code)
    assert back["scenario"] == load(doc)
    assert back["engine_version"] == ENGINE_VERSION
    assert _history(back["scenario"]) == _history(doc)


@pytest.mark.parametrize("seed", range(12))
def test_random_scenarios_round_trip(seed):
    doc = random_scenario(seed)
    assert decode_scenario(encode_scenario(doc))["scenario"] == doc


def test_link_is_compact():
    doc = LIBRARY["acks1-loss-on-failover"]
    code = encode_scenario(doc)
    assert len(code) < len(json.dumps(doc))        # shorter than the scenario's own JSON


def test_encoding_validates_like_any_input():
    with pytest.raises(LinkError) as err:
        encode_scenario({"brokers": 0})
    assert err.value.field == "scenario.brokers"
    assert err.value.to_dict()["allowed"]


def _craft(payload_text=None, raw=None):
    """A code with a valid checksum around arbitrary (possibly hostile) content."""
    if raw is None:
        squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw = squeezer.compress(payload_text) + squeezer.flush()
    check = hashlib.sha256(b"isrlab-link/1" + raw).digest()[:6]
    return "1" + base64.urlsafe_b64encode(check + raw).decode().rstrip("=")


BAD = {
    "empty": ("", "link"),
    "wrong version": ("2" + encode_scenario(LIBRARY["isr-expansion"])[1:], "link"),
    "not base64": ("1abc$def", "link"),
    "spaces": ("1abc def", "link"),
    "impossible length": ("1abcde", "link"),
    "too short": ("1AAAA", "link"),
    "not deflate": (_craft(raw=b"\xff\xfe\xfd garbage"), "link"),
    "not json": (_craft(b"this is not json"), "link"),
    "json not a scenario": (_craft(b'{"e": "1.0.0", "s": [1, 2]}'), "link"),
    "json list": (_craft(b"[1, 2, 3]"), "link"),
    "not utf-8": (_craft(b'{"e": "\xff"}'), "link"),
    "bomb": (_craft(b'{"e": "' + b"a" * 2_000_000 + b'"}'), "link"),
    "invalid scenario": (_craft(b'{"e": "1.0.0", "s": {"brokers": 0}}'), "scenario.brokers"),
    "unknown field": (_craft(b'{"e": "1.0.0", "s": {"nonsense": 1}}'), "scenario"),
    "not a string": (None, "link"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_links_are_clear_errors(case):
    code, field = BAD[case]
    with pytest.raises(LinkError) as err:
        decode_scenario(code)
    assert err.value.field.startswith(field), err.value.to_dict()
    assert err.value.message


def test_every_truncation_and_every_single_character_change_is_caught():
    code = encode_scenario(LIBRARY["unclean-election-loss"])
    for n in range(len(code)):
        with pytest.raises(LinkError):
            decode_scenario(code[:n])
    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for _ in range(300):
        i = rng.randrange(1, len(code))
        replacement = rng.choice(alphabet.replace(code[i], ""))
        tampered = code[:i] + replacement + code[i + 1:]
        try:
            decoded = decode_scenario(tampered)
        except LinkError:
            continue
        # the last character carries spare bits; a change there may decode to the same bytes
        assert i == len(code) - 1 and decoded["scenario"] == load(LIBRARY["unclean-election-loss"])


def test_random_garbage_never_raises_anything_but_link_error():
    rng = random.Random(3)
    for _ in range(500):
        length = rng.randrange(0, 300)
        text = "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(length))
        for candidate in (text, "1" + text):
            try:
                decode_scenario(candidate)
            except LinkError:
                pass


def test_oversized_scenario_gets_a_clear_error(monkeypatch):
    monkeypatch.setattr(links, "MAX_CODE_CHARS", 200)
    with pytest.raises(LinkError) as err:
        encode_scenario(LIBRARY["isr-expansion"])
    assert err.value.field == "scenario" and "short link" in err.value.allowed


def test_focus_parameters_are_checked_against_the_scenario():
    doc = load(LIBRARY["acks1-loss-on-failover"])
    assert parse_focus({}, doc, 60000) == {"t_ms": None, "partition": None, "broker": None}
    assert parse_focus({"t": "1500", "p": "orders-0", "b": "2"}, doc, 60000) == \
        {"t_ms": 1500, "partition": "orders-0", "broker": 2}
    for args, field in [({"t": "-1"}, "t"), ({"t": "abc"}, "t"), ({"t": "60001"}, "t"),
                        ({"p": "orders-1"}, "p"), ({"p": "nope"}, "p"), ({"b": "7"}, "b"), ({"b": "x"}, "b")]:
        with pytest.raises(LinkError) as err:
            parse_focus(args, doc, 60000)
        assert err.value.field == field


def test_link_urls_carry_the_moment_and_selection():
    assert links.scenario_link("1abc", t_ms=1200, partition="orders-0", broker=1) == "/l/1abc?t=1200&p=orders-0&b=1"
    assert links.run_link("xyz") == "/s/xyz"
    assert links.run_link("xyz", partition="a b-0") == "/s/xyz?p=a%20b-0"
