"""Spark fixtures: one SparkSession for the whole test session (local[2], quiet, loopback),
SQLite stores in temporary folders, a throwaway PostgreSQL server listening on 127.0.0.1
(the JDBC driver needs TCP; the store tests' server listens on a Unix socket only), and a real
Spark standalone cluster (a master and two one-core workers on 127.0.0.1, ``standalone.py``)."""
import os
import socket
import subprocess
import sys

import pytest

from tests.store.pgserver import PgServer, find_bin


@pytest.fixture(scope="session")
def spark():
    from app.spark.session import build_session
    session = build_session("local[2]", app_name="isrlab-tests",
                            extra={"spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"})
    yield session
    session.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TcpPgServer(PgServer):
    """The store tests' server, listening on 127.0.0.1 as well."""

    def start(self):
        self.port = free_port()
        self._run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust", "-U", self.user,
                  "--no-sync", "-E", "UTF8", "--locale=C")
        options = (f"-k {self.dir} -c listen_addresses=127.0.0.1 -p {self.port} -F -c max_connections=60 "
                   "-c shared_buffers=32MB")
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-o", options,
                  "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "60", "start")
        return self

    def tcp_url(self, database):
        return f"postgresql+psycopg2://{self.user}@127.0.0.1:{self.port}/{database}"


@pytest.fixture(scope="session")
def pg_tcp():
    bindir = find_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (scripts/setup.sh installs them)")
    server = TcpPgServer(bindir).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    """A standalone master and two workers (1 core, 1 GB each), stopped with every JVM they
    started when the module's tests are done."""
    from .standalone import Standalone
    cluster = Standalone(str(tmp_path_factory.mktemp("standalone")), workers=2).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def sqlite_url(tmp_path):
    return f"sqlite:///{tmp_path}/store.db"


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_cli(args):
    """``python -m app ARGS`` in its own process group (so a test can kill it with its JVM)."""
    return subprocess.Popen([sys.executable, "-m", "app", *args], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
