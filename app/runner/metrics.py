"""A live room's Kafka metrics since the start of its run (engine.metrics, docs/model.md §22):
the Metrics tab's graphs, sampled at the time chart's cadence.

Like the room's time series (``series.py``) it samples every ``START_STEP_MS`` of simulated time,
keeps at most ``MAX_POINTS`` samples, and when full drops every other one (first and last kept)
and doubles the step. Frames carry two entities: ``mcat`` (the era's metrics and their MBean
names: once per run) and ``msample`` (the newest sample, sent only when there is a new one), so
a frame grows by one sample at most; a page that joins asks ``/api/rooms/<room>/metrics`` for
what came before. Reads the simulation, never changes it.
"""
from engine.metrics.sampler import MetricsSampler

from .series import thin

MAX_POINTS = 600
START_STEP_MS = 100


class LiveMetrics:
    def __init__(self, sim):
        self.sampler = MetricsSampler(sim)
        self.catalog = {"kafka_version": self.sampler.version, "metrics": self.sampler.catalog}
        self.step_ms = START_STEP_MS
        self.next_ms = 0
        self.points = []

    def observe(self, sim):
        """Sample when simulated time has passed the next sampling moment."""
        if sim.now_ms < self.next_ms:
            return
        self.next_ms = sim.now_ms + self.step_ms
        point = self.sampler.sample(sim)
        points = self.points
        if points and points[-1][0] == point[0]:
            points[-1] = point
        else:
            points.append(point)
        if len(points) > MAX_POINTS:
            self.points = thin(points)
            self.step_ms *= 2

    def entities(self):
        return {"mcat": self.catalog, "msample": self.points[-1] if self.points else None}

    def of(self, sim):
        """The run's samples so far (copies) and one of this moment."""
        points = [list(p) for p in self.points]
        now = self.sampler.sample(sim)
        if not points or points[-1][0] < now[0]:
            points.append(now)
        return {**self.catalog, "points": points, "step_ms": self.step_ms}
