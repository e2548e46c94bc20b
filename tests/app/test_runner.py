"""The runner: wall time x speed -> simulated time, slices of wall time, pausing on violations,
stepping, commands while paused, slow viewers skipping frames, idle rooms going away."""
import json

import pytest

from app.config import DEFAULTS
from app.runner import AppError, Runner, core
from app.runner.room import Room, replayable, story_events
from engine.scenario.library import library
from engine.simulation import Simulation

LIB = library()


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Recorder:
    def __init__(self):
        self.sent = []          # (room, text, sids, everyone)
        self.busy = set()

    def send(self, room_id, text, sids, everyone):
        self.sent.append((room_id, text, list(sids), list(everyone)))

    def backlog(self, sid):
        return 1 if sid in self.busy else 0


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def rec():
    return Recorder()


@pytest.fixture
def runner(clock, rec):
    settings = {**DEFAULTS, "RUNNER_AUTOSTART": False, "FRAME_RATE": 30, "SECRET_KEY": "x"}
    return Runner(settings, rec, clock=clock, wall=lambda: clock.now)


def advance(runner, clock, seconds, fps=30):
    for _ in range(int(round(seconds * fps))):
        clock.now += 1 / fps
        runner.tick(clock.now)


@pytest.mark.parametrize("speed, seconds, expect_ms", [(1.0, 2.0, 2000), (0.1, 3.0, 300), (10.0, 1.0, 10000)])
def test_simulated_time_follows_wall_time_times_speed(runner, clock, speed, seconds, expect_ms):
    room = runner.create(library_name="isr-shrink-slow-follower")
    runner.join(room.id, "s1")
    room.control("speed", clock.now, speed)
    start = room.sim.now_ms
    advance(runner, clock, seconds)
    assert abs((room.sim.now_ms - start) - expect_ms) <= max(40, expect_ms * 0.02)
    assert room.actual_speed == pytest.approx(speed, rel=0.1)


def test_as_fast_as_possible_is_bounded_by_a_slice_of_wall_time(runner, clock):
    room = runner.create(library_name="isr-shrink-slow-follower")
    runner.join(room.id, "s1")
    room.control("speed", clock.now, "max")
    clock.now += 1 / 30
    import time
    started = time.perf_counter()
    runner.tick(clock.now)
    spent = time.perf_counter() - started
    assert spent < 0.25, "one tick must not run the whole scenario"
    assert 0 < room.sim.now_ms < room.sim.scenario["duration_ms"]
    assert room.behind


def test_a_slow_room_owes_at_most_a_quarter_second_of_wall_time(runner, clock):
    room = runner.create(library_name="isr-shrink-slow-follower")
    runner.join(room.id, "s1")
    clock.now += 30.0                    # the process was stalled for 30 s
    runner.tick(clock.now)
    assert room.sim.now_ms <= 260, "the backlog is dropped, not replayed at once"


def test_run_pauses_exactly_at_the_violation(runner, clock):
    """kip101-scenario-1-v0.10: acks=all record p1-99 is lost when broker 3 is elected at 18009 ms
    (6000 ms session timeout after broker 2's crash at 13000 ms, docs/model.md §8.2)."""
    room = runner.create(library_name="kip101-scenario-1-v0.10")
    runner.join(room.id, "s1")
    room.control("speed", clock.now, 100.0)
    advance(runner, clock, 2.0)
    assert not room.playing and room.paused_reason == "violation"
    assert room.sim.violations[0]["invariant"] == "acked_record_lost"
    assert room.sim.now_ms == room.sim.violations[0]["t_ms"] == 18009
    room.control("play", clock.now)
    advance(runner, clock, 1.0)
    assert room.sim.now_ms > 18009, "play continues after the alarm"


def test_step_stops_at_the_next_story_event_not_at_hw_moves(runner, clock):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "s1")
    advance(runner, clock, 0.5)
    before = len(room.sim.history)
    reply = room.control("step", clock.now)
    assert not room.playing and room.paused_reason == "step"
    new = room.sim.history[before:]
    first = next(i for i, e in enumerate(new) if e["type"] != "high_watermark")
    assert all(e["type"] == "high_watermark" for e in new[:first]), "HW moves alone do not stop a step"
    assert all(e["t_ms"] == new[first]["t_ms"] for e in new[first:]), "it stops at the first story event"
    assert room.sim.now_ms == new[first]["t_ms"]
    assert reply["events"][0]["type"] == new[first]["type"]


def test_a_command_while_paused_takes_effect_immediately(runner, clock):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "s1")
    advance(runner, clock, 0.5)
    room.control("pause", clock.now)
    t = room.sim.now_ms
    command = room.apply({"op": "crash", "broker": 2}, runner.settings)
    assert command == {"at_ms": t + 1, "op": "crash", "broker": 2, "mode": "process"}
    assert room.sim.brokers[2].state == "stopped" and room.sim.now_ms == t + 1
    assert room.sim.commands == [command]


def test_a_bad_command_is_refused_and_the_run_goes_on(runner, clock):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "s1")
    advance(runner, clock, 0.2)
    with pytest.raises(Exception) as err:
        room.apply({"op": "restart", "broker": 0}, runner.settings)
    assert "running" in str(err.value)
    t = room.sim.now_ms
    advance(runner, clock, 0.5)
    assert room.sim.now_ms > t and room.playing


def test_session_replays_exactly(runner, clock):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "s1")
    advance(runner, clock, 1.0)
    room.apply({"op": "crash", "broker": 2}, runner.settings)
    advance(runner, clock, 1.0)
    room.apply({"op": "produce", "topic": "orders", "count": 3, "acks": "all", "producer": "console"}, runner.settings)
    advance(runner, clock, 1.0)
    live = room.sim
    replay = Simulation(live.replay_scenario())
    replay.advance_to(live.now_ms)
    assert replay.history == live.history


def test_a_session_whose_command_made_a_scripted_op_pointless_still_replays():
    """unclean-election-loss crashes broker 0 at 30 s; crashing it live first makes that op
    pointless. The replay document must load and replay the session event for event (the engine
    marks it "recorded"; replayable() would otherwise leave the pointless op out)."""
    sim = Simulation(LIB["unclean-election-loss"])
    sim.advance_to(2000)
    sim.apply({"op": "crash", "broker": 0})
    sim.advance_to(31000)
    doc, dropped = replayable(sim)
    assert dropped == 0
    again = Simulation(doc)
    again.advance_to(31000)
    assert again.history == sim.history
    assert any(str(e.get("reason", "")).startswith("ignored:") for e in again.history)


def test_restart_and_replay_start_a_new_run(runner, clock, rec):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "s1")
    advance(runner, clock, 0.5)
    room.apply({"op": "crash", "broker": 2}, runner.settings)
    advance(runner, clock, 0.5)
    run = room.run_no
    room.control("replay", clock.now)
    assert room.run_no == run + 1 and room.sim.now_ms == 0
    assert [op for op in room.sim.scenario["timeline"] if op["op"] == "crash" and op["broker"] == 2]
    rec.sent.clear()
    advance(runner, clock, 0.1)
    frame = json.loads(rec.sent[0][1])
    assert frame["full"] == 1 and frame["run"] == room.frames.run
    room.control("restart", clock.now)
    assert room.sim.commands == []


def test_viewers_in_step_share_one_payload(runner, clock, rec):
    room = runner.create(library_name="broker-failure-clean-election")
    for sid in ("a", "b", "c"):
        runner.join(room.id, sid)
    advance(runner, clock, 0.2)
    rec.sent.clear()
    advance(runner, clock, 1 / 30)
    assert len(rec.sent) == 1 and sorted(rec.sent[0][2]) == ["a", "b", "c"]


def test_a_busy_viewer_skips_frames_then_catches_up_from_its_own_base(runner, clock, rec):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "fast")
    runner.join(room.id, "slow")
    advance(runner, clock, 0.2)
    base = room.viewers["slow"].last_seq
    rec.busy.add("slow")
    rec.sent.clear()
    advance(runner, clock, 0.5)
    assert all("slow" not in sids for _r, _t, sids, _e in rec.sent)
    assert room.viewers["slow"].skipped >= 10
    rec.busy.clear()
    rec.sent.clear()
    advance(runner, clock, 1 / 30)
    catch_up = [json.loads(t) for _r, t, sids, _e in rec.sent if sids == ["slow"]]
    assert len(catch_up) == 1 and catch_up[0]["base"] == base and catch_up[0]["full"] == 0
    assert catch_up[0]["seq"] == room.frames.seq


def test_a_new_viewer_gets_a_full_frame(runner, clock, rec):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "a")
    advance(runner, clock, 0.3)
    runner.join(room.id, "b")
    rec.sent.clear()
    advance(runner, clock, 1 / 30)
    by_sid = {tuple(sids): json.loads(t) for _r, t, sids, _e in rec.sent}
    assert by_sid[("b",)]["full"] == 1 and by_sid[("a",)]["full"] == 0
    assert {k for k in by_sid[("b",)]["set"] if k.startswith("b:")} == {"b:0", "b:1", "b:2"}


def test_idle_rooms_are_removed_and_watched_ones_kept(runner, clock):
    idle = runner.settings["ROOM_IDLE_S"]
    watched = runner.create(library_name="broker-failure-clean-election")
    runner.join(watched.id, "w")
    left = runner.create(library_name="broker-failure-clean-election")
    runner.join(left.id, "x")
    runner.leave("x")
    assert not left.playing and left.paused_reason == "no viewers"
    clock.now += idle - 1
    assert runner.cleanup(clock.now) == []
    clock.now += 2
    assert runner.cleanup(clock.now) == [left.id]
    assert runner.get(left.id) is None and runner.get(watched.id) is watched


def test_removed_rooms_are_collected_within_the_full_collection_period(runner, clock):
    """A removed room is a web of cycles only a full collection frees, and tune_gc's thresholds
    (engine.tools.cli) make those rare: with the collector's own runs switched off, the rooms
    removed must still be freed by the runner within FULL_COLLECT_EVERY_S, and not before."""
    import gc
    import weakref
    runner.settings["ROOM_IDLE_S"] = 5      # removed well within the period
    gc.collect()
    gc.disable()
    try:
        sims = []
        for _ in range(3):
            room = runner.create(library_name="broker-failure-clean-election")
            runner.join(room.id, "v")
            advance(runner, clock, 0.5)
            runner.leave("v")
            sims.append(weakref.ref(room.sim))
            del room
        clock.now += runner.settings["ROOM_IDLE_S"] + 1
        assert len(runner.cleanup(clock.now)) == 3
        assert all(ref() is not None for ref in sims)         # no full collection yet: cycles stay
        before = runner.stats.get("full_collections", 0)
        clock.now += core.FULL_COLLECT_EVERY_S
        runner.cleanup(clock.now)
        assert [ref() for ref in sims] == [None, None, None]
        assert runner.stats["full_collections"] == before + 1
        clock.now += 1
        runner.cleanup(clock.now)                              # nothing removed since: no pause
        assert runner.stats["full_collections"] == before + 1
    finally:
        gc.enable()


def test_rejoining_resumes_a_room_paused_for_lack_of_viewers(runner, clock):
    room = runner.create(library_name="broker-failure-clean-election")
    runner.join(room.id, "x")
    runner.leave("x")
    runner.join(room.id, "y")
    assert room.playing


def test_room_and_viewer_limits(clock, rec):
    settings = {**DEFAULTS, "RUNNER_AUTOSTART": False, "MAX_ROOMS": 2, "MAX_VIEWERS": 1, "SECRET_KEY": "x"}
    runner = Runner(settings, rec, clock=clock)
    room = runner.create()
    runner.create()
    with pytest.raises(AppError) as err:
        runner.create()
    assert err.value.field == "room"
    runner.join(room.id, "a")
    with pytest.raises(AppError):
        runner.join(room.id, "b")


def test_a_broken_room_is_paused_and_the_others_keep_running(runner, clock):
    bad = runner.create(library_name="broker-failure-clean-election")
    good = runner.create(library_name="broker-failure-clean-election")
    runner.join(bad.id, "a")
    runner.join(good.id, "b")
    bad.view.entities = lambda dirty=(): 1 / 0
    advance(runner, clock, 0.3)
    assert bad.paused_reason == "error" and good.playing and good.sim.now_ms > 250


def test_story_events_collapse_hw_moves_and_cap_the_rest():
    events = [{"type": "high_watermark", "topic": "t", "partition": 0, "broker": 1, "hw": i} for i in range(50)]
    events.insert(10, {"type": "isr_shrink", "topic": "t", "partition": 0})
    pairs, dropped = story_events(100, events, limit=5)
    assert [e["type"] for _i, e in pairs] == ["isr_shrink", "high_watermark"]
    assert pairs[-1][1]["hw"] == 49 and dropped == 0
    many = [{"type": "fault"} for _ in range(20)]
    pairs, dropped = story_events(0, many, limit=5)
    assert dropped == 15 and [i for i, _e in pairs] == [15, 16, 17, 18, 19]


def test_runner_api_for_other_parts_of_the_app(runner):
    """create(scenario document) -> room; get(room) gives the Simulation and its recorded commands."""
    doc = dict(LIB["broker-failure-clean-election"], name="from a document")
    room = runner.create(scenario=doc)
    same = runner.get(room.id)
    assert same is room and isinstance(room.sim, Simulation) and room.commands == []
    assert room.sim.scenario["name"] == "from a document"
    with pytest.raises(AppError):
        runner.create(scenario={**doc, "brokers": 99})


def test_one_address_cannot_fill_the_server(clock, rec):
    """At MAX_ROOMS_PER_ADDRESS the address's least recently watched unwatched room makes way;
    when all of them are being watched, creating another is refused."""
    settings = {**DEFAULTS, "RUNNER_AUTOSTART": False, "MAX_ROOMS_PER_ADDRESS": 2, "SECRET_KEY": "x"}
    runner = Runner(settings, rec, clock=clock)
    first = runner.create(owner="10.0.0.1")
    second = runner.create(owner="10.0.0.1")
    runner.join(second.id, "s2")
    third = runner.create(owner="10.0.0.1")
    assert runner.get(first.id) is None and runner.get(second.id) is second
    runner.join(third.id, "s3")
    with pytest.raises(AppError) as err:
        runner.create(owner="10.0.0.1")
    assert err.value.field == "room" and "2 simulations" in err.value.message
    assert runner.create(owner="10.0.0.2").owner == "10.0.0.2"


def test_a_room_stops_at_the_record_limit(clock, rec):
    settings = {**DEFAULTS, "RUNNER_AUTOSTART": False, "MAX_RECORDS": 100, "SECRET_KEY": "x"}
    runner = Runner(settings, rec, clock=clock)
    room = runner.create(library_name="isr-expansion")      # 50 records/s
    runner.join(room.id, "a")
    advance(runner, clock, 4.0)
    assert not room.playing and room.paused_reason == "record limit"
    assert 100 <= len(room.sim.records) <= 110
    with pytest.raises(AppError) as err:
        room.control("play", clock.now)
    assert "limit" in err.value.message


def large_cluster():
    return {"name": "large", "brokers": 16, "duration_ms": 600_000,
            "topics": [{"name": "t", "partitions": 256, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "rate_per_s": 2000, "acks": "all"}]}


def test_large_rooms_send_fewer_frames_a_small_room_keeps_its_frame_rate(runner, clock, rec, monkeypatch):
    """Frames are fair: each watched room earns an equal share of the frame budget per tick, so
    rooms whose frames are expensive (16 brokers, 256 partitions) send them less often, while a
    small library room still gets (almost) every tick's frame.

    How much less often depends on the machine (a frame's cost is CPU time against a budget in
    seconds), so the large rooms are held to what the budget allows them, measured: the CPU
    their frames really took may not exceed the shares they were given, plus the credit a room
    may hold (two frames) and the last frame's overshoot."""
    spent, earned, dearest, shared = {}, {}, {}, {}
    real_account, real_shares = core.account, core.frame_shares

    def account(room, cost_s, throttled):
        spent[room.id] = spent.get(room.id, 0.0) + cost_s
        dearest[room.id] = max(dearest.get(room.id, 0.0), cost_s)
        if not throttled:        # a tick in which its cost fitted its fair part: it was owed all of it
            earned[room.id] = earned.get(room.id, 0.0) + cost_s
        return real_account(room, cost_s, throttled)

    def frame_shares(costs, budget_s):
        shares = real_shares(costs, budget_s)
        for rid, share in shares.items():
            earned[rid] = earned.get(rid, 0.0) + (share or 0.0)
            shared[rid] = shared.get(rid, 0.0) + (share or 0.0)
        return shares
    monkeypatch.setattr(core, "account", account)
    monkeypatch.setattr(core, "frame_shares", frame_shares)
    # a budget the large rooms cannot fit on any machine (frames got cheap enough with orjson that
    # on a fast one all four fitted 0.25 of a period and nobody was throttled), the small one can
    monkeypatch.setitem(runner.settings, "FRAME_BUDGET", 0.05)
    small = runner.create(library_name="isr-expansion")
    runner.join(small.id, "small-viewer")
    large = [runner.create(scenario=large_cluster()) for _ in range(3)]
    for i, room in enumerate(large):
        runner.join(room.id, f"large-{i}")
        room.control("speed", clock.now, "max")
    advance(runner, clock, 0.5)                       # costs measured, credits settled
    rec.sent.clear()
    spent.clear()
    earned.clear()
    shared.clear()
    ticks = 45
    advance(runner, clock, ticks / 30)
    frames = {}
    for room_id, _text, _sids, _everyone in rec.sent:
        frames[room_id] = frames.get(room_id, 0) + 1
    assert frames.get(small.id, 0) >= 0.8 * ticks, frames
    for room in large:
        assert 0 < frames.get(room.id, 0) < frames[small.id], frames
        assert shared[room.id] > 0, "a large room must be throttled (a share, not every frame)"
        # the credit held at the start (at most two frames) and the last frame's overshoot
        assert spent[room.id] <= earned[room.id] + 3 * dearest[room.id], (spent, earned, dearest)
    assert runner.stats["frames_deferred"] > 0


def test_frame_shares_are_max_min_fair():
    """Cheap rooms get all they need (None: never throttled); expensive ones split the rest."""
    from app.runner.fairness import frame_shares
    shares = frame_shares({"small": 0.001, "tiny": 0.0, "big1": 0.040, "big2": 0.090}, budget_s=0.008)
    assert shares["small"] is None and shares["tiny"] is None
    assert shares["big1"] == shares["big2"] == pytest.approx((0.008 - 0.001) / 2)
    assert frame_shares({"alone": 0.005}, 0.008) == {"alone": None}
    assert frame_shares({"alone": 0.050}, 0.008) == {"alone": 0.008}


def test_one_expensive_frame_does_not_make_a_small_room_expensive():
    """A 60 ms garbage collection that lands in a 1 ms frame counts for at most 3x the estimate
    (plus 1 ms), so the room stays under an equal share of an 8 ms budget among four rooms; a room
    that really grew reaches its new cost within a few frames."""
    from types import SimpleNamespace

    from app.runner.fairness import account
    room = SimpleNamespace(frame_cost_s=0.001, frame_credit=0.0)
    account(room, 0.060, throttled=False)
    assert room.frame_cost_s == pytest.approx(0.7 * 0.001 + 0.3 * 0.004)
    assert room.frame_cost_s < 0.008 / 4
    for _ in range(12):
        account(room, 0.060, throttled=False)
    assert room.frame_cost_s > 0.050


def test_late_ticks_shrink_the_simulation_slices_and_fitting_ones_grow_them_back():
    from app.runner.core import next_pace
    pace = 1.0
    for _ in range(5):
        pace = next_pace(pace, spent_s=0.050, period_s=1 / 30)
    assert pace == pytest.approx(0.8 ** 5)
    assert next_pace(0.1, 0.5, 1 / 30) == 0.1                 # never below a tenth
    for _ in range(100):
        pace = next_pace(pace, spent_s=0.010, period_s=1 / 30)
    assert pace == 1.0
