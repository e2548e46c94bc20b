"""A room worker process: ``python -m app.rooms.worker`` (PyPy or CPython), started by the web
process (process.py), speaking protocol.py on its standard input and output.

It runs the very ``Runner`` the web process runs when ``ISRLAB_ROOM_WORKERS=0`` — the same loop,
slices, fair frame shares, idle removal and frames — with a transport that batches each tick's
frames into one message instead of emitting them. The web process tells it which viewers'
connections are backed up (``backlog``), so frames are planned exactly as in process.

It also keeps its rooms recoverable: a compressed snapshot of each room (the whole ``Room``,
simulation included) after it is created or reloaded and then every few simulated seconds, and a
note of each live command; the web process keeps the latest of both (recovery.py).

Flask-free on purpose (PyPy has no Flask here): it imports ``app.runner`` and the engine only.
The end of its input (the web process gone) ends it.
"""
import logging
import os
import pickle
import sys
import threading
import time
import traceback
import zlib

from engine.simulation import ENGINE_VERSION
from engine.scenario.document import ScenarioError

from ..runner.core import Runner
from ..runner.room import Room, Viewer
from . import protocol
from .recovery import restore_room

log = logging.getLogger("isrlab.room_worker")

SNAPSHOT_SIM_MS = 5000         # a playing room is snapshotted every this much simulated time ...
SNAPSHOT_MIN_WALL_S = 1.0      # ... at most once a wall second (a room at maximum speed) ...
SNAPSHOT_MAX_COMMANDS = 64     # ... or after this many live commands, whichever comes first ...
SNAPSHOT_SHARE = 0.05          # ... and within this share of the worker's time: pickling is slow
                               # under PyPy (~60-100 ms for a 60 s run of isr-expansion, 10x CPython),
                               # so with many rooms each is snapshotted less often (see _interval)
SNAPSHOTS_PER_TICK = 1         # the rest wait for the next tick: no tick pays for every room


class BatchTransport:
    """Frames of one tick, collected and sent as one message; backlogs as the web process said."""

    def __init__(self):
        self.batch = []
        self.queued = {}

    def send(self, room_id, text, sids, everyone):
        self.batch.append((room_id, text, list(sids), list(everyone)))

    def backlog(self, sid):
        return self.queued.get(sid, 0)


class Out:
    """The one writer of standard output (the tick thread and the request thread share it)."""

    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()

    def send(self, message):
        data = protocol.encode(message)
        with self.lock:
            self.stream.write(data)
            self.stream.flush()


class WorkerRunner(Runner):
    def __init__(self, settings, out):
        settings = {**settings, "FRAME_BUDGET": settings.get("ROOM_WORKER_FRAME_BUDGET", settings["FRAME_BUDGET"])}
        super().__init__(settings, BatchTransport())
        self.out = out
        self.marks = {}              # room id -> (run, commands, t_ms, wall) of its last snapshot
        self.snapshot_cost_s = 0.02  # what one snapshot costs (moving average)
        self.reported = {}           # room id -> the status last sent

    # -- the loop: the in-process tick, then one message ------------------------------------------
    def tick(self, now=None):
        now = self.clock() if now is None else now
        super().tick(now)
        with self.lock:
            rooms = list(self.rooms.values())
        frames, self.transport.batch = self.transport.batch, []
        status = {}
        for room in rooms:
            state = status_of(room)
            if self.reported.get(room.id) != state:
                self.reported[room.id] = status[room.id] = state
        if frames or status:
            self.out.send(("tick", frames, status))
        due = sorted((self._overdue(room, now), room.id) for room in rooms)
        for lateness, room_id in due[-SNAPSHOTS_PER_TICK:]:
            if lateness > 0:
                self.snapshot(self.rooms.get(room_id), now)

    def cleanup(self, now=None):
        gone = super().cleanup(now)
        for room_id in gone:
            self.marks.pop(room_id, None)
            self.reported.pop(room_id, None)
        if gone:
            self.out.send(("removed", gone))
        self.out.send(("stats", dict(self.stats, rooms=len(self.rooms), pace=self.pace)))
        return gone

    # -- snapshots --------------------------------------------------------------------------------
    def _overdue(self, room, now):
        mark = self.marks.get(room.id)
        if mark is None:
            return 1e9
        run, commands, t_ms, wall = mark
        sim = room.sim
        if room.run_no != run:
            return 1e9
        if len(sim.commands) - commands >= SNAPSHOT_MAX_COMMANDS:
            return 1e6
        if now - wall < self._interval():
            return 0
        return (sim.now_ms - t_ms) - SNAPSHOT_SIM_MS + 1 if sim.now_ms - t_ms >= SNAPSHOT_SIM_MS else 0

    def _interval(self):
        """Wall seconds between two snapshots of one room: every room once per round, a round
        within SNAPSHOT_SHARE of the time."""
        return max(SNAPSHOT_MIN_WALL_S, len(self.rooms) * self.snapshot_cost_s / SNAPSHOT_SHARE)

    def snapshot(self, room, now=None):
        """Send the room's whole state (compressed), and remember when."""
        if room is None:
            return
        started = time.perf_counter()
        with room.lock:
            blob = zlib.compress(pickle.dumps(room, protocol=protocol.PROTOCOL), 1)
            mark = (room.run_no, len(room.sim.commands), room.sim.now_ms, self.clock() if now is None else now)
        self.snapshot_cost_s = 0.8 * self.snapshot_cost_s + 0.2 * (time.perf_counter() - started)
        self.marks[room.id] = mark
        self.out.send(("snapshot", room.id, mark[0], mark[1], mark[2], blob))

    # -- calls from the web process ---------------------------------------------------------------
    def call(self, method, args):
        if method == "room":
            return self.room_call(*args)
        return getattr(self, "do_" + method)(*args)

    def do_ping(self):
        return {"engine_version": ENGINE_VERSION, "python": sys.implementation.name, "pid": os.getpid()}

    def do_warm(self, library_name):
        """A spare worker warms its JIT on what a recovery does (build, advance, pickle, restore)
        so that taking over a dead worker's rooms is quick; nothing of it stays."""
        room = Room(".warm", self.library[library_name], self.clock())
        for _ in range(3):
            room.sim.advance_to(room.sim.now_ms + 4000, lambda: room._observe(room.sim))
            blob = zlib.compress(pickle.dumps(room, protocol=protocol.PROTOCOL), 1)
            restore_room(blob, [], None, self.clock(), None)
        return len(blob)

    def do_create(self, room_id, doc, source, engine_version, paused, prepared):
        prepare = None
        if prepared is not None:
            sim = pickle.loads(prepared)
            prepare = lambda _fresh: sim  # noqa: E731 - the fork's simulation, computed elsewhere
        # a library scenario is the library's (not checked against the limits of a custom one)
        library_name = source.get("name") if source.get("kind") == "library" else None
        room = self.create(scenario=None if library_name else doc, library_name=library_name, room_id=room_id,
                           prepare=prepare, engine_version=engine_version, paused=paused)
        room.source = source
        self.snapshot(room)
        return room.describe()

    def do_restore(self, room_id, blob, commands, status, viewers, notice, mark):
        room = restore_room(blob, commands, status, self.clock(), notice)
        room.id = room_id
        # the web process still holds that snapshot and these commands: no new snapshot now
        self.marks[room_id] = (mark[0], mark[1], mark[2], self.clock())
        with self.lock:
            for sid in viewers:
                room.viewers[sid] = Viewer(sid)
                self.sid_room[sid] = room_id
            room.last_active_s = self.clock()
            self.rooms[room_id] = room
        self.ensure_running()
        return room.describe()

    def do_join(self, room_id, sid):
        room, _left = self.join(room_id, sid)
        return room.describe()

    def do_leave_room(self, room_id, sid):
        with self.lock:
            if self.sid_room.get(sid) == room_id:
                self.sid_room.pop(sid)
        return self._leave_room(room_id, sid)

    def do_resync(self, sid):
        self.resync(sid)

    def do_remove(self, room_id):
        self.marks.pop(room_id, None)
        self.reported.pop(room_id, None)
        return self.remove(room_id) is not None

    def room_call(self, room_id, name, args):
        room = self.require(room_id)
        now = self.clock()
        if name == "control":
            action, value = args
            before = room.run_no
            reply = room.control(action, now, value)
            if room.run_no != before:                    # restart / replay: a new run
                self.snapshot(room)
            return reply
        if name == "load":
            reply = room.load(args[0], now, args[1])
            self.snapshot(room)
            return reply
        if name == "reconfigure":
            reply = room.reconfigure(args[0], args[1], now, self.settings)
            self.snapshot(room)
            return reply
        if name == "apply":
            with room.lock:
                command = room.apply(args[0], self.settings)
                note = ("command", room_id, room.run_no, len(room.sim.commands) - 1, command)
            self.out.send(note)
            return command
        if name not in READS:
            raise ValueError(f"not a room call: {name}")
        return getattr(room, name)(*args)


#: room methods the web process may call as they are (they return plain data)
READS = frozenset(("describe", "info", "inspect", "ledger", "replay_document", "series_of", "metrics_now",
                   "capture", "now_ms"))


def status_of(room):
    """What the web process keeps of a room between snapshots: the moment it reached, and how it
    was playing (restored as they were after a recovery)."""
    return (room.run_no, room.sim.now_ms, room.playing, room.paused_reason, room.speed, room.pause_on_violation)


def serve(stdin, stdout):
    out = Out(stdout)
    message = protocol.read(stdin)
    if message[0] != "setup":
        raise protocol.ProtocolError(f"expected setup, got {message[0]!r}")
    runner = WorkerRunner(message[1], out)
    while True:
        try:
            message = protocol.read(stdin)
        except protocol.ProtocolError:
            break
        kind = message[0]
        if kind == "stop":
            break
        if kind == "backlog":
            runner.transport.queued.update(message[1])
            for sid in [s for s, n in runner.transport.queued.items() if not n]:
                runner.transport.queued.pop(sid, None)
            continue
        _id, method, args = message[1:]
        try:
            answer = ("reply", _id, "ok", runner.call(method, args))
        except ScenarioError as exc:               # the user's: AppError, the engine's ScenarioError
            answer = ("reply", _id, "user", protocol.user_error_fields(exc))
        except MemoryError:
            answer = ("reply", _id, "error", "MemoryError: this room worker is out of memory")
        except Exception:  # noqa: BLE001 - reported to the web process, which logs it
            answer = ("reply", _id, "error", traceback.format_exc())
        try:
            out.send(answer)
        except OSError:                            # the web process is gone
            break
    runner.stop()
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s room-worker %(process)d %(name)s: %(message)s")
    options = dict(zip(argv[::2], argv[1::2]))
    memory = int(options.get("--memory-bytes", 0))
    if memory > 0:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if int(options.get("--nice", 0)) > 0:
        # below the web process, which answers requests and relays the frames: under a CPU-bound
        # load it is scheduled first (issue 31: /healthz p99 under hostile load), and a worker's
        # rooms are still ahead of background jobs (app.workers.NICE)
        os.nice(int(options["--nice"]))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr                 # a stray print must never corrupt the protocol
    parent = os.getppid()

    def watch():                            # belt and braces: the end of input already ends it
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)
    threading.Thread(target=watch, daemon=True, name="isrlab-exit-with-parent").start()
    return serve(stdin, stdout)


if __name__ == "__main__":
    sys.exit(main())
