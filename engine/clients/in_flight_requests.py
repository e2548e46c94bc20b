"""A client's own request timeout, as Kafka's NetworkClient and InFlightRequests enforce it
(docs/model.md §6, client side, "The client's request timeout").

Kafka checks in-flight requests only when ``NetworkClient.poll`` returns, after handling what
arrived (``handleTimedOutRequests`` after ``handleCompletedReceives``), and a request has timed
out only once ``now - sendTimeMs > request.timeout.ms`` — strictly. A poll returns when something
arrives for the client or the client has something to do (a timer of its own, a ``send()`` that
wakes the Sender); an otherwise idle poll returns after at most ``request.timeout.ms``
(``selector.poll(min(timeout, metadataTimeout, defaultRequestTimeoutMs))``). The node of a
timed-out request is disconnected and every request in flight to it fails, oldest first: as
disconnected (NETWORK_EXCEPTION) up to 3.4, as timed out (REQUEST_TIMED_OUT) from 3.5.0
(KAFKA-14317, ``ClientResponse.wasTimedOut``).
"""
from engine.core.messages import DISCONNECTED
from engine.core.node import Node

#: Timers of a client that are not a return of its poll: the sweep of its request deadlines, the
#: idle poll's own timer (which decides for itself), the end of a poll, and the application's
#: steady sends (its own thread: send() wakes the Sender only for a new or full batch).
_NOT_POLLS = ("_sweep_deadlines", "_idle_poll", "_end_of_poll", "_tick_steady")


class RequestTimeouts:
    """Mixin of ``ClientBase``: request timeouts checked when the client's poll returns."""

    # class defaults: snapshots pickled before engine 1.3.0 lack these attributes
    _expiring = None       # corr -> time its request.timeout.ms ran out (still pending then)
    _polled_ms = None      # when the client's poll last returned
    _idle_poll_at = None   # when the pending idle-poll timer fires
    _end_of_poll_at = None  # the millisecond whose poll looks for timed-out requests at its end

    def idle_poll_ms(self):
        """How long an idle poll blocks at most; None: the client polls without pause (§6)."""
        return None

    def _request_timeout(self, corr):
        if self.network.compat_1_1_0:   # engine 1.1.0 compatibility: docs/model.md §19
            return Node._request_timeout(self, corr)
        if not self.sim.rules_1_3:
            return self._request_timeout_1_2_0(corr)
        if corr in self.pending:   # timed out 1 ms from now (strictly past the timeout)
            if self._expiring is None:
                self._expiring = {}
            self._expiring[corr] = self.scheduler.now_ms
            self._schedule_idle_poll()

    def _request_timeout_1_2_0(self, corr):
        """Engine 1.2.0: at exactly the timeout, the request failed as REQUEST_TIMED_OUT and the
        others in flight to its node as disconnected."""
        entry = self.pending.get(corr)
        if entry is None:
            return
        target = entry[2]
        others = [c for c, e in self.pending.items() if e[2] == target and c != corr]
        self.network.close_connection(self.node_id, target, others)
        Node._request_timeout(self, corr)
        body = {"error": DISCONNECTED}
        for c in others:
            other = self.pending.pop(c, None)
            if other is not None:
                other[0](other[1], body, DISCONNECTED)

    # -- poll returns -------------------------------------------------------------------------------
    def dispatch(self, env):
        """A response arrived: the poll returns, handles it and whatever else arrives in this
        millisecond, then looks for timed-out requests."""
        Node.dispatch(self, env)
        self._poll_returned(at_once=False)

    def _fire(self, entry):
        """One of the client's timers: its poll returns (the timeout check ends that poll) and
        the client does what the timer was for."""
        if entry[0] == self.incarnation and getattr(entry[1], "__name__", None) not in _NOT_POLLS:
            self._poll_returned()
        Node._fire(self, entry)

    def _poll_returned(self, at_once=True):
        """The poll returns: it looks for timed-out requests before the client's next work (a
        timer's, a send's) - after this millisecond's other answers when an answer woke it."""
        now = self._polled_ms = self.scheduler.now_ms
        if not self._expiring or now <= min(self._expiring.values()):
            return
        if at_once:
            self._end_of_poll(None)
        elif self._end_of_poll_at != now:
            self._end_of_poll_at = now
            self.set_timer(0, self._end_of_poll)

    def _end_of_poll(self, _):
        if self._expiring:
            self._handle_timed_out_requests()
        if self._expiring:   # requests that run out later
            self._schedule_idle_poll()

    def _next_idle_return(self):
        """The first poll return after the earliest expiring request ran out, if nothing else
        wakes the client: its last return plus whole idle polls."""
        due = min(self._expiring.values()) + 1
        cap = self.idle_poll_ms()
        last = self._polled_ms
        if cap and last is not None and last < due:
            due = last + -(-(due - last) // cap) * cap
        return due

    def _schedule_idle_poll(self):
        due = self._next_idle_return()
        now = self.scheduler.now_ms
        if due <= now:
            return   # this millisecond's poll looks (its end is scheduled)
        if self._idle_poll_at is None or due < self._idle_poll_at or self._idle_poll_at < now:
            self._idle_poll_at = due
            self.set_timer(due - now, self._idle_poll, due)

    def _idle_poll(self, at):
        if at != self._idle_poll_at:
            return   # superseded by an earlier one
        self._idle_poll_at = None
        if not self._expiring:
            return
        if self._next_idle_return() <= self.scheduler.now_ms:   # no return since: this is one
            self._poll_returned()
        else:
            self._schedule_idle_poll()

    def _handle_timed_out_requests(self):
        """InFlightRequests.nodesWithTimedOutRequests, then NetworkClient.handleTimedOutRequests."""
        now = self.scheduler.now_ms
        pending = self.pending
        nodes = {}
        for corr, ran_out in list(self._expiring.items()):
            entry = pending.get(corr)
            if entry is None:
                del self._expiring[corr]   # answered in time after all
            elif now > ran_out:
                nodes[entry[2]] = None
                del self._expiring[corr]
        for node in nodes:
            self._disconnect_timed_out(node)

    def _disconnect_timed_out(self, node):
        """Close the connection; every request in flight to ``node`` fails, oldest first."""
        corrs = [c for c, e in self.pending.items() if e[2] == node]
        self.network.close_connection(self.node_id, node, corrs)
        error = "REQUEST_TIMED_OUT" if self.sim.era.client_timeout_is_timed_out else DISCONNECTED
        for corr in corrs:
            self._expiring.pop(corr, None)
            entry = self.pending.pop(corr, None)
            if entry is not None:
                entry[0](entry[1], None, error)
