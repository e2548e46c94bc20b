"""FrameBuilder: a viewer that applies the payload for its base always ends up with exactly the
room's current entities, whatever frames it skipped (deltas from any base, tombstones, resets)."""
import json

from hypothesis import given, settings, strategies as st

from app.runner.frames import KEEP_FRAMES, FrameBuilder


def apply(state, payload):
    frame = json.loads(payload)
    if frame["full"]:
        state = {}
    state = dict(state)
    state.update(frame["set"])
    for key in frame["del"]:
        state.pop(key, None)   # "drop it if you have it": a viewer may never have seen it
    return state, frame


def test_first_payload_is_full_and_later_ones_are_deltas():
    fb = FrameBuilder()
    assert fb.update({"a": {"x": 1}, "b": [1, 2]}, {"t_ms": 1}, 5.0)
    first = json.loads(fb.payload(0))
    assert first["full"] == 1 and first["base"] == 0 and first["set"] == {"a": {"x": 1}, "b": [1, 2]}
    assert fb.update({"a": {"x": 2}, "b": [1, 2]}, {"t_ms": 2}, 6.0)
    delta = json.loads(fb.payload(1))
    assert delta["full"] == 0 and delta["base"] == 1 and delta["seq"] == 2
    assert delta["set"] == {"a": {"x": 2}}, "an unchanged entity is not re-sent"
    assert delta["clock"] == {"t_ms": 2} and delta["wall_ms"] == 6.0


def test_nothing_changed_means_no_frame():
    fb = FrameBuilder()
    fb.update({"a": 1 and {"v": 1}}, {"t": 1}, 0.0)
    assert not fb.update({"a": {"v": 1}}, {"t": 1}, 1.0)
    assert fb.seq == 1
    assert fb.touch({"t": 2}, 2.0) and fb.seq == 2
    assert json.loads(fb.payload(1))["set"] == {}


def test_removed_entities_reach_viewers_that_skipped_frames():
    fb = FrameBuilder()
    fb.update({"z:/a": {"v": 0}, "z:/b": {"v": 0}}, {}, 0.0)
    fb.update({"z:/a": {"v": 0}}, {"t": 1}, 0.0)           # /b deleted at seq 2
    fb.update({"z:/a": {"v": 1}}, {"t": 2}, 0.0)
    delta = json.loads(fb.payload(1))
    assert delta["del"] == ["z:/b"] and delta["set"] == {"z:/a": {"v": 1}}
    assert json.loads(fb.payload(2))["del"] == []


def test_events_are_numbered_and_catch_up_collects_every_batch():
    fb = FrameBuilder()
    fb.update({"a": {}}, {"t": 0}, 0.0, events=[(0, {"type": "x"})])
    fb.update({"a": {}}, {"t": 1}, 0.0, events=[(1, {"type": "y"}), (2, {"type": "z"})])
    fb.update({"a": {}}, {"t": 2}, 0.0, events=[(3, {"type": "w"})])
    assert [e["i"] for e in json.loads(fb.payload(1))["events"]] == [1, 2, 3]
    assert [e["i"] for e in json.loads(fb.payload(3))["events"]] == []
    assert [e["i"] for e in json.loads(fb.payload(0))["events"]] == [0, 1, 2, 3]


def test_reset_forces_full_frames_for_every_base():
    fb = FrameBuilder()
    fb.update({"a": {"v": 1}}, {}, 0.0)
    fb.reset()
    fb.update({"b": {"v": 1}}, {}, 0.0)
    for base in (0, 1):
        frame = json.loads(fb.payload(base))
        assert frame["full"] == 1 and frame["set"] == {"b": {"v": 1}} and frame["run"] == 1


def test_bases_older_than_the_kept_history_get_a_full_frame():
    fb = FrameBuilder()
    for i in range(KEEP_FRAMES + 5):
        fb.update({"a": {"v": i}}, {"t": i}, 0.0)
    assert json.loads(fb.payload(1))["full"] == 1
    assert json.loads(fb.payload(fb.seq - 1))["full"] == 0


def test_payload_is_serialised_once_per_base():
    fb = FrameBuilder()
    fb.update({"a": {"v": 1}}, {}, 0.0)
    fb.update({"a": {"v": 2}}, {"t": 1}, 0.0)
    assert fb.payload(1) is fb.payload(1)


entity_maps = st.dictionaries(st.sampled_from([f"k{i}" for i in range(8)]),
                              st.dictionaries(st.sampled_from("xyz"), st.integers(0, 3), max_size=2), max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.lists(entity_maps, min_size=1, max_size=25), st.data())
def test_any_viewer_reconstructs_the_current_state(maps, data):
    fb = FrameBuilder()
    viewers = [({}, 0) for _ in range(3)]
    for i, entities in enumerate(maps):
        fb.update(entities, {"t": i}, float(i))
        for n, (state, seq) in enumerate(viewers):
            if data.draw(st.booleans(), label=f"viewer {n} receives frame {i}"):
                state, frame = apply(state, fb.payload(seq))
                assert frame["seq"] == fb.seq
                viewers[n] = (state, fb.seq)
    for state, seq in viewers:
        state, _ = apply(state, fb.payload(seq)) if seq != fb.seq else (state, None)
        assert state == maps[-1]
