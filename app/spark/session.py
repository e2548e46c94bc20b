"""The one place a SparkSession is built, and how code reaches the executors.

``build_session(master=None)``: ``local[*]`` unless a master URL is given (``--master
spark://host:7077``, ``yarn``, ``k8s://...``: the same commands then run on that cluster); the UI
off, no console progress bar, the driver bound to loopback (``SPARK_LOCAL_IP=127.0.0.1`` unless
set), executors running this interpreter (``PYSPARK_PYTHON``), Debian's JDBC drivers on the
driver and executor class paths, and ``log4j2.properties`` beside this file silencing the console.

Executors need the engine and the per-run code, nothing else: ``ship_code`` zips ``engine/`` (the
pure standard-library simulator, as it is) and adds it with ``addPyFile``; the executor-side
modules of ISR Lab (``app.sweeps.worker``, ``app.analytics.resim_worker``) are pickled *by value*
(cloudpickle), so an executor never imports the ``app`` package (or Flask).
"""
import hashlib
import os
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG4J2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
JDBC_JARS = ("/usr/share/java/sqlite-jdbc.jar", "/usr/share/java/postgresql.jar")
JNI_DIRS = ("/usr/lib/x86_64-linux-gnu/jni", "/usr/lib/aarch64-linux-gnu/jni", "/usr/lib/jni")
EXECUTOR_MODULES = ("app.sweeps.worker", "app.analytics.resim_worker")
#: ``quick_jit`` sessions (sweeps, re-simulations, counterexample search: the executors' Python
#: does the work, the JVM only schedules and passes lines) compile with C1 only: C2's compile
#: threads cost more CPU than their faster code repays in a JVM that lives for one sweep. Measured
#: (README, Speed): the session's start ~20 -> ~13 CPU-s and the JVM's share of a 400-run sweep
#: 17 -> ~3.5 CPU-s; but the analysis's SQL ran 43 s instead of 30 s, so it keeps tiered C2, as
#: does a cluster's executor. ``ISRLAB_SPARK_FULL_JIT=1`` keeps C2 everywhere.
QUICK_JIT = "-XX:TieredStopAtLevel=1"


def jdbc_jars():
    return [j for j in JDBC_JARS if os.path.exists(j)]


def session_conf(master=None, app_name="isrlab", extra=None, quick_jit=False):
    """The settings of the session as (key, value) pairs (separate, so tests can read them)."""
    jars = jdbc_jars()
    jni = [d for d in JNI_DIRS if os.path.isdir(d)]
    java_opts = f"-Dlog4j2.configurationFile=file:{LOG4J2}"
    if jni:
        java_opts += " -Djava.library.path=" + ":".join(jni)
    local = master is None or master.startswith("local")
    quick = " " + QUICK_JIT if quick_jit and not os.environ.get("ISRLAB_SPARK_FULL_JIT") else ""
    conf = {
        "spark.master": master or "local[*]",
        "spark.app.name": app_name,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.jars": ",".join(jars),
        "spark.driver.extraClassPath": ":".join(jars),
        "spark.executor.extraClassPath": ":".join(jars),
        "spark.driver.extraJavaOptions": java_opts + quick,
        "spark.executor.extraJavaOptions": java_opts + (quick if local else ""),
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "false",
        "spark.driver.memory": "2g",
    }
    if local:
        conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                     "spark.sql.shuffle.partitions": str(max(4, 2 * (os.cpu_count() or 2))),
                     "spark.default.parallelism": str(os.cpu_count() or 2),
                     "spark.sql.adaptive.enabled": "true"})
    conf.update(extra or {})
    return conf


def build_session(master=None, app_name="isrlab", extra=None, ship=True, quick_jit=False):
    """A SparkSession (or the one already running in this process: its JVM keeps the JIT setting
    it started with). ``quick_jit``: see QUICK_JIT."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder
    for key, value in session_conf(master, app_name, extra, quick_jit).items():
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
