"""Sweeps on a real Spark cluster (issue 31, item 4): a standalone master and two workers started
from the project's own PySpark (``standalone.py``), the same sweep run by ``isrlab sweep
--analyze`` on ``local[*]`` and on ``spark://127.0.0.1:PORT`` into two databases of one real
PostgreSQL server, and every stored row must be the same.

The cluster shares nothing with the driver but what Spark ships: its executors run a Python
that has PySpark and not ISR Lab (``PYSPARK_PYTHON`` = the nodes' Python), start in the workers'
own folders with the workers' own environment, and the cluster run's driver keeps its temporary
files in a folder of its own, which no executor may name. On the cluster the runs are
simulated by PyPy workers found on the node's PATH (``--pypy pypy3``), locally in CPython
(``--pypy off``): the rows must not care. The analysis then runs on the cluster (``--analyze``)
and its result tables must equal the local analysis's.

Columns that legitimately differ between the two runs, and only those, are left out of the
comparison: ``sweeps.created_ms``, ``sweeps.updated_ms`` (wall-clock times of the sweep's
rows), ``sweeps.wall_ms`` (how long it ran) and ``sweep_runs.cpu_ms`` (the CPU time one run
took, measured where it ran). Every other column of every fact and result table is compared.
"""
import json
import os
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from app.spark.session import LOG4J2
from app.store import db
from app.sweeps.tables import FACT_TABLES, RESULT_TABLES, sweep_runs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = {
    "id": "standalone",
    "name": "the same sweep on local[*] and on a standalone cluster",
    "base": {"brokers": 3,
             "topics": [{"name": "t", "partitions": 2, "replication_factor": 3, "config": {"min.insync.replicas": 2}}],
             "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 50}],
             "duration_ms": 30000},
    "grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"]},
    "faults": {"from": "none", "crash_power": [40, 2000, 8000], "partition": [10, 1000, 5000]},
    "fault_phase": {"start_ms": 1000, "end_ms": 10000},
    "seeds": 4,
}
RUNS = 16
EXCLUDED = {"sweeps": {"created_ms", "updated_ms", "wall_ms"}, "sweep_runs": {"cpu_ms"}}
CLI_TIMEOUT_S = 420


def sweep_cli(doc_path, db_url, master, pypy, env):
    """``isrlab sweep DOC --analyze`` in its own driver process; returns (its JSON lines, seconds)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "app", "sweep", doc_path, "--db", db_url, "--master", master,
                           "--pypy", pypy, "--runs-per-task", "4", "--progress", "none", "--analyze"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                          start_new_session=True)
    assert proc.returncode == 0, f"isrlab sweep on {master} failed ({proc.returncode}):\n{proc.stderr[-4000:]}"
    out = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            out.update(json.loads(line))
    return out, time.monotonic() - started


@pytest.fixture(scope="module")
def swept(pg_tcp, spark_cluster, tmp_path_factory):
    folder = tmp_path_factory.mktemp("standalone-sweep")
    doc = folder / "sweep.json"
    doc.write_text(json.dumps(SWEEP))
    urls = {}
    for name in ("local", "cluster"):
        pg_tcp.create_database(f"standalone_{name}")
        urls[name] = pg_tcp.tcp_url(f"standalone_{name}")
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    driver_tmp = folder / "driver-tmp"
    driver_tmp.mkdir()
    cluster_env = {**base_env, "PYSPARK_PYTHON": spark_cluster.node_python, "TMPDIR": str(driver_tmp)}
    local, local_s = sweep_cli(str(doc), urls["local"], "local[*]", "off", base_env)
    cluster, cluster_s = sweep_cli(str(doc), urls["cluster"], spark_cluster.url, "pypy3", cluster_env)
    print(f"\nstandalone sweep + analysis: local[*] {local_s:.1f} s, cluster {cluster_s:.1f} s")
    stores = {name: db.open_store(url) for name, url in urls.items()}
    yield {"local": local, "cluster": cluster, "stores": stores, "driver_tmp": str(driver_tmp),
           "cluster_obj": spark_cluster}
    for store in stores.values():
        store.dispose()


def rows_of(store, table):
    """Every row of ``table`` without its legitimately differing columns, in primary-key order;
    floats to 9 decimals (sums over partitions may add in another order on another layout)."""
    columns = [c for c in table.c if c.name not in EXCLUDED.get(table.name, ())]
    with db.reading(store) as conn:
        rows = conn.execute(select(*columns).order_by(*table.primary_key.columns)).all()
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in row) for row in rows]


def executor_files(cluster):
    """worker -> [(executor folder, its stderr text)]"""
    out = {}
    for worker, folders in cluster.executor_dirs().items():
        out[worker] = []
        for folder in folders:
            with open(os.path.join(folder, "stderr"), encoding="utf-8", errors="replace") as handle:
                out[worker].append((folder, handle.read()))
    return out


def test_the_nodes_python_has_pyspark_and_not_isr_lab(spark_cluster, tmp_path):
    def imports(module):
        return subprocess.run([spark_cluster.node_python, "-c", f"import {module}"], cwd=tmp_path,
                              env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=60).returncode == 0
    assert imports("pyspark") and imports("py4j")
    assert not imports("engine") and not imports("app")


def test_both_sweeps_ran_whole(swept):
    for name in ("local", "cluster"):
        summary = swept[name]["sweep"]
        assert summary["status"] == "done" and summary["runs_done"] == summary["runs_new"] == RUNS, (name, summary)
        assert swept[name]["analysis"]["runs"] == RUNS and swept[name]["analysis"]["rows"]["analytics_cells"] == 4
    assert swept["local"]["sweep"]["pypy"] == "off" and swept["cluster"]["sweep"]["pypy"] == "pypy3"
    with db.reading(swept["stores"]["cluster"]) as conn:
        faults, ok = conn.execute(select(func.sum(sweep_runs.c.faults),
                                         func.count().filter(sweep_runs.c.status == "ok"))).one()
    assert ok == RUNS and faults >= RUNS          # the fault profile drew faults in (nearly) every run


def test_the_cluster_stores_the_same_rows_as_local(swept):
    local, cluster = swept["stores"]["local"], swept["stores"]["cluster"]
    for table in FACT_TABLES:
        want = rows_of(local, table)
        assert want, table.name
        assert rows_of(cluster, table) == want, table.name


def test_the_analysis_on_the_cluster_gives_the_local_result(swept):
    local, cluster = swept["stores"]["local"], swept["stores"]["cluster"]
    for table in RESULT_TABLES:
        assert rows_of(cluster, table) == rows_of(local, table), table.name
    assert swept["cluster"]["analysis"]["rows"] == swept["local"]["analysis"]["rows"]


def test_the_executors_ran_on_both_workers_from_what_spark_shipped(swept):
    """Both workers ran tasks; each executor fetched the engine zip and the JDBC driver into its
    own folder; its command line names nothing of the driver's disk (checkout, log4j2 file,
    temporary folder); no PyPy fallback note: the node's pypy3 simulated the runs."""
    cluster = swept["cluster_obj"]
    driver_paths = (os.path.join(ROOT, "app"), os.path.join(ROOT, "engine"), LOG4J2, swept["driver_tmp"])
    for worker, executors in executor_files(cluster).items():
        assert executors, f"{worker} ran no executor"
        for folder, text in executors:
            command = next(line for line in text.splitlines() if line.startswith("Spark Executor Command"))
            for path in driver_paths:
                assert path not in command, (path, command)
            names = os.listdir(folder)
            assert any(n.startswith("isrlab-engine-") and n.endswith(".zip") for n in names), names
            assert "postgresql.jar" in names, names
            assert "cannot run the engine" not in text and "is not on this node" not in text
            assert "Traceback" not in text, text[-3000:]
        # the executors log at Spark's default level (INFO) here: the cluster's configuration,
        # not the driver's log4j2 file (which says error)
        finished = sum(text.count("Finished task") for _folder, text in executors)
        assert finished >= 1, f"{worker} finished no task"
