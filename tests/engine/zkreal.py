"""A real ZooKeeper for the differential test: Debian's ``zookeeper`` package started standalone on
a free loopback port, and a replayer that sends an engine ZooKeeper trace (``engine.zookeeper.trace``)
to it call for call through kazoo and compares every answer (docs/model.md §9.10).
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from bisect import bisect_left

ZK_JAR = "/usr/share/java/zookeeper.jar"
# the jar's manifest names its dependencies; slf4j-nop silences the logging
CLASSPATH = f"{ZK_JAR}:/usr/share/java/slf4j-nop.jar"
ERROR_CODES = {"NoNodeError": "NONODE", "NodeExistsError": "NODEEXISTS",
               "BadVersionError": "BADVERSION", "NotEmptyError": "NOTEMPTY",
               "NoChildrenForEphemeralsError": "NOCHILDRENFOREPHEMERALS",
               "SessionExpiredError": "SESSIONEXPIRED", "RolledBackError": "ROLLEDBACK",
               "BadArgumentsError": "BADARGUMENTS"}


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RealZooKeeper:
    """``with RealZooKeeper() as zk: zk.port`` — a standalone server in a temporary data dir,
    bound to 127.0.0.1, admin server off, four-letter words limited to the ``srvr`` that ZooKeeper
    always keeps. Stopped (its process only) and its directory removed on every exit."""

    def __init__(self):
        self.port = None
        self.proc = None
        self.dir = None

    def __enter__(self):
        if not os.path.exists(ZK_JAR):
            raise RuntimeError(f"{ZK_JAR} missing: run scripts/setup.sh (Debian package zookeeper)")
        self.dir = tempfile.mkdtemp(prefix="isrlab-zk-")
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self):
        self.port = _free_port()
        cfg = os.path.join(self.dir, "zoo.cfg")
        with open(cfg, "w", encoding="utf-8") as handle:
            handle.write(f"tickTime=2000\ndataDir={self.dir}/data\nclientPort={self.port}\n"
                         "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n"
                         "4lw.commands.whitelist=srvr\nmaxClientCnxns=0\n"
                         "forceSync=no\nsnapCount=1000000\n")
        self.log = open(os.path.join(self.dir, "server.log"), "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
             "-Dzookeeper.jmx.log4j.disable=true", "-cp", CLASSPATH,
             "org.apache.zookeeper.server.ZooKeeperServerMain", cfg],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited with {self.proc.returncode}: "
                                   f"{open(self.log.name, encoding='utf-8').read()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"srvr")
                    if b"standalone" in sock.recv(512):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("ZooKeeper did not start within 60 s")

    def __exit__(self, *_exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "log", None):
            self.log.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def encode(value):
    """Engine data (JSON-able objects, or None) as the bytes a real znode holds."""
    if value is None:
        return b""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class Difference(AssertionError):
    pass


class ZxidMap:
    """Engine zxids and real zxids must correspond one to one, in the same order."""

    def __init__(self):
        self.pairs = {}    # engine -> real
        self.reverse = {}  # real -> engine
        self.keys = []     # sorted engine zxids

    def check(self, engine, real):
        if engine in self.pairs:
            if self.pairs[engine] != real:
                return f"engine zxid {engine} was real {self.pairs[engine]}, now {real}"
            return None
        if real in self.reverse:
            return f"real zxid {real} is engine zxid {self.reverse[real]} and {engine}"
        i = bisect_left(self.keys, engine)
        if i > 0 and self.pairs[self.keys[i - 1]] > real:
            return f"order: engine {self.keys[i - 1]} < {engine} but real {self.pairs[self.keys[i - 1]]} > {real}"
        if i < len(self.keys) and self.pairs[self.keys[i]] < real:
            return f"order: engine {engine} < {self.keys[i]} but real {real} > {self.pairs[self.keys[i]]}"
        self.keys.insert(i, engine)
        self.pairs[engine] = real
        self.reverse[real] = engine
        return None


class _Session:
    def __init__(self, client, current):
        self.client = client
        self.events = []       # (type, path, call number when it arrived)
        self._seen = []        # the WatchedEvent objects: one server event reaches both watchers
        self._current = current

        def watcher(event):
            if any(event is seen for seen in self._seen[-4:]):
                return
            self._seen.append(event)
            self.events.append((event.type, event.path, self._current()))
        self.watcher = watcher


class Replayer:
    """Replays one trace (a list of call dicts) under its own chroot of the real server."""

    def __init__(self, port, chroot, label):
        from kazoo.client import KazooClient
        self.KazooClient = KazooClient
        self.hosts = f"127.0.0.1:{port}"
        self.chroot = chroot
        self.label = label
        self.sessions = {}   # engine session id (None = admin) -> _Session
        self.expected = {}   # engine session id -> [(type, path)]
        self.zxids = ZxidMap()
        self.owners = {0: 0}  # engine ephemeralOwner -> real
        self.call = None
        root = KazooClient(hosts=self.hosts)
        root.start(timeout=15)
        try:
            root.ensure_path(chroot)
        finally:
            root.stop()
            root.close()
        self._connect(None, 30000)

    def _connect(self, sid, _timeout_ms):
        # a long session timeout: a loaded machine must not expire a replayed session on its own
        # (the engine's expiries are replayed as closes, docs/model.md §9.10e)
        client = self.KazooClient(hosts=self.hosts + self.chroot, timeout=30)
        client.start(timeout=15)
        session = _Session(client, lambda: self.call["n"] if self.call else -1)
        self.sessions[sid] = session
        self.expected[sid] = []
        if sid is not None:
            self.owners[sid] = client.client_id[0]

    def close(self):
        for session in self.sessions.values():
            try:
                session.client.stop()
                session.client.close()
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        self.sessions = {}

    def fail(self, what, engine, real):
        call = self.call
        raise Difference(f"{self.label} call #{call['n']} at t={call['t_ms']} ms "
                         f"({call['op']} {json.dumps(call.get('args'))[:300]}, session {call['session']}): "
                         f"{what}\n  engine: {engine}\n  real:   {real}")

    # -- replay ---------------------------------------------------------------------------
    def replay(self, calls):
        count = 0
        for call in calls:
            self.call = call
            op = call["op"]
            if op == "connect":
                self._connect(call["session"], call["timeout_ms"])
            elif op in ("close", "expire"):
                session = self.sessions.pop(call["session"])
                session.client.stop()
                session.client.close()
                self.expected.pop(call["session"], None)
            else:
                self._call(call)
            count += 1
            for sid, etype, path in call["events"]:
                if sid in self.expected:
                    self.expected[sid].append((etype, path))
            if call["events"] or op in ("close", "expire"):
                self._wait_events()
        self._wait_events(final=True)
        return count

    def _wait_events(self, final=False):
        deadline = time.monotonic() + 5
        if final:
            for session in self.sessions.values():
                session.client.exists("/")
            time.sleep(0.05)
        for sid, want in self.expected.items():
            session = self.sessions[sid]
            while len(session.events) < len(want) and time.monotonic() < deadline:
                time.sleep(0.001)
            got = [(t, p) for t, p, _n in session.events]
            if got[:len(want)] != want or (final and len(got) != len(want)):
                extra = [e for e in session.events[len(want):]]
                self.fail(f"watch events of session {sid} differ (extra real events, with the call "
                          f"number they arrived at: {extra})", want, got)

    def _call(self, call):
        session = self.sessions[call["session"]]
        client = session.client
        args = call["args"]
        op = call["op"]
        watch = session.watcher if args.get("watch") else None
        real_error, real = None, None
        try:
            if op == "create":
                path, stat = client.create(args["path"], encode(args["value"]),
                                           ephemeral=args["ephemeral"], sequence=args["sequence"],
                                           makepath=args["makepath"], include_data=True)
                real = {"path": path, "stat": stat}
            elif op == "get":
                data, stat = client.get(args["path"], watch=watch)
                real = {"data": data, "stat": stat}
            elif op == "exists":
                real = {"stat": client.exists(args["path"], watch=watch)}
            elif op == "get_children":
                real = {"children": sorted(client.get_children(args["path"], watch=watch))}
            elif op == "set":
                real = {"stat": client.set(args["path"], encode(args["value"]), args["version"])}
            elif op == "delete":
                client.delete(args["path"], args["version"], recursive=args["recursive"])
                real = {}
            elif op == "check":
                real = {}
                raise NotImplementedError("a top-level check is not a ZooKeeper call")
            elif op == "ensure_path":
                client.ensure_path(args["path"])
                real = {}
            elif op == "multi":
                real_error, real = self._multi(client, args["ops"])
            else:
                raise NotImplementedError(op)
        except Exception as exc:  # noqa: BLE001 - every ZooKeeper error is an answer to compare
            name = type(exc).__name__
            if name not in ERROR_CODES:
                raise
            real_error, real = ERROR_CODES[name], None
        if (call["error"] or None) != real_error:
            self.fail("error differs", call["error"], real_error)
        if real_error:
            if op == "multi" and call.get("failed_op") != real:
                self.fail("failing op of the multi differs", call.get("failed_op"), real)
            return
        self._compare(call["result"], real)

    def _multi(self, client, ops):
        txn = client.transaction()
        for op in ops:
            if op[0] == "create":
                txn.create(op[1], encode(op[2]), ephemeral=bool(op[3]))
            elif op[0] == "set":
                txn.set_data(op[1], encode(op[2]), op[3])
            elif op[0] == "delete":
                txn.delete(op[1], op[2])
            elif op[0] == "check":
                txn.check(op[1], op[2])
        results = txn.commit()
        for index, res in enumerate(results):
            if isinstance(res, Exception) and type(res).__name__ != "RolledBackError":
                return ERROR_CODES.get(type(res).__name__, type(res).__name__), index
        out = []
        for op, res in zip(ops, results):
            out.append({"path": res} if op[0] == "create" else
                       {"stat": res} if op[0] == "set" else {})
        return None, {"results": out}

    def _compare(self, engine, real):
        for key in ("path", "children"):
            if key in engine and engine[key] != real.get(key):
                self.fail(f"{key} differs", engine[key], real.get(key))
        if "data" in engine and encode(engine["data"]) != real["data"]:
            self.fail("data differs", encode(engine["data"]), real["data"])
        if "stat" in engine:
            self._compare_stat(engine["stat"], real["stat"])
        for mine, theirs in zip(engine.get("results", ()), real.get("results", ())):
            self._compare(mine, theirs)

    def _compare_stat(self, mine, stat):
        if (mine is None) != (stat is None):
            self.fail("existence differs", mine, stat)
        if mine is None:
            return
        real = {"version": stat.version, "cversion": stat.cversion,
                "numChildren": stat.numChildren}
        for key, value in real.items():
            if mine[key] != value:
                self.fail(f"stat {key} differs", mine, stat)
        owner = self.owners.get(mine["ephemeralOwner"], ("unknown engine session", mine["ephemeralOwner"]))
        if owner != stat.ephemeralOwner:
            self.fail("ephemeral owner differs (mapped per session)", mine, stat)
        for key in ("czxid", "mzxid"):
            problem = self.zxids.check(mine[key], getattr(stat, key))
            if problem:
                self.fail(f"{key}: {problem}", mine, stat)
