"""Search, shrink, save, link and narrate: the whole "Can this lose data?" answer.

``hunt(...)`` returns a JSON-able report: either an honest "not found in N runs" (with the
settings searched and the time it took), or the minimal counterexample — its scenario, the
numbered narration, the saved run and a link that opens the replay paused one second before the
property broke, with the partition involved highlighted.
"""
import time

from engine.tools.faults import normalise_profile
from engine.tools.search import PROPERTIES, candidate, check_property, narrate, shrink, validate_property
from engine.simulation import Simulation

from app.replay.links import run_link

from . import finder

LEAD_MS = 1000  # the link opens this long before the break


def describe_property(prop):
    text = PROPERTIES[prop["name"]]
    return text.replace("param", str(prop["param"])) if prop.get("param") is not None else text


def hunt(base, prop, profile=None, runs=200, budget_s=None, spark=None, store=None, save=True,
         shrink_budget=400, progress=None, title=None, offload=None):
    """``offload(fn, *args)``: where the CPU-heavy parts run (the server passes a worker process:
    the search itself when Spark is not used, and always the shrinking); None = here."""
    prop = validate_property(prop)
    profile = normalise_profile(profile)
    started = time.monotonic()
    if offload is not None and spark is None:
        if progress:
            progress({"stage": "searching"})     # a worker process reports no batches: one stage
        found = offload(finder.find, base, prop, profile, runs, budget_s)
    else:
        found = finder.find(base, prop, profile, runs=runs, budget_s=budget_s, spark=spark,
                            progress=progress)
    report = {"property": prop, "property_text": describe_property(prop), "profile": profile,
              "search": found}
    if not found["found"]:
        report.update(found=False, message=f"not found in {found['runs']} runs "
                                           f"({found['stopped_by']}, {found['elapsed_s']} s)")
        return report
    if progress:
        progress({"stage": "shrinking"})
    shrunk = (offload or _here)(shrunk_counterexample, base, profile, found["seed"], prop, shrink_budget, title)
    report.update(
        found=True, scenario=shrunk["scenario"], evidence=shrunk["evidence"], narration=shrunk["narration"],
        original_operations=shrunk["original_operations"], operations=shrunk["operations"],
        shrink=shrunk["shrink"], elapsed_s=round(time.monotonic() - started, 3),
        message=f"{describe_property(prop)}: broken — {shrunk['evidence']['detail']}")
    if save and store is not None:
        report["run"] = save_rows(store, shrunk["rows"], shrunk["evidence"])
    return report


def _here(fn, *args):
    return fn(*args)


def shrunk_counterexample(base, profile, seed, prop, shrink_budget, title=None):
    """The failing seed's scenario shrunk to a minimal one, its narration and its run's rows
    (picklable: this runs in a worker process when the server searches)."""
    from app.replay.save import capture_result, prepare_captured
    original = candidate(base, profile, seed)
    shrink_started = time.monotonic()
    small, evaluations = shrink(original, prop, budget=shrink_budget)
    sim = Simulation(small)
    result = sim.run()
    broken, evidence = check_property(prop, result)
    assert broken, "a shrunk counterexample must still break the property"
    rows = prepare_captured(capture_result(sim, result), source="counterexample",
                            title=title or f"Counterexample: {evidence['detail']}"[:200])
    return {"scenario": small, "evidence": evidence, "narration": narrate(result, evidence),
            "original_operations": len(original["timeline"]), "operations": len(small["timeline"]),
            "shrink": {"evaluations": evaluations, "elapsed_s": round(time.monotonic() - shrink_started, 3)},
            "rows": rows}


def save_rows(store, rows, evidence):
    """Write a counterexample's rows (in the server); the link opens just before the break."""
    from app.replay.save import save_prepared
    return _linked(save_prepared(store, rows), evidence)


def save_counterexample(store, sim, result, evidence, title=None):
    """Store the counterexample as a run; the link opens just before the break."""
    from app.replay.save import capture_result, save_captured
    saved = save_captured(store, capture_result(sim, result),
                          title=title or f"Counterexample: {evidence['detail']}"[:200],
                          source="counterexample")
    return _linked(saved, evidence)


def _linked(saved, evidence):
    t_ms = max(0, evidence["t_ms"] - LEAD_MS)
    partition = None
    if evidence.get("topic") is not None and evidence.get("partition") is not None:
        partition = f"{evidence['topic']}-{evidence['partition']}"
    saved["link"] = run_link(saved["slug"], t_ms=t_ms, partition=partition)
    saved["t_ms"] = t_ms
    return saved
