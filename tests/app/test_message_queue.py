"""Many web processes, one set of rooms (ISRLAB_MESSAGE_QUEUE, app/rooms/host.py): a real
``redis-server`` started here, the room host (``isrlab rooms``) with two room workers, and two
real ``isrlab serve`` processes (gunicorn, websockets) on this machine. A viewer on each web
process sees the same room; commands through either apply; rooms are counted once; a stopped
Redis or room host is a clear refusal, not a hang or a 500."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
import redis
import socketio

from app.config import load_settings
from app.rooms import host as room_host
from app.rooms import mq
from app.web import transport
from scripts.bench_mq import ready_within

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_ROOMS = 8


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """Processes this module started, each ended by its own pid at the end."""

    def __init__(self, folder):
        self.folder = folder
        self.procs = []

    def start(self, name, argv, env=None):
        log = open(self.folder / f"{name}.log", "w")
        proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        proc.log_path = self.folder / f"{name}.log"
        self.procs.append(proc)
        return proc

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)   # its own group: gunicorn's worker, room workers
                proc.wait(timeout=10)


def wait_until(predicate, timeout, what, proc=None):
    if ready_within(predicate, timeout):
        return
    log = proc.log_path.read_text()[-3000:] if proc is not None else ""
    pytest.fail(f"{what} did not happen within {timeout} s\n{log}")


def start_redis(procs, name):
    assert shutil.which("redis-server"), "redis-server is not installed (scripts/setup.sh installs it)"
    port = free_port()
    folder = procs.folder / name
    folder.mkdir()
    proc = procs.start(name, ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", str(folder)])
    url = f"redis://127.0.0.1:{port}/0"
    wait_until(lambda: redis.Redis.from_url(url).ping(), 20, f"{name} answering", proc)
    return proc, url


def start_web(procs, name, url, extra=None):
    port = free_port()
    env = {"ISRLAB_MESSAGE_QUEUE": url, "ISRLAB_INSTANCE_PATH": str(procs.folder / name), "ISRLAB_THREADS": "40",
           "ISRLAB_ACCESS_LOG": "0", "ISRLAB_JOB_PROCESSES": "0", **(extra or {})}
    proc = procs.start(name, [sys.executable, "-m", "app", "serve", "--port", str(port)], env)
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: urllib.request.urlopen(base + "/healthz", timeout=2).status == 200, 60, f"{name} serving", proc)
    return proc, base


def start_host(procs, url):
    env = {"ISRLAB_MESSAGE_QUEUE": url, "ISRLAB_ROOM_WORKER_SPARE": "0", "ISRLAB_MAX_ROOMS": str(MAX_ROOMS),
           "ISRLAB_MAX_ROOMS_PER_ADDRESS": "50"}
    proc = procs.start("host", [sys.executable, "-m", "app", "rooms", "--workers", "2"], env)
    wait_until(lambda: redis.Redis.from_url(url).exists(mq.HOST_KEY), 90, "the room host starting", proc)
    return proc


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    procs = Processes(tmp_path_factory.mktemp("mq"))
    try:
        _redis, url = start_redis(procs, "redis")
        host = start_host(procs, url)
        web_a = start_web(procs, "web-a", url)
        web_b = start_web(procs, "web-b", url)
        yield {"url": url, "host": host, "a": web_a[1], "b": web_b[1], "procs": procs}
    finally:
        procs.stop_all()


class Viewer:
    """A Socket.IO client on one web process that applies the frames it gets to an entity map."""

    def __init__(self, base):
        self.client = socketio.Client(reconnection=False)
        self.lock = threading.Lock()
        self.frames = []              # (arrival, seq, t_ms, playing)
        self.entities = {}
        self.client.on("frame", self._on_frame)
        self.client.connect(base, transports=["websocket"], wait_timeout=10)

    def _on_frame(self, text):
        frame = json.loads(text)
        with self.lock:
            if frame["full"]:
                self.entities = {}
            self.entities.update(frame["set"])
            for key in frame["del"]:
                self.entities.pop(key, None)
            clock = frame["clock"]
            self.frames.append((time.monotonic(), frame["seq"], clock["t_ms"], clock["playing"]))

    def call(self, event, data, timeout=20):
        return self.client.call(event, data, timeout=timeout)

    def latest(self):
        with self.lock:
            return self.frames[-1] if self.frames else None

    def rate(self, seconds):
        """Frames per second over the last ``seconds``."""
        since = time.monotonic() - seconds
        with self.lock:
            return sum(1 for f in self.frames if f[0] >= since) / seconds

    def close(self):
        self.client.disconnect()


@pytest.fixture
def viewers(cluster):
    made = []

    def make(which):
        viewer = Viewer(cluster[which])
        made.append(viewer)
        return viewer
    yield make
    for viewer in made:
        viewer.close()


def test_the_host_names_the_channels_the_web_layer_uses():
    assert transport.channel("abc") == room_host.CHANNEL_PREFIX + "abc"
    assert transport.NAMESPACE == room_host.NAMESPACE


def test_a_message_queue_that_is_not_redis_is_refused_naming_the_variable():
    with pytest.raises(SystemExit) as refused:
        load_settings({"ISRLAB_MESSAGE_QUEUE": "amqp://guest@rabbit//"})
    assert "ISRLAB_MESSAGE_QUEUE" in str(refused.value) and "redis://" in str(refused.value)
    assert load_settings({})["MESSAGE_QUEUE"] is None


def test_an_older_backlog_note_served_last_does_not_starve_a_viewer():
    """Notes are served by several threads of the host: a viewer keeps its newest backlog."""
    settings = {**load_settings({}), "ROOM_WORKERS": 1}
    host = room_host.RoomHost(settings, "redis://127.0.0.1:1/0")     # nothing is started or reached
    host.sid_web["s1"] = host.sid_web["s2"] = "web-a"
    host.do_backlog("web-a", 2, {"s1": 0, "s2": 4})                  # the newer note first ...
    host.do_backlog("web-a", 1, {"s1": 3, "s2": 0})                  # ... then the older one
    assert host.transport.backlog("s1") == 0 and host.transport.backlog("s2") == 4
    host.do_backlog("web-a", 3, {"s2": 0, "gone": 5})                # a viewer that left is not kept
    assert host.transport.backlog("s2") == 0 and host.transport.backlog("gone") == 0


def test_a_second_room_host_on_the_same_redis_refuses_to_start(cluster):
    second = subprocess.run([sys.executable, "-m", "app", "rooms", "--message-queue", cluster["url"], "--workers", "1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert second.returncode != 0
    assert "another room host serves" in second.stderr and "one room host per message queue" in second.stderr


def test_a_room_host_without_redis_says_so(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"            # nothing listens there
    host = subprocess.run([sys.executable, "-m", "app", "rooms", "--message-queue", url, "--workers", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert host.returncode != 0 and f"cannot reach Redis at {url}" in host.stderr


def test_a_viewer_on_each_web_process_sees_the_same_room(cluster, viewers):
    a, b = viewers("a"), viewers("b")
    created = a.call("create", {"library": "isr-expansion"})
    assert created["ok"], created
    room = created["room"]["room"]
    joined = b.call("join", {"room": room})
    assert joined["ok"] and joined["room"]["room"] == room
    time.sleep(3.0)
    rate_a, rate_b = a.rate(2.0), b.rate(2.0)
    print(f"\nframes/s of one room: viewer on web A {rate_a:.1f}, viewer on web B {rate_b:.1f}")
    assert rate_a >= 10 and rate_b >= 10
    assert rate_b >= 0.7 * rate_a
    # the same frames: one emit per tick reaches both processes' sockets
    with a.lock, b.lock:
        clock_a = {seq: t for _, seq, t, _ in a.frames}
        clock_b = {seq: t for _, seq, t, _ in b.frames}
    common = set(clock_a) & set(clock_b)
    assert len(common) >= 20
    assert all(clock_a[s] == clock_b[s] for s in common)
    info = json.load(urllib.request.urlopen(f"{cluster['b']}/api/rooms/{room}", timeout=10))
    assert info["ok"] and info["viewers"] == 2


def test_commands_through_either_web_process_apply_for_both(cluster, viewers):
    a, b = viewers("a"), viewers("b")
    room = a.call("create", {"library": "isr-expansion"})["room"]["room"]
    assert b.call("join", {"room": room})["ok"]
    wait_until(lambda: a.latest() and b.latest() and a.latest()[2] > 500, 20, "both viewers getting frames")
    assert b.call("control", {"action": "pause"})["ok"]              # through web process B ...
    wait_until(lambda: a.latest()[3] is False, 5, "viewer A seeing the pause")   # ... seen on A
    paused_at = a.latest()[2]
    time.sleep(0.5)
    assert a.latest()[2] == paused_at and b.latest()[2] == paused_at
    crashed = a.call("command", {"op": "crash", "broker": 1})         # through A ...
    assert crashed["ok"], crashed
    assert a.call("control", {"action": "play"})["ok"]
    for viewer, name in ((b, "B"), (a, "A")):                          # ... seen on B (and A)
        wait_until(lambda: viewer.entities.get("b:1", {}).get("state") not in (None, "running"), 10,
                   f"viewer {name} seeing broker 1 crashed")
    wait_until(lambda: b.latest()[2] > paused_at + 300, 10, "B seeing the room play again")


def test_a_viewer_leaving_one_web_process_leaves_the_room_for_everyone(cluster, viewers):
    a, b = viewers("a"), viewers("b")
    room = a.call("create", {"library": "isr-expansion"})["room"]["room"]
    assert b.call("join", {"room": room})["ok"]
    b.close()
    url = f"{cluster['a']}/api/rooms/{room}"
    wait_until(lambda: json.load(urllib.request.urlopen(url, timeout=5))["viewers"] == 1, 10,
               "the room counting one viewer")


def post(base, path, body):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Origin": base})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return reply.status, json.load(reply)


def finished_job(base, reply, timeout=60):
    status, body = reply
    if status != 202:
        return body
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = json.load(urllib.request.urlopen(base + body["job"]["url"], timeout=10))["job"]
        if job["state"] not in ("queued", "running"):
            assert job["state"] == "done", job
            return job["result"]
        time.sleep(0.2)
    pytest.fail("the job did not end")


def test_a_room_of_web_a_is_saved_and_forked_through_web_b(cluster, viewers):
    a = viewers("a")
    room = a.call("create", {"library": "isr-expansion"})["room"]["room"]
    wait_until(lambda: a.latest() and a.latest()[2] > 2500, 20, "the room reaching 2.5 s")
    status, saved = post(cluster["b"], "/api/runs", {"room": room})      # captured in the room worker
    assert status == 201 and saved["ok"], saved
    fork = finished_job(cluster["b"], post(cluster["b"], f"/api/replay/{saved['id']}/fork", {"t_ms": 2000}))
    assert fork["t_ms"] == 2000                                           # the host continues B's simulation
    joined = a.call("join", {"room": fork["room"]})                       # seen from web A
    assert joined["ok"] and joined["room"]["t_ms"] == 2000 and joined["room"]["playing"] is False
    wait_until(lambda: a.latest()[2] == 2000, 10, "viewer A getting the fork's frame")


def test_the_viewers_of_a_web_process_that_dies_leave_their_rooms(cluster, viewers):
    a = viewers("a")
    room = a.call("create", {"library": "isr-expansion"})["room"]["room"]
    web_c, base_c = start_web(cluster["procs"], "web-c", cluster["url"])
    c = Viewer(base_c)
    assert c.call("join", {"room": room})["ok"]
    url = f"{cluster['a']}/api/rooms/{room}"
    assert json.load(urllib.request.urlopen(url, timeout=5))["viewers"] == 2
    os.killpg(web_c.pid, signal.SIGKILL)          # no disconnect reaches anyone: the process is gone
    web_c.wait(timeout=10)
    wait_until(lambda: json.load(urllib.request.urlopen(url, timeout=5))["viewers"] == 1,
               mq.WEB_TTL_S + mq.WEB_GRACE_S + 10, "the dead web process's viewer leaving the room")


def test_max_rooms_is_counted_once_for_all_web_processes(cluster, viewers):
    a, b = viewers("a"), viewers("b")
    refused = None
    for i in range(MAX_ROOMS + 1):
        reply = (a if i % 2 else b).call("create", {"library": "isr-expansion"})
        if not reply["ok"]:
            refused = reply
            break
    health = json.load(urllib.request.urlopen(cluster["b"] + "/healthz", timeout=10))
    assert health["rooms"] == MAX_ROOMS
    assert refused is not None and refused["error"]["field"] == "room"
    assert "ISRLAB_MAX_ROOMS" in json.dumps(refused["error"])


def test_a_room_host_that_dies_is_told_within_seconds(cluster, viewers):
    a = viewers("a")
    os.killpg(cluster["host"].pid, signal.SIGKILL)
    cluster["host"].wait(timeout=10)
    started = time.monotonic()
    reply = a.call("create", {"library": "isr-expansion"}, timeout=30)
    took = time.monotonic() - started
    assert not reply["ok"]
    assert reply["error"]["message"].startswith("rooms are unavailable: ")
    assert took < mq.HOST_TTL_S + 3
    health = urllib.request.urlopen(cluster["a"] + "/healthz", timeout=10)
    assert health.status == 200 and "rooms_unavailable" in json.load(health)["stats"]


def test_no_room_host_and_a_stopped_redis_are_clear_refusals_and_quotas_are_shared(tmp_path):
    procs = Processes(tmp_path)
    try:
        redis_proc, url = start_redis(procs, "redis-alone")
        _web, base = start_web(procs, "web-alone", url, {"ISRLAB_QUOTA_PER_CLIENT": "3"})
        _web, other = start_web(procs, "web-other", url, {"ISRLAB_QUOTA_PER_CLIENT": "3"})
        viewer, second = Viewer(base), Viewer(other)
        try:
            reply = viewer.call("create", {"library": "isr-expansion"})
            assert not reply["ok"]
            assert reply["error"]["message"] == "rooms are unavailable: no room host is running"
            assert "isrlab rooms" in reply["error"]["allowed"]
            # each attempt was charged (as in one process) and counted once for both web processes
            assert second.call("create", {"library": "isr-expansion"})["error"]["field"] == "room"
            assert viewer.call("create", {"library": "isr-expansion"})["error"]["field"] == "room"
            over = second.call("create", {"library": "isr-expansion"})["error"]
            assert over["field"] == "quota" and over["message"].startswith("this address started 3 costly actions")
            assert "3 room" in over["message"]
            redis_proc.kill()
            redis_proc.wait(timeout=10)
            started = time.monotonic()
            reply = viewer.call("create", {"library": "isr-expansion"})
            assert time.monotonic() - started < mq.CONNECT_TIMEOUT_S + 3
            assert not reply["ok"]
            message = reply["error"]["message"]
            assert message.startswith(f"rooms are unavailable: cannot reach Redis at {url}"), message
            joined = viewer.call("join", {"room": "abcdef"})
            assert not joined["ok"] and joined["error"]["message"].startswith("rooms are unavailable")
            # without Redis, quotas fall back on each process's own count: this one has counted none
            assert viewer.call("create", {"library": "isr-expansion"})["error"]["field"] == "room"
        finally:
            viewer.close()
            second.close()
        health = urllib.request.urlopen(base + "/healthz", timeout=10)
        assert health.status == 200
        assert json.load(health)["stats"]["rooms_unavailable"].startswith("rooms are unavailable: cannot reach Redis")
    finally:
        procs.stop_all()
