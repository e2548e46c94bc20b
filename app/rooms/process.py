"""The web side of one room worker: starting it, calling it, reading what it sends, noticing
its death.

The worker is a subprocess (``<python> -m app.rooms.worker``), not a ``multiprocessing`` child:
it may be another interpreter (PyPy), which needs only a path and two pipes. Its environment is
the engine workers' (``engine.tools.worker.engine_process_env``: this project on PYTHONPATH, a
fixed hash seed, PyPy's nursery) and it runs from "/" so no other checkout shadows this one.

One reader thread per worker reads its messages in order: replies wake the caller waiting for
them; frames, statuses, snapshots and the rest go to ``on_message``. End of stream (the worker
exited or was killed) fails every call in flight with a 503 the user can retry, and calls
``on_exit`` once.
"""
import itertools
import logging
import os
import select
import subprocess
import sys
import threading
import time

from engine.tools.worker import engine_process_env

from ..runner.errors import AppError
from . import protocol

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0      # a call the worker has not answered by then fails (the worker is stuck)
MAX_PENDING = 256          # calls in flight to one worker at most; more are refused (503)
#: a worker that has not read its input for this long is stuck (a full pipe: it reads between
#: ticks, and no tick lasts seconds): it is killed and its rooms recovered, rather than blocking
#: every caller, each holding a request thread, for good
WRITE_TIMEOUT_S = 30.0


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
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.proc = subprocess.Popen([python, "-m", "app.rooms.worker", "--memory-bytes", str(memory_bytes),
                                      "--nice", str(nice)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=engine_process_env(),
                                     cwd="/", bufsize=1 << 16)
        self.pid = self.proc.pid
        self._stdout = self.proc.stdout
        # written with os.write and select, never through proc.stdin's buffer: a blocking write
        # to a full pipe has no time limit
        self._stdin_fd = self.proc.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self.send(("setup", setup))
        # the backlog notes' writer starts with the first note: the spare worker, which has no
        # viewer until it takes over, keeps one thread fewer (issue 31: under 60 threads)
        self._backlog, self._backlog_ready, self._backlog_writer = {}, threading.Event(), None
        self._reader = threading.Thread(target=self._read, daemon=True, name=f"isrlab-room-worker-{index}")
        self._reader.start()

    # -- writing ------------------------------------------------------------------------------------
    def send(self, message):
        """Fire and forget (backlogs, stop); False when the worker is gone, or stuck: a worker
        that reads nothing for WRITE_TIMEOUT_S is killed (its rooms then move to another)."""
        data = memoryview(protocol.encode(message))
        with self._write_lock:
            try:
                return self._write(data, time.monotonic() + WRITE_TIMEOUT_S)
            except (OSError, ValueError):
                return False

    def _write(self, data, deadline):
        while data:
            try:
                data = data[os.write(self._stdin_fd, data):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.error("room worker %s read nothing for %g s: killed, its rooms are moved",
                              self.pid, WRITE_TIMEOUT_S)
                    self.proc.kill()            # the reader sees the end and recovery starts
                    return False
                select.select([], [self._stdin_fd], [], left)
        return True

    def note_backlog(self, changes):
        """Tell the worker which viewers' queues changed, from the thread that reads its output.
        That thread must never wait on the worker's input: a worker blocked writing a large reply
        to a full pipe reads nothing, so a full input pipe would stop both for good. The notes are
        merged (the latest count per viewer is all the worker keeps) and written by a thread of
        their own."""
        with self._lock:
            self._backlog.update(changes)
            if self._backlog_writer is None:
                self._backlog_writer = threading.Thread(target=self._send_backlogs, daemon=True,
                                                        name=f"isrlab-room-worker-{self.index}-backlog")
                self._backlog_writer.start()
        self._backlog_ready.set()

    def _send_backlogs(self):
        while self.alive:
            if not self._backlog_ready.wait(1.0):
                continue
            with self._lock:
                changes, self._backlog = self._backlog, {}
                self._backlog_ready.clear()
            if changes and not self.send(("backlog", changes)):
                return

    def tell(self, method, *args):
        """``method(*args)`` in the worker, its answer not awaited (its reply is dropped on
        arrival): for what must happen even when the worker is slow to answer, such as a viewer
        leaving, which otherwise kept its room from going idle. The worker reads its input in
        order, so a later call sees it done. False when the worker is gone."""
        with self._lock:
            if not self.alive:
                return False
            call_id = next(self._ids)
        return self.send(("call", call_id, method, args))

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
        if not self.send(("call", call_id, method, args)):
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
                    with self._lock:
                        slot = self._pending.pop(message[1], None)
                    if slot is not None:
                        slot["answer"] = (message[2], message[3])
                        slot["done"].set()
                    continue
                try:
                    self.on_message(self, message)
                except Exception:  # noqa: BLE001 - a relay error must not stop the reading
                    log.exception("room worker %s: handling %s failed", self.pid, message[0])
        except (protocol.ProtocolError, OSError, ValueError, EOFError) as exc:
            if self.alive:
                log.warning("room worker %s (%s) ended: %s", self.pid, self.python, exc)
        finally:
            self._ended()

    def _ended(self):
        with self._lock:
            was_alive, self.alive = self.alive, False
            pending, self._pending = self._pending, {}
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
            self.alive = False
        self.send(("stop",))
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=3)
        try:
            self._stdout.close()
        except OSError:
            pass
