"""Saved runs, links, replay with seek/rewind and forks in the KRaft eras (docs/model.md §20,
docs/scenario-format.md §4.2), through the real routes and a real SQLite file: the same checks the
ZooKeeper eras pass in test_http.py, on a story where broker 0 crashes, is fenced after
broker.session.timeout.ms (9 s) and the controller moves leadership off it."""
import json

import pytest

from app import runner_of
from app.replay.compare import digest
from app.replay.seek import Seeker, build_index, fork_copy
from app.runner.live_view import LiveView
from app.runner.records import LOST_LIST, RecordDigest
from app.runner.refresh import structure_of
from app.runner.series import sample
from engine.scenario.library import library
from engine.simulation import Simulation
from tests.engine.test_kraft import scenario
from tests.replay.test_http import app, error_of, http  # noqa: F401 (fixtures)
from tests.replay.test_seek import same_state

CRASH_MS = 5000
SESSION_MS = 9000       # broker.session.timeout.ms default (KIP-631)
ERAS = ["3.9-kraft", "4.1"]
LIB = library()


def story(era):
    return scenario(era, [{"op": "crash", "broker": 0, "at_ms": CRASH_MS},
                          {"op": "crash", "controller": 3000, "at_ms": 20000},
                          {"op": "restart", "broker": 0, "at_ms": 22000}], 30000)


def fenced_at(history, broker):
    return [e["t_ms"] for e in history if e["type"] == "broker_fenced" and e["broker"] == broker]


@pytest.mark.parametrize("era", ERAS)
def test_save_reload_export_and_replay_byte_identically(http, era):  # noqa: F811
    doc = story(era)
    straight = Simulation(doc).run()
    # the broker's last heartbeat is <= 2 s (broker.heartbeat.interval.ms) before the crash
    fenced = fenced_at(straight["history"], 0)
    assert fenced and CRASH_MS + SESSION_MS - 2000 <= fenced[0] <= CRASH_MS + SESSION_MS + 1000
    reply = http.post("/api/runs", json={"scenario": doc, "title": era})
    assert reply.status_code == 201, reply.json
    rid = reply.json["id"]
    run = http.get(f"/api/runs/{rid}").json["run"]
    assert run["scenario"]["kafka_version"] == era and run["end_ms"] == 30000
    assert run["scenario"]["controllers"] == [3000, 3001, 3002]
    exported = http.get(f"/api/runs/{rid}/export")
    events = json.loads(exported.data)["events"]
    assert json.dumps(events, sort_keys=True) == json.dumps(straight["history"], sort_keys=True)
    assert any(e["type"] == "partition_change" for e in events)
    imported = http.post("/api/runs/import", data=exported.data, content_type="application/json")
    assert imported.status_code == 201 and imported.json["history_matches"] is True
    listed = http.get("/api/runs?facets=1").json
    assert [era, 2] in listed["facets"]["eras"]


@pytest.mark.parametrize("era", ERAS)
def test_a_share_link_opens_and_seeks_back_and_forth(http, era):  # noqa: F811
    doc = story(era)
    made = http.post("/api/links", json={"scenario": doc, "t_ms": 16000, "partition": "t-0"}).json
    page = http.get(made["url"])
    assert page.status_code == 200 and b'id="replay-data"' in page.data
    data = json.loads(page.data.split(b'id="replay-data">')[1].split(b"</script>")[0])
    assert data["focus"]["t_ms"] == 16000
    rid = data["run"]
    after = http.get(f"/api/replay/{rid}/frame?t=16000").json
    assert after["frame"]["set"]["b:0"]["fenced"] is True
    leader_after = after["frame"]["set"]["p:t-0"]["leader"]
    cursor = after["cursor"]
    # rewind to before the crash on the same cursor: broker 0 is registered and unfenced again
    before = http.get(f"/api/replay/{rid}/frame?t=4000&cursor={cursor}&base={after['frame']['seq']}").json
    assert before["frame"]["full"] == 1 and before["frame"]["set"]["b:0"]["fenced"] is False
    back = http.get(f"/api/replay/{rid}/frame?step=back&cursor={cursor}&base={before['frame']['seq']}").json
    assert back["history_len"] < before["history_len"]
    again = http.get(f"/api/replay/{rid}/frame?t=16000&cursor={cursor}").json
    assert again["frame"]["set"]["p:t-0"]["leader"] == leader_after != 0
    sim = Simulation(doc)
    sim.advance_to(16000)
    assert digest(sim)[None] == sim.quorum.active      # compare reads the KRaft controller
    assert digest(sim)["t-0"][0] == leader_after


@pytest.mark.parametrize("era", ERAS)
def test_seek_equals_a_straight_run_and_a_fork_continues_exactly(era):
    doc = story(era)
    seeker = Seeker.from_built(doc, build_index(doc, 10 ** 12, event_budget=700))
    assert len(seeker.times) >= 3
    straight = Simulation(doc)
    for t in (29000, 3000, CRASH_MS + SESSION_MS + 1, 21000, 0):   # backward jumps included
        other = Simulation(doc)
        other.advance_to(t)
        same_state(seeker.at_time(t), other)
    fork = fork_copy(seeker.at_time(12345))
    assert json.dumps(fork.run(), sort_keys=True) == json.dumps(straight.run(), sort_keys=True)


@pytest.mark.parametrize("era", ERAS)
def test_fork_from_a_replay_keeps_the_quorum_and_can_change_era(app, http, era):  # noqa: F811
    rid = http.post("/api/runs", json={"scenario": story(era)}).json["id"]
    reply = http.post(f"/api/replay/{rid}/fork", json={"t_ms": 15000, "keep_timeline": False})
    assert reply.status_code == 201, reply.json
    room = runner_of(app).get(reply.json["room"])
    assert room.sim.now_ms == 15000 and room.sim.quorum is not None
    assert room.sim.quorum.image.brokers[0]["fenced"] is True
    with room.lock:
        room.sim.apply({"op": "crash", "controller": room.sim.quorum.active})
        room.sim.advance_to(25000)
    assert room.sim.quorum.active is not None              # two voters of three elect a new leader
    child = http.post("/api/runs", json={"room": room.id}).json
    child_run = http.get(f"/api/runs/{child['id']}").json["run"]
    assert child_run["source"] == "fork" and child_run["parent_run_id"] == rid
    assert any(op["op"] == "crash" and op.get("controller") is not None for op in child_run["scenario"]["timeline"])
    other = "4.1" if era == "3.9-kraft" else "3.9-kraft"
    switched = http.post(f"/api/replay/{rid}/fork", json={"t_ms": 5000, "kafka_version": other}).json
    assert runner_of(app).get(switched["room"]).sim.scenario["kafka_version"] == other
    # a KRaft timeline (controller ops) cannot be forked into ZooKeeper mode: a clear field error
    assert error_of(http.post(f"/api/replay/{rid}/fork", json={"t_ms": 25000, "kafka_version": "2.6"})) \
        in ("kafka_version", "controllers", "timeline[1].controller", "timeline")


def test_live_series_refresh_and_loss_tracking_read_the_kraft_registration():
    """These read the ISR and leader from the state znode in ZooKeeper eras; in KRaft there is
    none, so they must read the committed PartitionRegistration (they saw ISR 0 and no leader)."""
    sim = Simulation(story("4.1"))
    sim.advance_to(16000)
    reg = sim.quorum.image.partitions[("t", 0)]
    assert 0 not in reg["isr"] and len(reg["isr"]) == 2   # broker 0 fenced, out of the ISR
    assert sample(sim, "t-0", [0, 1, 2])[1] == 2
    assert structure_of(sim, "t-0", [0, 1, 2])[0] == reg["partition_epoch"] >= 1
    records = RecordDigest(sim)
    assert records._leader_log("t-0") is sim.brokers[reg["leader"]].partitions["t-0"].log


@pytest.mark.parametrize("era,lost", [("3.9-kraft", True), ("4.1", False)])
def test_the_live_ledger_and_the_invariants_see_the_elr_example_s_loss(era, lost):
    """The ELR worked example (library "last-isr-member-elr"): without ELR broker 0 leads again at
    65 s from a log that lost acknowledged records; the live ledger notices it in the frame after
    (it reads the leader from the committed registration) and the acked_record_lost invariant
    names the records. With ELR broker 1 was elected at 50 s with every record: nothing lost."""
    sim = Simulation(dict(LIB["last-isr-member-elr"], kafka_version=era))
    view = LiveView(sim)
    sim.advance_to(64000)
    view.entities()
    assert view.entities()["records"]["lost"] == 0          # the partition is leaderless until 65 s
    sim.advance_to(70000)
    frame = view.entities()
    final = Simulation(dict(LIB["last-isr-member-elr"], kafka_version=era)).run()
    really_lost = sorted(r["id"] for r in final["records"] if r["status"] == "acked" and r["lost"])
    assert bool(really_lost) is lost
    # the frame names the newest lost records (by producer and sequence), at most LOST_LIST of them
    by_order = sorted(really_lost, key=lambda rid: (rid.rpartition("-")[0], int(rid.rpartition("-")[2])))
    assert sorted(frame["records"]["lost_ids"]) == sorted(by_order[-LOST_LIST:])
    assert frame["records"]["lost"] == len(really_lost)
    found = {v["invariant"] for v in final["violations"]}
    assert ("acked_record_lost" in found) is lost
