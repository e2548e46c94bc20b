"""Saving simulations as runs: the facts of a live session or of a finished headless run.

A live session is saved as the scenario that replays it (``Simulation.replay_scenario``: the
scenario with the recorded live commands merged into its timeline, each marked ``"by": "user"``
so the replay can say who did what), its history up to now (``app.runner.capture``),
its violations and a summary. Everything is read under the caller's lock in a few
milliseconds (list copies); the database write happens after, outside it, in one transaction.
"""
import copy
import time

from engine.simulation import ENGINE_VERSION

from ..runner.capture import capture_live, replay_document, summary_of_sim  # noqa: F401 - their home
from ..store import runs as store_runs


def summary_of_result(result):
    records = result["records"]
    return {"records_total": len(records),
            "acked": sum(1 for r in records if r["status"] == "acked"),
            "failed": sum(1 for r in records if r["status"] == "failed"),
            "lost": sum(1 for r in records if r["lost"]),
            "violations": len(result["violations"])}


def capture_result(sim, result):
    """A finished headless run (``result`` = ``sim.run()``)."""
    return {"scenario": copy.deepcopy(sim.scenario), "events": result["history"],
            "violations": result["violations"], "summary": summary_of_result(result),
            "end_ms": result["end_ms"], "finished": bool(sim.finished), "dropped_ops": 0,
            "engine_version": sim.engine_version}


def prepare_captured(captured, *, title=None, source="live", parent_run_id=None, fork_t_ms=None):
    """The encoded rows of a captured run (CPU work: done in a job's worker process)."""
    prepared = store_runs.prepare_run(
        scenario=captured["scenario"], engine_version=captured.get("engine_version", ENGINE_VERSION),
        end_ms=captured["end_ms"], finished=captured["finished"], summary=captured["summary"],
        events=captured["events"], violations=captured["violations"], title=title, source=source,
        parent_run_id=parent_run_id, fork_t_ms=fork_t_ms)
    prepared["dropped_ops"] = captured["dropped_ops"]
    return prepared


def save_prepared(engine, prepared):
    """Write ``prepare_captured``'s rows in one transaction (in the server: one write lock)."""
    started = time.perf_counter()
    saved = store_runs.insert_prepared(engine, prepared)
    saved["save_ms"] = round((time.perf_counter() - started) * 1000, 1)
    saved["dropped_ops"] = prepared["dropped_ops"]
    return saved


def save_captured(engine, captured, *, title=None, source="live", parent_run_id=None, fork_t_ms=None):
    started = time.perf_counter()
    saved = save_prepared(engine, prepare_captured(captured, title=title, source=source,
                                                   parent_run_id=parent_run_id, fork_t_ms=fork_t_ms))
    saved["save_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return saved
