"""The discrete-event kernel: one heap keyed by (time_ms, seq).

Everything that happens later in a simulation is an entry in this heap: message deliveries,
periodic broker tasks, request timeouts, timeline operations. There are no threads and no wall
clock; ``now_ms`` only moves when an entry is popped.

Ordering is total and deterministic: entries at the same ``time_ms`` run in ``seq`` order. Timeline
operations (scenario ops and live user commands) take seqs from a separate, very negative
counter so that at equal times they run before ordinary events, in list order. That is what makes
a live session, recorded as timeline operations, replay byte for byte (see ``schedule_op``).

Three layouts hold that order: ``Scheduler``, a heap of ``(time_ms, seq, fn, arg)`` tuples
(CPython's C heapq); ``CalendarScheduler``, one FIFO queue per millisecond and a heap of the
milliseconds (PyPy); and ``KeyedScheduler``, one integer per entry (PyPy's layout before the
calendar, still tested as one). ``new_scheduler`` picks the interpreter's. Callers that push
entries themselves (``Network``) check ``keyed``: true means "push through ``push``".
"""
import sys
from collections import deque
from heapq import heappop, heappush

#: seqs below this are reserved for timeline operations (they sort before ordinary events).
OP_SEQ_BASE = -(10 ** 12)
#: broker start-up at t=0 runs before even timeline operations at t=0.
BOOT_SEQ_BASE = -2 * (10 ** 12)


class Scheduler:
    __slots__ = ("now_ms", "_heap", "_seq", "_op_seq", "events")
    #: False: entries are (time_ms, seq, fn, arg) tuples in ``_heap`` (callers may push there)
    keyed = False

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
        """Dispatch one entry. Returns False when nothing is left. (Each layout has its own
        ``_pop``; the hot loop, ``_dispatch_until``, inlines it.)"""
        if self.next_time_ms() is None:
            return False
        self.now_ms, fn, arg = self._pop()
        self.events += 1
        fn(arg)
        return True

    def _pop(self):
        """The first entry, as (time_ms, fn, arg)."""
        time_ms, _seq, fn, arg = heappop(self._heap)
        return time_ms, fn, arg

    def run_until(self, end_ms, stop=None):
        """Dispatch every entry with time <= end_ms, then set now_ms = end_ms.

        ``stop`` is an optional zero-argument callable checked after each entry; when it returns
        true the loop ends early (now_ms stays at the last entry's time) and True is returned.
        """
        if self._dispatch_until(end_ms, stop):
            return True
        if end_ms > self.now_ms:
            self.now_ms = end_ms
        return False

    def _dispatch_until(self, end_ms, stop):
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
            self.events += count   # one attribute write per call, not per entry (CPython)
        return False

    def pending(self):
        return len(self._heap)


# -- PyPy's layout ----------------------------------------------------------------------------
#: (time_ms, seq) as one integer: time_ms above KEY_SHIFT bits, seq - BOOT_SEQ_BASE below (boot
#: seqs start at 0, timeline seqs at 10**12, ordinary seqs at 2 * 10**12: all below 2**42).
KEY_SHIFT = 42
KEY_SEQ_OFFSET = -BOOT_SEQ_BASE


class KeyedScheduler(Scheduler):
    """The same kernel, ordered the same way, for PyPy: a heap of integer keys beside a dict of
    entries. PyPy's heapq is Python code; comparing plain integers (a list PyPy stores unboxed)
    instead of 4-tuples makes its push and pop ~5x faster, a sixth of a sweep run there
    (CPython's C heapq compares tuples as fast: it keeps the tuple layout).

    Pickles as a plain ``Scheduler`` (same entries, same order), so a snapshot never depends on
    the interpreter that made it."""
    __slots__ = ("_keys", "_entries")
    keyed = True

    def __init__(self):
        super().__init__()
        self._keys = []
        self._entries = {}

    def push(self, time_ms, seq, fn, arg):
        key = (time_ms << KEY_SHIFT) + seq + KEY_SEQ_OFFSET
        heappush(self._keys, key)
        self._entries[key] = (fn, arg)

    def schedule(self, delay_ms, fn, arg=None):
        self._seq += 1
        self.push(self.now_ms + delay_ms, self._seq, fn, arg)

    def schedule_at(self, time_ms, fn, arg=None):
        self._seq += 1
        self.push(time_ms, self._seq, fn, arg)

    def schedule_op(self, time_ms, fn, arg=None):
        self._op_seq += 1
        self.push(time_ms, self._op_seq, fn, arg)

    def schedule_boot(self, index, fn, arg=None):
        self.push(0, BOOT_SEQ_BASE + index, fn, arg)

    def next_time_ms(self):
        return self._keys[0] >> KEY_SHIFT if self._keys else None

    def _pop(self):
        key = heappop(self._keys)
        fn, arg = self._entries.pop(key)
        return key >> KEY_SHIFT, fn, arg

    def _dispatch_until(self, end_ms, stop):
        keys = self._keys
        entries = self._entries
        limit = (end_ms + 1) << KEY_SHIFT     # every key of a time <= end_ms is below it
        while keys and keys[0] < limit:
            key = heappop(keys)
            fn, arg = entries.pop(key)
            self.now_ms = key >> KEY_SHIFT
            self.events += 1
            fn(arg)
            if stop is not None and stop():
                return True
        return False

    def pending(self):
        return len(self._keys)

    def entries(self):
        """The pending entries as (time_ms, seq, fn, arg), in heap order."""
        mask = (1 << KEY_SHIFT) - 1
        return [(key >> KEY_SHIFT, (key & mask) - KEY_SEQ_OFFSET, *self._entries[key]) for key in self._keys]

    def __reduce__(self):
        # a heap of keys maps to a valid tuple heap: the same order, entry for entry
        return _plain_scheduler, (self.now_ms, self.entries(), self._seq, self._op_seq, self.events)


class CalendarScheduler(Scheduler):
    """The same kernel, ordered the same way, for PyPy: one FIFO queue of entries per
    millisecond that has any, and a heap of those milliseconds only. Nearly every entry is due
    within a few ms (a message's 1 ms link, a producer's tick), so a run keeps ~20 distinct times
    pending for ~57 entries; an entry costs a dict lookup and a deque append and pop, and the
    heap moves once per millisecond instead of twice per entry (PyPy's heapq is Python code,
    and its data-dependent loops were ~5% of the JIT's tracing of bench-medium).

    Ordinary entries take increasing seqs, so appending keeps a queue in seq order; boot and
    timeline entries (negative seqs) are inserted before them (``_insert``). Pickles as a plain
    ``Scheduler``, like ``KeyedScheduler``."""
    __slots__ = ("_times", "_queues")
    keyed = True   # callers push through ``push``

    def __init__(self):
        super().__init__()
        self._times = []     # heap of the times that have a queue
        self._queues = {}    # time -> deque of (seq, fn, arg), in seq order

    def push(self, time_ms, seq, fn, arg):
        queues = self._queues
        if time_ms in queues:
            queue = queues[time_ms]
        else:
            queue = queues[time_ms] = deque()
            heappush(self._times, time_ms)
        if seq < 0:
            _insert(queue, (seq, fn, arg))
        else:
            queue.append((seq, fn, arg))

    schedule = KeyedScheduler.schedule
    schedule_at = KeyedScheduler.schedule_at
    schedule_op = KeyedScheduler.schedule_op
    schedule_boot = KeyedScheduler.schedule_boot

    def next_time_ms(self):
        return self._times[0] if self._times else None

    def _pop(self):
        """The first entry, as (time_ms, fn, arg); the time's queue goes when it empties (an
        entry pushed for that time later makes a new one)."""
        times = self._times
        time_ms = times[0]
        queue = self._queues[time_ms]
        _seq, fn, arg = queue.popleft()
        if not queue:
            heappop(times)
            del self._queues[time_ms]
        return time_ms, fn, arg

    def _dispatch_until(self, end_ms, stop):
        times = self._times
        queues = self._queues
        while times and times[0] <= end_ms:
            time_ms = times[0]   # self._pop(), inlined: once per entry
            queue = queues[time_ms]
            _seq, fn, arg = queue.popleft()
            if not queue:
                heappop(times)
                del queues[time_ms]
            self.now_ms = time_ms
            self.events += 1
            fn(arg)
            if stop is not None and stop():
                return True
        return False

    def pending(self):
        return sum(len(queue) for queue in self._queues.values())

    def entries(self):
        """The pending entries as (time_ms, seq, fn, arg), sorted (so in heap order)."""
        return [(time_ms, seq, fn, arg) for time_ms in sorted(self._times)
                for seq, fn, arg in self._queues[time_ms]]

    def __reduce__(self):
        return _plain_scheduler, (self.now_ms, self.entries(), self._seq, self._op_seq, self.events)


def _insert(queue, entry):
    """Put a boot or timeline entry before the first entry of ``queue`` with a larger seq."""
    for index, other in enumerate(queue):
        if other[0] > entry[0]:
            queue.insert(index, entry)
            return
    queue.append(entry)


def _plain_scheduler(now_ms, heap, seq, op_seq, events):
    plain = Scheduler()
    plain.now_ms, plain._heap, plain._seq, plain._op_seq, plain.events = now_ms, heap, seq, op_seq, events
    return plain


def new_scheduler():
    """The kernel for this interpreter: the calendar layout on PyPy, the tuple heap elsewhere."""
    return CalendarScheduler() if sys.implementation.name == "pypy" else Scheduler()
