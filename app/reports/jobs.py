"""Background Spark jobs started from the web page: each is ``python -m app sweep|analyze`` in its
own process (the web server never imports PySpark), one at a time (a Spark job takes every core).
Progress comes from the job's JSON progress lines on its standard output."""
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Busy(Exception):
    pass


class Job:
    def __init__(self, kind, sweep_id, args):
        self.kind, self.sweep_id, self.args = kind, sweep_id, args
        self.state = "starting"
        self.progress = None
        self.result = None
        self.returncode = None
        self.started = time.time()
        self.ended = None
        self.errors = deque(maxlen=20)
        self.proc = None

    def to_dict(self):
        return {"kind": self.kind, "sweep_id": self.sweep_id, "state": self.state, "progress": self.progress,
                "result": self.result, "returncode": self.returncode, "started": self.started, "ended": self.ended,
                "errors": list(self.errors)}


class Jobs:
    """At most one running job; the finished ones are remembered (the last few)."""

    def __init__(self, db_url, python=sys.executable, keep=20):
        self.db_url = db_url
        self.python = python
        self._lock = threading.Lock()
        self._jobs = deque(maxlen=keep)

    def running(self):
        with self._lock:
            return next((j for j in self._jobs if j.state in ("starting", "running")), None)

    def latest(self, sweep_id):
        with self._lock:
            for job in reversed(self._jobs):
                if job.sweep_id == sweep_id:
                    return job
        return None

    def start_sweep(self, sweep_doc, sweep_id, analyze=True):
        # the document goes through the child's standard input: no temporary file to leak when the
        # start is refused (another job running) or the child dies
        args = ["sweep", "-", "--db", self.db_url, "--progress", "json"] + (["--analyze"] if analyze else [])
        return self._start("sweep", sweep_id, args, stdin_text=json.dumps(sweep_doc))

    def start_analysis(self, sweep_id):
        return self._start("analyze", sweep_id, ["analyze", "--sweep", sweep_id, "--db", self.db_url])

    def _start(self, kind, sweep_id, args, stdin_text=None):
        with self._lock:
            if any(j.state in ("starting", "running") for j in self._jobs):
                raise Busy("a Spark job is already running")
            job = Job(kind, sweep_id, args)
            self._jobs.append(job)
        job.proc = subprocess.Popen([self.python, "-m", "app", *args], cwd=ROOT, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True,
                                    stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL)
        if stdin_text is not None:
            with job.proc.stdin:
                job.proc.stdin.write(stdin_text)
        job.state = "running"
        threading.Thread(target=self._drain_errors, args=(job,), daemon=True).start()
        threading.Thread(target=self._follow, args=(job,), daemon=True).start()
        return job

    def _drain_errors(self, job):
        for line in job.proc.stderr:
            line = line.strip()
            if line.startswith("error") or "Error" in line:
                job.errors.append(line[:500])

    def _follow(self, job):
        for line in job.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "progress" in message:           # stage lines ("starting Spark") and counts merge
                job.progress = {**(job.progress or {}), **message["progress"]}
            else:
                job.result = {**(job.result or {}), **message}
        job.returncode = job.proc.wait()
        job.state = "done" if job.returncode == 0 else "failed"
        job.ended = time.time()

    def stop_all(self):
        """Stop the running job (its own process group: the driver and its JVM)."""
        import signal
        job = self.running()
        if job is not None and job.proc is not None and job.proc.poll() is None:
            os.killpg(job.proc.pid, signal.SIGTERM)
