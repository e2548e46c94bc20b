"""The one place a SparkSession is built, and how code reaches the executors.

``build_session(master=None)``: ``local[*]`` unless a master URL is given (``--master
spark://host:7077``, ``yarn``, ``k8s://...``: the same commands then run on that cluster); the UI
off, no console progress bar, Debian's JDBC drivers on the driver's class path and shipped to
executors (``spark.jars``), and ``log4j2.properties`` beside this file silencing the console.

Local masters and masters on this machine's loopback (``spark://127.0.0.1:7077``) bind the
driver to loopback (``SPARK_LOCAL_IP=127.0.0.1`` unless set); any other master leaves the address
to Spark (the host's own, or ``SPARK_LOCAL_IP``), since executors on other machines must connect
back to the driver. Executors run ``PYSPARK_PYTHON`` (default: this interpreter's path; on a
cluster, the nodes' Python 3.11 with PySpark).

Executors need the engine and the per-run code, nothing else: ``ship_code`` zips ``engine/`` (the
pure standard-library simulator, as it is) and adds it with ``addPyFile``; the executor-side
modules of ISR Lab (``app.sweeps.worker``, ``app.analytics.resim_worker``) are pickled *by value*
(cloudpickle), so an executor never imports the ``app`` package (or Flask). On a cluster the
executors' JVM options name no file of the driver's machine (no class path, no log4j2 file):
the JDBC drivers arrive through ``spark.jars``, the engine through ``addPyFile``, and the
executors log as the cluster's own configuration says (``tests/spark/test_standalone.py``
proves it on a standalone master and two workers).
"""
import hashlib
import os
import sys
import tempfile
import zipfile

from . import class_archive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
JDBC_JARS = ("/usr/share/java/sqlite-jdbc.jar", "/usr/share/java/postgresql.jar")
JNI_DIRS = ("/usr/lib/x86_64-linux-gnu/jni", "/usr/lib/aarch64-linux-gnu/jni", "/usr/lib/jni")
EXECUTOR_MODULES = ("app.sweeps.worker", "app.analytics.resim_worker")
#: The driver JVM compiles with C1 only (``quick_jit``, the default): a session lives for one
#: job, and on a 2-core machine C2's compile threads cost more CPU than their faster code repays.
#: Measured (docs/performance.md), in fresh JVMs: the session's start ~20 -> ~13 CPU-s; the JVM's share
#: of a 400-run sweep 17 -> ~3.5 CPU-s; the analysis of 10,000 runs, session start included,
#: 45.4 / 48.7 / 44.1 s against 53.7 / 55.1 / 52.4 s with tiered C2. (Analysing in a JVM the
#: headline query had already warmed, C2 was ahead: 53.6 against 59.1 s.) A cluster's long-lived
#: executors keep tiered C2; ``quick_jit=False`` or ``ISRLAB_SPARK_FULL_JIT=1`` keeps it everywhere.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def jdbc_jars():
    return [j for j in JDBC_JARS if os.path.exists(j)]


def is_local(master):
    """A master whose executors live in the driver's JVM (``local``, ``local[*]``, ``local[N]``)."""
    return master is None or master.startswith("local")


def on_loopback(master):
    """A local master, or a cluster master addressed on this machine's loopback: the driver may
    then listen on loopback only, where executors elsewhere could never reach it."""
    if is_local(master):
        return True
    from urllib.parse import urlsplit
    host = urlsplit(master.split(",")[0]).hostname or ""
    return host == "localhost" or host.startswith("127.") or host == "::1"


def node_java_options():
    """The executors' JVM options on a cluster: Debian's JNI folders (where the SQLite JDBC
    driver's native part lives on a node with the package; a JVM skips folders that are not
    there), and nothing from the driver's disk: no log4j2 file (its path is the driver's
    checkout), no class archive, no class path (``spark.jars`` ships the JDBC drivers)."""
    return "-Djava.library.path=" + ":".join(JNI_DIRS)


def session_conf(master=None, app_name="isrlab", extra=None, quick_jit=True, dump_archive=None):
    """The settings of the session as (key, value) pairs (separate, so tests can read them).
    The driver maps the class archive when there is one (``class_archive``); ``dump_archive``:
    write one at its exit instead (only ``class_archive.build`` asks for it)."""
    jars = jdbc_jars()
    jni = [d for d in JNI_DIRS if os.path.isdir(d)]
    java_opts = f"-Dlog4j2.configurationFile=file:{LOG4J2}"
    if jni:
        java_opts += " -Djava.library.path=" + ":".join(jni)
    local = is_local(master)
    quick = " " + QUICK_JIT if quick_jit and not os.environ.get("ISRLAB_SPARK_FULL_JIT") else ""
    if dump_archive:
        archive = f" -XX:ArchiveClassesAtExit={dump_archive} {class_archive.QUIET}"
    else:
        archive = class_archive.java_options(jars)
    conf = {
        "spark.master": master or "local[*]",
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.jars": ",".join(jars),
        "spark.driver.extraClassPath": ":".join(jars),
        "spark.driver.extraJavaOptions": java_opts + quick + archive,
        "spark.executor.extraJavaOptions": java_opts + quick if local else node_java_options(),
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "false",
        "spark.driver.memory": "2g",
    }
    if local:
        conf["spark.executor.extraClassPath"] = ":".join(jars)
        conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                     "spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2))),
                     "spark.default.parallelism": str(os.cpu_count() or 2),
                     "spark.sql.adaptive.enabled": "true"})
    conf.update(extra or {})
    return conf


def driver_environment(master, environ):
    """The variables the driver starts with, where not set already: loopback only for a master
    on this machine (executors elsewhere connect back to the address the driver advertises,
    and a driver on 127.0.0.1 is out of their reach); executors running this interpreter
    (``PYSPARK_PYTHON``: on a cluster, set it to the nodes' Python 3.11 with PySpark)."""
    if on_loopback(master):
        environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    environ.setdefault("PYSPARK_PYTHON", sys.executable)
    environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return environ


def build_session(master=None, app_name="isrlab", extra=None, ship=True, quick_jit=True, dump_archive=None):
    """A SparkSession (or the one already running in this process: its JVM keeps the JIT setting
    it started with). ``quick_jit``: see QUICK_JIT; ``dump_archive``: see session_conf."""
    driver_environment(master, os.environ)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder
    for key, value in session_conf(master, app_name, extra, quick_jit, dump_archive).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if ship:
        ship_code(spark)
    return spark


_shipped = set()


def engine_zip():
    """A zip of the engine package (content-addressed, built once per content)."""
    folder = os.path.join(ROOT, "engine")
    files = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".json")):
                files.append(os.path.join(dirpath, name))
    digest = hashlib.sha256()
    for path in files:
        digest.update(os.path.relpath(path, ROOT).encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    target = os.path.join(tempfile.gettempdir(), f"isrlab-engine-{digest.hexdigest()[:16]}.zip")
    if not os.path.exists(target):
        partial = target + f".{os.getpid()}.tmp"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, os.path.relpath(path, ROOT))
        os.replace(partial, target)
    return target


def ship_code(spark):
    """Make the engine importable on executors and send ISR Lab's executor code by value."""
    import importlib

    from pyspark import cloudpickle
    for name in EXECUTOR_MODULES:
        module = importlib.import_module(name)
        if name not in _shipped:
            cloudpickle.register_pickle_by_value(module)
            _shipped.add(name)
    key = (id(spark.sparkContext), "engine")
    if key not in _shipped:
        spark.sparkContext.addPyFile(engine_zip())
        _shipped.add(key)


def default_parallelism(spark):
    return spark.sparkContext.defaultParallelism


class sql_conf:
    """``with sql_conf(spark, **{"spark.sql.adaptive.enabled": "false"}):`` runtime SQL settings
    for a block, restored after it (to what they were, or unset)."""

    def __init__(self, spark, **settings):
        self.spark, self.settings, self.saved = spark, settings, {}

    def __enter__(self):
        for key, value in self.settings.items():
            self.saved[key] = self.spark.conf.get(key, None)
            self.spark.conf.set(key, value)
        return self

    def __exit__(self, *exc):
        for key, value in self.saved.items():
            if value is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, value)
        return False
