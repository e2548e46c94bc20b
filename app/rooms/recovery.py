"""A killed room worker loses only a moment: what the web process keeps of each room, and how a
room is rebuilt from it in another worker.

The web process keeps, per room, the latest snapshot its worker sent (the whole ``Room``,
pickled and compressed: a few tens of kilobytes), the live commands applied since, and the room's
latest status (the simulated moment it reached, playing or paused, speed). None of it is read in
the web process: it is bytes and plain data, handed back to a worker when the room must be
rebuilt. There, ``restore_room`` unpickles the snapshot, schedules each later command exactly as
``Simulation.apply`` had scheduled it (at its recorded millisecond, as a timeline operation:
before ordinary events of that millisecond, so the order of events is the one the lost worker
had), and advances to the moment reached, sampling the charts on the way as the live loop does.
The simulation is deterministic, so the room continues with the same future it had.

Memory is bounded: a journal exists from a room's creation to its removal only; snapshots past ``budget`` bytes in total are refused (the room keeps its
older snapshot and the commands since it), and a room with more than ``MAX_JOURNAL`` commands
since its snapshot stops being recoverable rather than growing without end.
"""
import pickle
import threading
import zlib

MAX_JOURNAL = 2000     # commands kept since a room's snapshot (a worker snapshots every 64)


class Journal:
    __slots__ = ("blob", "run", "commands_at", "t_ms", "commands", "status", "recoverable")

    def __init__(self):
        self.blob = None          # the latest snapshot (compressed pickle of the Room)
        self.run = None           # its run number, its count of commands, its simulated moment
        self.commands_at = 0
        self.t_ms = 0
        self.commands = []        # (run, index, command) applied since
        self.status = None        # the worker's latest status of the room (worker.status_of)
        self.recoverable = True


class Journals:
    """Per-room journals of the web process; fed by the workers' messages (one reader thread per
    worker), read when a worker dies."""

    def __init__(self, budget_bytes):
        self.budget = budget_bytes
        self.bytes = 0
        self.lock = threading.Lock()
        self.rooms = {}
        self.refused = 0

    def open(self, room_id):
        """Keep what comes for ``room_id`` from now on (before its worker creates it). Nothing is
        kept for a room not opened, or forgotten: a worker's late snapshot of a room removed, or
        of one whose creation timed out here, would otherwise hold its bytes for good."""
        with self.lock:
            self.rooms.setdefault(room_id, Journal())

    def snapshot(self, room_id, run, commands_at, t_ms, blob):
        with self.lock:
            journal = self.rooms.get(room_id)
            if journal is None:
                return False
            held = len(journal.blob) if journal.blob is not None else 0
            if self.budget and self.bytes - held + len(blob) > self.budget and journal.blob is not None:
                self.refused += 1               # keep the older snapshot (and its commands)
                return False
            self.bytes += len(blob) - held
            journal.blob, journal.run, journal.commands_at, journal.t_ms = blob, run, commands_at, t_ms
            journal.commands = [c for c in journal.commands if (c[0], c[1]) >= (run, commands_at)]
            journal.recoverable = True
            return True

    def command(self, room_id, run, index, command):
        with self.lock:
            journal = self.rooms.get(room_id)
            if journal is None:
                return
            journal.commands.append((run, index, command))
            if len(journal.commands) > MAX_JOURNAL:
                journal.commands, journal.recoverable = [], False

    def status(self, updates):
        with self.lock:
            for room_id, state in updates.items():
                journal = self.rooms.get(room_id)
                if journal is not None:
                    journal.status = state

    def forget(self, room_id):
        with self.lock:
            journal = self.rooms.pop(room_id, None)
            if journal is not None and journal.blob is not None:
                self.bytes -= len(journal.blob)

    def recovery_of(self, room_id):
        """(snapshot, commands since it, status, (run, commands, t_ms) of the snapshot) to rebuild
        the room, or None."""
        with self.lock:
            journal = self.rooms.get(room_id)
            if journal is None or journal.blob is None or not journal.recoverable:
                return None
            commands = [c for run, _i, c in sorted(journal.commands, key=lambda c: (c[0], c[1]))
                        if run == journal.run]
            status = journal.status if journal.status and journal.status[0] == journal.run else None
            return journal.blob, commands, status, (journal.run, journal.commands_at, journal.t_ms)


# -- in the worker that takes the room over -----------------------------------------------------------
def restore_room(blob, commands, status, now, notice):
    """The room of ``blob`` with ``commands`` applied again and advanced to the moment ``status``
    says it had reached; playing, speed and pausing as they were; ``notice`` shown to viewers."""
    room = pickle.loads(zlib.decompress(blob))
    sim = room.sim
    observe = room._observe                 # the live loop samples charts after every event

    def sample():
        observe(sim)
        return False
    for command in commands:
        sim.advance_to(command["at_ms"] - 1, sample)
        reschedule(sim, command)
    if status is not None:
        _run, t_ms, playing, paused_reason, speed, pause_on_violation = status
        sim.advance_to(t_ms, sample)
        observe(sim)
        room.playing, room.paused_reason = playing and not sim.finished, paused_reason
        room.speed, room.pause_on_violation = speed, pause_on_violation
    room.sim_clock = float(sim.now_ms)
    room.wall_last = now
    room.samples.clear()
    room.notice = notice
    return room


def reschedule(sim, command):
    """What ``Simulation.apply`` did with the checked ``command`` when the user sent it: record it
    and schedule it at its millisecond. Not ``apply`` itself: that would check it again against
    the state at the end of the millisecond before, which the user's moment may have preceded."""
    sim.commands.append(command)
    sim.scheduler.schedule_op(command["at_ms"], sim._run_op, command)
