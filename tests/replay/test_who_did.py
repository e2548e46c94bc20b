"""Who did what survives a save: a live session's own commands are marked ``"by": "user"`` in the
saved scenario (docs/scenario-format.md §2.2), the replay labels them "user" like the live page
did, the history is the same with or without the marks, and a run saved before them (no ``by``)
loads and replays exactly as before."""
import copy
import json

import pytest

from app.replay.frames import ReplayViewer
from app.replay.save import capture_live, replay_document, save_captured
from app.replay.service import ReplayService
from app.runner.live_view import LiveView
from app.store import runs
from engine.scenario.document import ScenarioError, load
from engine.scenario.library import library
from engine.simulation import Simulation

KEY = b"w" * 32


def live_session():
    """broker-failure-clean-election (its script crashes broker 1 at 5 s) with a viewer's pause and
    produce."""
    live = Simulation(library()["broker-failure-clean-election"])
    live.advance_to(2000)
    live.apply({"op": "pause", "broker": 2, "for_ms": 1500})
    live.advance_to(8000)
    live.apply({"op": "produce", "topic": live.scenario["topics"][0]["name"], "count": 3})
    live.advance_to(12000)
    return live


def fault_origins(sim):
    view = LiveView(sim)
    view.history_seen = 0
    _start, fresh = view.new_history()
    return [(e["t_ms"], e["op"], e["origin"]) for e in fresh if e["type"] == "fault"]


def test_saved_document_marks_the_viewers_commands_and_replays_the_same_history():
    live = live_session()
    doc, dropped = replay_document(live)
    assert dropped == 0 and doc["recorded"] is True
    by_user = [(op["at_ms"], op["op"]) for op in doc["timeline"] if op.get("by") == "user"]
    assert by_user == [(c["at_ms"], c["op"]) for c in live.commands]
    scripted = [op for op in doc["timeline"] if "by" not in op]
    assert any(op["op"] == "crash" for op in scripted)
    replay = Simulation(doc)
    replay.advance_to(live.now_ms)
    assert json.dumps(replay.history, sort_keys=True) == json.dumps(live.history, sort_keys=True)
    # the live page's labels, from the replay alone (the replay has no live commands of its own)
    assert fault_origins(replay) == fault_origins(live)
    assert {o for _t, op, o in fault_origins(replay) if op in ("pause", "produce")} == {"user"}
    assert {o for _t, op, o in fault_origins(replay) if op == "crash"} == {"scenario"}


def test_a_document_without_marks_replays_byte_identically():
    live = live_session()
    doc, _ = replay_document(live)
    old = copy.deepcopy(doc)
    for op in old["timeline"]:
        op.pop("by", None)
    marked, unmarked = Simulation(doc).run(), Simulation(old).run()
    assert json.dumps(marked, sort_keys=True) == json.dumps(unmarked, sort_keys=True)
    assert all(o == "scenario" for _t, _op, o in fault_origins(Simulation(old)))


def test_by_takes_only_user():
    doc = copy.deepcopy(library()["broker-failure-clean-election"])
    doc["timeline"][0]["by"] = "someone"
    with pytest.raises(ScenarioError) as err:
        load(doc)
    assert err.value.field.endswith(".by")
    doc["timeline"][0]["by"] = "user"
    assert load(doc)["timeline"][0]["by"] == "user"


def test_replay_frames_after_a_jump_say_you_did(store):
    saved = save_captured(store, capture_live(live_session()), title="who")
    run = runs.get_run(store, saved["id"])
    assert sum(1 for op in run["scenario"]["timeline"] if op.get("by") == "user") == 2
    service = ReplayService(store, KEY)
    seeker = service.seeker(saved["id"])
    assert seeker.info["history_matches"] is True
    sim = seeker.at_time(11000)
    payload = json.loads(ReplayViewer("t").frame(sim, {"t_ms": sim.now_ms}, 0, 0))
    faults = [e for e in payload["events"] if e["type"] == "fault"]
    assert {(e["op"], e["origin"]) for e in faults} >= {("pause", "user"), ("produce", "user"), ("crash", "scenario")}
