"""KRaft eras in the app (docs/model.md §20): a live room, a saved run, its replay frames and its
timeline work, and the frames carry the KRaft fields."""
from tests.engine.test_kraft import scenario
from tests.replay.test_http import app, http  # noqa: F401 (fixtures)

from app import runner_of


def test_a_live_room_and_a_saved_run_in_a_kraft_era(app, http):  # noqa: F811
    doc = scenario("4.1", [{"op": "crash", "broker": 0, "at_ms": 5000}], 15000)
    room = runner_of(app).create(scenario=doc)
    with room.lock:
        room.sim.advance_to(15000)
    reply = http.post("/api/runs", json={"room": room.id, "title": "kraft"})
    assert reply.status_code == 201, reply.json
    run_id = reply.json["id"]
    frame = http.get(f"/api/replay/{run_id}/frame?t=14900").json
    assert frame["ok"], frame
    broker = frame["frame"]["set"]["b:0"]
    assert broker["fenced"] is True and broker["zk"] is None and broker["state"] == "stopped"
    assert frame["frame"]["set"]["p:t-0"]["partition_epoch"] >= 1
    timeline = http.get(f"/api/replay/{run_id}/timeline").json
    assert any(kind == "broker_fenced" for _i, _t, kind in timeline["story"])
    saved = http.post("/api/runs", json={"scenario": doc})
    assert saved.status_code in (201, 202), saved.json
