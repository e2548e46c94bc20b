"""``RedisRunner``: the web process's runner when ``ISRLAB_MESSAGE_QUEUE`` names a Redis shared by
several web processes and one room host (``isrlab rooms``, host.py).

It has the surface of ``Runner`` and ``RemoteRunner`` that app/web calls, and ``get``/``require``
return the same ``RoomHandle``; each call is a request to the room host (mq.py), answered with
plain data or the same AppError, or refused with "rooms are unavailable: …" (503) when Redis or
the host is down — never a hang. Frames do not pass here: the host emits them through
Flask-SocketIO's message queue and this process's SocketIO delivers them to its own sockets.

What stays in this process is what belongs to its sockets: which room each of them watches
(``room_of`` needs no round trip), and how backed up each one's queue is — reported to the host
every ``NOTE_EVERY_S`` so it skips a slow viewer's frames as it would in process.
"""
import collections
import itertools
import threading
import time

from engine.scenario.library import library

from ..runner.core import scenario_for
from ..runner.errors import AppError
from ..runner.limits import check_room_id
from . import mq
from .handle import RoomHandle
from .remote import RemoteRunner
from .viewers import remember_join

NOTE_EVERY_S = 0.1          # backlogs of this process's viewers, when they change
#: a socket queue holding this many frames is backed up. One frame waiting is the one in flight
#: (sampled at any moment, not just before a send as in process): skipping on it would cost a
#: viewer with a fast connection frames every time a sample catches one
BACKED_UP = 2
ALIVE_EVERY_S = 5.0         # "this web process is alive" (mq.WEB_KEY; its viewers leave when it stops)
MAX_UNSENT_LEAVES = 4096    # leaves not yet delivered (Redis down), retried with the notes


class RedisRunner:
    def __init__(self, settings, transport, clock=time.monotonic, client=None):
        self.settings = settings
        self.transport = transport        # this process's Socket.IO: only its backlogs are read
        self.clock = clock
        self.library = library()
        self.client = client or mq.RoomHostClient(settings["MESSAGE_QUEUE"])
        self.lock = threading.Lock()
        self.sid_room = {}                # this process's sockets -> the room each one watches
        self._told = {}                   # sid -> the backlog last reported to the host
        self._seq = 0                     # numbers backlog notes: the host keeps the newest per viewer
        self._join_of = {}                # sid -> the number of its latest join (its leave names it)
        self._joins = itertools.count(1)
        self._issued = collections.OrderedDict()      # sid -> the number of its latest join asked
        self._left_upto = collections.OrderedDict()   # sid -> the latest join asked when it last left
        self._unsent_leaves = {}          # (sid, join id) -> True: leaves owed to the host (Redis was down,
                                          # or a join went unanswered and may have been made)
        self._stopping = threading.Event()
        self._notes = None

    def ensure_running(self):
        """Start the thread that reports backlogs and says this process is alive."""
        with self.lock:
            if self._notes is not None or self._stopping.is_set():
                return
            self._notes = threading.Thread(target=self._note_loop, daemon=True, name="isrlab-room-host-notes")
            self._notes.start()

    # -- rooms ------------------------------------------------------------------------------------------
    def scenario_for(self, library_name=None, scenario=None):
        return scenario_for(self.library, self.settings, library_name, scenario)

    def create(self, scenario=None, library_name=None, room_id=None, owner=None, prepare=None,
               engine_version=None, paused=False):
        doc, _source = self.scenario_for(library_name, scenario)     # refused here, before any request
        prepared = RemoteRunner._prepared(doc, prepare, engine_version)
        self.ensure_running()
        room_id = self.client.call("create", scenario, library_name, room_id, owner, prepared, engine_version,
                                   paused)
        return RoomHandle(self, room_id, owner, self.clock())

    def get(self, room_id):
        return RoomHandle(self, room_id, None, self.clock()) if self.client.call("exists", room_id) else None

    def require(self, room_id):
        check_room_id(room_id)
        return RoomHandle(self, self.client.call("require", room_id), None, self.clock())

    def call_room(self, room_id, name, args):
        return self.client.call("room", room_id, name, args)

    def remove(self, room_id):
        return self.client.call("remove", room_id)

    @property
    def rooms(self):
        """The ids of every live room (all web processes'); none when the host cannot be asked."""
        try:
            return self.client.call("room_ids", timeout=2)
        except AppError:
            return []

    def room_of(self, sid):
        with self.lock:
            room_id = self.sid_room.get(sid)
        return RoomHandle(self, room_id, None, self.clock()) if room_id else None

    # -- viewers ----------------------------------------------------------------------------------------
    def join(self, room_id, sid):
        check_room_id(room_id)
        self.ensure_running()
        with self.lock:
            join_id = next(self._joins)
            remember_join(self._issued, sid, join_id)
        # an unsent leave of an earlier join stays: if this join fails, it is still owed; if it
        # succeeds, the host ignores it (it names an earlier join)
        try:
            room_id, left = self.client.call("join", room_id, sid, join_id)
        except AppError as exc:
            if exc.status == 503:           # not answered: the host may have made it all the same
                self._owe_leave(sid, join_id)
            raise
        with self.lock:
            if join_id < self._join_of.get(sid, 0):
                return RoomHandle(self, self.sid_room[sid], None, self.clock()), None    # a later join won
            left_since = join_id <= self._left_upto.get(sid, 0)
        if left_since:                      # the viewer left (its socket closed) while this join was
            self._owe_leave(sid, join_id)   # on its way: the host's membership must end too
            raise AppError("room", "you left before this join was answered", "join again", status=409)
        with self.lock:
            self.sid_room[sid] = room_id
            self._join_of[sid] = join_id
            self._told[sid] = -1            # report its backlog, 0 included: an older note, served
                                            # late, may have left it "backed up" at the host
        return RoomHandle(self, room_id, None, self.clock()), left

    def leave(self, sid):
        with self.lock:
            room_id = self.sid_room.pop(sid, None)
            join_id = self._join_of.pop(sid, None)
            self._told.pop(sid, None)
            if sid in self._issued:         # a join of it still on its way is undone when answered
                remember_join(self._left_upto, sid, self._issued[sid])
        if room_id is None:
            return None
        try:
            self.client.call("leave", sid, join_id)
        except AppError:
            # a host that answers late still applies it; one that was not told (Redis down) is
            # told again with the notes: a viewer left in keeps its room from going idle
            self._owe_leave(sid, join_id)
        return room_id

    def _owe_leave(self, sid, join_id):
        with self.lock:
            if len(self._unsent_leaves) >= MAX_UNSENT_LEAVES:
                self._unsent_leaves.pop(next(iter(self._unsent_leaves)))
            self._unsent_leaves[(sid, join_id)] = True

    def resync(self, sid):
        handle = self.room_of(sid)
        if handle is None:
            raise AppError("room", "you are not watching a room", "join a room first")
        self.client.call("resync", sid)
        return handle

    # -- what this process tells the host ---------------------------------------------------------------
    def _note_loop(self):
        last_alive = 0.0
        while not self._stopping.wait(NOTE_EVERY_S):
            now = time.monotonic()
            if now - last_alive >= ALIVE_EVERY_S and self.client.alive():   # else again next pass
                self.client.note("alive")       # what a room host of the previous version reads
                self._send_unsent_leaves()
                last_alive = now
            changes = self._backlog_changes()
            self._seq += 1
            if changes and not self.client.note("backlog", self._seq, changes):
                with self.lock:                 # not told: tell again next time, whatever the value
                    for sid in changes:
                        if sid in self.sid_room:
                            self._told[sid] = -1

    def _send_unsent_leaves(self):
        with self.lock:
            unsent = list(self._unsent_leaves)
        for sid, join_id in unsent:
            if not self.client.note("leave", sid, join_id):
                return
            with self.lock:
                self._unsent_leaves.pop((sid, join_id), None)

    def _backlog_changes(self):
        with self.lock:
            sids = list(self.sid_room)
        changes = {}
        for sid in sids:
            queued = self.transport.backlog(sid)
            queued = queued if queued >= BACKED_UP else 0
            with self.lock:
                if queued != self._told.get(sid, 0):
                    changes[sid] = queued
                    if queued:
                        self._told[sid] = queued
                    else:
                        self._told.pop(sid, None)
        return changes

    # -- the rest of the Runner surface ------------------------------------------------------------------
    @property
    def stats(self):
        try:
            stats = self.client.call("stats", timeout=2)
        except AppError as exc:
            stats = {"rooms_unavailable": exc.message}
        with self.lock:
            stats["web_process"] = {"id": self.client.web_id, "viewers": len(self.sid_room),
                                    "message_queue": mq.safe_url(self.client.url)}
        return stats

    def stop(self):
        self._stopping.set()
        if self._notes is not None:
            self._notes.join(timeout=5)         # no refresh of the key after it is dropped
        self.client.alive(False)                # its viewers leave WEB_GRACE_S from now, not after
        self.client.close()                     # the key would have expired
