"""Background jobs: heavy work never runs inside a request or a socket handler.

A request that must simulate (save a run from a scenario, import a run, fork a replay into a
live room) submits a job and waits at most ``JOB_ANSWER_WITHIN_S`` (config) for it: a quick job's result is the
reply, a slow one is answered ``202`` with the job's URL (``GET /api/jobs/<id>`` for progress and
the result, ``DELETE`` to cancel). Jobs run on fixed worker threads in two lanes — small jobs and
large ones, by their estimated work — so a huge job never delays a small one; each lane has a
bounded queue (full: ``429`` with ``Retry-After``), and every job has a time limit and a memory
limit. The heavy part of a job (simulating) goes through ``job.offload(fn, *args)`` to a worker
process (``app.workers``), off the server's GIL: there cancellation and both limits are enforced
by killing the worker (the memory limit applies to the worker's own resident memory). Work that
stays in the job's thread checks them cooperatively between slices of simulated time
(``engine.core.budget.Cap``; the memory limit then applies to the server's resident memory). Either
way a stopped job leaves nothing behind: a run is saved in one transaction at the very end, in
the server, or not at all.
"""
import os
import collections
import itertools
import logging
import secrets
import threading
import time

from .errors import UserError

log = logging.getLogger(__name__)

KEEP_FINISHED_S = 600.0
LARGE_JOB_EVENTS = 300_000          # estimated events from which a job goes to the large lane


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes():
    """This process's resident memory, from /proc (0 where there is none)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


class JobStopped(Exception):
    """Raised inside a job's work when it was cancelled or ran past its time limit."""


def _worker_message(rss, limit):
    return (f"stopped: its worker process's memory reached {rss / 2 ** 20:,.0f} MB, over the job memory limit "
            f"of {limit / 2 ** 20:,.0f} MB (ISRLAB_JOB_WORKER_MEMORY_MB)")


class Job:
    def __init__(self, kind, owner, time_limit_s, lane, memory_limit_bytes=0, rss=rss_bytes, yield_ratio=0.0,
                 processes=None):
        self.id = secrets.token_urlsafe(9)
        self.kind, self.owner, self.lane = kind, owner, lane
        self.state = "queued"
        self.progress = {}
        self.result = None
        self.error = None
        self.status = 200
        self.created = time.time()
        self.started = self.ended = None
        self.time_limit_s = time_limit_s
        self.memory_limit_bytes = memory_limit_bytes
        self._rss = rss
        self._memory_seen = 0       # the resident memory that stopped the job (0: it did not)
        self._worker_memory = 0     # the same, of the job's worker process
        self._processes = processes
        self.yield_ratio = yield_ratio
        self._slice_started = None
        self._deadline = None
        self._cancel = threading.Event()
        self._done = threading.Event()

    # -- for the work itself ------------------------------------------------------------------------
    def stopped(self):
        """True once the job is cancelled, past its time limit or the server past its memory
        limit (checked between slices, from the job's own thread)."""
        self._give_way()
        if self._cancel.is_set() or self._memory_seen:
            return True
        if self._deadline is not None and time.monotonic() > self._deadline:
            return True
        if self.memory_limit_bytes and self._deadline is not None:
            used = self._rss()
            if used > self.memory_limit_bytes:
                self._memory_seen = used
                return True
        return False

    def _give_way(self):
        """Jobs share one interpreter (and its GIL) with the live rooms: between slices a job sleeps
        ``yield_ratio`` times as long as it just computed, so a heavy save or import takes longer
        in the background instead of slowing every room's frames and every request."""
        now = time.perf_counter()
        if self.yield_ratio and self._slice_started is not None and self._deadline is not None:
            time.sleep(min(0.5, (now - self._slice_started) * self.yield_ratio))
            now = time.perf_counter()
        self._slice_started = now

    def interrupted(self):
        """Cancelled or past the time limit (what the waiting thread checks while a worker computes)."""
        return self._cancel.is_set() or (self._deadline is not None and time.monotonic() > self._deadline)

    def offload(self, fn, *args):
        """``fn(*args)`` in a worker process (or, without one, here with ``cancelled=self.stopped``,
        for the simulation to check between slices). ``fn`` is a module-level function whose
        arguments and result pickle; it takes ``cancelled`` as a keyword argument."""
        if self._processes is None:
            return fn(*args, cancelled=self.stopped)
        from .workers import WorkerStopped
        try:
            return self._processes.call(fn, *args, stopped=self.interrupted)
        except WorkerStopped as exc:
            if exc.why == "memory":
                self._worker_memory = exc.rss
            raise JobStopped(self.stop_reason()) from None

    def check(self):
        if self.stopped():
            raise JobStopped(self.stop_reason())

    def stop_reason(self):
        if self._cancel.is_set():
            return "cancelled"
        if self._worker_memory:
            return _worker_message(self._worker_memory, self._processes.memory_limit_bytes)
        if self._memory_seen:
            return (f"stopped: the server's memory reached {self._memory_seen / 2 ** 20:,.0f} MB, over its "
                    f"limit of {self.memory_limit_bytes / 2 ** 20:,.0f} MB")
        return f"stopped after its time limit of {self.time_limit_s:g} s"

    def report(self, **progress):
        self.progress = {**self.progress, **progress}

    # -- for the pool and the routes ----------------------------------------------------------------
    def wait(self, timeout):
        return self._done.wait(timeout)

    def cancel(self):
        self._cancel.set()

    def view(self):
        out = {"id": self.id, "kind": self.kind, "state": self.state, "progress": self.progress,
               "url": f"/api/jobs/{self.id}", "created": self.created, "started": self.started,
               "ended": self.ended}
        if self.state == "done":
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out


class JobPool:
    """Fixed workers per lane, bounded queues, time limits, cancellation."""

    def __init__(self, workers=2, queue_limit=8, time_limit_s=120.0, memory_limit_bytes=0, rss=rss_bytes,
                 yield_ratio=0.0, processes=None):
        self.time_limit_s = time_limit_s
        self.yield_ratio = yield_ratio
        self.memory_limit_bytes = memory_limit_bytes
        self._rss = rss
        self.processes = processes          # app.workers.WorkerProcesses, or None: all in threads
        self.queue_limit = queue_limit
        self._lock = threading.Lock()
        self._jobs = {}
        self._queues = {"small": collections.deque(), "large": collections.deque()}
        self._wake = {lane: threading.Condition(self._lock) for lane in self._queues}
        self._threads = []
        counts = {"small": max(1, workers - 1), "large": 1}
        for lane, count in counts.items():
            for n in range(count):
                thread = threading.Thread(target=self._work, args=(lane,), name=f"isrlab-job-{lane}-{n}",
                                          daemon=True)
                thread.start()
                self._threads.append(thread)
        self._counter = itertools.count()
        self.stats = {"submitted": 0, "refused": 0, "done": 0, "failed": 0, "stopped": 0}

    def submit(self, kind, work, owner=None, estimated_events=0, time_limit_s=None):
        """Queue ``work(job)``; refuse with 429 when its lane's queue is full."""
        lane = "large" if estimated_events >= LARGE_JOB_EVENTS else "small"
        job = Job(kind, owner, time_limit_s or self.time_limit_s, lane, self.memory_limit_bytes, self._rss,
                  self.yield_ratio, self.processes)
        with self._lock:
            self._forget_old()
            queue = self._queues[lane]
            if len(queue) >= self.queue_limit:
                self.stats["refused"] += 1
                raise UserError("job", f"the server is busy: {len(queue)} {lane} jobs are waiting",
                                f"try again in a few seconds (at most {self.queue_limit} wait)",
                                status=429).with_retry_after(5)
            job.work = work
            self._jobs[job.id] = job
            queue.append(job)
            self.stats["submitted"] += 1
            self._wake[lane].notify()
        return job

    def get(self, job_id):
        with self._lock:
            return self._jobs.get(job_id)

    def _forget_old(self):
        cutoff = time.time() - KEEP_FINISHED_S
        for key in [k for k, j in self._jobs.items() if j.ended and j.ended < cutoff]:
            del self._jobs[key]

    def _work(self, lane):
        while True:
            with self._lock:
                while not self._queues[lane]:
                    self._wake[lane].wait()
                job = self._queues[lane].popleft()
            self._run(job)

    def _run(self, job):
        if job.stopped():
            self._finish(job, "cancelled", error={"field": "job", "message": job.stop_reason(), "allowed": None})
            return
        job.state, job.started = "running", time.time()
        job._deadline = time.monotonic() + job.time_limit_s          # noqa: SLF001 - the pool owns it
        try:
            job.result = job.work(job)
        except JobStopped:
            cancelled = job._cancel.is_set() and not job._worker_memory  # noqa: SLF001
            self._finish(job, "cancelled" if cancelled else "failed", status=409 if cancelled else 408,
                         error={"field": "job", "message": job.stop_reason(),
                                "allowed": None if cancelled else "a smaller scenario (shorter duration_ms, "
                                                                  "fewer partitions or a lower rate_per_s), or "
                                                                  "try again when the server is less busy"})
        except UserError as exc:
            self._finish(job, "failed", status=exc.status, error=exc.to_dict())
        except Exception:  # noqa: BLE001 - a bug in a job is logged, never kills the worker
            log.exception("job %s (%s) failed", job.id, job.kind)
            self._finish(job, "failed", status=500,
                         error={"field": None, "message": "internal error (logged on the server)", "allowed": None})
        else:
            self._finish(job, "done")

    def _finish(self, job, state, status=200, error=None):
        job.state, job.status, job.error, job.ended = state, status, error, time.time()
        key = {"done": "done", "failed": "failed", "cancelled": "stopped"}[state]
        self.stats[key] += 1
        job._done.set()                                              # noqa: SLF001

    def close(self):
        """Kill the worker processes (the threads are daemons: they end with the process)."""
        if self.processes is not None:
            self.processes.close()
