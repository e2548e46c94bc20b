"""The runner: owns every live simulation (one per room) and is the only place where wall time
meets simulated time.

One background task loops at the frame rate: for each room it advances simulated time by the
wall time elapsed times the room's speed (bounded by a slice of wall time so one big or
"as fast as possible" room cannot starve the others), builds one frame per room, serialises it
once per group of viewers and hands it to the transport. Rooms nobody has watched for
``ROOM_IDLE_S`` are removed.

The transport is anything with ``send(room_id, text, sids, everyone)`` and ``backlog(sid)``; the
web layer plugs Socket.IO in, tests plug in a recorder. ``tick(now)`` runs one iteration, so tests
drive the runner with a fake clock and no thread.

For other parts of the app (saving runs, opening links): ``create(scenario)`` makes a room from a
scenario document, ``get(room_id)`` returns the ``Room``. The web layer uses only the room's
methods that return plain data (``describe``, ``info``, ``replay_document``, ``series_of``,
``metrics_now``, ``capture``, ``now_ms``, ``control``, ``apply`` ...), never ``room.sim``: the same
calls reach a room that lives in a room worker process (``app.rooms``, ``RemoteRunner``).
"""
import gc
import logging
import secrets
import threading
import time

from engine.tools.cli import tune_gc
from engine.scenario.library import library

from .errors import AppError
from .fairness import TickCosts, account, frame_shares, may_send
from .limits import check_room_id, check_scenario
from .room import Room, Viewer

#: Retry-After of a refused room: about how soon an idle room can make way (rooms are swept once a
#: frame and an unwatched one is the first to go).
ROOM_RETRY_AFTER_S = 30

log = logging.getLogger(__name__)


#: rooms removed are collected (with everything else) at most this often, in seconds
FULL_COLLECT_EVERY_S = 30.0


class NullTransport:
    def send(self, room_id, text, sids, everyone):
        pass

    def backlog(self, sid):
        return 0


class Runner:
    def __init__(self, settings, transport=None, clock=time.monotonic, wall=time.time,
                 sleep=time.sleep, start_task=None):
        self.settings = settings
        self.transport = transport or NullTransport()
        self.clock = clock
        self.wall = wall
        self.sleep = sleep
        self.start_task = start_task
        self.lock = threading.RLock()
        self.rooms = {}
        self.sid_room = {}
        self.library = library()
        self._thread = None
        self._stopping = threading.Event()
        self.stats = {"ticks": 0, "frames": 0, "sends": 0, "tick_ms_max": 0.0, "late_ticks": 0}
        self._last_cleanup = 0.0
        self._removed_since_collect = 0   # rooms removed since the last full collection
        self._last_collect = None
        # the share of TICK_BUDGET simulations may use now: shrinks while ticks run late (a busy
        # machine or interpreter), grows back when they keep time — see run_forever
        self.pace = 1.0

    # -- rooms -------------------------------------------------------------------------------------------
    def scenario_for(self, library_name=None, scenario=None):
        """(scenario document, source) from a library name or a document, checked against limits."""
        return scenario_for(self.library, self.settings, library_name, scenario)

    def create(self, scenario=None, library_name=None, room_id=None, owner=None, prepare=None,
               engine_version=None, paused=False):
        """A new room running ``scenario`` (a document) or a library scenario. ``owner`` (the
        client's address) is limited to MAX_ROOMS_PER_ADDRESS rooms at once. ``paused``: the room
        starts paused (a fork waits at its moment), not a tick later."""
        doc, source = self.scenario_for(library_name, scenario)
        with self.lock:
            if len(self.rooms) >= self.settings["MAX_ROOMS"]:
                raise self._server_full()
            oldest = owner_quota(owner, self.rooms.values(), self.settings.get("MAX_ROOMS_PER_ADDRESS"))
            if oldest is not None:
                self.remove(oldest.id)           # the owner's least recently watched room makes way
            if room_id is None:
                room_id = secrets.token_urlsafe(6)
                while room_id in self.rooms:
                    room_id = secrets.token_urlsafe(6)
            else:
                check_room_id(room_id)
                if room_id in self.rooms:
                    raise AppError("room", "already exists", "a new room id")
        room = Room(room_id, doc, self.clock(), source,   # builds the cluster outside the lock
                    max_records=self.settings.get("MAX_RECORDS", 1_000_000), prepare=prepare,
                    engine_version=engine_version)
        room.owner = owner
        if paused:
            room.playing, room.paused_reason = False, "user"
        with self.lock:
            if len(self.rooms) >= self.settings["MAX_ROOMS"]:
                raise self._server_full()
            self.rooms[room_id] = room
        self.ensure_running()
        return room

    def _server_full(self):
        return server_full(len(self.rooms), self.settings["MAX_ROOMS"])

    def get(self, room_id):
        with self.lock:
            return self.rooms.get(room_id)

    def require(self, room_id):
        check_room_id(room_id)
        room = self.get(room_id)
        if room is None:
            raise AppError("room", f"no room {room_id!r} (it may have been closed after being idle)",
                           "open a new simulation", status=404)
        return room

    def remove(self, room_id):
        with self.lock:
            room = self.rooms.pop(room_id, None)
            if room is not None:
                for sid in list(room.viewers):
                    self.sid_room.pop(sid, None)
        return room

    def room_of(self, sid):
        with self.lock:
            room_id = self.sid_room.get(sid)
            return self.rooms.get(room_id) if room_id else None

    # -- viewers -----------------------------------------------------------------------------------------
    def join(self, room_id, sid):
        room = self.require(room_id)
        with self.lock:
            previous = self.sid_room.get(sid)
            if previous == room_id:
                return room, None
            with room.lock:
                if len(room.viewers) >= self.settings["MAX_VIEWERS"]:
                    raise AppError("room", f"{len(room.viewers)} viewers already", "another room")
                room.viewers[sid] = Viewer(sid)
                room.last_active_s = self.clock()
                if room.paused_reason == "no viewers":
                    room.playing, room.paused_reason = True, None
                    room.wall_last = room.last_active_s
            self.sid_room[sid] = room_id
        left = self._leave_room(previous, sid) if previous else None
        self.ensure_running()
        return room, left

    def leave(self, sid):
        with self.lock:
            room_id = self.sid_room.pop(sid, None)
        return self._leave_room(room_id, sid) if room_id else None

    def _leave_room(self, room_id, sid):
        room = self.get(room_id)
        if room is None:
            return None
        with room.lock:
            room.viewers.pop(sid, None)
            room.last_active_s = self.clock()
            if not room.viewers and room.playing:
                room.playing, room.paused_reason = False, "no viewers"
        return room_id

    def resync(self, sid):
        room = self.room_of(sid)
        if room is None:
            raise AppError("room", "you are not watching a room", "join a room first")
        with room.lock:
            viewer = room.viewers.get(sid)
            if viewer is not None:
                viewer.last_seq = 0
        return room

    # -- the loop ------------------------------------------------------------------------------------------
    def tick(self, now=None):
        """One iteration: advance every room, build and send frames, remove idle rooms."""
        now = self.clock() if now is None else now
        period = 1.0 / self.settings["FRAME_RATE"]
        with self.lock:
            rooms = list(self.rooms.values())
        playing = sum(1 for r in rooms if r.playing) or 1
        # the floor is small on purpose: under load the pace is low and six rooms at maximum speed
        # with a 2 ms floor each took 12 ms of every tick, whatever the pace asked
        slice_s = max(0.0005, period * self.settings["TICK_BUDGET"] * self.pace / playing)
        # frames are fair too (app/runner/fairness.py): cheap rooms send every frame, expensive
        # ones split what is left and send less often, never slowing their neighbours
        shares = frame_shares({r.id: r.frame_cost_s for r in rooms if r.viewers},
                              period * self.settings.get("FRAME_BUDGET", 0.25))
        if self.pace < 1.0:
            # ticks run late (the server is short of CPU): expensive rooms' frame shares shrink
            # with the pace like their simulation slices do; cheap rooms keep every frame
            shares = {rid: None if share is None else share * self.pace for rid, share in shares.items()}
        wall_ms = self.wall() * 1000.0
        backlog = self.transport.backlog
        costs = TickCosts()
        for room in rooms:
            with room.lock:
                try:
                    room.advance(now, slice_s)
                    plan = []
                    if room.viewers:
                        room.last_active_s = now
                        plan = self._frame_of(room, wall_ms, backlog, shares.get(room.id), costs)
                        everyone = list(room.viewers)
                except Exception:  # noqa: BLE001 - one broken room must not stop the others
                    log.exception("room %s failed; pausing it", room.id)
                    room.playing, room.paused_reason = False, "error"
                    plan = []
            for text, sids in plan:
                self.transport.send(room.id, text, sids, everyone)
                self.stats["sends"] += len(sids)
        costs.settle(account)
        if now - self._last_cleanup >= 1.0:
            self._last_cleanup = now
            self.cleanup(now)
        self.stats["ticks"] += 1

    def _frame_of(self, room, wall_ms, backlog, share, costs):
        if not may_send(room, share):
            self.stats["frames_deferred"] = self.stats.get("frames_deferred", 0) + 1
            return []
        started = time.perf_counter()
        if room.build_frame(wall_ms):
            self.stats["frames"] += 1
        plan = room.plan_sends(backlog)
        costs.add(room, time.perf_counter() - started, throttled=share is not None)
        return plan

    def cleanup(self, now=None):
        """Remove rooms nobody has watched for ROOM_IDLE_S seconds. Returns their ids."""
        now = self.clock() if now is None else now
        idle = self.settings["ROOM_IDLE_S"]
        with self.lock:
            gone = [rid for rid, r in self.rooms.items() if not r.viewers and now - r.last_active_s > idle]
            for rid in gone:
                self.remove(rid)
        self._collect_removed(now, len(gone))
        return gone

    def _collect_removed(self, now, removed):
        """A removed room's simulation is a web of cycles (nodes and the simulation refer to each
        other) that only a full collection frees, and tune_gc makes those rare: a 30-minute soak
        of rooms created and removed grew a room worker by ~18 MB per 10 minutes. So rooms
        removed since the last one are collected at most every FULL_COLLECT_EVERY_S, one pause
        of ~60 ms with 50 rooms of a minute each (216,000 objects) instead of none."""
        self._removed_since_collect += removed
        if self._last_collect is None:
            self._last_collect = now
        since = now - self._last_collect
        # a room restarted or replayed leaves its old run behind too: collect now and then anyway
        if (self._removed_since_collect and since >= FULL_COLLECT_EVERY_S) or since >= 10 * FULL_COLLECT_EVERY_S:
            started = time.perf_counter()
            gc.collect()
            self._removed_since_collect, self._last_collect = 0, now
            self.stats["full_collections"] = self.stats.get("full_collections", 0) + 1
            self.stats["full_collect_ms_max"] = max(self.stats.get("full_collect_ms_max", 0.0),
                                                    (time.perf_counter() - started) * 1000)

    def ensure_running(self):
        """Start the background task once (unless RUNNER_AUTOSTART is off, as in unit tests)."""
        if not self.settings["RUNNER_AUTOSTART"] or self._thread is not None:
            return
        with self.lock:
            if self._thread is not None:
                return
            tune_gc()
            self._stopping.clear()
            starter = self.start_task or (lambda fn: _start_thread(fn))
            self._thread = starter(self.run_forever)

    def run_forever(self):
        period = 1.0 / self.settings["FRAME_RATE"]
        next_at = self.clock()
        while not self._stopping.is_set():
            started = self.clock()
            try:
                self.tick(started)
            except Exception:  # noqa: BLE001
                log.exception("runner tick failed")
            spent = self.clock() - started
            self.stats["tick_ms_max"] = max(self.stats["tick_ms_max"] * 0.999, spent * 1000)
            self.pace = next_pace(self.pace, spent, period)
            next_at += period
            delay = next_at - self.clock()
            if delay < 0:
                # late: a tick that overran, or a wake-up that waited for the GIL. Keep the
                # cadence when it is less than a period behind (the next tick comes early, so the
                # rate stays FRAME_RATE despite the jitter); further behind, start afresh rather
                # than fire a burst of ticks
                self.stats["late_ticks"] += 1
                if delay < -period:
                    next_at = self.clock()
                delay = 0.001
            self.sleep(delay)

    def stop(self):
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None and hasattr(thread, "join"):
            thread.join(timeout=2)


def scenario_for(lib, settings, library_name=None, scenario=None):
    """(scenario document, source) from a library name or a document, checked against limits."""
    if library_name is not None:
        if not isinstance(library_name, str) or library_name not in lib:
            raise AppError("library", f"{str(library_name)[:60]!r} is not a library scenario", ", ".join(lib))
        return lib[library_name], {"kind": "library", "name": library_name}
    if scenario is None:
        name = settings["DEFAULT_SCENARIO"]
        return lib[name], {"kind": "library", "name": name}
    check_scenario(scenario, settings)
    return scenario, {"kind": "custom"}


def server_full(rooms, cap, hint=""):
    """429: the server-wide room quota; a room frees up when its viewers leave it idle."""
    return AppError("room", f"this server already runs {rooms} simulations (quota ISRLAB_MAX_ROOMS = {cap})",
                    "try again when a room has been closed" + hint, status=429).with_retry_after(ROOM_RETRY_AFTER_S)


def owner_quota(owner, rooms, cap):
    """The owner's least recently watched room that makes way for a new one (None: nothing to
    make way), or a 429 when every room of theirs is watched. ``rooms``: objects with ``owner``,
    ``viewers`` and ``last_active_s``."""
    mine = [r for r in rooms if owner is not None and r.owner == owner]
    if not cap or len(mine) < cap:
        return None
    unwatched = sorted((r for r in mine if not r.viewers), key=lambda r: r.last_active_s)
    if not unwatched:
        raise AppError("room", f"this address already watches {cap} simulations on this server "
                       f"(quota ISRLAB_MAX_ROOMS_PER_ADDRESS = {cap})",
                       "close a tab, or load scenarios into an open one", status=429
                       ).with_retry_after(ROOM_RETRY_AFTER_S)
    return unwatched[0]


def next_pace(pace, spent_s, period_s):
    """Frames first: when a tick takes longer than the frame period, the rooms' simulation slices
    shrink (rooms at maximum speed run slower, and say so) so that every room still gets its
    frames on time; when ticks fit again, the slices grow back."""
    if spent_s > period_s:
        return max(0.1, pace * 0.8)
    return min(1.0, pace * 1.05)


def _start_thread(fn):
    thread = threading.Thread(target=fn, name="isrlab-runner", daemon=True)
    thread.start()
    return thread
