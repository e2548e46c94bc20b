"""The HTTP layer of saved runs, replay, links and compare: every input checked, errors name the
field, a bad link is a clear page (never a server error), and replay frames are exact."""
import json

import pytest

from app import create_app, runner_of
from app.runner.live_view import partition_entity
from engine.scenario.library import library
from engine.simulation import Simulation

LIB = library()


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db"})
    yield application
    runner_of(application).stop()
    application.extensions["isrlab_runs"].close()


@pytest.fixture
def http(app):
    return app.test_client()


def saved(http, name="acks1-loss-on-failover", title=None):
    body = {"scenario": LIB[name]}
    if title:
        body["title"] = title
    reply = http.post("/api/runs", json=body)
    assert reply.status_code == 201, reply.json
    return reply.json


def error_of(reply, status=400):
    assert reply.status_code == status, reply.data[:300]
    body = reply.json
    assert body["ok"] is False and body["error"]["message"]
    return body["error"]["field"]


def test_save_live_room_and_list(app, http):
    runner = runner_of(app)
    room = runner.create(library_name="isr-expansion")
    with room.lock:
        room.sim.advance_to(9000)
        room.sim.apply({"op": "crash", "broker": 1})
        room.sim.advance_to(12000)
    reply = http.post("/api/runs", json={"room": room.id, "title": "from the live page"})
    assert reply.status_code == 201
    run = http.get(f"/api/runs/{reply.json['id']}").json["run"]
    assert run["source"] == "live" and run["end_ms"] == 12000 and run["title"] == "from the live page"
    assert any(op["op"] == "crash" and op["at_ms"] == 9001 for op in run["scenario"]["timeline"])
    listed = http.get("/api/runs?facets=1").json
    assert listed["total"] == 1 and listed["runs"][0]["links"]["short"].startswith("/s/")
    assert listed["facets"]["eras"] == [["2.6", 1]]
    assert error_of(http.post("/api/runs", json={"room": "nope"}), 404) == "room"
    assert error_of(http.post("/api/runs", json={"room": room.id, "title": ""})) == "title"
    assert error_of(http.post("/api/runs", json={})) == "body"
    assert error_of(http.post("/api/runs", json={"room": 5})) == "room"
    assert error_of(http.post("/api/runs", json=[1])) == "body"


@pytest.mark.parametrize("query,field", [("outcome=bad", "outcome"), ("limit=0", "limit"), ("limit=x", "limit"),
                                         ("offset=-1", "offset"), ("nonsense=1", "nonsense"), ("q=" + "x" * 200, "q")])
def test_list_rejects_bad_parameters(http, query, field):
    assert error_of(http.get("/api/runs?" + query)) == field


def test_rename_delete_events_export_import(http):
    run = saved(http, title="first")
    rid = run["id"]
    assert http.patch(f"/api/runs/{rid}", json={"title": "second"}).json["title"] == "second"
    assert error_of(http.patch(f"/api/runs/{rid}", json={"title": "x" * 300})) == "title"
    assert error_of(http.patch(f"/api/runs/{rid}", json={"name": "x"})) == "name"
    assert error_of(http.patch("/api/runs/999", json={"title": "x"}), 404) == "run"
    events = http.get(f"/api/runs/{rid}/events?start=5&limit=3").json["events"]
    straight = Simulation(LIB["acks1-loss-on-failover"]).run()["history"]
    assert events == straight[5:8]
    exported = http.get(f"/api/runs/{rid}/export")
    assert exported.headers["Content-Disposition"].startswith("attachment")
    doc = json.loads(exported.data)
    assert doc["format"] == "isrlab-run" and doc["events"] == straight
    imported = http.post("/api/runs/import", data=exported.data, content_type="application/json")
    assert imported.status_code == 201 and imported.json["history_matches"] is True
    doc["events"] = doc["events"][:-1]
    doc["title"] = "tampered"
    again = http.post("/api/runs/import", json=doc)
    assert again.status_code == 201 and again.json["history_matches"] is False   # re-simulated, not trusted
    # a run file larger than the server's 300 KB request bound is read: the import route has its
    # own 64 MB bound (the guard parsed the body before the route could raise it)
    big = http.post("/api/runs/import", json={**doc, "summary": {"note": "x" * 400_000}})
    assert big.status_code == 201, big.json
    assert error_of(http.post("/api/runs/import", json={**doc, "format": "other"})) == "format"
    assert error_of(http.post("/api/runs/import", json={**doc, "end_ms": -5})) == "end_ms"
    assert error_of(http.post("/api/runs/import", json={**doc, "scenario": {"brokers": 0}})) == "brokers"
    assert error_of(http.post("/api/runs/import", json={**doc, "scenario": {**doc["scenario"], "brokers": 40}})) == "brokers"
    assert http.delete(f"/api/runs/{rid}").json["deleted"] == rid
    assert error_of(http.delete(f"/api/runs/{rid}"), 404) == "run"
    assert error_of(http.get(f"/api/runs/{rid}"), 404) == "run"


def test_replay_frames_are_exact_and_move_a_cursor(http):
    rid = saved(http, "zombie-leader-after-pause")["id"]
    first = http.get(f"/api/replay/{rid}/frame?t=20000").json
    assert first["t_ms"] == 20000 and first["frame"]["full"] == 1
    sim = Simulation(LIB["zombie-leader-after-pause"])
    sim.advance_to(20000)
    key = next(k for k in first["frame"]["set"] if k.startswith("p:"))[2:]
    assert first["frame"]["set"]["p:" + key] == json.loads(json.dumps(partition_entity(sim, key)))
    cursor, seq = first["cursor"], first["frame"]["seq"]
    nxt = http.get(f"/api/replay/{rid}/frame?t=20500&cursor={cursor}&base={seq}").json
    assert nxt["cursor"] == cursor and nxt["frame"]["full"] == 0 and nxt["frame"]["base"] == seq
    assert nxt["frame"]["msgs"], "moving forward in place shows the messages sent meanwhile"
    back = http.get(f"/api/replay/{rid}/frame?step=back&cursor={cursor}&base={nxt['frame']['seq']}").json
    assert back["history_len"] < nxt["history_len"] and back["frame"]["full"] == 1
    fwd = http.get(f"/api/replay/{rid}/frame?step=forward&cursor={cursor}&base={back['frame']['seq']}").json
    assert fwd["history_len"] > back["history_len"]
    ev = http.get(f"/api/replay/{rid}/frame?event=3").json
    assert ev["history_len"] >= 4
    inspect = http.get(f"/api/replay/{rid}/inspect?partition={key}&cursor={cursor}").json
    assert inspect["partition"]["key"] == key
    assert error_of(http.get(f"/api/replay/{rid}/inspect?partition=nope&cursor={cursor}")) == "partition"
    timeline = http.get(f"/api/replay/{rid}/timeline").json
    assert timeline["events"] == len(Simulation(LIB["zombie-leader-after-pause"]).run()["history"])
    assert all(ty != "high_watermark" for _i, _t, ty in timeline["story"])


@pytest.mark.parametrize("query,field", [("t=abc", "t"), ("t=-5", "t"), ("step=sideways", "step"), ("t=1&event=2", "t"),
                                         ("cursor=%3Cscript%3E", "cursor"), ("zzz=1", "zzz"), ("base=x", "base")])
def test_replay_frame_rejects_bad_parameters(http, query, field):
    rid = saved(http, "kip101-scenario-1-v0.10")["id"]
    assert error_of(http.get(f"/api/replay/{rid}/frame?{query}")) == field


def test_replay_of_unknown_runs(http):
    assert error_of(http.get("/api/replay/12345/frame?t=0"), 404) == "run"
    assert error_of(http.get("/api/replay/abc/frame?t=0")) == "run"
    assert error_of(http.get("/api/replay/sc:0123456789abcdef01234567/frame"), 404) == "run"
    assert http.get("/runs/9999").status_code == 404
    assert http.get("/s/nothing").status_code == 404
    assert http.get("/s/bad!slug").status_code == 404


def test_links_round_trip_through_http(http):
    doc = LIB["unclean-election-loss"]
    made = http.post("/api/links", json={"scenario": doc, "t_ms": 1000, "partition": "orders-0"}).json
    code = made["code"]
    assert made["url"] == f"/l/{code}?t=1000&p=orders-0"
    read = http.get(f"/api/links/{code}").json
    assert read["scenario"] == Simulation(doc).scenario
    page = http.get(made["url"])
    assert page.status_code == 200 and b'id="replay-data"' in page.data and b"replay/main.js" in page.data
    data = json.loads(page.data.split(b'id="replay-data">')[1].split(b"</script>")[0])
    assert data["focus"] == {"t_ms": 1000, "partition": "orders-0", "broker": None}
    frame = http.get(f"/api/replay/{data['run']}/frame?t=1000").json
    assert frame["t_ms"] == 1000
    saved_from_link = http.post("/api/runs", json={"scenario": read["scenario"]}).json
    assert saved_from_link["id"]
    run = saved(http)
    short = http.post("/api/links", json={"run": run["id"], "t_ms": 2000, "broker": 1}).json
    assert short["url"] == f"/s/{run['slug']}?t=2000&b=1"
    assert http.get(short["url"]).status_code == 200


@pytest.mark.parametrize("bad", ["", "1", "2abc", "1" + "A" * 40, "1abc%3Cdef", "1" + "_" * 9])
def test_bad_links_are_clear_pages_not_server_errors(http, bad):
    page = http.get("/l/" + bad) if bad else http.get("/l/%20")
    assert page.status_code in (400, 404)
    if page.status_code == 400:
        assert b"cannot be opened" in page.data
    assert http.get("/api/links/" + (bad or "%20")).status_code in (400, 404)


def test_a_link_scenario_is_validated_like_any_other_input(http):
    big = dict(LIB["isr-expansion"], brokers=40, topics=[{"name": "t", "partitions": 1, "replication_factor": 3}],
               clients=[], timeline=[])
    # the same limits as creating a room from that scenario
    assert error_of(http.post("/api/rooms", json={"scenario": big})) == "brokers"
    assert error_of(http.post("/api/links", json={"scenario": big})) == "brokers"
    from app.replay.links import encode_scenario
    code = encode_scenario(big)                    # a valid scenario for the engine, too big for this server
    page = http.get("/l/" + code)
    assert page.status_code == 400 and b"brokers" in page.data
    assert error_of(http.get("/api/links/" + code)) == "brokers"
    doc = LIB["isr-expansion"]
    assert error_of(http.post("/api/links", json={"scenario": doc, "t_ms": -1})) == "t"
    assert error_of(http.post("/api/links", json={"scenario": doc, "partition": "nope-0"})) == "p"
    assert error_of(http.post("/api/links", json={"scenario": doc, "run": 1})) == "body"
    page = http.get("/l/" + encode_scenario(doc) + "?t=abc")
    assert page.status_code == 400 and b"t: " in page.data


def test_fork_continues_live_from_the_moment(app, http):
    rid = saved(http, "broker-failure-clean-election")["id"]
    reply = http.post(f"/api/replay/{rid}/fork", json={"t_ms": 15000, "keep_timeline": False})
    assert reply.status_code == 201
    room = runner_of(app).get(reply.json["room"])
    assert room.sim.now_ms == 15000 and not room.playing
    assert all(op["at_ms"] <= 15000 for op in room.sim.scenario["timeline"])
    era = http.post(f"/api/replay/{rid}/fork", json={"t_ms": 5000, "kafka_version": "0.10"}).json
    assert runner_of(app).get(era["room"]).sim.scenario["kafka_version"] == "0.10"
    # a fork saved later remembers where it came from
    fork_room = runner_of(app).get(reply.json["room"])
    with fork_room.lock:
        fork_room.sim.advance_to(16000)
    child = http.post("/api/runs", json={"room": fork_room.id}).json
    child_run = http.get(f"/api/runs/{child['id']}").json["run"]
    assert child_run["source"] == "fork" and child_run["parent_run_id"] == rid and child_run["fork_t_ms"] == 15000
    assert error_of(http.post(f"/api/replay/{rid}/fork", json={"t_ms": 10 ** 9})) == "t_ms"
    assert error_of(http.post(f"/api/replay/{rid}/fork", json={"t_ms": 1, "kafka_version": "9.9"})) == "kafka_version"
    assert error_of(http.post(f"/api/replay/{rid}/fork", json={"t_ms": 1, "keep_timeline": "yes"})) == "keep_timeline"
    assert error_of(http.post(f"/api/replay/{rid}/fork", json={"t_ms": 1, "config": {"no.such.key": 1}})).startswith("config")


def test_compare_runs_and_variants(http):
    a = saved(http, "kip101-scenario-1-v0.10")["id"]
    b = saved(http, "kip101-scenario-1-v2.6")["id"]
    same = http.post("/api/compare", json={"a": {"run": a}, "b": {"run": a}}).json
    assert same["divergence"] is None and same["records"]["count"] == 0
    eras = http.post("/api/compare", json={"a": {"run": a}, "b": {"run": b}}).json
    assert eras["divergence"]["kind"] in ("leader", "isr", "log", "offline", "controller")
    assert 0 < eras["divergence"]["t_ms"] <= 30000
    acks = http.post("/api/compare", json={"a": {"run": a}, "b": {"variant": {"acks": "1"}}}).json
    assert acks["ok"] and acks["b"]["acks"] == ["1"]
    lib = http.post("/api/compare", json={"a": {"library": "kip101-scenario-1-v0.10"},
                                          "b": {"variant": {"kafka_version": "2.6"}}}).json
    assert lib["divergence"]["t_ms"] == eras["divergence"]["t_ms"]
    assert error_of(http.post("/api/compare", json={"a": {"library": "nope"}, "b": {"run": a}})) == "a.library"
    assert error_of(http.post("/api/compare", json={"a": {"run": a}})) == "b"
    assert error_of(http.post("/api/compare", json={"a": {"run": a}, "b": {"variant": {"brokers": 5}}})) == "b.variant"
    assert error_of(http.post("/api/compare", json={"a": {"variant": {}}, "b": {"run": a}})) == "a.variant"
    assert error_of(http.post("/api/compare", json={"a": {"run": 99999}, "b": {"run": a}}), 404) == "run"
    page = http.get(f"/replay/{eras['b']['rid']}?embed=1")
    assert page.status_code == 200 and "frame-ancestors 'self'" in page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in http.get(f"/runs/{a}").headers["Content-Security-Policy"]


def test_pages_render(http):
    for path in ("/runs", "/compare"):
        page = http.get(path)
        assert page.status_code == 200 and b"<script" in page.data


def test_the_replay_page_is_the_live_page(http):
    """The replay reuses the live page's markup: every element id of the live page is there."""
    import re
    live = http.get("/").data.decode()
    run = saved(http)
    replay = http.get(f"/runs/{run['id']}").data.decode()
    ids = set(re.findall(r'id="([^"]+)"', live))
    assert ids and ids <= set(re.findall(r'id="([^"]+)"', replay))
    assert 'data-mode="replay"' in replay and "js/main.js" not in replay


def test_replay_series_is_the_run_sampled_by_re_simulation(http):
    """GET /api/replay/<rid>/series: a partition's LEO/HW per replica and ISR size at moments
    across the run, each the state a straight simulation has at that moment; marks of its story."""
    doc = LIB["kip101-scenario-1-v0.10"]
    rid = saved(http, "kip101-scenario-1-v0.10")["id"]
    reply = http.get(f"/api/replay/{rid}/series?partition=orders-0").json
    assert reply["ok"] and reply["complete"] and reply["brokers"] == [1, 2, 3]
    assert 2 <= len(reply["points"]) <= 300 and reply["points"][0][0] == 0 and reply["points"][-1][0] == doc["duration_ms"]
    for t, isr, leo, hw in (reply["points"][100], reply["points"][-1]):
        sim = Simulation(doc)
        sim.advance_to(t)
        p = partition_entity(sim, "orders-0")
        assert (isr, leo, hw) == (len(p["isr"]), [r["leo"] for r in p["replica_state"]], [r["hw"] for r in p["replica_state"]])
    types = {m[1] for m in reply["marks"]}
    assert {"fault", "leader_elected", "truncation"} <= types
    assert error_of(http.get(f"/api/replay/{rid}/series?partition=nope-0")) == "partition"


def test_the_series_is_computed_on_the_job_pool_not_in_the_request(app, http):
    """A series not yet cached is a re-simulation: the request answers 202 with a job when it is not
    done at once, the job's result is the series, and the next ask is answered from the cache."""
    rid = saved(http, "kip101-scenario-1-v0.10")["id"]
    app.config["JOB_ANSWER_WITHIN_S"] = 0.0
    first = http.get(f"/api/replay/{rid}/series?partition=orders-0")
    assert first.status_code == 202 and first.json["job"]["kind"] == "series"
    job = app.extensions["isrlab"]["jobs"].get(first.json["job"]["id"])
    assert job.wait(120) and job.state == "done"
    done = http.get(first.json["job"]["url"]).json["job"]
    assert done["result"]["complete"] and done["result"]["brokers"] == [1, 2, 3]
    again = http.get(f"/api/replay/{rid}/series?partition=orders-0")
    assert again.status_code == 200 and again.json["points"] == done["result"]["points"]


def test_replay_metrics_are_the_run_sampled_by_re_simulation(app, http):
    """GET /api/replay/<rid>/metrics: Kafka's metrics at ~600 moments of the run, each what a
    sampler reading a straight simulation at those moments says; a job, then the cache."""
    from engine.metrics.sampler import MetricsSampler
    doc = LIB["unclean-election-loss"]
    rid = saved(http, "unclean-election-loss")["id"]
    app.config["JOB_ANSWER_WITHIN_S"] = 0.0
    first = http.get(f"/api/replay/{rid}/metrics")
    assert first.status_code == 202 and first.json["job"]["kind"] == "metrics"
    job = app.extensions["isrlab"]["jobs"].get(first.json["job"]["id"])
    assert job.wait(120) and job.state == "done"
    reply = http.get(f"/api/replay/{rid}/metrics").json
    assert reply["ok"] and reply["complete"] and reply["kafka_version"] == doc["kafka_version"]
    points = reply["points"]
    assert len(points) == 600 and points[0][0] == 0 and points[-1][0] == doc["duration_ms"]
    ids = [m["id"] for m in reply["metrics"]]
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    for point in points:
        sim.advance_to(point[0])
        assert sampler.sample(sim) == point
    unclean = points[-1][ids.index("unclean_elections") + 1]
    assert unclean[0] == sum(1 for e in sim.history if e["type"] == "leader_elected" and e.get("kind") == "unclean") >= 1
