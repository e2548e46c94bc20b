"""Worker processes for the CPU-heavy part of background jobs.

The server is one Python process: every thread in it shares one GIL with the live rooms' runner,
so a job simulating a large scenario in a thread slows every room's frames however politely it
yields. The simulation part of a job (saving from a scenario, importing, preparing a fork,
shrinking a counterexample) therefore runs in one of a fixed number of worker processes started
with ``spawn`` (a clean interpreter: no Flask, sockets or locks inherited from the server), at a
lower CPU priority than the server. The job's thread in the server waits for the answer and
meanwhile enforces what a thread cannot enforce on itself:

* cancellation and the time limit: the worker is killed (SIGKILL) and replaced on next use, so a
  stopped job ends within one poll interval even in the middle of a slice;
* the memory limit: the worker's resident memory is read from /proc at each poll, and the worker
  is killed when it passes the limit; ``RLIMIT_AS`` inside the worker (the limit plus headroom) is
  the backstop for an allocation faster than the poll;
* the server's death: workers watch their parent and exit when it is gone (``exit_with_parent``),
  so a ``kill -9`` of the server leaves no orphan computing for nobody.

Only picklable data crosses: a module-level function, its arguments, and its result (plain
data, or a ``Simulation``, which pickles). Database writes stay in the server (see
``app.replay.save.save_prepared``): a killed worker never holds a half-written transaction.
"""
import logging
import os
import threading
import time
import traceback

from .errors import UserError

log = logging.getLogger(__name__)

POLL_S = 0.05             # cancel and time limit are checked this often (no system call: cheap)
RSS_EVERY = 5             # the worker's memory every this many polls: reading /proc holds the GIL
                          # through system calls, where a loaded machine deschedules the thread
IDLE_EXIT_S = 120.0       # an idle worker exits (tests create many apps; a server respawns on need)
NICE = 10                 # live rooms and requests first: the job may take longer, rooms may not
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class WorkerStopped(Exception):
    """The job's worker was killed: ``why`` is "stopped" (cancel/time limit, the caller knows
    which) or "memory" (``rss`` bytes, over the limit)."""

    def __init__(self, why, rss=0):
        super().__init__(why)
        self.why, self.rss = why, rss


def exit_with_parent(parent_pid):
    """In a worker process: leave as soon as the server that started it is gone, instead of
    finishing a long job for nobody (a killed or restarted server leaves no orphan)."""
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(0)
    threading.Thread(target=watch, daemon=True, name="isrlab-exit-with-parent").start()


def background_init(parent_pid):
    """What every worker process of the server does first: leave with the server, and run at a
    lower CPU priority than it (live rooms and requests first; background work may take longer)."""
    exit_with_parent(parent_pid)
    try:
        os.nice(NICE)
    except OSError:
        pass


def process_rss(pid):
    """Resident memory of process ``pid`` in bytes (0 when it is gone or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _serve(conn, parent_pid, address_limit):
    """A worker's loop: run ``fn(*args)`` for each request, answer ("ok", result), ("user",
    error fields, status) for a refusal the user can act on, or ("error", traceback)."""
    background_init(parent_pid)
    if address_limit:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (address_limit, address_limit))
    from engine.tools.cli import tune_gc
    tune_gc()
    while conn.poll(IDLE_EXIT_S):
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = ("ok", fn(*args))
        except UserError as exc:
            answer = ("user", (exc.field, exc.message, exc.allowed), exc.status)
        except MemoryError:
            answer = ("memory", None)
        except Exception:  # noqa: BLE001 - reported to the server, which logs it
            answer = ("error", traceback.format_exc())
        try:
            conn.send(answer)
        except MemoryError:
            conn.send(("memory", None))
        if answer[0] == "memory":
            return                          # its heap may be damaged: the server starts a fresh one


def _ready(modules):
    """In a warmed worker: import what jobs will need up front, so the first job does not pay."""
    import importlib
    for name in modules:
        importlib.import_module(name)
    return os.getpid()


class _Worker:
    def __init__(self, context, address_limit):
        parent, child = context.Pipe()
        self.conn = parent
        self.process = context.Process(target=_serve, args=(child, os.getpid(), address_limit),
                                       daemon=True, name="isrlab-job-worker")
        self.process.start()
        child.close()
        self.pid = self.process.pid

    def alive(self):
        return self.process.is_alive()

    def kill(self):
        try:
            self.process.kill()
        except (OSError, AttributeError):
            pass
        self.process.join(5)
        self.conn.close()


class WorkerProcesses:
    """At most ``size`` worker processes, started on first need; ``call`` borrows one."""

    def __init__(self, size=2, memory_limit_bytes=0, preload=()):
        import multiprocessing
        self.size = size
        self.preload = tuple(preload)       # module names a warmed worker imports before its first job
        self.memory_limit_bytes = memory_limit_bytes
        self._context = multiprocessing.get_context("spawn")
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._count = 0                     # workers alive or starting (at most size)
        self._idle = []
        self._busy = set()
        self.stats = {"started": 0, "killed": 0, "calls": 0}

    def _address_limit(self):
        # virtual memory runs well above resident memory (thread stacks, arenas): the backstop
        # sits high enough never to fire before the RSS poll would, except on a sudden huge grab
        return 2 * self.memory_limit_bytes + 512 * 2 ** 20 if self.memory_limit_bytes else 0

    def _borrow(self):
        """An idle worker, else a new one while fewer than ``size`` exist (counting those ``warm``
        is still starting: waiting for one of them beats starting one too many)."""
        with self._changed:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        self._busy.add(worker)
                        return worker
                    self._count -= 1                  # exited while idle: reap it below
                    threading.Thread(target=worker.kill, daemon=True).start()
                if self._count < self.size:
                    self._count += 1
                    self.stats["started"] += 1
                    break
                self._changed.wait(1.0)
        try:
            worker = _Worker(self._context, self._address_limit())
        except BaseException:
            self._lost()
            raise
        with self._lock:
            self._busy.add(worker)
        return worker

    def _lost(self):
        with self._changed:
            self._count -= 1
            self._changed.notify()

    def _give_back(self, worker, healthy):
        with self._changed:
            self._busy.discard(worker)
            if healthy:
                self._idle.append(worker)
                self._changed.notify()
        if not healthy:
            worker.kill()
            self._lost()

    def call(self, fn, *args, stopped=lambda: False):
        """``fn(*args)`` in a worker process. Raises ``WorkerStopped`` when ``stopped()`` turns true
        or the worker passes the memory limit (the worker is killed), ``UserError`` for what
        ``fn`` refused, ``RuntimeError`` for a crash or a bug (logged)."""
        with self._slots:
            worker = self._borrow()
            healthy = False
            try:
                self.stats["calls"] += 1
                worker.conn.send((fn, args))
                polls = 0
                while not worker.conn.poll(POLL_S):
                    if stopped():
                        raise WorkerStopped("stopped")
                    polls += 1
                    if polls % RSS_EVERY:
                        continue
                    rss = process_rss(worker.pid) if self.memory_limit_bytes else 0
                    if rss > self.memory_limit_bytes:
                        raise WorkerStopped("memory", rss)
                    if not worker.alive():
                        raise RuntimeError(f"the job's worker process ended (exit code {worker.process.exitcode})")
                try:
                    answer = worker.conn.recv()
                except (EOFError, OSError):
                    raise RuntimeError("the job's worker process ended before answering") from None
                if answer[0] == "memory":
                    raise WorkerStopped("memory", max(self.memory_limit_bytes, process_rss(worker.pid)))
                healthy = True
                if answer[0] == "user":
                    raise UserError(*answer[1], status=answer[2])
                if answer[0] == "error":
                    log.error("a job's worker process failed:\n%s", answer[1])
                    raise RuntimeError("a job's worker process failed (logged on the server)")
                return answer[1]
            except WorkerStopped:
                self.stats["killed"] += 1
                raise
            finally:
                self._give_back(worker, healthy)

    def warm(self, wait=False):
        """Start the workers now (a server at start-up) instead of on the first job, which would
        otherwise pay a second for a fresh interpreter and its imports."""
        def start():
            with self._lock:
                missing = max(0, self.size - self._count)
                self._count += missing
                self.stats["started"] += missing
            for _ in range(missing):
                try:
                    worker = _Worker(self._context, self._address_limit())
                    worker.conn.send((_ready, (self.preload,)))
                    worker.conn.recv()
                except (EOFError, OSError):
                    worker.kill()
                    self._lost()
                    continue
                with self._changed:
                    self._idle.append(worker)
                    self._changed.notify()
        if wait:
            start()
        else:
            threading.Thread(target=start, daemon=True, name="isrlab-warm-workers").start()

    def pids(self):
        with self._lock:
            return [w.pid for w in self._idle + list(self._busy)]

    def close(self):
        with self._lock:
            workers, self._idle = self._idle + list(self._busy), []
            self._busy.clear()
            self._count = 0
        for worker in workers:
            worker.kill()
