"""A live room's time series since the start of its run (app/runner/series.py): sampled as time
moves on, bounded in samples per partition and numbers per room, reset by a restart, and served
to a page that reloads (GET /api/rooms/<room>/series)."""
from app.runner import series as live_series
from app.runner.series import LiveSeries
from engine.scenario.library import library
from engine.simulation import Simulation

from tests.app.conftest import create, run_for


def test_samples_spread_over_the_whole_run_and_stay_bounded():
    sim = Simulation(library()["broker-failure-clean-election"])
    s = LiveSeries()
    for t in range(0, 60001, 20):
        sim.advance_to(t)
        s.observe(sim)
    part = s.parts["orders-0"]
    assert len(part["points"]) <= live_series.MAX_POINTS
    assert part["points"][0][0] == 0 and part["points"][-1][0] >= 59000
    times = [p[0] for p in part["points"]]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert max(b - a for a, b in zip(times, times[1:])) <= 2 * s.step_ms
    got = s.of(sim, "orders-0")
    assert got["brokers"] == part["brokers"] and got["points"][-1][0] == sim.now_ms
    assert s.of(sim, "nope-0") is None


def test_many_partitions_share_the_room_budget():
    doc = library()["broker-failure-clean-election"]
    topic = {k: v for k, v in doc["topics"][0].items() if k != "assignment"}
    doc = {**doc, "topics": [{**topic, "partitions": 200}]}
    sim = Simulation(doc)
    s = LiveSeries()
    for t in range(0, 20001, 50):
        sim.advance_to(t)
        s.observe(sim)
    numbers = sum(len(p["points"]) * (2 + 2 * len(p["brokers"])) for p in s.parts.values())
    assert len(s.parts) == 200
    assert numbers <= live_series.BUDGET + 200 * 8 * 2


def test_a_reloaded_page_gets_the_rooms_history(app, client, http):
    room = create(client)
    run_for(app, 3.0)
    reply = http.get(f"/api/rooms/{room}/series?partition=orders-0").get_json()
    assert reply["ok"] and reply["brokers"] and reply["run"] >= 1
    assert reply["points"][0][0] == 0 and reply["points"][-1][0] >= 2500
    assert http.get(f"/api/rooms/{room}/series?partition=nope-0").get_json()["ok"] is False
    assert http.get("/api/rooms/zzzzzzzz/series?partition=orders-0").status_code == 404
