"""Background search jobs for the web page: one search at a time per server, the rest wait.

A job is started with validated input and runs in a thread (the search itself, and Spark jobs
when Spark is used, run off the request thread); its state — queued, running (with progress),
done (with the report) or error (with a message) — is read by polling. Finished jobs are kept
for an hour, at most ``MAX_KEPT``.
"""
import secrets
import threading
import time
import traceback

MAX_KEPT = 50
KEEP_S = 3600


class SearchJobs:
    def __init__(self, run_job):
        self._run_job = run_job            # callable(params, progress) -> report
        self._jobs = {}
        self._lock = threading.Lock()
        self._slot = threading.Semaphore(1)

    def start(self, params):
        job_id = secrets.token_urlsafe(9)
        job = {"id": job_id, "state": "queued", "progress": None, "report": None, "error": None,
               "created": time.time()}
        with self._lock:
            self._prune()
            self._jobs[job_id] = job
        threading.Thread(target=self._work, args=(job, params), daemon=True,
                         name=f"search-{job_id}").start()
        return self.view(job_id)

    def _work(self, job, params):
        with self._slot:
            job["state"] = "running"

            def progress(update):
                job["progress"] = dict(job["progress"] or {}, **update)
            try:
                job["report"] = self._run_job(params, progress)
                progress({"stage": "done"})
                job["state"] = "done"
            except Exception as exc:  # noqa: BLE001 - reported to the user, the server goes on
                job["error"] = f"{type(exc).__name__}: {exc}"
                job["state"] = "error"
                traceback.print_exc()

    def view(self, job_id):
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return {k: job[k] for k in ("id", "state", "progress", "report", "error")}

    def _prune(self):
        now = time.time()
        done = [j for j in self._jobs.values() if j["state"] in ("done", "error")]
        for job in done:
            if now - job["created"] > KEEP_S or len(self._jobs) > MAX_KEPT:
                self._jobs.pop(job["id"], None)
