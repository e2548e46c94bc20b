"""What saving a live room takes from its simulation, in a few milliseconds under the room's lock:
the scenario that replays the session, its history, violations and a summary. Plain data only,
so a room worker process can hand it to the web process (which writes it to the store:
``app.replay.save.save_captured``). Light on purpose: no store, no Flask (room workers may run
under PyPy)."""
import copy

from engine.scenario.document import ScenarioError, load
from engine.view import records_summary

from .live_view import mark_user_ops


def replay_document(sim):
    """``sim.replay_scenario()``, loadable. Timeline operations the run ignored (a scripted
    crash of a broker a user had already crashed) can make the merged document invalid for the
    engine's loader; those are dropped (their only trace was an "ignored" fault event).
    Returns (document, dropped)."""
    doc = mark_user_ops(sim.replay_scenario(), sim.commands)
    try:
        return load(doc), 0
    except ScenarioError:
        pass
    ignored = {(e["t_ms"], e.get("op"), e.get("broker")) for e in sim.history
               if e["type"] == "fault" and str(e.get("reason", "")).startswith("ignored:")}
    kept = [op for op in doc["timeline"] if (op["at_ms"], op["op"], op.get("broker")) not in ignored]
    doc["timeline"] = kept
    return load(doc), len(sim.replay_scenario()["timeline"]) - len(kept)


def summary_of_sim(sim):
    """Counts from the running state (loss as far as the invariants have noticed it)."""
    counts = records_summary(sim)
    lost = sum(1 for r in sim.records.values() if r.lost)
    return {"records_total": counts["total"], "acked": counts["acked"], "failed": counts["failed"],
            "lost": max(lost, counts["lost_acks_all"]), "violations": len(sim.violations)}


def capture_live(sim):
    """Everything needed to save a live simulation, taken quickly (hold the room's lock while
    calling this; write with ``save_captured`` after releasing it)."""
    doc, dropped = replay_document(sim)
    return {"scenario": doc, "events": list(sim.history), "violations": copy.deepcopy(sim.violations),
            "summary": summary_of_sim(sim), "end_ms": sim.now_ms, "finished": bool(sim.finished),
            "dropped_ops": dropped, "engine_version": sim.engine_version}
