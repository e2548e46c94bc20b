"""Background search jobs for the web page: one search at a time per server, a few wait.

A job is started with validated input and runs in a thread (the search itself, and Spark jobs
when Spark is used, run off the request thread); its state — queued, running (with progress),
done (with the report), cancelled or error (with a message) — is read by polling. At most
``MAX_WAITING`` searches wait behind the running one; more are refused with 429. A cancelled job
that is still queued never runs; a running one stops at its next progress report (between
batches of runs). Finished jobs are kept for an hour, at most ``MAX_KEPT``.
"""
import collections
import secrets
import threading
import time
import traceback

from app.errors import UserError

MAX_KEPT = 50
KEEP_S = 3600
MAX_WAITING = 4          # searches queued behind the running one; more are refused (429)


class Cancelled(Exception):
    """Raised from a cancelled job's progress callback: the search stops between batches."""


class SearchJobs:
    def __init__(self, run_job):
        self._run_job = run_job            # callable(params, progress) -> report
        self._jobs = {}
        self._lock = threading.Lock()
        self._queue = collections.deque()  # (job, params) waiting; one worker thread runs them in turn
        self._wake = threading.Condition(self._lock)
        self._worker = None

    def start(self, params):
        job_id = secrets.token_urlsafe(9)
        job = {"id": job_id, "state": "queued", "progress": None, "report": None, "error": None,
               "created": time.time(), "cancel": threading.Event()}
        with self._lock:
            self._prune()
            waiting = sum(1 for j in self._jobs.values() if j["state"] == "queued")
            if waiting >= MAX_WAITING:
                raise UserError("search", f"{waiting} searches are already waiting for the one running",
                                "try again when one has finished", status=429).with_retry_after(30)
            self._jobs[job_id] = job
            self._queue.append((job, params))
            if self._worker is None:
                self._worker = threading.Thread(target=self._loop, daemon=True, name="isrlab-search")
                self._worker.start()
            self._wake.notify()
        return self.view(job_id)

    def _loop(self):
        while True:
            with self._lock:
                while not self._queue:
                    self._wake.wait()
                job, params = self._queue.popleft()
            if not job["cancel"].is_set():
                self._work(job, params)

    def _work(self, job, params):
        job["state"] = "running"

        def progress(update):
            if job["cancel"].is_set():
                raise Cancelled()
            job["progress"] = dict(job["progress"] or {}, **update)
        progress.cancelled = job["cancel"].is_set   # for work that cannot report progress (a worker process)
        try:
            job["report"] = self._run_job(params, progress)
            progress({"stage": "done"})
            job["state"] = "done"
        except Cancelled:
            job["state"] = "cancelled"
        except Exception as exc:  # noqa: BLE001 - reported to the user, the server goes on
            job["error"] = f"{type(exc).__name__}: {exc}"
            job["state"] = "error"
            traceback.print_exc()

    def cancel(self, job_id):
        """Cancel a queued or running search; returns its view, or None when there is no such job."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            job["cancel"].set()
            if job["state"] == "queued":
                job["state"] = "cancelled"
        return self.view(job_id)

    def view(self, job_id):
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return {k: job[k] for k in ("id", "state", "progress", "report", "error")}

    def _prune(self):
        now = time.time()
        done = [j for j in self._jobs.values() if j["state"] in ("done", "error", "cancelled")]
        for job in done:
            if now - job["created"] > KEEP_S or len(self._jobs) > MAX_KEPT:
                self._jobs.pop(job["id"], None)
