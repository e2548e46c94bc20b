"""Direction of dependencies: the Spark side (app.sweeps, app.analytics) never imports Flask;
the executor modules import nothing of ``app`` (they are shipped by value); the report pages
(app.reports) never import PySpark; the Spark session stays quiet and on loopback."""
import ast
import os
import sys

import pytest

from app.spark import session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def imports_of(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            prefix = "." * node.level + (node.module or "")
            names.add(prefix)
    return names


def modules(package):
    folder = os.path.join(ROOT, *package.split("."))
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".py")]


@pytest.mark.parametrize("path", modules("app.sweeps") + modules("app.analytics"), ids=os.path.basename)
def test_spark_side_imports_no_flask(path):
    assert not any(n.split(".")[0] in ("flask", "flask_socketio", "werkzeug") for n in imports_of(path))


@pytest.mark.parametrize("path", [os.path.join(ROOT, "app", "sweeps", "worker.py"),
                                  os.path.join(ROOT, "app", "analytics", "resim_worker.py")], ids=os.path.basename)
def test_executor_modules_need_only_the_engine(path):
    for name in imports_of(path):
        assert name.split(".")[0] == "engine" or name.split(".")[0] in sys.stdlib_module_names, name


@pytest.mark.parametrize("path", modules("app.reports"), ids=os.path.basename)
def test_report_pages_import_no_spark(path):
    assert not any(n.startswith(("pyspark", "app.analytics", ".analytics")) for n in imports_of(path))


def test_session_settings_are_quiet_and_local():
    conf = session.session_conf()
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.ui.enabled"] == "false" and conf["spark.ui.showConsoleProgress"] == "false"
    assert conf["spark.driver.bindAddress"] == "127.0.0.1" and conf["spark.driver.host"] == "127.0.0.1"
    assert "log4j2.configurationFile=file:" in conf["spark.driver.extraJavaOptions"]
    assert "rootLogger.level = error" in open(session.LOG4J2).read()
    for jar in ("/usr/share/java/sqlite-jdbc.jar", "/usr/share/java/postgresql.jar"):
        assert jar in conf["spark.jars"] and jar in conf["spark.driver.extraClassPath"]
    cluster = session.session_conf("spark://somewhere:7077")
    assert cluster["spark.master"] == "spark://somewhere:7077" and "spark.driver.bindAddress" not in cluster
    # C1 only for a local driver (quick_jit, the default); a cluster's long-lived executors and
    # quick_jit=False keep tiered C2
    assert session.QUICK_JIT in conf["spark.driver.extraJavaOptions"]
    assert session.QUICK_JIT in conf["spark.executor.extraJavaOptions"]      # local: the same JVM
    assert session.QUICK_JIT not in session.session_conf(quick_jit=False)["spark.driver.extraJavaOptions"]
    assert session.QUICK_JIT in cluster["spark.driver.extraJavaOptions"]
    assert session.QUICK_JIT not in cluster["spark.executor.extraJavaOptions"]


def test_cluster_executors_get_no_path_of_the_drivers_disk():
    """Local executors share the driver's JVM options; a cluster's get only Debian's JNI folders:
    no log4j2 file of the checkout, no class archive, no class path (spark.jars ships the JDBC
    drivers to every executor)."""
    local = session.session_conf()
    assert local["spark.executor.extraClassPath"] == local["spark.driver.extraClassPath"]
    assert session.LOG4J2 in local["spark.executor.extraJavaOptions"]
    for master in ("spark://somewhere:7077", "spark://127.0.0.1:7077", "yarn"):
        cluster = session.session_conf(master)
        assert "spark.executor.extraClassPath" not in cluster
        assert cluster["spark.executor.extraJavaOptions"] == session.node_java_options()
        assert "/usr/share/java/postgresql.jar" in cluster["spark.jars"].split(",")
        assert session.LOG4J2 in cluster["spark.driver.extraJavaOptions"]      # the driver keeps it
    assert session.node_java_options() == ("-Djava.library.path=/usr/lib/x86_64-linux-gnu/jni:"
                                           "/usr/lib/aarch64-linux-gnu/jni:/usr/lib/jni")


@pytest.mark.parametrize("master,loopback", [
    (None, True), ("local[*]", True), ("local[2]", True), ("spark://127.0.0.1:7077", True),
    ("spark://localhost:7077", True), ("spark://127.0.0.1:7077,127.0.0.1:7078", True),
    ("spark://10.1.2.3:7077", False), ("spark://spark-master:7077", False), ("yarn", False),
    ("k8s://https://10.0.0.1:6443", False)])
def test_the_driver_binds_to_loopback_only_for_a_master_on_this_machine(master, loopback):
    env = session.driver_environment(master, {})
    assert ("SPARK_LOCAL_IP" in env) == loopback
    assert env.get("SPARK_LOCAL_IP", "127.0.0.1") == "127.0.0.1"
    assert env["PYSPARK_PYTHON"] == sys.executable
    # what the caller set is kept: the nodes' Python, the driver's own address
    given = {"PYSPARK_PYTHON": "/opt/py311/bin/python3", "SPARK_LOCAL_IP": "192.0.2.7"}
    assert session.driver_environment(master, dict(given)).items() >= given.items()


def test_the_running_session_uses_this_interpreter(spark):
    import sys
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    assert spark.sparkContext.getConf().get("spark.ui.enabled") == "false"
    assert spark.sparkContext.uiWebUrl is None
    # the JVM really started with the session's options: the log4j2 file and C1 only
    jvm_args = str(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
                   .getInputArguments())
    assert "log4j2.configurationFile=file:" in jvm_args and session.QUICK_JIT in jvm_args, jvm_args
