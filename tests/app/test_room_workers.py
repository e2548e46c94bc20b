"""Live rooms in room worker processes (app/rooms/): the same run whichever process simulates
it, errors that keep their fields, frames relayed with backlogs respected, bounded journals, and
a worker killed with SIGKILL costing its rooms only a moment."""
import hashlib
import json
import os
import signal
import threading
import time

import pytest

from app.config import DEFAULTS
from app.rooms.recovery import MAX_JOURNAL, Journals
from app.rooms.remote import RemoteRunner
from app.runner import AppError, Runner
from engine.simulation import Simulation


class Recorder:
    """A transport that keeps each room's frames (time of arrival, parsed clock, full or not)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.frames = {}
        self.busy = set()

    def send(self, room_id, text, sids, everyone):
        frame = json.loads(text)
        with self.lock:
            self.frames.setdefault(room_id, []).append((time.monotonic(), frame["clock"], frame["full"], list(sids)))

    def backlog(self, sid):
        return 1 if sid in self.busy else 0

    def last(self, room_id):
        with self.lock:
            return self.frames.get(room_id, [None])[-1]


def digest(events):
    return hashlib.sha256(json.dumps(events, sort_keys=True).encode()).hexdigest()


@pytest.fixture(scope="module")
def remote():
    rec = Recorder()
    runner = RemoteRunner({**DEFAULTS, "ROOM_WORKERS": 2, "SECRET_KEY": "t", "MAX_ROOMS": 20}, rec)
    runner.recorder = rec
    yield runner
    runner.stop()


def wait_for(predicate, timeout=20.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


#: a session that moves time deterministically: a step is bounded by wall time (STEP_BUDGET_S) and
#: may stop at another moment on a slower interpreter, a command while paused moves time by 1 ms
SESSION = [("apply", {"op": "produce", "topic": "orders", "count": 5}), ("apply", {"op": "heal"}),
           ("apply", {"op": "produce", "topic": "orders", "count": 3})]


def boot(room, now=time.monotonic):
    """Step (deterministically) until the brokers have started."""
    while room.describe()["t_ms"] < 400:
        room.control("step", now())


def drive(room, now, tick_until_done):
    """The same session on any room: paused from its first moment, commands and steps, then to the end."""
    room.control("pause_on_violation", now(), False)
    for call in SESSION:
        if call[0] == "apply":
            room.apply(call[1], {**DEFAULTS})
        else:
            room.control("step", now())
    room.control("speed", now(), "max")
    room.control("play", now())
    tick_until_done()
    return room.capture()


def test_a_run_is_the_same_in_a_worker_as_in_process(remote):
    clock = [100.0]
    local = Runner({**DEFAULTS, "RUNNER_AUTOSTART": False}, Recorder(), clock=lambda: clock[0], wall=lambda: clock[0])
    room = local.create(library_name="isr-expansion", paused=True)

    def tick_local():
        for _ in range(100_000):
            if room.sim.finished:
                break
            clock[0] += 1 / 30
            local.tick(clock[0])
    here = drive(room, lambda: clock[0], tick_local)

    handle = remote.create(library_name="isr-expansion", paused=True)
    there = drive(handle, time.monotonic, lambda: wait_for(lambda: handle.describe()["finished"], timeout=120))
    assert there["finished"] and here["finished"]
    assert [c["at_ms"] for c in here["scenario"]["timeline"] if c.get("by") == "user"] == \
        [c["at_ms"] for c in there["scenario"]["timeline"] if c.get("by") == "user"]
    assert digest(there["events"]) == digest(here["events"])
    # and both are the run the session's scenario replays, from scratch
    assert digest(Simulation(there["scenario"]).run()["history"]) == digest(there["events"])
    remote.remove(handle.id)


def test_room_workers_run_below_the_web_process_and_above_background_jobs(remote):
    """ISRLAB_ROOM_WORKER_NICE (3): under a CPU-bound load the web process, which answers
    requests and relays frames, is scheduled before the simulations, and they before jobs (10)."""
    from app.workers import NICE
    remote.ensure_running()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    workers = [w for w in remote.workers if w is not None]
    assert len(workers) == 2
    for worker in workers:
        assert os.getpriority(os.PRIO_PROCESS, worker.pid) == mine + DEFAULTS["ROOM_WORKER_NICE"]
    assert mine < mine + DEFAULTS["ROOM_WORKER_NICE"] < mine + NICE


def test_errors_keep_their_field_message_allowed_and_status(remote):
    handle = remote.create(library_name="isr-expansion", paused=True)
    with pytest.raises(AppError) as bad:
        handle.control("warp", None)
    assert bad.value.field == "action" and "not a control" in bad.value.message
    assert bad.value.allowed.startswith("play, pause") and bad.value.status == 400
    with pytest.raises(AppError) as bad:
        handle.inspect("nope-7")
    assert bad.value.field == "partition"
    with pytest.raises(AppError) as missing:
        remote.require("NoSuchRoom1")
    assert missing.value.status == 404
    remote.remove(handle.id)


def test_frames_reach_viewers_and_a_backed_up_viewer_skips(remote):
    rec = remote.recorder
    handle = remote.create(library_name="isr-expansion")
    remote.join(handle.id, "fast")
    assert wait_for(lambda: rec.last(handle.id) is not None)
    assert rec.frames[handle.id][0][2] == 1                        # the first frame is full
    rec.busy.add("slow")
    remote.join(handle.id, "slow")
    time.sleep(1.0)
    with rec.lock:
        got = [f for f in rec.frames[handle.id] if "slow" in f[3]]
    assert len(got) <= 2, "a backed-up connection gets no more frames"   # at most the one sent on joining
    rec.busy.discard("slow")
    assert wait_for(lambda: any("slow" in f[3] for f in rec.frames[handle.id][-5:]), timeout=5)
    assert remote.room_of("slow") is handle and handle.describe()["viewers"] == 2
    assert remote.leave("slow") == handle.id and handle.describe()["viewers"] == 1
    remote.remove(handle.id)


def test_the_journals_are_bounded():
    journals = Journals(budget_bytes=100)
    journals.open("r")
    journals.open("s")
    assert journals.snapshot("r", 1, 0, 0, b"x" * 60)
    assert journals.snapshot("s", 1, 0, 0, b"z" * 30)
    journals.command("r", 1, 0, {"at_ms": 5})
    assert not journals.snapshot("r", 1, 1, 10, b"y" * 75), "over the budget"
    assert journals.bytes == 90
    assert tuple(journals.recovery_of("r")[:2]) == (b"x" * 60, [{"at_ms": 5}]), "the older snapshot and the commands since"
    assert journals.snapshot("r", 1, 1, 10, b"y" * 65)
    assert tuple(journals.recovery_of("r")[:2]) == (b"y" * 65, []), "a newer snapshot drops the commands it holds"
    for i in range(MAX_JOURNAL + 1):
        journals.command("s", 1, i, {"at_ms": i})
    assert journals.recovery_of("s") is None, "past MAX_JOURNAL commands a room is no longer recoverable"
    journals.forget("r")
    journals.forget("s")
    assert journals.bytes == 0
    # a worker's late snapshot or command of a room removed here, or never created here (its
    # creation timed out), is not kept: it came back through them and held its bytes for good
    assert not journals.snapshot("r", 1, 2, 20, b"w" * 10)
    journals.command("t", 1, 0, {"at_ms": 1})
    assert journals.bytes == 0 and journals.rooms == {}


def test_a_room_removed_here_is_not_journaled_again_by_its_workers_late_messages(remote):
    handle = remote.create(library_name="isr-expansion", paused=True)
    worker = remote.placement[handle.id]
    assert wait_for(lambda: remote.journals.recovery_of(handle.id) is not None, timeout=10)
    before = remote.journals.bytes
    remote.remove(handle.id)
    assert remote.journals.bytes < before
    remote._on_message(worker, ("snapshot", handle.id, 1, 0, 0, b"late" * 1000))
    remote._on_message(worker, ("command", handle.id, 1, 0, {"at_ms": 5}))
    assert handle.id not in remote.journals.rooms


def test_a_killed_worker_costs_its_rooms_only_a_moment(remote):
    rec = remote.recorder
    rooms = [remote.create(library_name="isr-expansion", paused=True) for _ in range(3)]
    for i, handle in enumerate(rooms):
        handle.control("pause_on_violation", None, False)
        boot(handle)
        handle.apply({"op": "crash", "broker": 1})
        remote.join(handle.id, f"viewer-{i}")
        handle.control("speed", None, 3.0)
        handle.control("play", None)
    victim = remote.placement[rooms[0].id]
    theirs = [h for h in rooms if remote.placement[h.id] is victim]
    others = [h for h in rooms if remote.placement[h.id] is not victim]
    assert len(theirs) == 2 and len(others) == 1
    assert wait_for(lambda: remote.spare is not None, timeout=30), "a warm spare is ready"
    time.sleep(5.0)
    for handle in theirs:                          # a command after the latest snapshot, too
        handle.apply({"op": "restart", "broker": 1})
    time.sleep(0.3)
    reached = {h.id: rec.last(h.id)[1]["t_ms"] for h in rooms}
    killed_at = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)

    def moving_again(handle):
        last = rec.last(handle.id)
        return last[0] > killed_at and last[1]["t_ms"] > reached[handle.id] + 50
    back = wait_for(lambda: all(moving_again(h) for h in theirs), timeout=10.0)
    print("recovered after", time.monotonic() - killed_at, remote.stats)
    assert back and time.monotonic() - killed_at < 2.0, "both rooms move again within 2 s"
    for handle in theirs:
        resumed = [f for f in rec.frames[handle.id] if f[0] > killed_at]
        assert resumed[0][2] == 1 and resumed[0][1]["t_ms"] >= reached[handle.id], "a full frame, from the moment reached"
        assert "worker process stopped" in resumed[0][1]["notice"]
    time.sleep(0.5)
    for handle in others:                          # the other worker's room never stopped
        times = [f[0] for f in rec.frames[handle.id] if f[0] > killed_at - 0.5]
        assert max(b - a for a, b in zip(times, times[1:])) < 0.5
    assert remote.stats["recovered"]["rooms"] >= 2
    # the recovered runs are the uninterrupted ones: run to the end, compare with a fresh run of
    # the same session's scenario
    for handle in theirs:
        handle.control("speed", None, "max")
        assert wait_for(lambda: handle.describe()["finished"], timeout=120)
        captured = handle.capture()
        assert len([op for op in captured["scenario"]["timeline"] if op.get("by") == "user"]) == 2
        assert digest(Simulation(captured["scenario"]).run()["history"]) == digest(captured["events"])
    for handle in rooms:
        remote.remove(handle.id)


def test_a_room_the_worker_removes_as_idle_leaves_every_call_answered():
    """The worker removes an unwatched room itself and reports it; the web process only forgets it.
    Telling the worker back (a call from the thread that reads the worker's replies) waited for a
    reply only that thread could read: found in a soak, where the worker then blocked on a full
    pipe and every room call after it timed out after 30 s."""
    rec = Recorder()
    runner = RemoteRunner({**DEFAULTS, "ROOM_WORKERS": 1, "ROOM_WORKER_SPARE": 0, "SECRET_KEY": "t",
                           "ROOM_IDLE_S": 0.2}, rec)
    try:
        idle = runner.create(library_name="isr-expansion")
        assert wait_for(lambda: runner.get(idle.id) is None, timeout=15), "the idle room was not removed"
        started = time.monotonic()
        fresh = runner.create(library_name="isr-expansion")
        runner.join(fresh.id, "viewer")
        assert time.monotonic() - started < 5.0
        assert wait_for(lambda: rec.last(fresh.id) is not None, timeout=10)
    finally:
        runner.stop()


def test_an_owner_over_the_quota_evicts_the_oldest_room_from_its_worker_too():
    """MAX_ROOMS_PER_ADDRESS: the owner's least recently watched room makes way, here and in its
    worker (told after the runner's lock is released: a call made holding it could wait for a
    reply the reader thread, blocked on the same lock, never reads)."""
    rec = Recorder()
    runner = RemoteRunner({**DEFAULTS, "ROOM_WORKERS": 1, "ROOM_WORKER_SPARE": 0, "SECRET_KEY": "t",
                           "MAX_ROOMS_PER_ADDRESS": 1}, rec)
    try:
        first = runner.create(library_name="isr-expansion", owner="10.0.0.7")
        worker = runner.placement[first.id]
        second = runner.create(library_name="isr-expansion", owner="10.0.0.7")
        assert runner.get(first.id) is None and runner.get(second.id) is not None
        assert worker.rooms == {second.id}
        with pytest.raises(AppError) as gone:
            worker.call("room", first.id, "describe", ())     # the worker no longer has it either
        assert gone.value.status == 404
    finally:
        runner.stop()


def stopped_worker(monkeypatch, on_message=lambda *_: None):
    """A real worker, then stopped with SIGSTOP (stuck: it reads nothing), with a 1 s stall limit."""
    from app.rooms import pipe_writer, process
    monkeypatch.setattr(pipe_writer, "STALL_S", 1.0)
    exited = threading.Event()
    worker = process.RoomWorker(0, process.worker_python({}), {**DEFAULTS, "SECRET_KEY": "t"}, 0, 0,
                                on_message, lambda _w: exited.set())
    assert worker.call("ping", timeout=60)["pid"] == worker.pid
    return worker, exited


def flood(worker):
    """Notes past what the pipe holds (64 kB): each send returns at once, queued."""
    note = {f"viewer-{i:05d}": i for i in range(20000)}            # ~400 kB each
    started = time.monotonic()
    assert all(worker.send(("backlog", note)) for _ in range(3)), "a send to a live worker was refused"
    assert time.monotonic() - started < 1.0, "a sender waited on the worker's pipe"


def test_a_worker_that_reads_nothing_is_killed_and_no_caller_waits_for_good(monkeypatch):
    """A stuck worker (stopped here with SIGSTOP) reads nothing: its input pipe fills. Written
    directly, the caller, and every caller after it, waited for good, each holding a thread.
    Sends are queued; the writer gives the worker up after STALL_S and it is killed, so its
    rooms can move."""
    worker, exited = stopped_worker(monkeypatch)
    try:
        os.kill(worker.pid, signal.SIGSTOP)
        flood(worker)
        assert exited.wait(10), "the stuck worker was not killed (its rooms would never move)"
        assert not worker.send(("backlog", {"a": 1}))
        with pytest.raises(AppError) as gone:
            worker.call("ping")
        assert gone.value.status == 503
    finally:
        worker.stop()


def test_a_worker_is_not_killed_while_our_side_is_the_slow_one(monkeypatch):
    """While the thread reading the worker's output is held up on our side (a frame relay waiting
    on Redis), a worker blocked writing to us reads nothing either: that is our delay, not a stuck
    worker, and killing it would move rooms into workers held up the same way."""
    release, handling = threading.Event(), threading.Event()

    def slow_relay(_worker, message):
        if message[0] == "snapshot":
            handling.set()
            release.wait(30)
    worker, exited = stopped_worker(monkeypatch, slow_relay)
    try:
        from engine.scenario.library import library
        worker.tell("create", "slow", library()["isr-expansion"], {"kind": "library", "name": "isr-expansion"},
                    None, True, None)
        assert handling.wait(10)
        os.kill(worker.pid, signal.SIGSTOP)
        flood(worker)
        assert not exited.wait(3.0), "a worker was killed for our own reader's delay"
        release.set()                        # our side moves again; the worker is still stopped
        assert exited.wait(10), "the stuck worker was not killed once our side was not the slow one"
    finally:
        release.set()
        worker.stop()


def test_a_worker_started_while_the_spare_takes_the_dead_ones_place_does_not_replace_it(monkeypatch):
    """ensure_running (a create) starts a worker for a dead one's slot while the recovery puts the
    warm spare there: the spare, which holds the recovered rooms, keeps the slot; the fresh one
    stops. Overwritten, the spare and its rooms ran on with no slot: never chosen, never stopped."""
    rec = Recorder()
    runner = RemoteRunner({**DEFAULTS, "ROOM_WORKERS": 1, "SECRET_KEY": "t"}, rec)
    try:
        handle = runner.create(library_name="isr-expansion")
        assert wait_for(lambda: runner.spare is not None, timeout=60), "a warm spare is ready"
        dead, spare = runner.workers[0], runner.spare
        dead.stop()                               # stopped, not dead: no recovery starts by itself
        started = []
        start_worker = runner._start_worker

        def start_during_recovery(index):
            worker = start_worker(index)
            started.append(worker)
            runner._recover(dead)                 # the spare is promoted meanwhile
            return worker
        monkeypatch.setattr(runner, "_start_worker", start_during_recovery)
        runner.ensure_running()
        assert runner.workers[0] is spare and spare.alive
        assert runner.placement[handle.id] is spare and spare.rooms == {handle.id}
        assert wait_for(lambda: not started[0].alive and started[0].proc.poll() is not None, timeout=10), \
            "the fresh worker was not stopped"
    finally:
        runner.stop()


class Sleeps:
    """Unpickled in the worker, it sleeps there: the worker's thread that reads its input hangs
    (as on a fork whose state takes forever to load) while its tick thread goes on."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __reduce__(self):
        return time.sleep, (self.seconds,)


def test_a_worker_whose_input_reader_hangs_is_killed_though_its_rooms_still_tick(monkeypatch):
    """The worker's tick thread keeps sending frames and stats while the thread that reads its
    input hangs: counting any message as progress never found it stuck, and every call to its
    rooms waited 30 s. Only answers to calls count."""
    import pickle
    from engine.scenario.library import library
    worker, exited = stopped_worker(monkeypatch)
    try:
        scenario, source = library()["isr-expansion"], {"kind": "library", "name": "isr-expansion"}
        worker.call("create", "ticking", scenario, source, None, False, None, timeout=60)
        worker.tell("create", "hangs", scenario, source, None, False, pickle.dumps(Sleeps(60)))
        flood(worker)
        assert exited.wait(15), "a worker that reads nothing was not killed: its rooms' ticks counted as progress"
    finally:
        worker.stop()


def test_a_message_its_queue_cannot_hold_is_refused_and_costs_the_worker_nothing(monkeypatch):
    """Larger than the whole queue: 413, the worker left alone and none of its 256 call slots
    spent (each refusal kept one, and after 256 the worker refused every call)."""
    from app.rooms import pipe_writer, process
    monkeypatch.setattr(pipe_writer, "MAX_QUEUED_BYTES", 100_000)
    exited = threading.Event()
    worker = process.RoomWorker(0, process.worker_python({}), {**DEFAULTS, "SECRET_KEY": "t"}, 0, 0,
                                lambda *_: None, lambda _w: exited.set())
    try:
        for _ in range(process.MAX_PENDING + 10):
            with pytest.raises(AppError) as refused:
                worker.call("ping", b"x" * 200_000)
            assert refused.value.status == 413 and "too large" in refused.value.message
        assert worker.tell("ping", b"x" * 200_000) is False
        assert not worker._pending and not worker._told
        assert worker.call("ping", timeout=30)["pid"] == worker.pid and not exited.is_set()
    finally:
        worker.stop()


def test_an_idle_workers_writer_thread_ends_and_comes_back_with_the_next_call(monkeypatch):
    """The spare worker idles until a worker dies: its writer thread ends meanwhile (issue 31's
    thread bound), and the next call starts one again."""
    from app.rooms import pipe_writer, process
    monkeypatch.setattr(pipe_writer, "IDLE_EXIT_S", 0.3)
    worker = process.RoomWorker(7, process.worker_python({}), {**DEFAULTS, "SECRET_KEY": "t"}, 0, 0,
                                lambda *_: None, lambda _w: None)

    def writers():
        return [t for t in threading.enumerate() if t.name == "isrlab-room-worker-7-writer"]
    try:
        assert worker.call("ping", timeout=60)["pid"] == worker.pid
        assert wait_for(lambda: not writers(), timeout=5), "an idle writer thread stayed"
        assert worker.call("ping", timeout=10)["pid"] == worker.pid
        assert len(writers()) <= 1
    finally:
        worker.stop()
    assert worker.proc.poll() is not None and not writers()
