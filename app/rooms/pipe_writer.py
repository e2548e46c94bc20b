"""What the web process writes to a room worker's input, written by one thread of its own.

No caller ever waits on the pipe. A worker reads its input between ticks; a full pipe means it
is busy, stuck, or blocked writing its own output to us. A caller writing directly would wait,
holding a request thread (or the thread that reads the worker's output: then neither end moves
again). Here ``send`` queues the encoded message and returns; the writer thread writes the queue
in order, so the worker still sees every message in the order it was sent.

Bounded both ways:

* the queue holds at most MAX_QUEUED_BYTES: a send past it is refused (``Full``: the caller is
  told to try again), the worker left alone; small messages (leaves, removes) still go in, up to
  twice that;
* the writer gives up on a worker that takes no byte for STALL_S and answers no call either
  (``progress_since``: replies come from the thread that reads its input), while our reader of
  its output is not the slow side: the worker is stuck. A worker whose output our reader is
  still handing over (a relay of frames waiting on Redis, say) may be blocked writing to us:
  then the delay is ours, and the writer waits, rather than killing workers whose only fault is
  our slowness. A stuck worker's ``on_stuck`` is called once (the owner kills the process; its
  rooms move elsewhere) and every later ``send`` is refused.
"""
import collections
import logging
import os
import select
import threading
import time

log = logging.getLogger(__name__)

MAX_QUEUED_BYTES = 64 * 2 ** 20
SMALL_BYTES = 4096      # a message this small (a leave, a remove) is queued past the limit: lost,
                        # it would keep a viewer in a room, or a room alive, for good; many of
                        # them stay small, and a worker that reads nothing is killed anyway
STALL_S = 30.0
POLL_MS = 500
IDLE_EXIT_S = 10.0      # a writer with nothing to write this long ends; the next send starts one
                        # (the spare worker, idle until it takes over, costs no thread meanwhile)


class Full(ValueError):
    """The queue cannot take this message now (or ever, when ``size`` > MAX_QUEUED_BYTES)."""

    def __init__(self, size):
        super().__init__(f"a message of {size} bytes")
        self.size = size


class PipeWriter:
    def __init__(self, stream, name, on_stuck, progress_since, when_idle=None):
        """``stream``: the pipe's file object (closed by this writer when it ends);
        ``progress_since(t)``: whether the worker answered a call since monotonic time ``t``, or
        our reader is handing a message of it over now;
        ``when_idle()``: bytes to write once the queue is empty (merged notes), or None; called
        holding this writer's lock, so it must take no lock its callers hold while sending."""
        self._stream = stream
        self._fd = stream.fileno()
        os.set_blocking(self._fd, False)
        self._on_stuck = on_stuck
        self._progress_since = progress_since
        self._when_idle = when_idle
        self._queue = collections.deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._open = True           # sends accepted
        self._closing = False       # write what is queued, then end
        self._name = name
        self._thread = None
        self._poller = select.poll()   # not select.select: it refuses descriptors past 1023
        self._poller.register(self._fd, select.POLLOUT)

    def send(self, data):
        """Queue ``data``; False when the writer has ended or the worker is stuck; ``Full`` when
        the queue cannot hold it."""
        with self._cond:
            if not self._open:
                return False
            if self._queued_bytes + len(data) > MAX_QUEUED_BYTES and (
                    len(data) > SMALL_BYTES or self._queued_bytes > 2 * MAX_QUEUED_BYTES):
                raise Full(len(data))
            self._queue.append(data)
            self._queued_bytes += len(data)
            self._run_writer()
            return True

    def wake(self):
        """Something for ``when_idle`` to write."""
        with self._cond:
            self._run_writer()

    def _run_writer(self):
        """(Holding the lock.) Wake the writer thread, or start one."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name=self._name)
            self._thread.start()
        else:
            self._cond.notify()

    def close(self, timeout=3.0):
        """Write what is queued (within ``timeout``), then close the pipe."""
        with self._cond:
            self._open, self._closing = False, True
            self._run_writer()
            thread = self._thread
        if threading.current_thread() is not thread:
            thread.join(timeout)

    def end(self):
        """The worker is gone: drop what is queued and end the thread."""
        with self._cond:
            self._open, self._closing = False, True
            self._queue.clear()
            self._queued_bytes = 0
            self._run_writer()

    # -- the writer thread ----------------------------------------------------------------------------
    def _next(self):
        """The next bytes to write; None: close the pipe; False: idle for IDLE_EXIT_S, end."""
        timed_out = False
        with self._cond:
            while True:
                if self._queue:
                    data = self._queue.popleft()
                    self._queued_bytes -= len(data)
                    return data
                if self._closing:
                    return None
                idle = self._when_idle() if self._when_idle is not None and self._open else None
                if idle:
                    return idle
                if timed_out:               # looked at everything once more after the wait: a
                    self._thread = None     # notify racing its timeout is not lost
                    return False
                timed_out = not self._cond.wait(IDLE_EXIT_S)

    def _run(self):
        while True:
            data = self._next()
            if data is False:
                return                     # idle
            if data is None or not self._write(memoryview(data), self._poller):
                break
        self._finish()

    def _finish(self):
        with self._cond:
            self._open = False
            self._queue.clear()
        try:
            self._stream.close()           # by the writer only: no write can follow on a reused number
        except OSError:
            pass

    def _write(self, view, poller):
        stalled_since = None
        while view:
            try:
                view = view[os.write(self._fd, view):]
                stalled_since = None       # progress: the worker reads, however slowly
                continue
            except BlockingIOError:
                pass
            except OSError:                # the worker is gone (its reader notices and says so)
                return False
            now = time.monotonic()
            if stalled_since is None or self._progress_since(stalled_since):
                stalled_since = now
            elif now - stalled_since > STALL_S:
                with self._cond:
                    self._open = False
                self._stuck(f"it read nothing for {STALL_S:g} s")
                return False
            poller.poll(POLL_MS)
        return True

    def _stuck(self, why):
        try:
            self._on_stuck(why)
        except Exception:  # noqa: BLE001
            log.exception("stopping a stuck room worker failed")
