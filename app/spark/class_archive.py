"""A class-data-sharing archive of Spark's JVM: its classes loaded and verified once, mapped by
every later session.

A fresh Spark driver JVM loads ~10,000 classes before it runs a query; that is most of the
~11 s a session takes to start here. JDK 17's dynamic AppCDS (JEP 350) writes the classes one
JVM loaded to an archive at its exit (``-XX:ArchiveClassesAtExit``); a JVM started with
``-XX:SharedArchiveFile`` maps them instead of parsing and verifying them again. Measured here
(docs/performance.md): the session starts in ~6 s instead of ~11 s, and its first query runs in 3.1 s
instead of 5.2 s.

``scripts/setup.sh`` builds the archive once per checkout (``python -m app.spark.archive_build``:
a short Spark session doing what ISR Lab's jobs do, then a clean exit), into ``.venv/spark-cds``
(``cache_dir``), written under a temporary name and renamed when complete. Its name carries a fingerprint
of the JVM and of the class path, so a changed JDK, Spark or JDBC driver gets a new archive, never
a stale one; ``-Xshare:auto`` makes a JVM that cannot map the archive run without it, silently
(``-Xlog:cds*=off``). ``ISRLAB_SPARK_CDS=0`` turns it off.
"""
import glob
import hashlib
import os
import shutil
import sys

QUIET = "-Xlog:cds*=off"


def cache_dir():
    """Beside the virtual environment whose Spark jars the archive maps (``.venv/spark-cds``):
    a JVM accepts an archive only with the class path it was dumped with, so each checkout has
    its own, and it goes when the environment goes. ``ISRLAB_SPARK_CDS_DIR`` moves it."""
    return os.environ.get("ISRLAB_SPARK_CDS_DIR") or os.path.join(sys.prefix, "spark-cds")


def _stat(path):
    try:
        st = os.stat(path)
        return f"{path}:{st.st_size}:{int(st.st_mtime)}"
    except OSError:
        return f"{path}:missing"


def fingerprint(jars):
    """What the archive depends on: the java binary, Spark's jars and the extra class path."""
    import pyspark
    java = shutil.which("java") or ""
    java = os.path.realpath(java) if java else "none"
    # full paths: the JVM checks the class path itself, so another checkout is another archive
    spark_jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar")))
    parts = [_stat(java), pyspark.__version__, *spark_jars, *map(_stat, jars)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_path(jars):
    return os.path.join(cache_dir(), f"spark-{fingerprint(jars)}.jsa")


def enabled():
    return os.environ.get("ISRLAB_SPARK_CDS", "1") != "0"


def java_options(jars):
    """The driver JVM's options for the archive: map it when it exists, else nothing."""
    if not enabled():
        return ""
    path = archive_path(jars)
    return f" -XX:SharedArchiveFile={path} -Xshare:auto {QUIET}" if os.path.exists(path) else ""
