"""``RemoteRunner``: the web process's runner when rooms live in room workers.

It has the public surface of ``app.runner.Runner`` that the web layer uses (create, get/require,
join, leave, resync, room_of, remove, rooms, stats, library, scenario_for, clock, ensure_running,
stop), and ``get`` returns a ``RoomHandle`` with the ``Room`` methods the web layer calls — each
one a call to the room's worker, answered with plain data (or the same AppError). Quotas that
need every room (ISRLAB_MAX_ROOMS, per address) are counted here; a room's viewers limit, its
frames and its idle removal happen in its worker as they do in process.

Each worker's reader thread relays its frames to the real transport (Socket.IO), keeps the
journals recovery needs, and tells the worker which viewers' connections are backed up (so a
slow viewer skips frames and catches up from its own base, as in process). When a worker dies,
its rooms are rebuilt in the others (or in its replacement) from their journals (recovery.py).
"""
import collections
import logging
import secrets
import threading
import time

from engine.scenario.library import library

from ..runner.core import owner_quota, scenario_for, server_full
from ..runner.errors import AppError
from ..runner.limits import check_room_id
from .handle import RoomHandle
from .process import RoomWorker, worker_python
from .failover import WorkerFailover
from .viewers import RoomViewers
from .recovery import Journals

log = logging.getLogger(__name__)

#: settings a worker never needs (secrets and the store stay in the web process)
PRIVATE_SETTINGS = ("SECRET_KEY", "SNAPSHOT_KEY", "DATABASE_URL", "MESSAGE_QUEUE")


class RemoteRunner(WorkerFailover, RoomViewers):
    def __init__(self, settings, transport, clock=time.monotonic):
        self.settings = settings
        self.transport = transport
        self.clock = clock
        self.library = library()
        self.lock = threading.RLock()
        self.rooms = {}                    # room id -> RoomHandle
        self.sid_room = {}
        self.sid_join = {}                 # sid -> the number its web process gave its latest join
        self._joined = collections.OrderedDict()   # sid -> its latest join's number, kept after it leaves
        self._left_first = collections.OrderedDict()   # sid -> a join number whose leave came before it
        self._viewer_locks = {}            # sid -> [lock, users]: one viewer's joins in turn
        self.placement = {}                # room id -> RoomWorker
        self.workers = [None] * max(1, settings["ROOM_WORKERS"])
        self.python = worker_python(settings)
        self.journals = Journals(settings.get("ROOM_SNAPSHOT_BYTES", 256 * 2 ** 20))
        self.worker_stats = {}
        self.recovered = {"workers_lost": 0, "rooms": 0, "rooms_lost": 0}
        self._backlogged = {}              # worker index -> {sid: queued frames}
        self._creating = set()             # ids of rooms being created (counted against MAX_ROOMS)
        self._stopped = False
        self._start_lock = threading.Lock()
        # a spare worker, started and warmed in advance, takes over a dead worker's rooms: the
        # other workers' rooms do not pause while they are rebuilt (ISRLAB_ROOM_WORKER_SPARE=0:
        # the survivors take them)
        self.spare = None
        self._spare_starting = False
        self.want_spare = settings.get("ROOM_WORKER_SPARE", 1) > 0

    # -- workers --------------------------------------------------------------------------------------
    def _setup(self):
        return {k: v for k, v in self.settings.items()
                if k not in PRIVATE_SETTINGS and isinstance(v, (int, float, str, bool, dict, list, tuple, type(None)))}

    def _start_worker(self, index):
        try:
            return RoomWorker(index, self.python, self._setup(), self.settings.get("ROOM_WORKER_MEMORY_BYTES", 0),
                              self.settings.get("ROOM_WORKER_NICE", 0),
                              self._on_message, self._on_exit)
        except OSError as exc:
            raise AppError("room", f"cannot start a room worker with {self.python}: {exc}",
                           "set ISRLAB_ROOM_WORKER_PYTHON to a Python that can import this project, "
                           "or ISRLAB_ROOM_WORKERS=0 to simulate rooms in the web process", status=503) from exc

    def _ensure_spare(self):
        """Start and warm the spare worker when there is none (in the background)."""
        if not self.want_spare or self._stopped:
            return
        with self.lock:
            if self._spare_starting or (self.spare is not None and self.spare.alive):
                return
            self._spare_starting = True

        def start():
            try:
                worker = self._start_worker(-1)
                worker.call("ping", timeout=60)
                worker.call("warm", "isr-expansion", timeout=120)
            except Exception:  # noqa: BLE001 - recovery falls back on the survivors
                log.exception("the spare room worker did not start")
                with self.lock:
                    self._spare_starting = False
                return
            with self.lock:
                self._spare_starting = False
                if not self._stopped:
                    self.spare, worker = worker, None
            if worker is not None:
                worker.stop()
        threading.Thread(target=start, daemon=True, name="isrlab-room-worker-spare").start()

    def ensure_running(self):
        """Start every missing worker and wait until each answers (PyPy: about a second)."""
        with self._start_lock:
            if self._stopped:
                raise AppError("room", "this server is stopping", "try again later", status=503)
            with self.lock:
                missing = [(index, worker) for index, worker in enumerate(self.workers)
                           if worker is None or not worker.alive]
            fresh = []
            try:
                for index, seen in missing:
                    fresh.append((self._start_worker(index), seen))
                for worker, _seen in fresh:
                    worker.call("ping", timeout=60)
            except Exception as exc:  # noqa: BLE001 - none of them is kept: a retry starts them again
                for worker, _seen in fresh:
                    worker.stop()
                why = exc.message if isinstance(exc, AppError) else exc
                raise AppError("room", f"a room worker ({self.python}) did not start: {why}",
                               "see the server log; ISRLAB_ROOM_WORKER_PYTHON chooses the interpreter, "
                               "ISRLAB_ROOM_WORKERS=0 simulates rooms in the web process", status=503) from exc
            for worker, seen in fresh:
                with self.lock:
                    # the slot may have been filled meanwhile (a recovery promotes the spare into
                    # the dead worker's slot): that worker holds rooms, this fresh one none
                    taken = self.workers[worker.index] is not seen
                    if not taken:
                        self.workers[worker.index] = worker
                if taken:
                    worker.stop()
        self._ensure_spare()

    def _least_loaded(self):
        with self.lock:
            alive = [w for w in self.workers if w is not None and w.alive]
            return min(alive, key=lambda w: len(w.rooms)) if alive else None

    # -- rooms ------------------------------------------------------------------------------------------
    def scenario_for(self, library_name=None, scenario=None):
        return scenario_for(self.library, self.settings, library_name, scenario)

    def create(self, scenario=None, library_name=None, room_id=None, owner=None, prepare=None,
               engine_version=None, paused=False):
        doc, source = self.scenario_for(library_name, scenario)
        evicted = None
        with self.lock:
            if len(self.rooms) + len(self._creating) >= self.settings["MAX_ROOMS"]:
                raise self._server_full()
            oldest = owner_quota(owner, list(self.rooms.values()), self.settings.get("MAX_ROOMS_PER_ADDRESS"))
            if oldest is not None:
                # forgotten here under the lock; its worker is told after it (below): nothing is
                # sent to a worker holding the lock
                evicted = (oldest.id, self.placement.get(oldest.id))
                self.remove(oldest.id, tell_worker=False)
            if room_id is None:
                room_id = secrets.token_urlsafe(6)
                while room_id in self.rooms or room_id in self._creating:
                    room_id = secrets.token_urlsafe(6)
            else:
                check_room_id(room_id)
                if room_id in self.rooms or room_id in self._creating:
                    raise AppError("room", "already exists", "a new room id")
            self._creating.add(room_id)     # one create per id at a time: they would share a journal
        if evicted is not None and evicted[1] is not None:
            evicted[1].tell("remove", evicted[0])
        self.journals.open(room_id)
        try:
            prepared = self._prepared(doc, prepare, engine_version)
            self.ensure_running()
            worker = self._least_loaded()
            if worker is None:
                raise AppError("room", "no room worker is running", "try again in a moment", status=503)
            worker.call("create", room_id, doc, source, engine_version, paused, prepared)
            handle = RoomHandle(self, room_id, owner, self.clock())
            with self.lock:
                self.rooms[room_id] = handle
                self.placement[room_id] = worker
                worker.rooms.add(room_id)
        except BaseException:
            self.journals.forget(room_id)       # a late snapshot of it is not kept either
            raise
        finally:
            with self.lock:
                self._creating.discard(room_id)
        return handle

    @staticmethod
    def _prepared(doc, prepare, engine_version):
        """A fork's simulation, prepared here (the callable may hold anything) and sent pickled."""
        if prepare is None:
            return None
        import pickle
        from engine.simulation import Simulation
        fresh = Simulation(doc, engine_version=engine_version)
        prepared = prepare(fresh)
        return pickle.dumps(prepared if isinstance(prepared, Simulation) else fresh, protocol=4)

    def _server_full(self):
        return server_full(len(self.rooms) + len(self._creating), self.settings["MAX_ROOMS"],
                           f" (the server may raise ISRLAB_MAX_ROOMS; its {len(self.workers)} room workers, "
                           "ISRLAB_ROOM_WORKERS, share the rooms)")

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

    def call_room(self, room_id, name, args):
        with self.lock:
            worker = self.placement.get(room_id)
        if worker is None:
            raise AppError("room", f"no room {room_id!r} (it may have been closed after being idle)",
                           "open a new simulation", status=404)
        return worker.call("room", room_id, name, args)

    def remove(self, room_id, tell_worker=True):
        """Forget a room here, and (``tell_worker``) remove it from its worker. A worker's own
        report that it removed rooms comes with ``tell_worker`` off: it arrives on the reader thread,
        and a call from there waits for a reply only that thread can read (the worker, blocked
        writing to a full pipe, stopped answering every call: a stalled server)."""
        with self.lock:
            handle = self.rooms.pop(room_id, None)
            worker = self.placement.pop(room_id, None)
            if handle is not None:
                for sid in handle.viewers:
                    self.sid_room.pop(sid, None)
                    self.sid_join.pop(sid, None)
            if worker is not None:
                worker.rooms.discard(room_id)
        self.journals.forget(room_id)
        if tell_worker and worker is not None and worker.alive:
            try:
                worker.call("remove", room_id)
            except AppError:
                pass
        return handle

    def room_of(self, sid):
        with self.lock:
            room_id = self.sid_room.get(sid)
            return self.rooms.get(room_id) if room_id else None


    # -- what workers send ----------------------------------------------------------------------------
    def _on_message(self, worker, message):
        kind = message[0]
        if kind == "tick":
            self._relay(worker, message[1])
            if message[2]:
                self.journals.status(message[2])
        elif kind == "snapshot":
            self.journals.snapshot(*message[1:])
        elif kind == "command":
            self.journals.command(*message[1:])
        elif kind == "removed":
            for room_id in message[1]:
                with self.lock:
                    ours = self.placement.get(room_id) is worker
                    unknown = room_id not in self.rooms
                if ours:
                    self.remove(room_id, tell_worker=False)
                elif unknown:                   # one whose creation timed out here
                    self.journals.forget(room_id)
        elif kind == "stats":
            self.worker_stats[worker.index] = message[1]

    def _relay(self, worker, frames):
        send, backlog = self.transport.send, self.transport.backlog
        told = self._backlogged.setdefault(worker.index, {})
        changes = {}
        for room_id, text, sids, everyone in frames:
            # read before this frame joins the queue: what is still there is the previous frame,
            # unsent a tick later (a slow connection). Read after, the frame just handed over
            # counted as a backlog and each viewer was sent every other frame only
            for sid in sids:
                queued = backlog(sid)
                if queued != told.get(sid, 0):
                    changes[sid] = queued
            send(room_id, text, sids, everyone)
        for sid in list(told):          # the backed-up ones are skipped: look at them too
            if sid not in changes:
                queued = backlog(sid)
                if queued != told[sid]:
                    changes[sid] = queued
        if changes:
            for sid, queued in changes.items():
                if queued:
                    told[sid] = queued
                else:
                    told.pop(sid, None)
            worker.note_backlog(changes)

    # -- the rest of the Runner surface ------------------------------------------------------------------
    @property
    def stats(self):
        out = {"ticks": 0, "frames": 0, "sends": 0, "tick_ms_max": 0.0, "late_ticks": 0}
        for stats in list(self.worker_stats.values()):
            for key in ("ticks", "frames", "sends", "late_ticks", "frames_deferred"):
                out[key] = out.get(key, 0) + stats.get(key, 0)
            out["tick_ms_max"] = max(out["tick_ms_max"], stats.get("tick_ms_max", 0.0))
        with self.lock:
            out["room_workers"] = [{"pid": w.pid, "rooms": len(w.rooms), "python": w.python}
                                   for w in self.workers if w is not None and w.alive]
        out["recovered"] = dict(self.recovered)
        out["snapshot_bytes"] = self.journals.bytes
        return out

    def stop(self):
        self._stopped = True
        with self.lock:
            workers, self.workers = [w for w in self.workers if w is not None], [None] * len(self.workers)
            if self.spare is not None:
                workers.append(self.spare)
            self.spare = None
        for worker in workers:
            worker.stop()
