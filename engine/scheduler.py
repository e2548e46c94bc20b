"""The discrete-event kernel: one heap keyed by (time_ms, seq).

Everything that happens later in a simulation is an entry in this heap: message deliveries,
periodic broker tasks, request timeouts, timeline operations. There are no threads and no wall
clock; ``now_ms`` only moves when an entry is popped.

Ordering is total and deterministic: entries at the same ``time_ms`` run in ``seq`` order. Timeline
operations (scenario ops and live user commands) take seqs from a separate, very negative
counter so that at equal times they run before ordinary events, in list order. That is what makes
a live session, recorded as timeline operations, replay byte for byte (see ``schedule_op``).
"""
from heapq import heappop, heappush

#: seqs below this are reserved for timeline operations (they sort before ordinary events).
OP_SEQ_BASE = -(10 ** 12)
#: broker start-up at t=0 runs before even timeline operations at t=0.
BOOT_SEQ_BASE = -2 * (10 ** 12)


class Scheduler:
    __slots__ = ("now_ms", "_heap", "_seq", "_op_seq", "events")

    def __init__(self):
        self.now_ms = 0
        self._heap = []
        self._seq = 0
        self._op_seq = OP_SEQ_BASE
        self.events = 0  # entries dispatched so far

    def schedule(self, delay_ms, fn, arg=None):
        """Run ``fn(arg)`` ``delay_ms`` after now (0 = later in this same millisecond)."""
        self._seq += 1
        heappush(self._heap, (self.now_ms + delay_ms, self._seq, fn, arg))

    def schedule_at(self, time_ms, fn, arg=None):
        self._seq += 1
        heappush(self._heap, (time_ms, self._seq, fn, arg))

    def schedule_op(self, time_ms, fn, arg=None):
        """Schedule a timeline operation: before ordinary events of the same millisecond."""
        self._op_seq += 1
        heappush(self._heap, (time_ms, self._op_seq, fn, arg))

    def schedule_boot(self, index, fn, arg=None):
        heappush(self._heap, (0, BOOT_SEQ_BASE + index, fn, arg))

    def next_time_ms(self):
        """Time of the next entry, or None when the heap is empty."""
        return self._heap[0][0] if self._heap else None

    def step(self):
        """Dispatch one entry. Returns False when nothing is left."""
        if not self._heap:
            return False
        time_ms, _seq, fn, arg = heappop(self._heap)
        self.now_ms = time_ms
        self.events += 1
        fn(arg)
        return True

    def run_until(self, end_ms, stop=None):
        """Dispatch every entry with time <= end_ms, then set now_ms = end_ms.

        ``stop`` is an optional zero-argument callable checked after each entry; when it returns
        true the loop ends early (now_ms stays at the last entry's time) and True is returned.
        """
        heap = self._heap
        count = 0
        try:
            if stop is None:
                while heap and heap[0][0] <= end_ms:
                    time_ms, _seq, fn, arg = heappop(heap)
                    self.now_ms = time_ms
                    count += 1
                    fn(arg)
            else:
                while heap and heap[0][0] <= end_ms:
                    time_ms, _seq, fn, arg = heappop(heap)
                    self.now_ms = time_ms
                    count += 1
                    fn(arg)
                    if stop():
                        return True
        finally:
            self.events += count
        if end_ms > self.now_ms:
            self.now_ms = end_ms
        return False

    def pending(self):
        return len(self._heap)
