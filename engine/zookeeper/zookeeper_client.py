"""A broker's ZooKeeper client: session, heartbeats, disconnection and expiry (§9.2).

Like the real client it pings every ``session_timeout / 3`` and considers the connection lost
when it has heard nothing for ``2/3`` of the session timeout. Requests issued while disconnected,
or outstanding when the connection was lost, are re-sent once the server answers again —
Kafka's ``retryRequestsUntilConnected``. A re-sent write may already have been applied; Kafka's
callers handle that (NODEEXISTS owned by our session, BADVERSION with identical content).
When the server says SESSIONEXPIRED the client fails everything outstanding and tells the broker,
which starts a new session and registers again.

A lost connection is closed for good: requests held back by the cut may still reach the server
(TCP delivers what was sent) and be applied, but their answers come back on a connection the
client has closed and are ignored; the client's own re-sends then meet the applied write.
"""
from engine.core.messages import ZK_REQUEST


class ZkClient:
    def __init__(self, broker, session_timeout_ms):
        self.broker = broker
        self.session_timeout_ms = session_timeout_ms
        self.session_id = None
        self.state = "closed"   # closed | connecting | connected | disconnected | expired
        self.last_heard_ms = 0
        self.pending = {}       # xid -> [op, args, callback, ctx]
        self._xid = 0
        self.conn = 0           # which TCP connection: a new one after each connection loss
        self.on_connected = None  # broker callback after a (new) session is established

    # -- lifecycle ----------------------------------------------------------------------------
    def connect(self):
        self.conn += 1
        self.state = "connecting"
        self.session_id = None
        self.last_heard_ms = self.broker.scheduler.now_ms
        self._send_connect()
        self.broker.set_timer(self.session_timeout_ms // 3, self._tick)

    def _send_connect(self):
        self.broker.send("zk", ZK_REQUEST, {"session": None, "xid": 0, "op": "connect",
                                            "args": {"timeout_ms": self.session_timeout_ms},
                                            "conn": self.conn})

    def close(self):
        if self.state in ("connected", "disconnected") and self.session_id is not None:
            self.broker.send("zk", ZK_REQUEST, {"session": self.session_id, "xid": -1,
                                                "op": "close", "args": None})
        self.state = "closed"
        self.pending = {}

    def _tick(self, _=None):
        """Heartbeat, and detect a lost connection (the ZooKeeper client's read timeout)."""
        if self.state in ("closed", "expired"):
            return
        now = self.broker.scheduler.now_ms
        if self.state == "connecting":
            self._send_connect()
        else:
            if self.state == "connected" and now - self.last_heard_ms > self.session_timeout_ms * 2 // 3:
                self.state = "disconnected"
                self.conn += 1
                self.broker.on_zk_disconnected(now - self.last_heard_ms)
            self.broker.send("zk", ZK_REQUEST, {"session": self.session_id, "xid": 0, "op": "ping",
                                                "args": None, "conn": self.conn})
        self.broker.set_timer(self.session_timeout_ms // 3, self._tick)

    # -- requests -----------------------------------------------------------------------------
    def call(self, op, args, callback, ctx=None):
        """Run ``op`` on ZooKeeper; ``callback(ctx, result, error_code)`` gets the answer."""
        self._xid += 1
        self.pending[self._xid] = [op, args, callback, ctx]
        if self.state == "connected":
            self._send(self._xid)
        elif self.state in ("expired", "closed"):
            entry = self.pending.pop(self._xid)
            callback(ctx, None, "SESSIONEXPIRED" if self.state == "expired" else "CONNECTIONLOSS")
        return self._xid

    def _send(self, xid):
        op, args, _cb, _ctx = self.pending[xid]
        self.broker.send("zk", ZK_REQUEST, {"session": self.session_id, "xid": xid, "op": op,
                                            "args": args, "conn": self.conn})

    def on_response(self, env):
        body = env.body
        if body.get("conn") != self.conn:
            return  # an answer on a connection we closed
        self.last_heard_ms = self.broker.scheduler.now_ms
        if body["op"] == "connect":
            if self.state != "connecting":
                return
            self.session_id = body["result"]["session_id"]
            self.state = "connected"
            # the requests made while connecting go now; those the callback makes, call() sends
            # itself: one registration per session (KafkaZkClient.registerBroker, §9.10c)
            waiting = list(self.pending)
            if self.on_connected:
                self.on_connected()
            for xid in waiting:
                if xid in self.pending:
                    self._send(xid)
            return
        if body["session"] != self.session_id:
            return  # answer for an old session
        if body["error"] == "SESSIONEXPIRED":
            self._expired()
            return
        if self.state == "disconnected":
            self.state = "connected"
            self.broker.on_zk_reconnected()
            for xid in list(self.pending):
                if xid != body["xid"]:
                    self._send(xid)
        entry = self.pending.pop(body["xid"], None)
        if entry is not None:
            entry[2](entry[3], body["result"], body["error"])

    def _expired(self):
        if self.state == "expired":
            return
        self.state = "expired"
        outstanding, self.pending = self.pending, {}
        for _op, _args, callback, ctx in outstanding.values():
            callback(ctx, None, "SESSIONEXPIRED")
        self.broker.on_zk_session_expired()

    @property
    def connected(self):
        return self.state == "connected"

    def view(self):
        return {"state": self.state, "session_id": self.session_id,
                "last_heard_ms": self.last_heard_ms}
