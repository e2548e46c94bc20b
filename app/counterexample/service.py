"""Search, shrink, save, link and narrate: the whole "Can this lose data?" answer.

``hunt(...)`` returns a JSON-able report: either an honest "not found in N runs" (with the
settings searched and the time it took), or the minimal counterexample — its scenario, the
numbered narration, the saved run and a link that opens the replay paused one second before the
property broke, with the partition involved highlighted.
"""
import time

from engine.faults import normalise_profile
from engine.search import PROPERTIES, candidate, check_property, narrate, shrink, validate_property
from engine.simulation import Simulation

from app.replay.links import run_link

from . import finder

LEAD_MS = 1000  # the link opens this long before the break


def describe_property(prop):
    text = PROPERTIES[prop["name"]]
    return text.replace("param", str(prop["param"])) if prop.get("param") is not None else text


def hunt(base, prop, profile=None, runs=200, budget_s=None, spark=None, store=None, save=True,
         shrink_budget=400, progress=None, title=None):
    prop = validate_property(prop)
    profile = normalise_profile(profile)
    started = time.monotonic()
    found = finder.find(base, prop, profile, runs=runs, budget_s=budget_s, spark=spark,
                        progress=progress)
    report = {"property": prop, "property_text": describe_property(prop), "profile": profile,
              "search": found}
    if not found["found"]:
        report.update(found=False, message=f"not found in {found['runs']} runs "
                                           f"({found['stopped_by']}, {found['elapsed_s']} s)")
        return report
    original = candidate(base, profile, found["seed"])
    if progress:
        progress({"stage": "shrinking"})
    shrink_started = time.monotonic()
    small, evaluations = shrink(original, prop, budget=shrink_budget)
    sim = Simulation(small)
    result = sim.run()
    broken, evidence = check_property(prop, result)
    assert broken, "a shrunk counterexample must still break the property"
    report.update(
        found=True, scenario=small, evidence=evidence, narration=narrate(result, evidence),
        original_operations=len(original["timeline"]), operations=len(small["timeline"]),
        shrink={"evaluations": evaluations, "elapsed_s": round(time.monotonic() - shrink_started, 3)},
        elapsed_s=round(time.monotonic() - started, 3),
        message=f"{describe_property(prop)}: broken — {evidence['detail']}")
    if save and store is not None:
        report["run"] = save_counterexample(store, sim, result, evidence, title)
    return report


def save_counterexample(store, sim, result, evidence, title=None):
    """Store the counterexample as a run; the link opens just before the break."""
    from app.replay.save import capture_result, save_captured
    saved = save_captured(store, capture_result(sim, result),
                          title=title or f"Counterexample: {evidence['detail']}"[:200],
                          source="counterexample")
    t_ms = max(0, evidence["t_ms"] - LEAD_MS)
    partition = None
    if evidence.get("topic") is not None and evidence.get("partition") is not None:
        partition = f"{evidence['topic']}-{evidence['partition']}"
    saved["link"] = run_link(saved["slug"], t_ms=t_ms, partition=partition)
    saved["t_ms"] = t_ms
    return saved
