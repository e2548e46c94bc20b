"""Builds the class-data-sharing archive of Spark's driver JVM (see ``class_archive``):
``python -m app.spark.archive_build [--force]``, run by ``scripts/setup.sh``."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from .class_archive import archive_path, cache_dir
from .session import build_session, jdbc_jars


def _train(target):
    """Run in a child process: a session that dumps its classes to ``target`` at exit."""
    spark = build_session(app_name="isrlab-class-archive", ship=False, dump_archive=target)
    _workload(spark)
    gateway = spark.sparkContext._gateway
    jvm = getattr(gateway, "proc", None)    # the driver JVM PySpark started
    spark.stop()
    # the JVM writes the archive as it exits: end it (EOF on its stdin) and wait for it, so the
    # parent never renames a half-written file
    gateway.shutdown()
    if jvm is not None:
        jvm.stdin.close()
        jvm.wait(timeout=300)


def _workload(spark):
    """What the jobs do, small: a JDBC read of SQLite, a repartition and cache, windows, joins,
    aggregations, JSON packing, a collect, and a Python map (the sweeps' executors)."""
    import sqlite3

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from app.spark.jdbc import jdbc_of, read_table
    from pyspark.sql.types import LongType, StringType, StructField, StructType
    folder = tempfile.mkdtemp(prefix="isrlab-cds-")
    path = os.path.join(folder, "train.db")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE facts (sweep_id TEXT, run_no INTEGER, t_ms INTEGER, kind TEXT)")
        conn.executemany("INSERT INTO facts VALUES (?, ?, ?, ?)",
                         [("s", i % 50, i, "ab"[i % 2]) for i in range(2000)])
    schema = StructType([StructField("sweep_id", StringType()), StructField("run_no", LongType()),
                         StructField("t_ms", LongType()), StructField("kind", StringType())])
    facts = read_table(spark, jdbc_of(f"sqlite:///{path}"), "facts", schema, "run_no", (0, 49), 2)
    facts = facts.repartition(2, "sweep_id", "run_no").cache()
    ordered = Window.partitionBy("sweep_id", "run_no").orderBy("t_ms")
    steps = facts.withColumn("next", F.lead("t_ms").over(ordered)).withColumn(
        "n", F.sum(F.lit(1)).over(ordered.rowsBetween(Window.unboundedPreceding, 0)))
    per_run = steps.groupBy("sweep_id", "run_no").agg(F.max("next").alias("last"), F.count("*").alias("c"))
    joined = per_run.join(facts.groupBy("sweep_id", "run_no").agg(F.countDistinct("kind").alias("k")),
                          ["sweep_id", "run_no"], "left")
    packed = joined.select(F.to_json(F.struct("*")).alias("j")).unionByName(
        facts.select(F.to_json(F.struct("kind")).alias("j")))
    packed.collect()
    spark.sparkContext.parallelize(range(100), 2).map(lambda x: x * 2).sum()
    shutil.rmtree(folder, ignore_errors=True)


def build(force=False):
    """Build the archive unless it exists (``force``: again). Returns its path, or None when
    the JVM wrote nothing (then sessions simply run without one)."""
    target = archive_path(jdbc_jars())
    if os.path.exists(target) and not force:
        return target
    os.makedirs(cache_dir(), exist_ok=True)
    partial = f"{target}.{os.getpid()}.tmp"
    env = {**os.environ, "ISRLAB_SPARK_CDS": "0"}
    code = f"from app.spark.archive_build import _train; _train({partial!r})"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    if done.returncode != 0 or not os.path.exists(partial) or os.path.getsize(partial) == 0:
        if os.path.exists(partial):
            os.remove(partial)
        return None
    os.replace(partial, target)
    for stale in glob.glob(os.path.join(cache_dir(), "spark-*.jsa")):
        if stale != target:
            os.remove(stale)
    return target


if __name__ == "__main__":
    built = build(force="--force" in sys.argv)
    print(f"setup: Spark class archive {built}" if built else "setup: no Spark class archive (sessions run without)")
