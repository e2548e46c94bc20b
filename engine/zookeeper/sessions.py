"""ZooKeeper sessions (docs/model.md §9.2): the tree's session table (heartbeats, and expiry deleting
the session's ephemeral znodes and watches) and the server's session tracking (a session expires
``zookeeper.session.timeout.ms`` after the last request or ping it sent; watch events wait for a
link the owner can hear). ``Session`` itself stays in ``engine.zookeeper.server``.
"""
from engine.core.messages import ZK_WATCH
from engine.zookeeper.errors import SessionExpiredError


class SessionTable:
    """Mixin of ``ZooKeeper``: heartbeats and the end of a session."""

    def touch(self, session_id):
        session = self._live_session(session_id)
        session.last_heard_ms = self._now()
        return session

    def _live_session(self, session_id):
        session = self.sessions.get(session_id)
        if session is None or session.expired:
            raise SessionExpiredError(f"session 0x{session_id or 0:x} expired")
        return session

    def expire_session(self, session_id):
        """End a session (expiry or close): its ephemeral znodes and watches go."""
        session = self.sessions.get(session_id)
        if session is None or session.expired:
            return []
        session.expired = True
        deleted = []
        self._begin_txn()  # closeSession is one transaction: its deletions share its zxid (§9.10b)
        try:
            for path in list(session.ephemerals):
                if path in self.nodes:
                    self._delete_node(path)
                    deleted.append(path)
        finally:
            self._txn_zxid = None
        session.ephemerals.clear()
        for table in (self.data_watches, self.child_watches):
            for watchers in table.values():
                watchers.pop(session_id, None)
        return deleted

    close_session = expire_session


class SessionTracker:
    """Mixin of ``ZkServer``: session expiry and the delivery of watch events."""

    # -- sessions ---------------------------------------------------------------------------
    def _schedule_expiry(self, sid):
        session = self.tree.sessions[sid]
        at = session.expires_at_ms
        if self._expiry_checks.get(sid) is None:
            self._expiry_checks[sid] = at
            self.scheduler.schedule_at(at, self._check_expiry, sid)

    def _check_expiry(self, sid):
        self._expiry_checks.pop(sid, None)
        session = self.tree.sessions.get(sid)
        if session is None or session.expired:
            return
        if self.scheduler.now_ms >= session.expires_at_ms:
            self.expire(sid, f"no heartbeat for {self.scheduler.now_ms - session.last_heard_ms} ms"
                             f" >= zookeeper.session.timeout.ms {session.timeout_ms}")
        else:
            self._schedule_expiry(sid)

    def expire(self, sid, reason):
        session = self.tree.sessions.get(sid)
        if session is None or session.expired:
            return False
        deleted = self.tree.expire_session(sid)
        self.sim.emit("session_expired", broker=session.owner, session=sid,
                      deleted=deleted, reason=reason)
        return True

    def session_of(self, owner):
        """The newest live session owned by ``owner`` (None if none)."""
        best = None
        for session in self.tree.sessions.values():
            if session.owner == owner and not session.expired:
                best = session
        return best

    # -- watches ----------------------------------------------------------------------------
    def _on_watch(self, sid, event_type, path):
        session = self.tree.sessions.get(sid)
        if session is None or session.expired:
            return
        session.pending_events.append((event_type, path))
        self._flush_events(session)

    def _flush_events(self, session):
        if not session.pending_events or self.network.is_blocked("zk", session.owner):
            return
        events, session.pending_events = session.pending_events, []
        for event_type, path in events:
            self.network.send("zk", session.owner, ZK_WATCH,
                              {"session": session.session_id, "type": event_type, "path": path})
