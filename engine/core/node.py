"""The actor every broker, client, controller and ZooKeeper node is: timers that die with its
process, requests with timeouts (``Deadlines``), a paused state that defers everything, and
dispatch of the messages the network delivers to it (``engine/core/network.py``, which inlines
``Node.dispatch`` for the common case and checks that a subclass did not override it).
"""
from heapq import heappush

from engine.core.deadlines import Deadlines
from engine.core.messages import (CONNECTION_RESET, DISCONNECTED, FETCH, LIST_OFFSETS, METADATA,
                                  OFFSETS_FOR_LEADER_EPOCH, PRODUCE, response_type)

#: request type -> response type, seeded with the requests answered most often
_RESPONSE_TYPES = {t: response_type(t) for t in (FETCH, PRODUCE, METADATA, LIST_OFFSETS,
                                                 OFFSETS_FOR_LEADER_EPOCH)}


class Node(Deadlines):
    """Base of every actor on the network: timers that die with the process, requests with
    timeouts, a paused state that defers everything (a long GC pause), and handler dispatch.

    Subclasses fill ``self.handlers`` (message type -> bound method) and set ``net_state``.
    """

    def __init__(self, node_id, sim):
        self.node_id = node_id
        self.sim = sim
        self.scheduler = sim.scheduler
        self.network = sim.network
        self.incarnation = 0
        self.power_cycles = 0     # power failures of the machine (its kernel's connections died)
        self.net_state = "up"     # up | refusing (process down) | silent (powered off)
        self.paused = False
        self.deferred = []        # (kind, payload) held while paused, replayed on resume
        self.pending = {}         # correlation id -> (callback, ctx, target)
        self._next_corr = 0
        self.handlers = {}
        self._deadlines = {}      # delay -> deque of (time_ms, fn, arg, is_request), lazily cancelled
        self._sweep_at = None

    # -- timers -----------------------------------------------------------------------------
    def set_timer(self, delay_ms, fn, arg=None):
        # Scheduler.schedule, inlined (the same heap entry and seq): one call less per timer
        sched = self.scheduler
        sched._seq = seq = sched._seq + 1
        if sched.keyed:
            sched.push(sched.now_ms + delay_ms, seq, self._fire, (self.incarnation, fn, arg))
        else:
            heappush(sched._heap, (sched.now_ms + delay_ms, seq, self._fire,
                                   (self.incarnation, fn, arg)))

    def _fire(self, entry):
        if entry[0] != self.incarnation:
            return
        if self.paused:
            self.deferred.append(("timer", entry))
            return
        entry[1](entry[2])

    # -- messages ---------------------------------------------------------------------------
    def send(self, target, type_, body, correlation_id=None):
        return self.network.send(self.node_id, target, type_, body, correlation_id)

    def request(self, target, type_, body, timeout_ms, callback, ctx=None):
        """Send a request; ``callback(ctx, response_body_or_None, error_or_None)`` runs once,
        on the response or when ``timeout_ms`` passes (error ``REQUEST_TIMED_OUT``)."""
        self._next_corr = n = self._next_corr + 1
        corr = (self.incarnation, n)
        self.pending[corr] = (callback, ctx, target)
        self.network.send(self.node_id, target, type_, body, corr, True)
        if timeout_ms is not None:
            # set_deadline, inlined for the common case of an existing queue and an earlier sweep
            sweep_at = self._sweep_at
            if sweep_at is not None and timeout_ms in self._deadlines:
                at = self.scheduler.now_ms + timeout_ms
                if at >= sweep_at:
                    queue = self._deadlines[timeout_ms]
                    if queue:
                        self._drop_moot_front(queue)
                    queue.append((at, self._request_timeout, corr, True))
                    return corr
            self.set_deadline(timeout_ms, self._request_timeout, corr, request=True)
        return corr

    def _request_timeout(self, corr):
        """No answer within the request timeout: Kafka's NetworkClient (fetcher, controller
        channel, clients) closes the connection; what the cut still holds of it is an orphan."""
        entry = self.pending.pop(corr, None)
        if entry is not None:
            self.network.close_connection(self.node_id, entry[2], (corr,))
            entry[0](entry[1], None, "REQUEST_TIMED_OUT")

    def reply(self, request_env, body):
        type_ = request_env.type
        try:
            response = _RESPONSE_TYPES[type_]
        except KeyError:  # a rarer type: remember it, raising costs more than the lookup
            response = _RESPONSE_TYPES[type_] = response_type(type_)
        self.network.send(self.node_id, request_env.source, response, body,
                          request_env.correlation_id)

    def receive(self, env):
        if self.paused:
            self.deferred.append(("message", env))
            return
        self.dispatch(env)

    def dispatch(self, env):
        corr = env.correlation_id
        if corr is not None and not env.is_request:
            entry = self.pending.pop(corr, None)
            if entry is None:
                return  # late response to a request that timed out or a previous incarnation
            body = env.body
            entry[0](entry[1], body, body.get("error") if body.get("error") == DISCONNECTED else None)
            return
        handler = self.handlers.get(env.type)
        if handler is not None:
            handler(env)
        elif env.type == CONNECTION_RESET:
            self._connection_reset(env.source, env.body["incarnation"])

    def _connection_reset(self, peer, incarnation):
        """Every request still awaited from ``peer`` fails now (NETWORK_EXCEPTION), in the order
        it was sent — as Kafka's NetworkClient fails a disconnected connection's in-flight requests."""
        if incarnation != self.incarnation:
            return  # the connection belonged to a previous process of ours
        failed = [corr for corr, entry in self.pending.items() if entry[2] == peer]
        body = {"error": DISCONNECTED}
        for corr in failed:
            entry = self.pending.pop(corr, None)
            if entry is not None:
                entry[0](entry[1], body, DISCONNECTED)

    # -- pause / resume ---------------------------------------------------------------------
    def pause(self):
        self.paused = True

    def resume(self):
        """Everything that queued up during the pause happens now, in its original order."""
        self.paused = False
        backlog, self.deferred = self.deferred, []
        for kind, payload in backlog:
            if self.paused:  # a handler may not pause us, but keep the queue intact if so
                self.deferred.append((kind, payload))
                continue
            if kind == "timer":
                self._fire(payload)
            else:
                self.dispatch(payload)

    def new_incarnation(self):
        """A crash: every timer and outstanding request of the old process is forgotten."""
        self.incarnation += 1
        self.pending = {}
        self.deferred = []
        self.paused = False
        self._deadlines = {}
        self._sweep_at = None
