"""A live room's time series per partition since the start of its run: LEO and HW of every replica
and the ISR size, sampled as simulated time moves on, so a page that joins (or reloads) charts the
run's history and not only what its own frames carried (static/js/series.js adds those).

Bounded, like every surface (issue 11): the room keeps at most ``BUDGET`` numbers over all its
partitions and ``MAX_POINTS`` samples per partition. Sampling starts every ``START_STEP_MS`` of
simulated time; when a series is full every other sample is dropped (the first and the last kept)
and the step doubles, so a long run keeps a few hundred samples spread over its whole length and
the sampling cost falls as the run grows. Reads the simulation, never changes it.
"""
from .registration import partition_registration

MAX_POINTS = 600
MIN_POINTS = 30
BUDGET = 240_000          # numbers kept per room (a sample of a 3-replica partition is 8 numbers)
START_STEP_MS = 100


def sample(sim, key, brokers):
    """[t, ISR size, [LEO per replica], [HW per replica]] of partition ``key`` now."""
    registration = partition_registration(sim, key)
    isr = len(registration[3]) if registration else 0
    leo, hw = [], []
    for b in brokers:
        log = sim.brokers[b].logs.get(key)
        leo.append(log.leo if log else 0)
        hw.append(log.hw if log else 0)
    return [sim.now_ms, isr, leo, hw]


def partitions_of(sim):
    """(key, replica brokers) of every partition, in topic order."""
    for topic, spec in sim.topics.items():
        for p in range(spec["partitions"]):
            yield sim.key(topic, p), list(spec["assignment"][str(p)])


def thin(points):
    last = points[-1]
    out = points[::2]
    if out[-1] is not last:
        out.append(last)
    return out


class LiveSeries:
    """The samples of one run of a room (a restart or a reconfigure starts a new one)."""

    def __init__(self):
        self.step_ms = START_STEP_MS
        self.next_ms = 0
        self.parts = {}          # key -> {"brokers": [...], "points": [[t, isr, [leo], [hw]], ...]}

    def cap(self, sizes):
        """Samples per partition: the room's budget shared by its partitions."""
        numbers = sum(2 + 2 * n for n in sizes) or 1
        return max(MIN_POINTS, min(MAX_POINTS, BUDGET // numbers))

    def observe(self, sim):
        """Sample every partition when simulated time has passed the next sampling moment."""
        if sim.now_ms < self.next_ms:
            return
        self.next_ms = sim.now_ms + self.step_ms
        longest, sizes = 0, []
        for key, brokers in partitions_of(sim):
            part = self.parts.get(key)
            if part is None or part["brokers"] != brokers:       # new, or reassigned: a new series
                part = self.parts[key] = {"brokers": brokers, "points": []}
            points = part["points"]
            point = sample(sim, key, brokers)
            if points and points[-1][0] == point[0]:
                points[-1] = point
            else:
                points.append(point)
            longest = max(longest, len(points))
            sizes.append(len(brokers))
        if longest > self.cap(sizes):
            for part in self.parts.values():
                if len(part["points"]) > 2:
                    part["points"] = thin(part["points"])
            self.step_ms *= 2

    def of(self, sim, key):
        """``{brokers, points}`` of partition ``key`` up to now (copies), or None."""
        part = self.parts.get(key)
        if part is None:
            return None
        points = [list(p) for p in part["points"]]
        now = sample(sim, key, part["brokers"])
        if not points or points[-1][0] < now[0]:
            points.append(now)
        return {"brokers": list(part["brokers"]), "points": points, "step_ms": self.step_ms}
