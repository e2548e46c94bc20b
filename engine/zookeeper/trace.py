"""Record every call the engine's ZooKeeper receives, with the answer it gave (docs/model.md §9.10e).

``python -m engine zk-trace SCENARIO.json [--kafka-version ERA]`` runs a scenario and prints one
JSON object per call:

* ``{"n", "t_ms", "op": "connect", "session", "owner", "timeout_ms"}`` — a session starts;
  ``"close"`` / ``"expire"`` end one (its ephemeral znodes go, listed in ``"deleted"``).
* ``{"n", "t_ms", "op", "session", "args", "error", "result", "events"}`` for ``create``, ``get``,
  ``exists``, ``get_children``, ``set``, ``delete``, ``check``, ``multi`` and ``ensure_path``.
  ``session`` is null for the writes the scenario itself makes (topic creation, ``set_config``,
  ``elect_preferred``: the admin tools of the story). ``args.watch`` says whether a watch was left.
  ``result`` holds the created path, the data and the stat fields a client sees (``version``,
  ``cversion``, ``numChildren``, ``czxid``, ``mzxid``, ``ephemeralOwner``); ``error`` is ZooKeeper's
  error code (``NODEEXISTS``…). ``events`` are the watch events the call fired:
  ``[session, type, path]`` in the order the sessions receive them.

The trace is what a real ZooKeeper can be held against: ``tests/engine/test_zk_differential.py``
replays it call for call on a real server through kazoo. Recording wraps the tree object of one
simulation and changes nothing in it. Stdlib only, like the engine.
"""
import json

from engine.zookeeper.server import ZookeeperError

_CALLS = ("create", "get", "exists", "get_children", "set", "delete", "check", "multi",
          "ensure_path")
_SESSION_CALLS = ("create_session", "expire_session", "close_session")


def stat_fields(stat):
    """The stat fields compared with a real ZooKeeper (kazoo's ZnodeStat names)."""
    if stat is None:
        return None
    return {"version": stat.version, "cversion": stat.cversion, "numChildren": stat.numChildren,
            "czxid": stat.czxid, "mzxid": stat.mzxid, "ephemeralOwner": stat.ephemeralOwner}


class ZkRecorder:
    """Wraps ``tree`` (an ``engine.zookeeper.server.ZooKeeper``) and appends every top-level call to
    ``calls``. Calls a call makes on the tree itself (a multi's ops, makepath's parents) are part
    of it, not calls of their own."""

    def __init__(self, tree, now=lambda: 0, server=None):
        self.tree = tree
        self.now = now
        self.calls = []
        self._depth = 0
        self._current = None
        self._sid = None  # the session whose request the server is executing
        self._seed()
        if server is not None:
            server._execute = self._wrap_execute(server._execute)
        for name in _CALLS:
            setattr(tree, name, self._wrap(name, getattr(tree, name)))
        for name in _SESSION_CALLS:
            setattr(tree, name, self._wrap_session(name, getattr(tree, name)))
        self._notify = tree.notify
        tree.notify = self._on_event

    def _seed(self):
        """znodes that exist before recording starts, as the admin creates that made them."""
        nodes = sorted(((n.czxid, p) for p, n in self.tree.nodes.items() if p != "/"))
        for _zxid, path in nodes:
            node = self.tree.nodes[path]
            self._append({"op": "create", "session": None,
                          "args": {"path": path, "value": node.data, "ephemeral": False,
                                   "sequence": False, "makepath": False, "watch": False},
                          "error": None, "result": {"path": path}, "events": []})

    def _append(self, entry):
        entry = {"n": len(self.calls), "t_ms": self.now(), **entry}
        self.calls.append(entry)
        return entry

    # -- wrapping ---------------------------------------------------------------------------
    def _wrap_execute(self, execute):
        def run(op, args, sid):
            previous, self._sid = self._sid, sid
            try:
                return execute(op, args, sid)
            finally:
                self._sid = previous
        return run

    def _wrap(self, name, method):
        def call(*args, **kwargs):
            if self._depth:
                return method(*args, **kwargs)
            entry = self._append({"op": name, "session": None, "args": None, "error": None,
                                  "result": None, "events": []})
            self._current = entry
            self._depth += 1
            try:
                result = method(*args, **kwargs)
            except ZookeeperError as exc:
                entry["error"] = exc.code
                if getattr(exc, "op_index", None) is not None:
                    entry["failed_op"] = exc.op_index
                raise
            finally:
                self._depth -= 1
                entry["session"], entry["args"] = self._sid, _describe(name, args, kwargs)
            entry["result"] = self._result(name, entry["args"], result)
            return result
        return call

    def _wrap_session(self, name, method):
        def call(*args, **kwargs):
            if name == "create_session":
                sid = method(*args, **kwargs)
                owner, timeout_ms = args[0], args[1]
                self._append({"op": "connect", "session": sid, "owner": owner,
                              "timeout_ms": timeout_ms, "events": []})
                return sid
            sid = args[0]
            session = self.tree.sessions.get(sid)
            live = session is not None and not session.expired
            entry = self._append({"op": "close" if name == "close_session" else "expire",
                                  "session": sid, "deleted": [], "events": []}) if live else None
            previous, self._current = self._current, entry
            self._depth += 1
            try:
                deleted = method(*args, **kwargs)
            finally:
                self._depth -= 1
                self._current = previous if entry is None else entry
            if entry is not None:
                entry["deleted"] = list(deleted or [])
            return deleted
        return call

    def _on_event(self, session_id, event_type, path):
        if self._current is not None:
            self._current["events"].append([session_id, event_type, path])
        if self._notify is not None:
            self._notify(session_id, event_type, path)

    # -- answers ----------------------------------------------------------------------------
    def _result(self, name, args, result):
        tree = self.tree
        if name == "create":
            node = tree.nodes.get(result)
            return {"path": result, "stat": stat_fields(_stat(node))}
        if name == "get":
            data, stat = result
            return {"data": data, "stat": stat_fields(stat)}
        if name == "exists":
            return {"stat": stat_fields(result)}
        if name == "get_children":
            return {"children": list(result)}
        if name == "set":
            return {"stat": stat_fields(result)}
        if name == "multi":
            out = []
            for op, res in zip(args["ops"], result):
                if op[0] == "create":
                    out.append({"path": res})
                elif op[0] == "set":
                    out.append({"stat": stat_fields(res)})
                else:
                    out.append({})
            return {"results": out}
        return {}

    def lines(self):
        return [json.dumps(entry, separators=(",", ":"), sort_keys=True, default=str)
                for entry in self.calls]


def _stat(node):
    if node is None:
        return None
    from engine.zookeeper.server import ZnodeStat
    return ZnodeStat(node)


def _describe(name, args, kwargs):
    """The arguments of a tree call, whatever way it was called."""
    def arg(i, key, default=None):
        if key in kwargs:
            return kwargs[key]
        return args[i] if len(args) > i else default

    if name == "create":
        return {"path": arg(0, "path"), "value": arg(1, "value"),
                     "ephemeral": bool(arg(2, "ephemeral", False)),
                     "sequence": bool(arg(3, "sequence", False)),
                     "makepath": bool(arg(4, "makepath", False)), "watch": False}
    if name in ("get", "exists", "get_children"):
        return {"path": arg(0, "path"), "watch": arg(1, "watch") is not None}
    if name == "set":
        return {"path": arg(0, "path"), "value": arg(1, "value"),
                      "version": arg(2, "version", -1), "watch": False}
    if name == "delete":
        return {"path": arg(0, "path"), "version": arg(1, "version", -1),
                      "recursive": bool(arg(2, "recursive", False)), "watch": False}
    if name == "check":
        return {"path": arg(0, "path"), "version": arg(1, "version"), "watch": False}
    if name == "ensure_path":
        return {"path": arg(0, "path"), "watch": False}
    ops = [list(op[:4]) if op[0] == "create" else list(op) for op in arg(0, "ops")]
    return {"ops": ops, "watch": False}


def record(scenario):
    """Run ``scenario`` and return (recorder, result). Imports here keep the module light."""
    from engine.simulation import Simulation
    sim = Simulation(scenario)
    recorder = ZkRecorder(sim.zk_server.tree, now=lambda: sim.scheduler.now_ms,
                          server=sim.zk_server)
    result = sim.run()
    return recorder, result


def print_trace(scenario, out):
    """Write the trace of ``scenario`` to ``out``, one JSON object per line
    (``python -m engine zk-trace``, engine/tools/cli.py)."""
    recorder, _result = record(scenario)
    for line in recorder.lines():
        out.write(line + "\n")
