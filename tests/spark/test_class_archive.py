"""The class-data-sharing archive of Spark's driver JVM (app/spark/class_archive.py): named by
what it depends on, mapped only when it exists, and really used by a session's JVM."""
import os
import subprocess
import sys

from app.spark import class_archive, session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_archive_is_named_by_the_jvm_and_the_class_path(tmp_path):
    jars = session.jdbc_jars()
    assert class_archive.fingerprint(jars) == class_archive.fingerprint(list(jars))
    other = tmp_path / "driver.jar"
    other.write_bytes(b"PK")
    # another JDBC driver on the class path (or the same one changed) is another archive
    assert class_archive.fingerprint(jars + [str(other)]) != class_archive.fingerprint(jars)
    before = class_archive.fingerprint([str(other)])
    other.write_bytes(b"PK-longer")
    assert class_archive.fingerprint([str(other)]) != before


def test_a_session_maps_the_archive_only_when_it_exists(tmp_path, monkeypatch):
    monkeypatch.setenv("ISRLAB_SPARK_CDS_DIR", str(tmp_path))
    jars = session.jdbc_jars()
    assert class_archive.java_options(jars) == ""
    assert "SharedArchiveFile" not in session.session_conf()["spark.driver.extraJavaOptions"]
    path = class_archive.archive_path(jars)
    assert path.startswith(str(tmp_path))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    options = session.session_conf()["spark.driver.extraJavaOptions"]
    # -Xshare:auto: a JVM that cannot map it runs without it; the warning is silenced
    assert f"-XX:SharedArchiveFile={path}" in options and "-Xshare:auto" in options
    assert class_archive.QUIET in options
    assert "SharedArchiveFile" not in session.session_conf("spark://elsewhere:7077")["spark.executor.extraJavaOptions"]
    monkeypatch.setenv("ISRLAB_SPARK_CDS", "0")
    assert "SharedArchiveFile" not in session.session_conf()["spark.driver.extraJavaOptions"]


DRIVER = """
import sys
from app.spark.session import build_session, session_conf
opts = session_conf()["spark.driver.extraJavaOptions"] + " -Xlog:class+load=info:file=" + sys.argv[1]
spark = build_session(app_name="isrlab-cds-check", ship=False, extra={"spark.driver.extraJavaOptions": opts})
assert spark.range(10).count() == 10
spark.stop()
"""


def test_the_archive_built_by_setup_is_what_a_new_session_loads_its_classes_from(tmp_path):
    """setup.sh builds the archive; a new driver JVM then loads Spark's classes from it (its
    class-load log names the dynamic archive, "shared objects file (top)", as their source)."""
    path = class_archive.archive_path(session.jdbc_jars())
    assert os.path.exists(path), "scripts/setup.sh builds it: python -m app.spark.archive_build"
    log = tmp_path / "classes.log"
    subprocess.run([sys.executable, "-c", DRIVER, str(log)], cwd=ROOT, check=True, timeout=300,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Spark's classes read from its jars or mapped from the archive (lambda classes, which a
    # JVM always spins at run time, name their host class as source and are left out)
    spark_lines = [line for line in log.read_text().splitlines() if " org.apache.spark." in line
                   and ("source: shared objects file (top)" in line or ".jar" in line)]
    from_archive = [line for line in spark_lines if "source: shared objects file (top)" in line]
    assert len(spark_lines) > 1000
    # the classes the setup's training session loaded come from the archive: nearly all of them
    assert len(from_archive) > 0.9 * len(spark_lines), (len(from_archive), len(spark_lines))
