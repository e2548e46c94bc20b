"""A simulated ZooKeeper with real ZooKeeper semantics and kazoo's method and error names.

``ZooKeeper`` is the znode tree of the ensemble: persistent, ephemeral and sequential znodes;
stat versions (``version`` +1 on every set, ``cversion`` +1 on every child change) with
compare-and-set ``set``/``delete``; atomic ``multi``; sessions whose expiry deletes their
ephemeral znodes; one-shot data and child watches. It is synchronous and knows nothing of time
or networks, so its behaviour can be held against a real ZooKeeper through kazoo.

``ZkServer`` is the network node ``"zk"``: it receives requests from brokers over the simulated
network, runs them against the tree, answers, pushes watch events, and expires sessions that
stop heartbeating for ``zookeeper.session.timeout.ms`` (docs/model.md §9.2).

Errors and event types are in ``zk_errors``, stat and path helpers in ``zk_data``, session
heartbeats and expiry in ``zk_sessions``; the classes stay here (snapshots pickle them by this
module path) and every name stays importable from here.
"""
from engine.core.messages import ZK_REQUEST, ZK_RESPONSE  # noqa: F401
from engine.zookeeper.data import ZnodeStat, _check_path, _stat_dict, _stat_view, name_of, parent_of  # noqa: F401
from engine.zookeeper.errors import (CHANGED, CHILD, CREATED, DELETED, ERRORS, BadArgumentsError,  # noqa: F401
                        BadVersionError, NoChildrenForEphemeralsError, NodeExistsError, NoNodeError,
                        NotEmptyError, RolledBackError, SessionExpiredError, ZookeeperError)
from engine.zookeeper.sessions import SessionTable, SessionTracker


class Znode:
    __slots__ = ("data", "version", "cversion", "czxid", "mzxid", "ctime_ms", "mtime_ms",
                 "ephemeral_owner", "children")

    def __init__(self, data, zxid, now_ms, ephemeral_owner):
        self.data = data
        self.version = 0
        self.cversion = 0
        self.czxid = zxid
        self.mzxid = zxid
        self.ctime_ms = now_ms
        self.mtime_ms = now_ms
        self.ephemeral_owner = ephemeral_owner
        self.children = {}  # name -> None; insertion-ordered, listed sorted




class Session:
    __slots__ = ("session_id", "owner", "timeout_ms", "last_heard_ms", "expired", "ephemerals",
                 "pending_events")

    def __init__(self, session_id, owner, timeout_ms, now_ms):
        self.session_id = session_id
        self.owner = owner
        self.timeout_ms = timeout_ms
        self.last_heard_ms = now_ms
        self.expired = False
        self.ephemerals = {}  # path -> None
        self.pending_events = []  # watch events that could not be pushed (link down)

    @property
    def expires_at_ms(self):
        return self.last_heard_ms + self.timeout_ms


class ZooKeeper(SessionTable):
    """The znode tree, sessions and watches. ``now`` is a zero-argument clock (simulated ms)."""

    #: the zxid of the transaction in progress (a multi, a session close), else None; a class
    #: default so that trees pickled before it existed still load
    _txn_zxid = None

    def __init__(self, now=lambda: 0, notify=None):
        self._now = now
        self.zxid = 0
        self.nodes = {"/": Znode(None, 0, 0, None)}
        self.sessions = {}
        self._next_session = 0x100
        self.data_watches = {}   # path -> {session_id: None}
        self.child_watches = {}  # path -> {session_id: None}
        #: ``notify(session_id, event_type, path)`` is called for every fired watch.
        self.notify = notify
        self._batch = None  # events held back while a multi is in progress

    # -- sessions (heartbeats and expiry: zk_sessions.SessionTable) ---------------------------
    def create_session(self, owner, timeout_ms):
        self._next_session += 1
        sid = self._next_session
        self.sessions[sid] = Session(sid, owner, timeout_ms, self._now())
        return sid

    # -- kazoo-style API --------------------------------------------------------------------
    def create(self, path, value=None, ephemeral=False, sequence=False, makepath=False,
               session_id=None):
        _check_path(path)
        if ephemeral:
            self._live_session(session_id)
        parent = parent_of(path)
        if parent not in self.nodes:
            if not makepath:
                raise NoNodeError(parent)
            self._make_parents(parent)
        pnode = self.nodes[parent]
        if pnode.ephemeral_owner:
            raise NoChildrenForEphemeralsError(parent)
        if sequence:
            # The suffix is the number of children ever created under the parent; deletions do
            # not count. The cversion clients read counts both, so creations = (cversion +
            # numChildren) / 2 (ZooKeeper PrepRequestProcessor / DataNode.copyStat, §9.10a).
            path = f"{path}{(pnode.cversion + len(pnode.children)) // 2:010d}"
        if path in self.nodes:
            raise NodeExistsError(path)
        node = Znode(value, self._next_zxid(), self._now(), session_id if ephemeral else None)
        self.nodes[path] = node
        pnode.children[name_of(path)] = None
        pnode.cversion += 1
        if ephemeral:
            self.sessions[session_id].ephemerals[path] = None
        self._fire(self.data_watches, path, CREATED)
        self._fire(self.child_watches, parent, CHILD)
        return path

    def ensure_path(self, path):
        if path not in self.nodes:
            self._make_parents(path)
        return True

    def _make_parents(self, path):
        missing = []
        while path not in self.nodes:
            missing.append(path)
            path = parent_of(path)
        for p in reversed(missing):
            self.create(p)

    def get(self, path, watch=None):
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if watch is not None:
            self.data_watches.setdefault(path, {})[watch] = None
        return node.data, ZnodeStat(node)

    def exists(self, path, watch=None):
        if watch is not None:
            self.data_watches.setdefault(path, {})[watch] = None
        node = self.nodes.get(path)
        return ZnodeStat(node) if node is not None else None

    def get_children(self, path, watch=None):
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if watch is not None:
            self.child_watches.setdefault(path, {})[watch] = None
        return sorted(node.children)

    def set(self, path, value, version=-1):
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if version != -1 and version != node.version:
            raise BadVersionError(f"{path}: expected version {version}, znode has {node.version}")
        node.data = value
        node.version += 1
        node.mzxid = self._next_zxid()
        node.mtime_ms = self._now()
        self._fire(self.data_watches, path, CHANGED)
        return ZnodeStat(node)

    def delete(self, path, version=-1, recursive=False):
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if version != -1 and version != node.version:
            raise BadVersionError(f"{path}: expected version {version}, znode has {node.version}")
        if node.children:
            if not recursive:
                raise NotEmptyError(path)
            for child in sorted(node.children):
                self.delete(f"{path.rstrip('/')}/{child}", recursive=True)
        self._delete_node(path)
        return True

    def check(self, path, version):
        node = self.nodes.get(path)
        if node is None:
            raise NoNodeError(path)
        if version != node.version:
            raise BadVersionError(f"{path}: expected version {version}, znode has {node.version}")
        return True

    def multi(self, ops):
        """Apply ``ops`` atomically: [("create", path, value, ephemeral, session_id) |
        ("set", path, value, version) | ("delete", path, version) | ("check", path, version)].

        Returns the list of results, or raises the first failing op's error (nothing applied;
        like kazoo's transaction, the other ops would report RolledBackError).
        """
        snapshot = self._snapshot_for_rollback()
        self._batch = []
        results = []
        self._begin_txn()
        try:
            for op in ops:
                results.append(self._apply_op(op))
        except ZookeeperError as exc:
            self._txn_zxid = None
            self._rollback(snapshot)
            self._batch = None
            exc.op_index = len(results)
            raise
        self._txn_zxid = None
        events, self._batch = self._batch, None
        for session_id, event_type, path in events:
            self._notify(session_id, event_type, path)
        return results

    def _apply_op(self, op):
        kind = op[0]
        if kind == "create":
            _, path, value, ephemeral, session_id = op
            return self.create(path, value, ephemeral=ephemeral, session_id=session_id)
        if kind == "set":
            return self.set(op[1], op[2], op[3])
        if kind == "delete":
            return self.delete(op[1], op[2])
        if kind == "check":
            return self.check(op[1], op[2])
        raise BadArgumentsError(f"unknown multi op {kind!r}")

    # -- internals --------------------------------------------------------------------------
    def _begin_txn(self):
        """One transaction, one zxid: every op of a multi, and every ephemeral deletion of a
        session close, carries the transaction's zxid (ZooKeeper MultiTxn / closeSession, §9.10b)."""
        self.zxid += 1
        self._txn_zxid = self.zxid

    def _next_zxid(self):
        if self._txn_zxid is not None:
            return self._txn_zxid
        self.zxid += 1
        return self.zxid

    def _snapshot_for_rollback(self):
        copies = {}
        for path, node in self.nodes.items():
            clone = Znode(node.data, node.czxid, node.ctime_ms, node.ephemeral_owner)
            clone.version, clone.cversion, clone.mzxid = node.version, node.cversion, node.mzxid
            clone.mtime_ms, clone.children = node.mtime_ms, dict(node.children)
            copies[path] = clone
        watches = ({p: dict(w) for p, w in self.data_watches.items()},
                   {p: dict(w) for p, w in self.child_watches.items()})
        ephemerals = {sid: dict(s.ephemerals) for sid, s in self.sessions.items()}
        return self.zxid, copies, watches, ephemerals

    def _rollback(self, snapshot):
        self.zxid, self.nodes, (self.data_watches, self.child_watches), ephemerals = snapshot
        for sid, paths in ephemerals.items():
            self.sessions[sid].ephemerals = paths

    def _delete_node(self, path):
        node = self.nodes.pop(path)
        self._next_zxid()
        parent = parent_of(path)
        pnode = self.nodes.get(parent)
        if pnode is not None:
            pnode.children.pop(name_of(path), None)
            pnode.cversion += 1
        if node.ephemeral_owner:
            session = self.sessions.get(node.ephemeral_owner)
            if session is not None:
                session.ephemerals.pop(path, None)
        # one NodeDeleted per session: the child trigger skips the sessions the data trigger told
        # (ZooKeeper DataTree.deleteNode / WatchManager.triggerWatch, §9.10d)
        told = self._fire(self.data_watches, path, DELETED)
        self._fire(self.child_watches, path, DELETED, skip=told)
        self._fire(self.child_watches, parent, CHILD)

    def _fire(self, table, path, event_type, skip=()):
        watchers = table.pop(path, None)
        if not watchers:
            return ()
        for session_id in watchers:
            if session_id in skip:
                continue
            if self._batch is not None:
                self._batch.append((session_id, event_type, path))
            else:
                self._notify(session_id, event_type, path)
        return watchers

    def _notify(self, session_id, event_type, path):
        if self.notify is not None:
            self.notify(session_id, event_type, path)

    # -- views ------------------------------------------------------------------------------
    def dump(self):
        """Every znode as {path: {data, version, cversion, czxid, ephemeral_owner}}, sorted."""
        return {path: {"data": n.data, "version": n.version, "cversion": n.cversion,
                       "czxid": n.czxid, "ephemeral_owner": n.ephemeral_owner}
                for path, n in sorted(self.nodes.items()) if path != "/"}


class ZkServer(SessionTracker):
    """The ZooKeeper ensemble as one network node (``"zk"``).

    Requests carry a session id; a request from an expired session gets ``SESSIONEXPIRED`` (that
    is how a client learns its session is gone when it reconnects). Every request or ping counts
    as a heartbeat. A session expires ``zookeeper.session.timeout.ms`` after the last one it sent.
    Watch events are pushed to the session's owner; one that cannot cross the link right now is
    held and pushed with the next reply the session can receive (ZooKeeper re-arms watches on
    reconnect and fires the ones whose znodes changed meanwhile).
    """
    node_id = "zk"

    def __init__(self, sim):
        self.sim = sim
        self.scheduler = sim.scheduler
        self.network = sim.network
        self.tree = ZooKeeper(now=self._now, notify=self._on_watch)
        self.net_state = "up"
        self.paused = False  # the ensemble is never paused; the attribute keeps delivery uniform
        self._expiry_checks = {}  # session id -> scheduled check time
        self.observer = None      # callable(path, data, version) after each partition-state write

    def _now(self):
        return self.scheduler.now_ms

    # -- network ----------------------------------------------------------------------------
    def dispatch(self, env):
        body = env.body
        op = body["op"]
        sid = body.get("session")
        result = error = None
        if op == "connect":
            sid = self.tree.create_session(env.source, body["args"]["timeout_ms"])
            self._schedule_expiry(sid)
            result = {"session_id": sid, "timeout_ms": body["args"]["timeout_ms"]}
        else:
            try:
                session = self.tree.touch(sid)
                self._flush_events(session)
                result = self._execute(op, body.get("args"), sid)
            except ZookeeperError as exc:
                error = exc.code
                result = {"message": str(exc), "failed_op": getattr(exc, "op_index", None)}
        self.network.send("zk", env.source, ZK_RESPONSE,
                          {"session": sid, "xid": body.get("xid"), "op": op, "result": result,
                           "error": error, "conn": body.get("conn")})

    def _execute(self, op, args, sid):
        tree = self.tree
        if op == "ping":
            return None
        if op == "close":
            tree.close_session(sid)
            return None
        if op == "pipeline":
            # Kafka pipelines async requests (KafkaZkClient.retryRequestsUntilConnected); they are
            # independent, not atomic: each gets its own result or error.
            out = []
            for sub_op, sub_args in args:
                try:
                    out.append([self._execute(sub_op, sub_args, sid), None])
                except ZookeeperError as exc:
                    out.append([{"message": str(exc), "failed_op": getattr(exc, "op_index", None)},
                                exc.code])
            return out
        if op == "create":
            path = tree.create(args["path"], args.get("value"), ephemeral=args.get("ephemeral", False),
                               sequence=args.get("sequence", False),
                               makepath=args.get("makepath", False), session_id=sid)
            self._observe(path)
            return {"path": path, "stat": _stat_dict(tree.nodes[path])}
        if op == "get":
            data, stat = tree.get(args["path"], watch=sid if args.get("watch") else None)
            return {"data": data, "stat": _stat_view(stat)}
        if op == "exists":
            stat = tree.exists(args["path"], watch=sid if args.get("watch") else None)
            return {"stat": _stat_view(stat) if stat else None,
                    "data": tree.nodes[args["path"]].data if stat else None}
        if op == "get_children":
            return {"children": tree.get_children(args["path"], watch=sid if args.get("watch") else None)}
        if op == "set":
            stat = tree.set(args["path"], args["value"], args.get("version", -1))
            self._observe(args["path"])
            return {"stat": _stat_view(stat)}
        if op == "delete":
            tree.delete(args["path"], args.get("version", -1))
            return {}
        if op == "multi":
            ops = [tuple(o) if o[0] != "create" else ("create", o[1], o[2], o[3], sid if o[3] else None)
                   for o in args["ops"]]
            results = tree.multi(ops)
            for o in ops:
                if o[0] in ("create", "set"):
                    self._observe(o[1])
            return {"results": [r if not hasattr(r, "version") else _stat_view(r) for r in results]}
        raise BadArgumentsError(f"unknown op {op!r}")

    def _observe(self, path):
        if self.observer is not None and path in self.tree.nodes:
            node = self.tree.nodes[path]
            self.observer(path, node.data, node.version)
