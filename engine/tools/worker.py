"""``python -m engine worker``: simulate sweep runs sent as JSON lines, one answer line per run.

Spark executors run Python 3.11 (PySpark requires the driver's minor version), so PyPy cannot
be the executors' Python; instead an executor task hands its batch of runs to a PyPy process
running this worker (``pypy3 -m engine worker``: the engine runs ~2x faster under PyPy once its
JIT is warm). Both ends of the protocol are here:

* ``serve(stdin, stdout)`` — the worker. A line ``{"setup": {"cells": {...}, "profiles": {...},
  "sweep_id": ...}}`` is answered with ``{"engine_version": ...}``; a line ``[run_no, run_key,
  cell_id, seed]`` with ``[run, events, latency]`` as ``engine.tools.sweep_run.simulate`` returns them.
  End of input ends the worker (so it never outlives the process that started it).
* ``WorkerProcess`` — the executor's side: starts the worker, checks that it runs this very
  engine, sends runs one at a time and returns each answer line undecoded (the driver decodes
  it; answers made in process are encoded the same way by ``encode``).

One request in flight at a time: neither side can fill a pipe the other is not reading.
Like ``cli``, this is the engine's contact with the outside world; the simulation does no I/O.
"""
import json
import os
import subprocess
import sys

from engine.simulation import ENGINE_VERSION
from engine.tools.sweep_run import simulate

#: the answers' encoding (ASCII-only, so every line survives any pipe encoding unchanged)
encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


#: PyPy's young generation for a worker. Its default is the L2 cache (1 MB here), and a run's
#: objects (history, records, in-flight messages) outlive many such nurseries: a third of a
#: sweep run went to collecting them. At 32 MB the collector's share falls ~3x (measured:
#: 120 sweep runs, ``gc.get_stats()``: 19-21 s at 1 MB, 5-6 s at 32, 64 or 128 MB).
PYPY_NURSERY = "32M"


class WorkerError(RuntimeError):
    """The worker process died or answered something that is not the protocol."""


def serve(stdin, stdout):
    """Answer each line of ``stdin`` on ``stdout`` (``cli`` has tuned the collector already)."""
    cells = profiles = sweep_id = None
    for line in stdin:
        message = json.loads(line)
        if isinstance(message, dict):
            setup = message["setup"]
            cells = {int(k): v for k, v in setup["cells"].items()}
            profiles, sweep_id = setup["profiles"], setup["sweep_id"]
            answer = {"engine_version": ENGINE_VERSION}
        else:
            cell = cells[message[2]]
            answer = simulate(tuple(message), cell, profiles[cell["profile"]], sweep_id)
        stdout.write(encode(answer) + "\n")
        stdout.flush()
    return 0


def engine_root():
    """The folder (or zip) the engine is imported from: what the worker's PYTHONPATH needs."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def engine_process_env():
    """The environment of another interpreter's ``-m engine`` process (run with cwd "/": ``-m``
    puts the working directory first on sys.path, and no other engine package may shadow the
    one PYTHONPATH names): this engine, a fixed hash seed, PyPy's nursery."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = engine_root()
    env["PYTHONHASHSEED"] = "0"
    env.setdefault("PYPY_GC_NURSERY", PYPY_NURSERY)
    return env


class WorkerProcess:
    """A ``python -m engine worker`` child process, started with ``interpreter``."""

    def __init__(self, interpreter):
        self.interpreter = interpreter
        self.proc = subprocess.Popen([interpreter, "-m", "engine", "worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=engine_process_env(), cwd="/")

    def alive(self):
        return self.proc.poll() is None

    def _ask(self, message):
        try:
            self.proc.stdin.write(encode(message).encode() + b"\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError(f"{self.interpreter} worker: {exc}") from exc
        if not line.endswith(b"\n"):
            self.close()
            raise WorkerError(f"{self.interpreter} worker ended (exit status {self.proc.returncode})")
        return line.decode()

    def setup(self, cells, profiles, sweep_id):
        """Send the sweep's cells; raises WorkerError unless the worker runs this engine."""
        answer = json.loads(self._ask({"setup": {"cells": cells, "profiles": profiles, "sweep_id": sweep_id}}))
        if answer.get("engine_version") != ENGINE_VERSION:
            self.close()
            raise WorkerError(f"{self.interpreter} worker runs engine {answer.get('engine_version')}, "
                              f"not {ENGINE_VERSION}")

    def simulate(self, row):
        """One run's answer line (JSON text of ``[run, events, latency]``)."""
        return self._ask(list(row))

    def close(self):
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


#: interpreter -> its WorkerProcess, kept for the life of this process: a Spark Python worker
#: is reused from task to task, and so is its PyPy worker (whose JIT is then already warm)
_workers = {}


def shared_worker(interpreter):
    """The live worker process of ``interpreter`` for this process, started when needed."""
    worker = _workers.get(interpreter)
    if worker is None or not worker.alive():
        worker = _workers[interpreter] = WorkerProcess(interpreter)
    return worker


def main():
    return serve(sys.stdin, sys.stdout)
