"""A throwaway PostgreSQL server for tests: ``initdb`` in a temporary folder, a Unix socket only
(no TCP port to collide with), fsync off, stopped and deleted afterwards.

Run as root (CI containers), the server runs as the ``postgres`` user that the Debian package
creates (``runuser``), since PostgreSQL refuses to run as root. ``find_bin`` returns None when the
server binaries are missing (scripts/setup.sh installs them).
"""
import glob
import os
import random
import shutil
import subprocess
import tempfile


def find_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


class PgServer:
    def __init__(self, bindir):
        self.bindir = bindir
        self.dir = tempfile.mkdtemp(prefix="isrlab-pg-")
        self.data = os.path.join(self.dir, "data")
        self.port = random.randint(20000, 60000)
        self.user = "isrlab"
        self._as = []
        if os.geteuid() == 0:
            import pwd
            owner = pwd.getpwnam("postgres")
            os.chown(self.dir, owner.pw_uid, owner.pw_gid)
            os.chmod(self.dir, 0o755)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args):
        result = subprocess.run(self._as + list(args), capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr or result.stdout}")
        return result

    def start(self):
        self._run(os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust", "-U", self.user,
                  "--no-sync", "-E", "UTF8", "--locale=C")
        options = f"-k {self.dir} -c listen_addresses= -p {self.port} -F -c max_connections=100"
        self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-o", options,
                  "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "60", "start")
        return self

    def url(self, database="postgres"):
        return f"postgresql+psycopg2://{self.user}@/{database}?host={self.dir}&port={self.port}"

    def create_database(self, name):
        import psycopg2
        conn = psycopg2.connect(host=self.dir, port=self.port, user=self.user, dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        conn.close()
        return self.url(name)

    def stop(self):
        try:
            self._run(os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop")
        except Exception:  # noqa: BLE001 - best effort; the folder goes anyway
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
