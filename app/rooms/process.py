"""The web side of one room worker: starting it, calling it, reading what it sends, noticing
its death.

The worker is a subprocess (``<python> -m app.rooms.worker``), not a ``multiprocessing`` child:
it may be another interpreter (PyPy), which needs only a path and two pipes. Its environment is
the engine workers' (``engine.tools.worker.engine_process_env``: this project on PYTHONPATH, a
fixed hash seed, PyPy's nursery) and it runs from "/" so no other checkout shadows this one.

One writer thread per worker writes what is sent to it (pipe_writer.py: no caller waits on the
pipe; a worker that reads nothing for long is killed as stuck). One reader thread per worker
reads its messages in order: replies wake the caller waiting for
them; frames, statuses, snapshots and the rest go to ``on_message``. End of stream (the worker
exited or was killed) fails every call in flight with a 503 the user can retry, and calls
``on_exit`` once.
"""
import itertools
import logging
import subprocess
import sys
import threading
import time

from engine.tools.worker import engine_process_env

from ..runner.errors import AppError
from . import protocol
from . import pipe_writer
from .pipe_writer import Full, PipeWriter

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0      # a call the worker has not answered by then fails (the worker is stuck)
MAX_PENDING = 256          # calls in flight to one worker at most; more are refused (503)

def worker_python(settings):
    """The interpreter of room workers: ISRLAB_ROOM_WORKER_PYTHON, else this one. Not PyPy by
    default, although it runs a long simulation 1.3-2.6x faster: a live room simulates a few
    milliseconds per frame and then writes the frame as JSON, which PyPy's json does 4x slower than
    orjson on CPython, and it pickles recovery snapshots 10x slower. Measured with
    scripts/bench_room_cpu.py (50 rooms of isr-expansion at 30 frames/s): 187 us of CPU per
    room-frame on CPython, 220 on PyPy (docs/performance.md)."""
    return settings.get("ROOM_WORKER_PYTHON") or sys.executable


def _gone(why):
    return AppError("room", f"the simulation's worker process {why}; the room is being moved to "
                    "another worker", "try again in a moment", status=503).with_retry_after(2)


class RoomWorker:
    def __init__(self, index, python, setup, memory_bytes, nice, on_message, on_exit):
        self.index = index
        self.python = python
        self.rooms = set()                 # ids of the rooms placed here (the owner's lock guards it)
        self.on_message = on_message
        self.on_exit = on_exit
        self.alive = True
        self._pending = {}
        self._told = set()                 # ids of calls told, not awaited: their errors are logged
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._handling_since = None        # when the reader began handing a message over (None: reading)
        self._last_reply = time.monotonic()  # when the worker last answered a call
        self._backlog, self._backlog_lock = {}, threading.Lock()
        self.proc = subprocess.Popen([python, "-m", "app.rooms.worker", "--memory-bytes", str(memory_bytes),
                                      "--nice", str(nice)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=engine_process_env(),
                                     cwd="/", bufsize=1 << 16)
        self.pid = self.proc.pid
        self._stdout = self.proc.stdout
        self._writer = PipeWriter(self.proc.stdin, f"isrlab-room-worker-{index}-writer", self._stuck,
                                  self._progress_since, when_idle=self._take_backlog)
        self.send(("setup", setup))
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"isrlab-room-worker-{index}")
        self._reader.start()

    # -- writing ------------------------------------------------------------------------------------
    def send(self, message):
        """Queue ``message`` for the worker (never waits on its pipe: pipe_writer.py); False when
        the worker is gone or stuck; an AppError (413, or 503 to retry) when its queue is full."""
        try:
            return self._writer.send(protocol.encode(message))
        except Full as exc:
            limit = pipe_writer.MAX_QUEUED_BYTES
            if exc.size > limit:
                raise AppError("room", f"this simulation's state is too large to hand to a room worker "
                               f"({exc.size / 2 ** 20:.0f} MB, at most {limit // 2 ** 20} MB)",
                               "a smaller or shorter scenario", status=413) from exc
            raise AppError("room", "the simulation's worker is still receiving earlier requests",
                           "try again in a moment", status=503).with_retry_after(2) from exc

    def _stuck(self, why):
        log.error("room worker %s is stuck (%s): killed, its rooms move to another worker", self.pid, why)
        self.proc.kill()                   # the reader sees the end; the owner recovers the rooms

    def _progress_since(self, moment):
        """Whether the worker answered a call since ``moment`` (its frames and stats come from
        another thread of it, and prove nothing about the one that reads its input), or the
        reader is handing a message of it over now (the worker may be blocked writing to us:
        our delay, not its)."""
        return self._handling_since is not None or self._last_reply > moment

    def note_backlog(self, changes):
        """Tell the worker which viewers' queues changed. Called by the thread that reads the
        worker's output, which must never wait on its input; merged (the latest count per viewer
        is all the worker keeps) and written when nothing else is queued."""
        with self._backlog_lock:
            self._backlog.update(changes)
        self._writer.wake()

    def _take_backlog(self):
        with self._backlog_lock:
            changes, self._backlog = self._backlog, {}
        return protocol.encode(("backlog", changes)) if changes else None

    def tell(self, method, *args):
        """``method(*args)`` in the worker, its answer not awaited (an error in it is logged): for
        what must happen even when the worker is slow to answer, such as a viewer leaving, which
        otherwise kept its room from going idle. The worker reads its input in order, so a later
        call sees it done. False when the worker is gone."""
        with self._lock:
            if not self.alive:
                return False
            call_id = next(self._ids)
            self._told.add(call_id)
        try:
            if self.send(("call", call_id, method, args)):
                return True
        except AppError as exc:
            log.error("room worker %s: %s was not told: %s", self.pid, method, exc.message)
        with self._lock:
            self._told.discard(call_id)
        return False

    def call(self, method, *args, timeout=CALL_TIMEOUT_S):
        """``method(*args)`` in the worker; its AppError is raised here with the same field,
        message, allowed values and status."""
        slot = {"done": threading.Event()}
        with self._lock:
            if not self.alive:
                raise _gone("has stopped")
            if len(self._pending) >= MAX_PENDING:
                raise AppError("room", f"{MAX_PENDING} requests already wait for this simulation's worker",
                               "try again in a moment", status=503).with_retry_after(1)
            call_id = next(self._ids)
            self._pending[call_id] = slot
        try:
            sent = self.send(("call", call_id, method, args))
        except AppError:                       # refused by its queue (413, or 503 to retry)
            with self._lock:
                self._pending.pop(call_id, None)
            raise
        if not sent:
            with self._lock:
                self._pending.pop(call_id, None)
            raise _gone("has stopped")
        if not slot["done"].wait(timeout):
            with self._lock:
                self._pending.pop(call_id, None)
            raise AppError("room", f"the simulation's worker did not answer within {timeout:g} s",
                           "try again", status=503)
        kind, value = slot["answer"]
        if kind == "ok":
            return value
        if kind == "user":
            protocol.raise_user_error(value)
        if kind == "gone":
            raise _gone(value)
        raise RuntimeError(f"room worker {self.pid}: {value}")

    # -- reading ------------------------------------------------------------------------------------
    def _read(self):
        try:
            while True:
                message = protocol.read(self._stdout)
                if message[0] == "reply":
                    self._last_reply = time.monotonic()
                    self._answered(*message[1:])
                    continue
                self._handling_since = time.monotonic()
                try:
                    self.on_message(self, message)
                except Exception:  # noqa: BLE001 - a relay error must not stop the reading
                    log.exception("room worker %s: handling %s failed", self.pid, message[0])
                finally:
                    self._handling_since = None
        except (protocol.ProtocolError, OSError, ValueError, EOFError) as exc:
            if self.alive:
                log.warning("room worker %s (%s) ended: %s", self.pid, self.python, exc)
        finally:
            self._ended()

    def _answered(self, call_id, kind, value):
        with self._lock:
            slot = self._pending.pop(call_id, None)
            told = call_id in self._told
            self._told.discard(call_id)
        if slot is not None:
            slot["answer"] = (kind, value)
            slot["done"].set()
        elif told and kind == "error":
            log.error("room worker %s: a call told without waiting failed: %s", self.pid, value)

    def _ended(self):
        self._writer.end()
        with self._lock:
            was_alive, self.alive = self.alive, False
            pending, self._pending = self._pending, {}
            self._told.clear()
        for slot in pending.values():
            slot["answer"] = ("gone", "stopped")
            slot["done"].set()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if was_alive:
            self.on_exit(self)

    def stop(self):
        """End the worker: ask, then close its input, then kill; its rooms are not recovered."""
        with self._lock:
            self.alive = False              # first: the end of the worker is no death to recover from
        try:
            self.send(("stop",))
        except AppError:
            pass                            # its queue is full: the end of its input stops it too
        self._writer.close()                # writes "stop", then closes the worker's input
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=3)
        try:
            self._stdout.close()
        except OSError:
            pass
