"""A counterexample search keeps to its time budget: batches are sized by the measured time per
run, so a search asked for 1 s does not run for minutes (it used to finish whole batches)."""
import time

from app.counterexample.finder import find
from engine.tools.search_examples import PROCESS_CRASHES_ONLY, SAFE_2_6


def test_a_one_second_budget_stops_the_search_near_one_second():
    base, prop, profile = SAFE_2_6, {"name": "no_acked_loss"}, PROCESS_CRASHES_ONLY
    started = time.monotonic()
    outcome = find(base, prop, profile, runs=500, budget_s=1)
    elapsed = time.monotonic() - started
    assert outcome["stopped_by"] == "time budget" and not outcome["found"]
    assert 0 < outcome["runs"] < 500
    per_run = elapsed / outcome["runs"]
    assert elapsed < 1 + 3 * per_run + 0.5, (elapsed, outcome)
