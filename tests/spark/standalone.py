"""A real Spark standalone cluster for tests: one master and N workers, started from the project's
own PySpark (``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``) on
127.0.0.1, each JVM in its own process group, stopped with its children at teardown.

The workers stand in for other machines, so they share nothing with the driver but what Spark
ships: each starts in its own folder with an environment of its own (no PYTHONPATH, no variable
of the test process; its own ``SPARK_WORKER_DIR``, ``SPARK_LOCAL_DIRS``, ``SPARK_CONF_DIR``), and
``node_python`` is the Python a node would have: a virtual environment of the same Python 3.11
whose only addition is the folder PySpark is installed in, so it can import PySpark (and its
dependencies) but not ISR Lab: ``engine`` and ``app`` are not there (the checkout's editable
install is a ``.pth`` hook that a path line does not run). A driver started with
``PYSPARK_PYTHON=node_python`` therefore works on this cluster only if everything its executors
run arrives through Spark.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pyspark

SPARK_HOME = os.path.dirname(os.path.abspath(pyspark.__file__))
SPARK_CLASS = os.path.join(SPARK_HOME, "bin", "spark-class")
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
DAEMON_MEMORY = "256m"          # the master's and workers' own JVMs (executors get their own)
READY_WITHIN_S = 180


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_path():
    """A node's PATH: the system folders, plus wherever this machine's java is."""
    folders = ["/usr/local/bin", "/usr/bin", "/bin"]
    java = shutil.which("java")
    if java and os.path.dirname(java) not in folders:
        folders.append(os.path.dirname(java))
    return ":".join(folders)


def make_node_python(folder):
    """A Python 3.11 that has PySpark and not ISR Lab (see the module's docstring)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", folder], check=True, timeout=120)
    python = os.path.join(folder, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    with open(os.path.join(site, "pyspark-only.pth"), "w", encoding="utf-8") as handle:
        handle.write(os.path.dirname(SPARK_HOME) + "\n")
    return python


class Standalone:
    """``Standalone(folder, workers=2).start()``; ``.url`` is the master URL; ``.stop()``."""

    def __init__(self, folder, workers=2, cores=1, memory="1g"):
        self.folder, self.n_workers, self.cores, self.memory = folder, workers, cores, memory
        self.port, self.ui_port = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs = []                 # (name, Popen, log path)
        self.node_python = None

    def _env(self, home, **more):
        env = {"PATH": node_path(), "HOME": home, "LANG": "C.UTF-8", "SPARK_HOME": SPARK_HOME,
               "SPARK_CONF_DIR": os.path.join(home, "conf"), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_DAEMON_MEMORY": DAEMON_MEMORY}
        if os.environ.get("JAVA_HOME"):
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        env.update(more)
        return env

    def _launch(self, name, args, **env):
        home = os.path.join(self.folder, name)
        os.makedirs(os.path.join(home, "conf"), exist_ok=True)
        log = os.path.join(home, "daemon.log")
        with open(log, "wb") as out:
            proc = subprocess.Popen([SPARK_CLASS, *args], cwd=home, env=self._env(home, **env),
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.procs.append((name, proc, log))
        return home

    def start(self):
        try:
            self.node_python = make_node_python(os.path.join(self.folder, "node-python"))
            # no REST submission server: it would take the fixed port 6066
            self._launch("master", [MASTER, "--host", "127.0.0.1", "--port", str(self.port),
                                    "--webui-port", str(self.ui_port)],
                         SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")
            for i in range(self.n_workers):
                home = os.path.join(self.folder, f"worker{i}")
                self._launch(f"worker{i}", [WORKER, self.url, "--cores", str(self.cores), "--memory", self.memory,
                                            "--host", "127.0.0.1", "--webui-port", str(free_port())],
                             SPARK_WORKER_DIR=os.path.join(home, "work"),
                             SPARK_LOCAL_DIRS=os.path.join(home, "local"))
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def state(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as answer:
            return json.load(answer)

    def wait_ready(self, within_s=READY_WITHIN_S):
        """Until the master's JSON view shows every worker registered and ALIVE."""
        deadline = time.monotonic() + within_s
        last = None
        while time.monotonic() < deadline:
            for name, proc, log in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"spark {name} exited ({proc.returncode}):\n{tail(log)}")
            try:
                last = self.state()
                alive = [w for w in last.get("workers", []) if w.get("state") == "ALIVE"]
                if len(alive) == self.n_workers:
                    return last
            except OSError:
                pass                        # the master's web UI is not up yet
            time.sleep(0.5)
        logs = "\n".join(f"--- {name}\n{tail(log)}" for name, _proc, log in self.procs)
        raise RuntimeError(f"the standalone cluster was not ready in {within_s} s: {last}\n{logs}")

    def executor_dirs(self):
        """worker name -> the folders of the executors it ran (``work/<app>/<executor>``)."""
        out = {}
        for i in range(self.n_workers):
            work = os.path.join(self.folder, f"worker{i}", "work")
            out[f"worker{i}"] = sorted(os.path.join(work, app, ex) for app in sorted(os.listdir(work))
                                       for ex in os.listdir(os.path.join(work, app))) if os.path.isdir(work) else []
        return out

    def stop(self):
        """Workers first (they stop their executors), then the master; each process group is
        sent SIGTERM, then SIGKILL if anything of it is still there after 20 s."""
        for _name, proc, _log in reversed(self.procs):
            stop_group(proc)
        self.procs = []


def stop_group(proc, grace_s=20):
    pgid = proc.pid                         # start_new_session: the group is the daemon's pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        proc.wait()
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()
        try:
            os.killpg(pgid, 0)              # anything left in the group (executors, Python workers)?
        except ProcessLookupError:
            return
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def tail(path, n=4000):
    try:
        with open(path, "rb") as handle:
            return handle.read()[-n:].decode(errors="replace")
    except OSError:
        return "(no log)"
