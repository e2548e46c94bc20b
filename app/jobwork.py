"""What background jobs compute in a worker process (``Job.offload``): module-level functions
of picklable arguments, returning picklable results. Each takes ``cancelled`` (a callable, or
None in a worker process, where a stopped job is killed instead of asked).

They simulate and encode; they never write to the database (the server does that, in one
transaction under its write lock: ``app.replay.save.save_prepared``).
"""
import json

from engine.simulation import Simulation

from .replay.save import capture_result, prepare_captured, summary_of_sim
from .runner.limits import run_capped
from .store.packed import PackedRows


def saved_run_rows(scenario, end_ms, limits, surface, title, source, events=None, engine_version=None,
                   cancelled=None):
    """Simulate ``scenario`` to ``end_ms`` under ``surface``'s cap and encode it as a run's rows
    (``prepare_captured``). ``events`` (an imported file's history): also say whether the
    re-simulation gives the same history (``history_matches``; None without events).
    ``engine_version``: the engine that made an imported run (None = the current one); the run
    is re-simulated, and saved, as that version (docs/model.md §19)."""
    sim = Simulation(scenario, engine_version=engine_version)
    run_capped(sim, end_ms, limits, surface, cancelled=cancelled)
    if end_ms >= scenario["duration_ms"]:
        captured = capture_result(sim, sim.run())
    else:
        captured = {"scenario": scenario, "events": list(sim.history), "violations": list(sim.violations),
                    "summary": summary_of_sim(sim), "end_ms": end_ms, "finished": False, "dropped_ops": 0,
                    "engine_version": sim.engine_version}
    matches = None
    if isinstance(events, list):
        matches = json.dumps(events, sort_keys=True) == json.dumps(captured["events"], sort_keys=True)
    prepared = prepare_captured(captured, title=title, source=source)
    prepared["events"] = PackedRows(prepared["events"])     # the server unpickles them a chunk at a time
    prepared["history_matches"] = matches
    return prepared


def simulation_at(scenario, t_ms, limits, surface, engine_version=None, cancelled=None):
    """The simulation of ``scenario`` at ``t_ms`` (a fork's starting point); it pickles whole.
    ``engine_version``: the forked run's (a fork of an old run continues as its engine would)."""
    sim = Simulation(scenario, engine_version=engine_version)
    run_capped(sim, t_ms, limits, surface, cancelled=cancelled)
    return sim


def budgets_of(config):
    """The part of the server's settings ``run_capped`` reads (what a worker needs of them)."""
    return {"BUDGETS": dict(config["BUDGETS"])} if "BUDGETS" in config else {}
