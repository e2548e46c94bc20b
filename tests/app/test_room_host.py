"""The room host (app/rooms/host.py) when its answers come late or its callers' messages do: run
here in this process against a real ``redis-server``, with one real room worker, and asked
through the same client a web process uses (mq.RoomHostClient).

A create or join the host answers after its caller stopped waiting is undone (the caller told its
user it failed); a leave read late still applies, but only to the room it names; notes are not
queued while no host runs."""
import threading
import time

import pytest
import redis

from app.config import load_settings
from app.rooms import host as room_host
from app.rooms import mq
from app.runner import AppError
from scripts.bench_mq import ready_within
from tests.app.test_message_queue import Processes, start_redis


@pytest.fixture(scope="module")
def queue(tmp_path_factory):
    procs = Processes(tmp_path_factory.mktemp("room-host"))
    try:
        _proc, url = start_redis(procs, "redis")
        yield url
    finally:
        procs.stop_all()


@pytest.fixture(scope="module")
def host(queue):
    client = mq.RoomHostClient(queue)
    assert client.note("alive") is False, "a note was queued with no room host running"
    assert redis.Redis.from_url(queue).llen(mq.REQUESTS) == 0
    settings = {**load_settings({}), "ROOM_WORKERS": 1, "ROOM_WORKER_SPARE": 0, "MESSAGE_QUEUE": queue}
    running = room_host.RoomHost(settings, queue, request_threads=4)
    running.start()
    threading.Thread(target=running.run_forever, daemon=True).start()     # keeps HOST_KEY fresh
    yield running
    running.stop()


def viewers_of(host, room_id):
    return host.runner.call_room(room_id, "describe", ())["viewers"]


def slowed(monkeypatch, host, method, seconds):
    """The host's ``method`` done as it is, after ``seconds``: a host too busy to answer in time."""
    real = getattr(host, method)

    def late(*args):
        time.sleep(seconds)
        return real(*args)
    monkeypatch.setattr(host, method, late)


def served_past(host, before, count=1, timeout=10):
    """Wait until the host has handled ``count`` more requests than ``before``."""
    assert ready_within(lambda: host.served >= before + count, timeout), "the host did not handle the requests"


def test_a_create_answered_after_its_caller_gave_up_is_undone(host, monkeypatch):
    client = mq.RoomHostClient(host.url, timeout=0.5)
    before, served = set(host.runner.rooms), host.served
    slowed(monkeypatch, host, "do_create", 1.0)
    with pytest.raises(AppError) as refused:
        client.call("create", None, "isr-expansion", "late-room", None, None, None, True)
    assert refused.value.status == 503 and "did not answer" in refused.value.message
    served_past(host, served)                      # the host made the room, after the deadline
    assert set(host.runner.rooms) == before, "a room its creator was told had failed stayed"
    assert "late-room" not in host.runner.journals.rooms


def test_a_join_answered_after_its_caller_gave_up_is_undone(host, monkeypatch):
    client = mq.RoomHostClient(host.url, timeout=10)
    room_id = client.call("create", None, "isr-expansion", None, None, None, None, True)
    slowed(monkeypatch, host, "do_join", 1.0)
    served = host.served
    with pytest.raises(AppError):
        mq.RoomHostClient(host.url, timeout=0.5).call("join", room_id, "sid-late", 1)
    served_past(host, served)
    assert "sid-late" not in host.sid_web and not host.runner.watching("sid-late")
    assert viewers_of(host, room_id) == 0, "a viewer nobody shows frames to kept the room watched"
    client.call("remove", room_id)


def test_a_leave_read_late_applies_but_only_to_the_join_it_names(host):
    client = mq.RoomHostClient(host.url, timeout=10)
    first = client.call("create", None, "isr-expansion", None, None, None, None, True)
    second = client.call("create", None, "isr-expansion", None, None, None, None, True)
    client.call("join", first, "sid-1", 1)
    client.call("join", first, "sid-2", 1)
    client.call("join", second, "sid-2", 2)        # sid-2 moved on to the second room
    client.call("join", first, "sid-3", 1)
    client.call("leave", "sid-3", 1)
    client.call("join", first, "sid-3", 2)         # sid-3 left the first room and came back
    assert (viewers_of(host, first), viewers_of(host, second)) == (2, 1)
    late = mq.RoomHostClient(host.url, timeout=-1)  # every request it makes is past its deadline
    served = host.served
    assert late.note("leave", "sid-1", 1)
    assert late.note("leave", "sid-2", 1)          # ends the join sid-2 replaced
    assert late.note("leave", "sid-3", 1)          # ends the join before sid-3 came back
    served_past(host, served, 3)
    assert viewers_of(host, first) == 1, "the late leave was dropped, or it took sid-3 out of the room it rejoined"
    assert viewers_of(host, second) == 1, "a leave of an earlier join took the viewer out of its room"
    assert host.runner.watching("sid-3") and not host.runner.watching("sid-1")
    assert host.sid_web.get("sid-2") == client.web_id and "sid-1" not in host.sid_web
    for room_id in (first, second):
        client.call("remove", room_id)
    # a viewer whose room was removed under it is forgotten by its leave all the same
    assert "sid-2" in host.sid_web
    client.call("leave", "sid-2", 2)
    assert "sid-2" not in host.sid_web and host.do_stats(None)["room_host"]["viewers"] == len(host.sid_web)


def test_a_publish_to_a_redis_that_never_answers_ends_within_its_time_limit(monkeypatch):
    """A Redis host gone from the network accepts nothing and answers nothing; here a listening
    socket that never replies. Without a read limit the emitting thread waited for good."""
    import socket
    from app.rooms import socketio_queue
    monkeypatch.setitem(socketio_queue.REDIS_OPTIONS, "socket_timeout", 0.5)
    silent = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.append(silent.accept()), daemon=True).start()
    manager = socketio_queue.redis_manager(f"redis://127.0.0.1:{silent.getsockname()[1]}/0", write_only=True)
    started = time.monotonic()
    manager.emit("frame", "{}", namespace="/", room="room:abc")      # two attempts, then given up
    took = time.monotonic() - started
    silent.close()
    assert took < 3.0, f"a publish to a silent Redis took {took:.1f} s"


def test_the_web_process_queue_has_limits_and_its_subscription_keepalives(queue):
    """The subscription waits for messages for as long as no room is live; keepalives find a
    dead Redis under it. Checked on the manager create_app gives the web process's Socket.IO."""
    import socket
    from app.factory import create_app
    from app.rooms import socketio_queue
    app = create_app({"MESSAGE_QUEUE": queue, "ROOM_WORKERS": 0})
    manager = app.extensions["socketio"].server.manager
    assert not manager.write_only and manager.channel == socketio_queue.CHANNEL
    assert manager.redis_options["socket_timeout"] == socketio_queue.PUBLISH_TIMEOUT_S
    # a subscription made as python-socketio makes it (redis-py, these options): keepalives on,
    # and idle past the read limit it still gets what is published after
    subscription = redis.Redis.from_url(queue, **manager.redis_options).pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(manager.channel)
    sock = subscription.connection._sock
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 10
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 3
    got = []
    listener = threading.Thread(target=lambda: got.append(next(subscription.listen())), daemon=True)
    listener.start()
    time.sleep(socketio_queue.PUBLISH_TIMEOUT_S + 1)
    redis.Redis.from_url(queue).publish(manager.channel, "after-idle")
    listener.join(5)
    assert got and got[0]["data"] == b"after-idle", "an idle subscription broke on the read limit"
    subscription.close()


class NoBacklog:
    """This web process's sockets, none of them backed up (the runner reads only that)."""

    def backlog(self, _sid):
        return 0


def test_a_leave_redis_did_not_take_is_sent_again_even_after_a_failed_join(host, queue):
    """A viewer's leave lost to a Redis blip kept it in its room for good (the room never went
    idle); it is sent again with the notes, and a join that fails meanwhile does not cancel it."""
    from app.rooms.redis_runner import RedisRunner
    from tests.app.test_message_queue import free_port
    good = mq.RoomHostClient(queue, timeout=10)
    runner = RedisRunner({**load_settings({}), "MESSAGE_QUEUE": queue}, NoBacklog(), client=good)
    try:
        room_id = good.call("create", None, "isr-expansion", None, None, None, None, True)
        runner.join(room_id, "sid-w")
        assert host.runner.watching("sid-w")
        runner.client = mq.RoomHostClient(f"redis://127.0.0.1:{free_port()}/0", web_name=good.web_id)  # Redis away
        assert runner.leave("sid-w") == room_id
        with pytest.raises(AppError):
            runner.join(room_id, "sid-w")
        assert host.runner.watching("sid-w"), "the host was told nothing while Redis was away"
        runner.client = good                                                                   # Redis back
        runner._send_unsent_leaves()
        assert ready_within(lambda: not host.runner.watching("sid-w"), 5), "the lost leave was never sent"
        assert viewers_of(host, room_id) == 0
        good.call("remove", room_id)
    finally:
        runner.stop()


def test_a_web_process_is_judged_by_its_alive_key_not_by_how_lately_the_host_read_from_it(host, monkeypatch):
    """A host whose request threads all wait on a stuck worker reads nothing for a while: judged
    by the last request read, every web process looked dead and all viewers were sent away while
    they watched. Judged by the key each web process refreshes, only a dead one is."""
    monkeypatch.setattr(mq, "WEB_GRACE_S", 0)
    client = mq.RoomHostClient(host.url, timeout=10)
    assert client.alive()                        # first: the host's watcher runs every second
    room_id = client.call("create", None, "isr-expansion", None, None, None, None, True)
    client.call("join", room_id, "sid-alive", 1)
    with host.lock:
        host.webs[client.web_id] = time.monotonic() - 3600       # nothing read from it for an hour
    host._forget_silent_webs()
    assert host.runner.watching("sid-alive"), "a live web process's viewer was sent away"
    redis.Redis.from_url(host.url).delete(mq.WEB_KEY + client.web_id)  # the web process died
    assert ready_within(lambda: not host.runner.watching("sid-alive"), 5), "a dead web process's viewer stayed"
    assert "sid-alive" not in host.sid_web and client.web_id not in host.webs
    client.call("remove", room_id)


def test_two_joins_of_one_viewer_at_once_leave_it_in_one_room_the_later_one(host):
    """A double click sends two joins together, each handled by its own thread: both read the same
    previous room, and the viewer ended up counted in both rooms (one of them never idle)."""
    client = mq.RoomHostClient(host.url, timeout=10)
    rooms = [client.call("create", None, "isr-expansion", None, None, None, None, True) for _ in range(2)]
    for attempt in range(5):
        sid = f"sid-twice-{attempt}"
        results, together = {}, threading.Barrier(2)

        def join(room_id, join_id):
            together.wait(5)
            try:
                results[join_id] = host.runner.join(room_id, sid, join_id)[0].id
            except AppError as exc:
                results[join_id] = exc.status
        threads = [threading.Thread(target=join, args=(room_id, join_id))
                   for room_id, join_id in ((rooms[0], 2 * attempt + 1), (rooms[1], 2 * attempt + 2))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        counts = [viewers_of(host, room_id) for room_id in rooms]
        assert counts == [0, 1], f"the viewer is counted in {counts} (joins answered {results})"
        assert results[2 * attempt + 2] == rooms[1] and results[2 * attempt + 1] in (rooms[0], 409)
        assert host.runner.join_of(sid) == 2 * attempt + 2
        host.runner.leave(sid)
    for room_id in rooms:
        client.call("remove", room_id)


def test_a_join_answered_after_its_viewer_left_ends_at_the_host_too(host):
    """The viewer's socket closed while its join was on its way: recorded when answered, the
    host kept a viewer no one will ever take out (its room never idle). The join is refused
    here and its membership ended at the host, by its number; a later join of the viewer is
    not taken out by it."""
    from app.rooms.redis_runner import RedisRunner
    client = mq.RoomHostClient(host.url, timeout=10)
    runner = RedisRunner({**load_settings({}), "MESSAGE_QUEUE": host.url}, NoBacklog(), client=client)
    room_id = client.call("create", None, "isr-expansion", None, None, None, None, True)
    try:
        call = client.call

        def leave_meanwhile(method, *args, **kwargs):
            answer = call(method, *args, **kwargs)
            if method == "join":
                client.call = call
                runner.sid_room["sid-gone"] = room_id     # as the web layer's earlier join left it
                runner.leave("sid-gone")                  # the socket closes before the answer is read
            return answer
        client.call = leave_meanwhile
        with pytest.raises(AppError) as refused:
            runner.join(room_id, "sid-gone")
        assert refused.value.status == 409
        runner._send_unsent_leaves()
        assert ready_within(lambda: not host.runner.watching("sid-gone"), 5), "the host kept a viewer that left"
        assert viewers_of(host, room_id) == 0
        # a join the host answers after a later one of the same viewer is refused, even after a leave
        host.runner.join(room_id, "sid-old", 5)
        host.runner.leave("sid-old", 5)
        with pytest.raises(AppError) as older:
            host.runner.join(room_id, "sid-old", 4)
        assert older.value.status == 409 and not host.runner.watching("sid-old")
    finally:
        client.call = call
        runner.stop()
        client.call("remove", room_id)


def test_a_leave_served_before_its_join_keeps_that_join_out(host):
    """A web process's leave and the join it ends, sent in turn, may be served in the other order
    (several host threads, a join slow on its worker): the join must not then stay for good."""
    client = mq.RoomHostClient(host.url, timeout=10)
    room_id = client.call("create", None, "isr-expansion", None, None, None, None, True)
    try:
        assert host.runner.leave("sid-order", 3) is None          # the leave of join 3 comes first
        with pytest.raises(AppError) as refused:
            host.runner.join(room_id, "sid-order", 3)
        assert refused.value.status == 409 and not host.runner.watching("sid-order")
        assert viewers_of(host, room_id) == 0
        host.runner.join(room_id, "sid-order", 4)                 # a later join is the viewer's own
        assert host.runner.watching("sid-order") and viewers_of(host, room_id) == 1
    finally:
        client.call("remove", room_id)
