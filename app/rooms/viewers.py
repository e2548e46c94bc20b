"""The viewers of ``RemoteRunner``'s rooms (a mixin): joining, leaving, and the numbers a room
host's web processes give their viewers' joins.

A viewer's joins run one at a time under a lock of its own, so two at once (a double click)
cannot both read the same previous room; each join's number outlives the viewer's membership, so
a join answered after a later one, or after the viewer left, is refused (409) rather than
recorded. A leave that names a join ends only that join: a leave that comes late never takes the
viewer out of a room it joined since. Leaves are told to the room's worker, not awaited.
"""
import contextlib
import threading

from ..runner.errors import AppError

MAX_JOIN_NUMBERS = 100_000    # viewers whose latest join number is kept after they left


def remember_join(table, sid, join_id):
    """``table[sid] = join_id``, the table bounded to its MAX_JOIN_NUMBERS latest viewers (the
    room host's, and each web process's own: redis_runner.py)."""
    table[sid] = join_id
    table.move_to_end(sid)
    while len(table) > MAX_JOIN_NUMBERS:
        table.popitem(last=False)


class RoomViewers:
    """Needs the RemoteRunner's lock, rooms, placement, sid_room, sid_join, _joined, _left_first,
    _viewer_locks and clock, and its require and room_of."""

    def join(self, room_id, sid, join_id=None):
        """``sid`` watches ``room_id`` (and leaves its previous room). ``join_id``: the number its
        web process gave this join (increasing), which a later ``leave`` names. One viewer's joins
        run one at a time (two at once, a double click, each read the same previous room and the
        viewer ended up in both); a join older than the viewer's latest, or one whose leave came
        first, is refused."""
        handle = self.require(room_id)
        with self._viewer_lock(sid):
            with self.lock:
                self._refuse_if_stale(sid, join_id)
                previous = self.sid_room.get(sid)
                if previous == room_id:
                    self._record_join(sid, join_id)
                    return handle, None
            try:
                self.call_room_worker(room_id, "join", room_id, sid)
            except AppError as exc:
                if exc.status == 503:           # queued, unanswered: it may run later, so undo it
                    self._tell_leave(room_id, sid)
                raise
            with self.lock:
                try:
                    self._refuse_if_stale(sid, join_id)    # its leave came while it ran
                except AppError:
                    undo = True
                else:
                    undo = False
                    self.sid_room[sid] = room_id
                    self._record_join(sid, join_id)
                    handle.viewers.add(sid)
                    handle.last_active_s = self.clock()
            if undo:
                self._tell_leave(room_id, sid)
                raise AppError("room", "you left before this join was answered", "join again", status=409)
            left = self._leave_room(previous, sid) if previous else None
        return handle, left

    def _refuse_if_stale(self, sid, join_id):
        """(Holding the lock.) 409 for a join older than the viewer's latest, or whose leave came
        before it (a leave and a join sent in turn may be served in the other order)."""
        if join_id is None:
            return
        if join_id < self._joined.get(sid, join_id) or join_id <= self._left_first.get(sid, 0):
            raise AppError("room", "a later join of this viewer came first", "join again", status=409)

    def _record_join(self, sid, join_id):
        """(Holding the lock.) The viewer's latest join; its number outlives the membership, so a
        join made before a leave and answered after it is still refused as older."""
        self.sid_join[sid] = join_id
        if join_id is not None:
            remember_join(self._joined, sid, join_id)

    @contextlib.contextmanager
    def _viewer_lock(self, sid):
        """A lock of this viewer's own (made on demand, dropped with its last user): a join held
        up by a slow worker holds up no other viewer's join."""
        with self.lock:
            entry = self._viewer_locks.setdefault(sid, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self.lock:
                entry[1] -= 1
                if not entry[1]:
                    del self._viewer_locks[sid]

    def call_room_worker(self, room_id, method, *args):
        with self.lock:
            worker = self.placement.get(room_id)
        if worker is None:
            raise AppError("room", f"no room {room_id!r}", "open a new simulation", status=404)
        return worker.call(method, *args)

    def leave(self, sid, join_id=None):
        """``sid`` leaves its room; with ``join_id``, only if its latest join is that one: a leave
        that comes late must not take the viewer out of a room it joined since, the same room
        included. Checked and done under the lock, so no join slips in between."""
        with self.lock:
            if join_id is not None and self.sid_join.get(sid) != join_id:
                if join_id > self._joined.get(sid, 0):      # its join has not come yet, or is running
                    remember_join(self._left_first, sid, join_id)
                return None
            room_id = self.sid_room.pop(sid, None)
            self.sid_join.pop(sid, None)
        return self._leave_room(room_id, sid) if room_id else None

    def join_of(self, sid):
        with self.lock:
            return self.sid_join.get(sid)

    def watching(self, sid):
        with self.lock:
            return sid in self.sid_room

    def _leave_room(self, room_id, sid):
        with self.lock:
            handle = self.rooms.get(room_id)
            if handle is None:
                return None
            handle.viewers.discard(sid)
            handle.last_active_s = self.clock()
            worker = self.placement.get(room_id)
        # told, not called: a leave that timed out waiting for a busy worker's reply was lost, and
        # the room, still watched in its worker, never went idle. A worker gone meanwhile does
        # not matter: the recovered room has only the viewers above
        if worker is not None:
            worker.tell("leave_room", room_id, sid)
        return room_id

    def _tell_leave(self, room_id, sid):
        """The worker of ``room_id`` drops ``sid`` from it, unless it watches it here."""
        with self.lock:
            worker = None if self.sid_room.get(sid) == room_id else self.placement.get(room_id)
        if worker is not None:
            worker.tell("leave_room", room_id, sid)

    def resync(self, sid):
        handle = self.room_of(sid)
        if handle is None:
            raise AppError("room", "you are not watching a room", "join a room first")
        self.call_room_worker(handle.id, "resync", sid)
        return handle
