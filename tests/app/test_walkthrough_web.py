"""The walkthroughs on the server: /api/walkthroughs in the reader's language, the library's mark,
``/?story=`` and the room's ``pause_at`` / ``run_to`` controls the guide uses."""
import re

import pytest

from app.runner import AppError
from app.runner.room import Room
from engine.scenario.library import library


def test_walkthroughs_in_english_and_chinese(http):
    en = http.get("/api/walkthroughs?lang=en").get_json()["walkthroughs"]
    assert [w["story"] for w in en] == ["isr-shrink-slow-follower", "isr-expansion", "isr-change-propagation",
                                        "broker-failure-clean-election", "hw-follower-one-fetch-behind",
                                        "not-enough-replicas"]
    shrink = en[0]
    assert shrink["story_name"] == library()["isr-shrink-slow-follower"]["name"] and shrink["kafka_version"] == "2.6"
    step = next(s for s in shrink["steps"] if s["kafka"] == "ReplicaManager#maybeShrinkIsr")
    assert step["t_ms"] == 45006 and step["title"] == "The leader removes follower 2 from the ISR"
    zh = http.get("/api/walkthroughs?lang=zh-CN").get_json()["walkthroughs"]
    step_zh = next(s for s in zh[0]["steps"] if s["kafka"] == "ReplicaManager#maybeShrinkIsr")
    assert step_zh["title"] == "领导者把追随者 2 移出 ISR"          # the catalog's words
    assert step_zh["kafka"] == "ReplicaManager#maybeShrinkIsr" and step_zh["t_ms"] == 45006
    han = re.compile(r"[\u4e00-\u9fff]")
    assert all(han.search(s["title"]) and han.search(s["text"]) for w in zh for s in w["steps"])


def test_the_library_marks_the_stories_told_step_by_step(http):
    data = http.get("/api/library").get_json()["scenarios"]
    marked = {s["id"]: s["walkthrough"] for s in data if "walkthrough" in s}
    assert marked["not-enough-replicas"] == "min-isr" and len(marked) == 6


def test_story_link_opens_that_story(http):
    page = http.get("/?story=not-enough-replicas&lang=zh-CN").get_data(as_text=True)
    assert 'data-default-scenario="not-enough-replicas"' in page
    page = http.get("/?story=no-such-story").get_data(as_text=True)
    assert 'data-default-scenario="broker-failure-clean-election"' in page


def _room():
    return Room("r1", library()["hw-follower-one-fetch-behind"], 0.0, {"kind": "library"})


def test_run_to_stops_exactly_at_the_step():
    room = _room()
    room.control("pause", 0.0)
    assert room.control("run_to", 0.0, 5506) == {"pause_at": 5506}
    for k in range(1, 50):
        room.advance(k * 0.05, 0.25)
        if not room.playing:
            break
    assert room.sim.now_ms == 5506 and room.paused_reason == "pause_at" and room.pause_at is None
    assert room.sim.brokers[1].logs["orders-0"].hw == 1          # the step's claim, on screen


def test_pause_at_stops_a_run_at_its_own_speed():
    room = _room()
    room.control("speed", 0.0, 10)
    room.control("pause_at", 0.0, 5003)
    for k in range(1, 200):
        room.advance(k * 0.05, 0.25)
        if not room.playing:
            break
    assert room.sim.now_ms == 5003 and room.paused_reason == "pause_at"
    assert room.clock()["pause_at"] is None


def test_bad_moments_are_refused():
    room = _room()
    room.advance(0.5, 0.25)
    with pytest.raises(AppError) as err:
        room.control("run_to", 0.6, 0)
    assert err.value.field == "value"
    with pytest.raises(AppError):
        room.control("pause_at", 0.6, 10 ** 9)
    with pytest.raises(AppError):
        room.control("pause_at", 0.6, "soon")
    assert room.control("pause_at", 0.6, None) == {"pause_at": None}
