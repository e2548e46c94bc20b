"""Every Socket.IO event, with good and malformed payloads: a bad request gets a clear error
naming the field and what is allowed, and the simulation goes on."""
import pytest

from tests.app.conftest import Mirror, create, frames, mirror_of, run_for
from app import runner_of


def err(reply):
    assert reply["ok"] is False, reply
    return reply["error"]


# -- join / create / leave ------------------------------------------------------------------------
def test_create_joins_and_frames_follow(app, client):
    room = create(client)
    run_for(app, 0.3)
    m = mirror_of(client)
    assert m.clock["room"] == room and m.clock["t_ms"] >= 250
    assert {k for k in m.entities if k.startswith("b:")} == {"b:0", "b:1", "b:2"}
    assert m.entities["p:orders-0"]["replicas"] == [1, 2, 0]
    assert m.entities["meta"]["name"] == "Leader failure and a clean election"


def test_create_from_a_scenario_document(app, client):
    doc = {"name": "mine", "brokers": 2, "topics": [{"name": "t", "partitions": 2, "replication_factor": 2}]}
    reply = client.emit("create", {"scenario": doc}, callback=True)
    assert reply["ok"] and reply["room"]["name"] == "mine"


@pytest.mark.parametrize("payload, field", [
    ({"library": "nope"}, "library"),
    ({"library": 5}, "library"),
    ({"scenario": {"brokers": "three"}}, "brokers"),
    ({"scenario": {"brokers": 3, "topics": [{"name": "bad name!", "partitions": 1}]}}, "topics[0].name"),
    ({"scenario": {"brokers": 999}}, "brokers"),
    ({"scenario": {"brokers": 3, "kafka_version": "9.9"}}, "kafka_version"),
    ({"scenario": "not an object"}, "scenario"),
    ({"scenario": {"brokers": 3, "topics": [{"name": "t", "partitions": 5000}]}}, "topics"),
    ({"scenario": {"duration_ms": 10 ** 9}}, "duration_ms"),
    ({"library": "isr-expansion", "scenario": {}}, "payload"),
    ({"colour": "blue"}, "colour"),
    ("a string", "payload"),
    ([1, 2], "payload"),
])
def test_create_rejects_bad_input_with_the_field(client, payload, field):
    assert err(client.emit("create", payload, callback=True))["field"] == field


def test_join_an_existing_room_from_a_second_client(app, sio, client):
    room = create(client)
    other = sio.test_client(app)
    reply = other.emit("join", {"room": room}, callback=True)
    assert reply["ok"] and reply["room"]["viewers"] == 2
    run_for(app, 0.2)
    a, b = frames(client), frames(other)
    assert a and b and b[0]["full"] == 1
    assert a[-1]["seq"] == b[-1]["seq"]
    other.disconnect()


@pytest.mark.parametrize("payload, field", [
    ({}, "room"), ({"room": 5}, "room"), ({"room": "../../etc"}, "room"), ({"room": "x" * 200}, "room"),
    ({"room": "abcd", "extra": 1}, "extra"), (None, "room"), (42, "payload"),
])
def test_join_rejects_malformed_payloads(client, payload, field):
    assert err(client.emit("join", payload, callback=True))["field"] == field


def test_join_an_unknown_room(client):
    e = err(client.emit("join", {"room": "doesnotexist"}, callback=True))
    assert e["field"] == "room" and "no room" in e["message"]


def test_leave_stops_the_frames(app, client):
    create(client)
    run_for(app, 0.1)
    frames(client)
    assert client.emit("leave", {}, callback=True)["ok"]
    run_for(app, 0.2)
    assert frames(client) == []


def test_disconnect_leaves_and_pauses_an_unwatched_room(app, sio, client, runner):
    room_id = create(client)
    client.disconnect()
    room = runner.get(room_id)
    assert room.viewers == {} and room.paused_reason == "no viewers"


# -- control ---------------------------------------------------------------------------------------
def test_control_play_pause_speed(app, client, runner):
    room_id = create(client)
    room = runner.get(room_id)
    assert client.emit("control", {"action": "pause"}, callback=True)["ok"]
    t = room.sim.now_ms
    run_for(app, 0.3)
    assert room.sim.now_ms == t
    assert client.emit("control", {"action": "speed", "value": 10}, callback=True) == {"ok": True, "speed": 10.0}
    assert client.emit("control", {"action": "play"}, callback=True)["ok"]
    run_for(app, 0.5)
    assert room.sim.now_ms - t == pytest.approx(5000, abs=150)
    assert client.emit("control", {"action": "speed", "value": "max"}, callback=True)["speed"] == "max"


@pytest.mark.parametrize("payload, field", [
    ({"action": "speed", "value": 0}, "speed"), ({"action": "speed", "value": 1000}, "speed"),
    ({"action": "speed", "value": "fast"}, "speed"), ({"action": "speed", "value": True}, "speed"),
    ({"action": "speed", "value": None}, "speed"), ({"action": "speed", "value": [1]}, "speed"),
    ({"action": "explode"}, "action"), ({"action": 3}, "action"), ({}, "action"), ({"value": 1}, "action"),
    ({"action": "pause_on_violation", "value": "yes"}, "value"), ({"action": "play", "bogus": 1}, "bogus"),
])
def test_control_rejects_bad_values(client, payload, field):
    create(client)
    assert err(client.emit("control", payload, callback=True))["field"] == field


def test_control_without_a_room(client):
    assert err(client.emit("control", {"action": "play"}, callback=True))["field"] == "room"


def test_step_restart_replay(app, client, runner):
    room_id = create(client)
    room = runner.get(room_id)
    run_for(app, 0.3)
    reply = client.emit("control", {"action": "step"}, callback=True)
    assert reply["ok"] and reply["events"] and not room.playing
    assert client.emit("command", {"op": "crash", "broker": 2}, callback=True)["ok"]
    reply = client.emit("control", {"action": "replay"}, callback=True)
    assert reply == {"ok": True, "replayed": 1, "dropped": 0}
    assert room.sim.now_ms == 0 and any(op["op"] == "crash" for op in room.sim.scenario["timeline"] if op.get("broker") == 2)
    assert client.emit("control", {"action": "restart"}, callback=True)["ok"]


def test_pause_on_violation_can_be_turned_off(app, client, runner):
    room = runner.get(create(client, library="kip101-scenario-1-v0.10"))
    assert client.emit("control", {"action": "pause_on_violation", "value": False}, callback=True)["ok"]
    client.emit("control", {"action": "speed", "value": 100}, callback=True)
    run_for(app, 0.5)
    assert room.sim.now_ms > 18009 and room.sim.violations


# -- command ------------------------------------------------------------------------------------------
def test_command_is_applied_recorded_and_replayable(app, client, runner):
    room = runner.get(create(client))
    run_for(app, 0.2)
    reply = client.emit("command", {"op": "crash", "broker": 1, "mode": "power"}, callback=True)
    assert reply["ok"] and reply["command"]["op"] == "crash" and reply["command"]["at_ms"] == room.sim.now_ms + 1
    run_for(app, 0.1)
    assert room.sim.brokers[1].state == "stopped"
    assert room.commands == [reply["command"]]
    assert reply["command"] in room.sim.replay_scenario()["timeline"]


@pytest.mark.parametrize("payload, field", [
    ({"op": "crash", "broker": 99}, "command.broker"),
    ({"op": "crash", "broker": "1"}, "command.broker"),
    ({"op": "crash", "broker": 1, "mode": "nuke"}, "command.mode"),
    ({"op": "restart", "broker": 0}, "command.broker"),
    ({"op": "produce", "topic": "nope"}, "command.topic"),
    ({"op": "produce", "topic": "orders", "acks": 2}, "command.acks"),
    ({"op": "produce", "topic": "orders", "count": 10 ** 6}, "count"),
    ({"op": "produce", "topic": "orders", "count": -1}, "command.count"),
    ({"op": "isolate", "broker": 1, "from": "mars"}, "command.from"),
    ({"op": "partition", "groups": "all"}, "command.groups"),
    ({"op": "set_config", "topic": "orders", "key": "replica.lag.time.max.ms", "value": 1}, "command.key"),
    ({"op": "create_topic", "name": "<img src=x onerror=alert(1)>", "partitions": 1}, "command.name"),
    ({"op": "reassign", "topic": "orders"}, "op"),
    ({"op": "selfdestruct"}, "op"),
    ({"op": "crash", "broker": 1, "at_ms": 5}, "at_ms"),
    ({"broker": 1}, "op"),
    ({"op": "crash", "broker": 1, "colour": "red"}, "command.colour"),
    ("crash broker 1", "command"),
    ([{"op": "crash"}], "command"),
    ({"op": "produce", "topic": "orders", "value": "x" * 20000}, "command"),
])
def test_bad_commands_are_refused_and_the_run_goes_on(app, client, runner, payload, field):
    room = runner.get(create(client))
    run_for(app, 0.1)
    e = err(client.emit("command", payload, callback=True))
    assert e["field"] == field and e["message"]
    t = room.sim.now_ms
    run_for(app, 0.2)
    assert room.sim.now_ms > t and room.commands == []


def test_commands_are_rate_limited(app, sio):
    app.config["COMMAND_BURST"] = 5
    from app.web.ratelimit import RateLimiter
    app.extensions["isrlab"]["limiter"] = RateLimiter(1, 5, clock=app.fake_clock)
    c = sio.test_client(app)
    create(c)
    run_for(app, 0.1)
    replies = [c.emit("command", {"op": "flush", "broker": 0}, callback=True) for _ in range(8)]
    assert [r["ok"] for r in replies].count(True) == 4     # create used one token
    assert err(replies[-1])["field"] == "rate"
    app.fake_clock.now += 2.0
    assert c.emit("command", {"op": "flush", "broker": 0}, callback=True)["ok"], "tokens come back with time"
    c.disconnect()


# -- load / reconfigure / inspect / resync ----------------------------------------------------------
def test_load_replaces_the_simulation_for_every_viewer(app, sio, client, runner):
    room_id = create(client)
    other = sio.test_client(app)
    other.emit("join", {"room": room_id}, callback=True)
    run_for(app, 0.1)
    frames(client), frames(other)
    reply = client.emit("load", {"library": "zombie-leader-after-pause"}, callback=True)
    assert reply["ok"] and reply["room"]["name"] == "A zombie leader after a long GC pause"
    run_for(app, 0.1)
    for c in (client, other):
        f = frames(c)[0]
        assert f["full"] == 1 and f["set"]["meta"]["name"] == "A zombie leader after a long GC pause"
        assert "b:3" in f["set"]
    assert err(client.emit("load", {}, callback=True))["field"] == "payload"
    assert err(client.emit("load", {"library": "nope"}, callback=True))["field"] == "library"
    other.disconnect()


def test_reconfigure_changes_the_era_and_replays_commands(app, client, runner):
    room = runner.get(create(client, library="not-enough-replicas"))
    run_for(app, 0.1)
    client.emit("command", {"op": "crash", "broker": 0}, callback=True)
    reply = client.emit("reconfigure", {"kafka_version": "0.10"}, callback=True)
    assert reply["ok"] and reply["replayed"] == 1
    assert room.sim.scenario["kafka_version"] == "0.10" and room.sim.config["zookeeper.session.timeout.ms"] == 6000
    reply = client.emit("reconfigure", {"config": {"replica.lag.time.max.ms": 5000}}, callback=True)
    assert reply["ok"] and room.sim.config["replica.lag.time.max.ms"] == 5000
    assert err(client.emit("reconfigure", {"kafka_version": "3.1"}, callback=True))["field"] == "kafka_version"
    assert err(client.emit("reconfigure", {"config": {"no.such.key": 1}}, callback=True))["field"] == "config.no.such.key"
    assert err(client.emit("reconfigure", {"config": "x"}, callback=True))["field"] == "config"
    assert err(client.emit("reconfigure", {}, callback=True))["field"] == "payload"
    assert room.sim.scenario["kafka_version"] == "0.10", "a refused change leaves the room as it was"


def test_reconfigure_drops_keys_the_era_does_not_know(app, client, runner):
    room = runner.get(create(client, scenario={"brokers": 3, "config": {"delivery.timeout.ms": 60000}}))
    reply = client.emit("reconfigure", {"kafka_version": "0.10"}, callback=True)
    assert reply["ok"] and reply["dropped"] == ["delivery.timeout.ms"]
    assert room.sim.scenario["kafka_version"] == "0.10"


def test_inspect_a_partition(app, client):
    create(client)
    run_for(app, 0.5)
    reply = client.emit("inspect", {"partition": "orders-0"}, callback=True)
    p = reply["partition"]
    assert p["key"] == "orders-0" and len(p["replica_state"]) == 3
    leader = next(r for r in p["replica_state"] if r["broker"] == p["leader"])
    assert leader["records"] and leader["records"][-1][0] == leader["leo"] - 1
    assert err(client.emit("inspect", {"partition": "orders-9"}, callback=True))["field"] == "partition"
    assert err(client.emit("inspect", {}, callback=True))["field"] == "partition"
    assert err(client.emit("inspect", {"partition": ["orders-0"]}, callback=True))["field"] == "partition"


def test_resync_sends_a_full_frame(app, client):
    create(client)
    run_for(app, 0.2)
    frames(client)
    assert client.emit("resync", {}, callback=True) == {"ok": True}
    run_for(app, 1 / 30)
    f = frames(client)
    assert f[0]["full"] == 1
    assert err(client.emit("resync", {"x": 1}, callback=True))["field"] == "x"


def test_mirror_built_from_frames_matches_the_room(app, client, runner):
    """What a viewer reconstructs from deltas equals a fresh full frame, after a busy minute."""
    room = runner.get(create(client, library="controlled-shutdown"))
    client.emit("control", {"action": "speed", "value": 20}, callback=True)
    m = Mirror()
    for _ in range(15):
        run_for(app, 0.2)
        mirror_of(client, m)
    assert m.events and m.clock["t_ms"] == room.sim.now_ms
    import json
    full = json.loads(room.frames.payload(0))
    assert m.entities == full["set"]
    kinds = {e["type"] for e in m.events}
    assert {"leader_elected", "broker_stopped", "broker_started"} <= kinds


def test_unknown_events_and_extra_arguments_are_harmless(app, client, runner):
    room = runner.get(create(client))
    unknown = err(client.emit("bogus", {"x": 1}, callback=True))
    assert unknown["field"] == "event" and "command" in unknown["allowed"]
    assert err(client.emit("control", {"action": "pause"}, "extra", callback=True))["field"] == "payload"
    run_for(app, 0.1)
    assert room.sim.now_ms > 0


def test_ledger_pages_filter_and_refuse_bad_input(app, client, runner):
    """The ledger request: newest first, filtered by producer and status, pages of 50; the
    console producer's view says the acks its records were sent with."""
    room = runner.get(create(client))
    run_for(app, 0.2)
    client.emit("command", {"op": "produce", "topic": "orders", "count": 60, "acks": "all", "producer": "led"}, callback=True)
    run_for(app, 1.0)
    reply = client.emit("ledger", {"producer": "led"}, callback=True)
    assert reply["ok"] and reply["matched"] == 60 and len(reply["rows"]) == 50
    assert reply["rows"][0][0] == "led-59" and all(r[1] == "led" for r in reply["rows"])
    older = client.emit("ledger", {"producer": "led", "page": 1}, callback=True)
    assert [r[0] for r in older["rows"]][-1] == "led-0" and len(older["rows"]) == 10
    assert client.emit("ledger", {"producer": "led", "status": "failed"}, callback=True)["matched"] == 0
    with room.lock:
        view = room.view.entities()["c:led"]
    assert view["acks"] == "all" and view["idempotence"] in (True, False)
    assert err(client.emit("ledger", {"status": "gone"}, callback=True))["field"] == "status"
    assert err(client.emit("ledger", {"page": -1}, callback=True))["field"] == "page"
    assert err(client.emit("ledger", {"producer": ["led"]}, callback=True))["field"] == "producer"
    assert err(client.emit("ledger", {"colour": "red"}, callback=True))["field"] == "colour"
