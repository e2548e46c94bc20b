"""The replay service over the store: indexes built once and signed, loaded by a restarted
server, never loaded when tampered with; cursors; steps; forks."""
import pytest
from sqlalchemy import update

from app.replay.save import capture_live, capture_result, save_captured
from app.replay.service import ReplayError, ReplayService, snapshot_key
from app.store import runs
from app.store.db import writing
from app.store.models import RunSnapshot
from engine.scenario.library import library
from engine.simulation import ENGINE_VERSION, Simulation
from engine.view import cluster_view

KEY = b"k" * 32


@pytest.fixture
def saved(store):
    doc = library()["zombie-leader-after-pause"]
    sim = Simulation(doc)
    result = sim.run()
    return save_captured(store, capture_result(sim, result), source="headless"), doc


def straight_view(doc, t):
    sim = Simulation(doc)
    sim.advance_to(t)
    return cluster_view(sim)


def test_view_at_time_equals_straight_run_and_index_is_reused(store, saved):
    (run, doc) = saved
    service = ReplayService(store, KEY)
    for t in (0, 12345, 40000, 60000):
        got = service.view(run["id"], t_ms=t)
        assert got["view"] == straight_view(doc, t) and got["t_ms"] == t
    assert service.stats["builds"] == 1 and service.seeker(run["id"]).info["history_matches"] is True
    restarted = ReplayService(store, KEY)            # a new server process on the same database
    assert restarted.view(run["id"], t_ms=33333)["view"] == straight_view(doc, 33333)
    assert restarted.stats == {"builds": 0, "loads": 1, "build_ms": 0}


def test_cursor_moves_forward_without_restoring(store, saved):
    (run, doc) = saved
    service = ReplayService(store, KEY)
    first = service.view(run["id"], t_ms=1000)
    seeker = service.seeker(run["id"])
    restores = seeker.stats["restores"]
    token = first["cursor"]
    for t in range(1100, 5000, 100):                  # playing: small steps forward
        got = service.view(run["id"], t_ms=t, cursor=token)
        assert got["cursor"] == token
    assert seeker.stats["restores"] == restores
    assert got["view"] == straight_view(doc, 4900)
    back = service.view(run["id"], t_ms=500, cursor=token)   # a jump back restores
    assert seeker.stats["restores"] == restores + 1 and back["view"] == straight_view(doc, 500)


def test_steps_through_the_service(store, saved):
    (run, doc) = saved
    service = ReplayService(store, KEY)
    straight = Simulation(doc)
    token = None
    for _ in range(30):
        straight.step_event()
        got = service.view(run["id"], step="forward", cursor=token)
        token = got["cursor"]
        assert got["history_len"] == len(straight.history) and got["view"] == cluster_view(straight)
    before = got["history_len"]
    got = service.view(run["id"], step="back", cursor=token)
    assert got["history_len"] < before
    again = service.view(run["id"], step="forward", cursor=got["cursor"])
    assert again["history_len"] == before and again["view"] == cluster_view(straight)


def test_tampered_snapshots_are_never_loaded(store, saved):
    (run, doc) = saved
    ReplayService(store, KEY).seeker(run["id"])
    with writing(store) as conn:                      # someone edits the stored pickles
        conn.execute(update(RunSnapshot).values(state=b"\x80\x03evil"))
    service = ReplayService(store, KEY)
    assert service.view(run["id"], t_ms=59000)["view"] == straight_view(doc, 59000)
    assert service.stats["builds"] == 1                 # rebuilt instead of unpickling it
    with writing(store) as conn:
        conn.execute(update(RunSnapshot).where(RunSnapshot.seq == 0).values(pool=b"x"))
    other = ReplayService(store, KEY)
    assert other.view(run["id"], t_ms=100)["view"] == straight_view(doc, 100)
    assert other.stats["builds"] == 1 and other.stats["loads"] == 0


def test_a_different_key_rebuilds(store, saved):
    (run, doc) = saved
    ReplayService(store, KEY).seeker(run["id"])
    other = ReplayService(store, b"z" * 32)
    other.view(run["id"], t_ms=10)
    assert other.stats["builds"] == 1


def test_saved_live_session_replays_what_was_seen(store):
    doc = library()["broker-failure-clean-election"]
    live = Simulation(doc)
    live.advance_to(7000)
    live.apply({"op": "pause", "broker": 2, "for_ms": 3000})
    live.advance_to(15000)
    live.apply({"op": "produce", "topic": live.scenario["topics"][0]["name"], "count": 5})
    live.advance_to(21000)
    seen = {t: None for t in (6999, 7001, 9500, 15002, 21000)}
    replay_check = Simulation(live.replay_scenario())
    for t in seen:
        replay_check.advance_to(t)
        seen[t] = cluster_view(replay_check)
    saved = save_captured(store, capture_live(live), title="live")
    run = runs.get_run(store, saved["id"])
    assert run["end_ms"] == 21000 and run["finished"] is False and run["source"] == "live"
    service = ReplayService(store, KEY)
    for t, view in seen.items():
        assert service.view(saved["id"], t_ms=t)["view"] == view
    assert service.view(saved["id"], t_ms=10 ** 9)["t_ms"] == 21000
    assert service.seeker(saved["id"]).info["history_matches"] is True
    assert cluster_view(live) == service.view(saved["id"], t_ms=21000)["view"]


def test_history_mismatch_is_recorded(store):
    doc = library()["kip101-scenario-1-v0.10"]
    sim = Simulation(doc)
    captured = capture_result(sim, sim.run())
    captured["events"] = captured["events"][:-1]        # not what the scenario replays to
    saved = save_captured(store, captured)
    service = ReplayService(store, KEY)
    assert service.seeker(saved["id"]).info["history_matches"] is False
    assert runs.seek_index(store, saved["id"], ENGINE_VERSION)["history_matches"] is False


def test_fork_simulation_is_independent(store, saved):
    (run, doc) = saved
    service = ReplayService(store, KEY)
    fork = service.fork_simulation(run["id"], 20000)
    fork.apply({"op": "crash", "broker": 1, "mode": "power"})
    fork.run()
    assert service.view(run["id"], t_ms=30000)["view"] == straight_view(doc, 30000)


def test_unknown_run(store):
    with pytest.raises(ReplayError) as err:
        ReplayService(store, KEY).view(424242, t_ms=0)
    assert err.value.field == "run"


def test_snapshot_key_is_kept_in_the_instance_folder(tmp_path):
    key = snapshot_key(str(tmp_path))
    assert len(key) >= 32 and snapshot_key(str(tmp_path)) == key
    assert (tmp_path / "snapshot.key").stat().st_mode & 0o777 == 0o600
    assert snapshot_key(str(tmp_path), configured="from settings") == b"from settings"


def test_worker_process_builds(store, saved):
    (run, doc) = saved
    service = ReplayService(store, KEY, worker_processes=True)
    try:
        assert service.view(run["id"], t_ms=4321)["view"] == straight_view(doc, 4321)
    finally:
        service.close()


def test_loaded_seekers_are_evicted_by_measured_size_not_count(store):
    ids = []
    for name in ("zombie-leader-after-pause", "isr-expansion", "controlled-shutdown"):
        sim = Simulation(library()[name])
        ids.append(save_captured(store, capture_result(sim, sim.run()), source="headless")["id"])
    for i in ids:
        ReplayService(store, KEY).seeker(i)                             # build and store the indexes
    measure = ReplayService(store, KEY)
    sizes = [measure.seeker(i).nbytes() for i in ids]                   # as a server loads them
    assert all(size > 10_000 for size in sizes)
    # room for the two newest by count, but bytes for less than two: only the newest stays
    budget = sizes[-1] + min(sizes[:-1]) - 1
    service = ReplayService(store, KEY, max_seekers=10, max_bytes=budget)
    for i in ids:
        service.seeker(i)
    assert list(service._seekers) == [ids[-1]]                          # noqa: SLF001
    assert service.cached_bytes() <= budget
    roomy = ReplayService(store, KEY, max_seekers=10, max_bytes=sum(sizes) + 1)
    for i in ids:
        roomy.seeker(i)
    assert list(roomy._seekers) == ids                                  # noqa: SLF001
