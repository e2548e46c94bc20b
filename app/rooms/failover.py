"""What the web process does when a room worker dies (``RemoteRunner``'s part, as a mixin):
its rooms are rebuilt from their journals (``recovery.py``) in the warm spare worker, or in the
others when there is none, and a new spare starts a little later. Viewers get a full frame and a
notice; rooms of the other workers never wait for this (it runs in its own thread).
"""
import logging
import threading

log = logging.getLogger(__name__)

SPARE_DELAY_S = 5.0        # after a recovery, the next spare starts this much later
RECOVERED_NOTICE = ("this room's worker process stopped; the room was moved to another one and "
                    "continues from t = {t_ms} ms")


class WorkerFailover:
    """Needs the RemoteRunner's lock, rooms, workers, spare, journals, placement, recovered,
    _backlogged and _stopped, and its remove, ensure_running, _ensure_spare and _least_loaded."""

    def _on_exit(self, worker):
        with self.lock:
            if worker is self.spare:
                self.spare = None
        if self._stopped or worker.index < 0:
            if not self._stopped:
                self._ensure_spare()
            return
        threading.Thread(target=self._recover, args=(worker,), daemon=True,
                         name="isrlab-room-recovery").start()

    def _recover(self, dead):
        """A worker died: its rooms are rebuilt in the others at once (or in its replacement when
        there is no other), from their journals; the replacement starts meanwhile."""
        self.recovered["workers_lost"] += 1
        with self.lock:
            room_ids = sorted(dead.rooms)
            dead.rooms.clear()
            self._backlogged.pop(dead.index, None)
            spare = self.spare if self.spare is not None and self.spare.alive else None
            if self.workers[dead.index] is not dead:
                spare = None                            # refilled already (ensure_running): the spare stays spare
            elif spare is not None:
                self.workers[dead.index] = spare        # the warm spare takes the dead one's place
                spare.index, self.spare = dead.index, None
        log.warning("room worker %s died with %d room(s); moving them to %s", dead.pid, len(room_ids),
                    f"the spare worker {spare.pid}" if spare else "the other workers")
        if spare is None:
            self._replace()             # no spare: the rooms wait for a new worker if none is left
        for room_id in room_ids:
            for attempt in range(3):
                try:
                    self._restore(room_id, spare if attempt == 0 else None)
                    self.recovered["rooms"] += 1
                    break
                except Exception:  # noqa: BLE001 - one room that cannot come back must not stop the others
                    log.exception("room %s: recovery attempt %d failed", room_id, attempt + 1)
            else:
                self.recovered["rooms_lost"] += 1
                self.remove(room_id)
        # the next spare starts once the rooms are back: its start and warm-up take CPU the
        # recovery and the other rooms need now
        timer = threading.Timer(SPARE_DELAY_S, self._replace)
        timer.daemon = True
        timer.start()

    def _replace(self):
        if self._stopped:
            return
        try:
            self.ensure_running()
        except Exception:  # noqa: BLE001
            log.exception("starting a replacement room worker failed")

    def _restore(self, room_id, worker=None):
        with self.lock:
            handle = self.rooms.get(room_id)
        if handle is None:
            return
        record = self.journals.recovery_of(room_id)
        if record is None:
            raise RuntimeError("no snapshot of this room to recover it from")
        blob, commands, status, mark = record
        if worker is None or not worker.alive:
            worker = self._least_loaded()
        if worker is None:
            self.ensure_running()
            worker = self._least_loaded()
        t_ms = status[1] if status else (commands[-1]["at_ms"] if commands else 0)
        worker.call("restore", room_id, blob, commands, status, sorted(handle.viewers),
                    RECOVERED_NOTICE.format(t_ms=t_ms), mark)
        with self.lock:
            if room_id in self.rooms:
                self.placement[room_id] = worker
                worker.rooms.add(room_id)
