"""Compare: the first divergence is exact (equal just before, different at it) and named."""
import copy

import pytest

from app.replay.seek import Seeker, build_index
from app.replay.compare import compare, differences, digest, first_divergence
from engine import load
from engine.scenarios import library
from engine.simulation import Simulation

from .scenarios import random_scenario


def seeker(doc):
    return Seeker.from_built(doc, build_index(doc, 10 ** 12, event_budget=1500))


def variant(doc, **changes):
    out = copy.deepcopy(load(doc))
    out.update(changes)
    return load(out)


def state_at(doc, t):
    sim = Simulation(doc)
    sim.advance_to(t)
    return digest(sim)


def test_identical_runs_do_not_diverge():
    doc = library()["zombie-leader-after-pause"]
    s = seeker(doc)
    result = compare(s, s)
    assert result["divergence"] is None and result["records"]["count"] == 0


@pytest.mark.parametrize("name", ["kip101-scenario-1-v0.10", "unclean-election-loss", "acks1-loss-on-failover"])
def test_era_divergence_is_the_first_differing_millisecond(name):
    a = load(library()[name])
    b = variant(a, kafka_version="2.6" if a["kafka_version"] != "2.6" else "0.10")
    found = first_divergence(seeker(a), seeker(b))
    assert found is not None
    t = found["t_ms"]
    assert differences(state_at(a, t), state_at(b, t))
    assert t == 0 or not differences(state_at(a, t - 1), state_at(b, t - 1))
    assert found["kind"] in ("leader", "isr", "log", "offline", "controller", "partitions")


@pytest.mark.parametrize("seed", range(4))
def test_seed_divergence_is_exact_for_random_scenarios(seed):
    a = random_scenario(seed)
    b = variant(a, seed=a["seed"] + 1000)
    found = first_divergence(seeker(a), seeker(b))
    if found is None:
        return
    t = found["t_ms"]
    assert differences(state_at(a, t), state_at(b, t))
    assert t == 0 or not differences(state_at(a, t - 1), state_at(b, t - 1))


def test_record_fates_are_compared_at_the_end():
    a = load(library()["acks1-loss-on-failover"])
    b = copy.deepcopy(a)
    for c in b["clients"]:
        c["acks"] = "all"
    result = compare(seeker(a), seeker(load(b)))
    assert result["records"]["count"] > 0
    first = result["records"]["records"][0]
    assert first["a"] != first["b"]
