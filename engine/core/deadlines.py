"""Deadlines: timers that usually become moot (a request's timeout, a parked request's expiry).

A broker or client sets one per request it sends and per request it parks, and nearly all of
them are cancelled by the answer. So instead of one scheduler entry each they wait in FIFO
queues, one per delay (equal delays expire in the order they were set), swept by a single
timer of the node's. A deadline is moot once its request was answered (``request=True``: ``arg``
no longer in ``pending``) or its parked operation is done (``arg.done``); the sweep drops moot
ones and fires the due ones. A mixin of ``node.Node``, whose ``pending``, ``incarnation``,
``scheduler`` and ``set_timer`` it uses (``Node.request`` inlines ``set_deadline``'s common case).
"""
from collections import deque


class Deadlines:
    def set_deadline(self, delay_ms, fn, arg, request=False):
        """``fn(arg)`` in ``delay_ms`` unless the deadline is moot by then (module docstring)."""
        at = self.scheduler.now_ms + delay_ms
        try:
            queue = self._deadlines[delay_ms]
        except KeyError:
            queue = self._deadlines[delay_ms] = deque()
        if queue:
            self._drop_moot_front(queue)
        queue.append((at, fn, arg, request))
        if self._sweep_at is None or at < self._sweep_at:
            self._sweep_at = at
            self.set_timer(delay_ms, self._sweep_deadlines, at)

    def _moot(self, entry):
        """A deadline ``(time_ms, fn, arg, request)`` whose request was answered or whose parked
        operation is done."""
        return (entry[2] not in self.pending) if entry[3] else entry[2].done

    def _drop_moot_front(self, queue):
        """Drop the oldest deadline of ``queue`` if it is moot, one per deadline set: answered
        requests then leave the queue at once instead of at their own deadline (30 s), which
        kept them past PyPy's nursery. The sweep drops the same ones: the run is the same."""
        if self._moot(queue[0]):
            queue.popleft()

    def _sweep_deadlines(self, at):
        if at != self._sweep_at:
            return  # superseded by an earlier sweep
        self._sweep_at = None
        incarnation = self.incarnation
        now = self.scheduler.now_ms
        next_at = None
        for queue in list(self._deadlines.values()):
            while queue:
                if self._moot(queue[0]):
                    queue.popleft()
                    continue
                when, fn, arg, _request = queue[0]
                if when > now:
                    break
                queue.popleft()
                fn(arg)
                if self.incarnation != incarnation:
                    return  # the handler stopped this process: its deadlines died with it
            if queue and (next_at is None or queue[0][0] < next_at):
                next_at = queue[0][0]
        if next_at is not None and (self._sweep_at is None or next_at < self._sweep_at):
            self._sweep_at = next_at
            self.set_timer(next_at - now, self._sweep_deadlines, next_at)
