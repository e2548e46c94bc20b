"""Yammer Metrics 2.2.0, the library of Kafka's broker and ZooKeeper-era controller MBeans
(``com.yammer.metrics:metrics-core:2.2.0`` in gradle/dependencies.gradle from 0.10 to 4.1;
docs/model.md §22.2): a ``Meter`` and the ``Timer`` built on it.

``Meter`` (``com.yammer.metrics.core.Meter`` @ v2.2.0) counts marks and keeps a one-minute
exponentially weighted moving average: a tick thread (``scheduleAtFixedRate``) fires every 5 s
from the meter's creation, and each tick folds the marks since the previous one into the rate
(``EWMA.tick``: the first tick sets ``rate = count / 5 s``, later ones ``rate += alpha *
(instant - rate)`` with ``alpha = 1 - exp(-5 / 60)``). Read between two ticks, the rate is the
one of the last tick: marks of the running interval are not in it yet.

Here a meter is plain data fed with mark times in order and read at increasing times; a mark at
the very millisecond of a tick counts in the next interval (the tick thread ran first).
"""
import math

TICK_MS = 5000
#: EWMA.M1_ALPHA = 1 - exp(-INTERVAL / SECONDS_PER_MINUTE / ONE_MINUTE)
M1_ALPHA = 1 - math.exp(-5 / 60.0)


class Meter:
    """One Yammer meter: ``count`` and the one-minute rate (events per second)."""
    __slots__ = ("start_ms", "ticks", "count", "uncounted", "rate", "initialized")

    def __init__(self, start_ms):
        self.start_ms = start_ms
        self.ticks = 0            # ticks already applied
        self.count = 0
        self.uncounted = 0        # marks since the last tick
        self.rate = 0.0           # per second
        self.initialized = False

    def _tick_to(self, t_ms):
        """Apply every tick at or before ``t_ms`` (tick k fires at start + 5 s * k, k >= 1)."""
        due = (t_ms - self.start_ms) // TICK_MS
        while self.ticks < due:
            self.ticks += 1
            instant = self.uncounted / (TICK_MS / 1000.0)
            self.uncounted = 0
            if self.initialized:
                self.rate += M1_ALPHA * (instant - self.rate)
            else:
                self.rate = instant
                self.initialized = True

    def mark(self, t_ms, n=1):
        self._tick_to(t_ms)
        self.count += n
        self.uncounted += n

    def read(self, t_ms):
        """(Count, OneMinuteRate) as JMX shows them at ``t_ms``."""
        self._tick_to(t_ms)
        return self.count, self.rate


class Timer:
    """``com.yammer.metrics.core.Timer`` (KafkaTimer): a meter of the timed events plus their
    durations. Yammer 2.2.0's Histogram keeps the mean (sum / count) and the max over every
    update; only its percentiles come from a decaying sample, and those are not shown here."""
    __slots__ = ("meter", "total_ms", "max_ms")

    def __init__(self, start_ms):
        self.meter = Meter(start_ms)
        self.total_ms = 0
        self.max_ms = None

    def update(self, end_ms, duration_ms):
        self.meter.mark(end_ms)
        self.total_ms += duration_ms
        self.max_ms = duration_ms if self.max_ms is None else max(self.max_ms, duration_ms)

    def read(self, t_ms):
        """(Count, OneMinuteRate, Mean ms, Max ms); mean and max None before the first event."""
        count, rate = self.meter.read(t_ms)
        mean = self.total_ms / count if count else None
        return count, rate, mean, self.max_ms
