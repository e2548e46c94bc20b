"""The work estimate of a scenario is close to what the run really costs (so a budget refuses
what is too big and only that), and a cap stops a run that goes over it."""
import pytest

from engine.bench import reference_scenario
from engine.budget import Cap, BudgetExceeded, cost_terms, estimate, refusal
from engine.scenario import load
from engine.scenarios import library
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
