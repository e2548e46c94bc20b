"""The work estimate of a scenario is close to what the run really costs (so a budget refuses
what is too big and only that), and a cap stops a run that goes over it."""
import pytest

from engine.tools.bench import reference_scenario
from engine.core.budget import Cap, BudgetExceeded, cost_terms, estimate, refusal
from engine.scenario.document import load
from engine.scenario.library import library
from engine.simulation import Simulation

from .randomized import random_scenario

DOCS = ([(name, doc) for name, doc in library().items()]
        + [(f"random-{seed}", random_scenario(seed, duration_ms=20000)) for seed in range(0, 40, 3)]
        + [("bench-medium-20s", reference_scenario(20000))])


@pytest.mark.parametrize("name,doc", DOCS, ids=[n for n, _ in DOCS])
def test_the_estimate_is_within_its_stated_band_of_the_real_cost(name, doc):
    scenario = load(doc)
    actual = Simulation(scenario).run()["stats"]["events"]
    predicted = estimate(scenario)
    assert 0.15 <= actual / predicted <= 1.5, (actual, predicted, cost_terms(scenario))


def test_the_refusal_names_what_drives_the_cost_and_the_budget():
    doc = load(reference_scenario(3_600_000))        # an hour of bench-medium: tens of millions
    assert refusal(doc, estimate(doc), "saved runs") is None
    field, message, allowed = refusal(doc, 5_000_000, "saved runs")
    assert field == "duration_ms"
    assert "rate_per_s" in message and "saved runs allow 5 M" in message and "M simulation events" in message
    assert "shorten duration_ms" in allowed and "rate_per_s" in allowed


def test_every_library_scenario_fits_a_saved_run_budget_with_room_to_spare():
    for name, doc in library().items():
        assert estimate(load(doc)) * 10 < 5_000_000, name


def test_a_cap_stops_a_run_that_goes_over_it_and_an_honest_run_finishes():
    doc = load(library()["isr-expansion"])
    with pytest.raises(BudgetExceeded) as over:
        Cap(events=2000).run_to(Simulation(doc), doc["duration_ms"])
    assert over.value.what == "events" and over.value.used > 2000
    assert over.value.used < 2000 + 1000           # stopped within one slice (1 s simulated) of the cap
    sim = Cap(events=estimate(doc)).run_to(Simulation(doc), doc["duration_ms"])
    assert sim.now_ms == doc["duration_ms"]


def test_cancellation_stops_a_capped_run():
    doc = load(library()["isr-expansion"])
    calls = []
    with pytest.raises(BudgetExceeded) as stopped:
        Cap(events=10 ** 9, cancelled=lambda: calls.append(1) or len(calls) > 3).run_to(Simulation(doc), 60000)
    assert stopped.value.what == "time"


def _idle_kraft(era, brokers, voters):
    return {"name": "idle", "kafka_version": era, "brokers": brokers, "duration_ms": 30000,
            "controllers": list(range(3000, 3000 + voters)),
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 1}], "clients": [], "timeline": []}


@pytest.mark.parametrize("era,brokers,voters", [("3.9-kraft", 1, 3), ("4.1", 1, 5), ("4.1", 6, 3), ("3.9-kraft", 3, 1)])
def test_kraft_estimates_count_the_controller_voters_and_the_heartbeats(era, brokers, voters):
    """An idle KRaft cluster is busy: voters fetch from the Raft leader, brokers heartbeat and
    fetch metadata — ~36 events/s for one broker and three voters, where ZooKeeper mode has ~2.
    Without voter and heartbeat terms the estimate was 15 events/s: a 2.4x underestimate."""
    scenario = load(_idle_kraft(era, brokers, voters))
    actual = Simulation(scenario).run()["stats"]["events"]
    terms = cost_terms(scenario)
    assert terms["controllers"] == int(voters * 30 * 9.5 * 1.3)
    assert 0.2 <= actual / estimate(scenario) <= 1.5, (actual, terms)
    # more voters cost more; a ZooKeeper scenario has no such term
    assert estimate(load(_idle_kraft(era, brokers, voters + 2))) > estimate(scenario)
    assert "controllers" not in cost_terms(load(dict(_idle_kraft("2.6", brokers, 1), controllers=None)))
