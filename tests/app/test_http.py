"""HTTP: the page, the library and era tables, rooms as JSON and as replayable scenarios, limits,
security headers and the same-origin rule for Socket.IO."""
import json

from engine.scenario.library import library
from engine.simulation import Simulation

from tests.app.conftest import create, run_for


def test_the_page_is_served_with_a_strict_content_security_policy(http):
    r = http.get("/")
    assert r.status_code == 200
    body = r.get_data(as_text=True)
    assert 'type="module"' in body and "/static/js/main.js" in body and "/static/vendor/socket.io.min.js" in body
    assert "cdn" not in body.lower() and "https://" not in body
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_room_pages(http):
    assert http.get("/r/abcd1234").status_code == 200
    assert 'data-room="abcd1234"' in http.get("/r/abcd1234").get_data(as_text=True)
    assert http.get("/r/<script>").status_code == 404
    assert http.get("/r/a").status_code == 404


def test_static_files_are_local(http):
    assert http.get("/static/vendor/socket.io.min.js").status_code == 200
    assert http.get("/static/js/main.js").status_code == 200
    assert http.get("/static/css/app.css").status_code == 200


def test_library_lists_every_scenario_with_what_to_watch(http):
    data = http.get("/api/library").get_json()["scenarios"]
    assert [s["id"] for s in data] == list(library())
    assert all(len(s["description"]) > 80 for s in data)
    kip = next(s for s in data if s["id"] == "kip101-scenario-1-v0.10")
    assert kip["kafka_version"] == "0.10" and kip["topics"] == ["orders"]
    # the stories with racks say how many zones their brokers stand in; the others have no such key
    zones = {s["id"]: s["racks"] for s in data if "racks" in s}
    assert zones == {"lose-one-zone": 3, "two-replicas-in-one-zone": 3, "two-replicas-in-one-zone-unclean": 3,
                     "follower-fetch-zone": 3}


def test_eras_table(http):
    data = http.get("/api/eras").get_json()
    assert data["versions"] == ["0.10", "1.1", "2.0", "2.0.1", "2.4", "2.6", "2.7", "3.0", "3.3", "3.7",
                                "3.9-kraft", "4.1"]
    lag = data["config"]["replica.lag.time.max.ms"]
    assert lag["defaults"]["2.6"] == 30000 and lag["defaults"]["0.10"] == 10000
    assert data["config"]["min.insync.replicas"]["dynamic"] is True
    assert "2.4" not in data["config"]["delivery.timeout.ms"]["known"][:0] and data["config"]["delivery.timeout.ms"]["known"] == ["2.4", "2.6", "2.7", "3.0", "3.3", "3.7", "3.9-kraft", "4.1"]
    assert data["limits"]["MAX_BROKERS"] == 16
    # what distinguishes each era, for the pickers (docs/scenario-format.md §4)
    notes = data["notes"]
    assert list(notes) == data["versions"] and all(n["text"] and n["short"] for n in notes.values())
    assert [notes[v]["isr_path"] for v in ("2.6", "2.7", "3.7")] == ["zookeeper", "controller", "controller"]
    assert [notes[v]["api"] for v in ("2.6", "2.7", "3.0", "3.3")] == [None, "AlterIsr", "AlterIsr", "AlterPartition"]
    assert notes["2.7"]["rules_of"] == "2.7.2" and "KIP-497" in notes["2.7"]["text"]
    # KRaft eras (docs/model.md §20): no ZooKeeper session key, a broker session instead
    assert "3.9-kraft" not in data["config"]["zookeeper.session.timeout.ms"]["known"]
    assert data["config"]["broker.session.timeout.ms"]["known"] == ["3.9-kraft", "4.1"]


def test_create_a_room_over_http(http, runner):
    r = http.post("/api/rooms", json={"library": "isr-expansion"})
    assert r.status_code == 201
    body = r.get_json()
    assert body["url"] == f"/r/{body['room']}" and runner.get(body["room"]) is not None
    doc = {"name": "doc", "brokers": 2, "topics": [{"name": "t", "replication_factor": 2}]}
    assert http.post("/api/rooms", json={"scenario": doc}).status_code == 201


def test_bad_room_requests(http):
    r = http.post("/api/rooms", json={"scenario": {"brokers": 0}})
    assert r.status_code == 400 and r.get_json()["error"]["field"] == "brokers"
    assert http.post("/api/rooms", data="nonsense", content_type="application/json").status_code == 400
    assert http.post("/api/rooms", json=[1, 2]).status_code == 400
    assert http.post("/api/rooms", json={"library": "x", "evil": 1}).status_code == 400
    big = {"scenario": {"name": "x" * 400_000}}
    assert http.post("/api/rooms", json=big).status_code == 413
    r = http.get("/api/rooms/nosuchroom")
    assert r.status_code == 404 and r.get_json()["error"]["field"] == "room"
    assert http.get("/api/nothing").get_json()["ok"] is False


def test_the_session_downloads_as_a_scenario_that_replays_it(app, http, client, runner):
    room_id = create(client)
    run_for(app, 0.5)
    client.emit("command", {"op": "crash", "broker": 1}, callback=True)
    run_for(app, 0.5)
    r = http.get(f"/api/rooms/{room_id}/scenario.json")
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    doc = json.loads(r.get_data(as_text=True))
    assert {"at_ms": 501, "op": "crash", "broker": 1, "mode": "process"} in doc["timeline"] or \
        any(op["op"] == "crash" and op["broker"] == 1 and op["at_ms"] < 5000 for op in doc["timeline"])
    room = runner.get(room_id)
    replay = Simulation(doc)
    replay.advance_to(room.sim.now_ms)
    assert replay.history == room.sim.history
    info = http.get(f"/api/rooms/{room_id}").get_json()
    assert info["commands"] == 1 and info["command_list"][0]["op"] == "crash"


def test_socketio_accepts_only_same_origin_connections(http):
    ok = http.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://localhost"})
    assert ok.status_code == 200
    bad = http.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://evil.example"})
    assert bad.status_code == 400


def test_allowed_origins_come_from_the_settings():
    from app import create_app
    app = create_app({"RUNNER_AUTOSTART": False, "ALLOWED_ORIGINS": ["http://partner.example"]})
    c = app.test_client()
    assert c.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://partner.example"}).status_code == 200
    assert c.get("/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://evil.example"}).status_code == 400


def test_healthz(http):
    assert http.get("/healthz").get_json()["ok"] is True
