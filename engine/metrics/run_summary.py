"""Kafka's metrics of a whole run in a few numbers: what a sweep keeps of them (docs/model.md
§22.7, docs/sweeps.md).

``run_with_metrics(sim)`` runs the simulation to its end in steps of ``SAMPLE_MS`` of simulated
time, reading the metrics after each step (stepping ``advance_to`` runs the same events as one
call: the history is byte for byte the same). Gauges are known at those moments only, so a time
"with X > 0" is a multiple of ``SAMPLE_MS`` (each sample stands for the step before it); counts
come from the meters' marks and are exact. An output whose metric the era lacks is None.
"""
from engine.metrics.sampler import MetricsSampler

SAMPLE_MS = 100

#: output -> (metric id, what it is); "ms" outputs are times with the gauge above zero
OUTPUTS = {
    "under_replicated_ms": ("under_replicated", "time with UnderReplicatedPartitions > 0"),
    "under_min_isr_ms": ("under_min_isr", "time with UnderMinIsrPartitionCount > 0"),
    "at_min_isr_ms": ("at_min_isr", "time with AtMinIsrPartitionCount > 0"),
    "offline_ms": ("offline_partitions", "time with OfflinePartitionsCount > 0"),
    "offline_max": ("offline_partitions", "peak OfflinePartitionsCount"),
    "no_active_controller_ms": ("active_controller", "time with ActiveControllerCount 0, after the first"),
    "active_controller_max": ("active_controller", "peak ActiveControllerCount (2: two controllers)"),
    "unclean_elections": ("unclean_elections", "UncleanLeaderElectionsPerSec marks over the run"),
    "isr_shrinks": ("isr_shrinks", "IsrShrinksPerSec marks over the run"),
    "isr_expands": ("isr_expands", "IsrExpandsPerSec marks over the run"),
    "max_lag_peak": ("max_lag", "peak ReplicaFetcherManager MaxLag"),
    "record_errors": ("record_error_rate", "records whose send failed (record-error-total)"),
    "request_latency_avg_peak": ("request_latency_avg", "peak producer request-latency-avg (ms)"),
    "fenced_brokers_max": ("fenced_brokers", "peak FencedBrokerCount"),
    "metadata_lag_ms_peak": ("metadata_lag", "peak last-applied-record-lag-ms"),
}


class RunSummary:
    """Accumulates the outputs from samples taken in time order."""

    def __init__(self, sim):
        self.sampler = MetricsSampler(sim)
        self.has = set(self.sampler.ids)
        self.last_ms = None
        self.out = {name: (0 if metric in self.has else None) for name, (metric, _) in OUTPUTS.items()}
        self.controller_seen = False

    def _time(self, name, flag, step):
        if flag and self.out[name] is not None:
            self.out[name] += step

    def _peak(self, name, value):
        if value is not None and self.out[name] is not None and value > self.out[name]:
            self.out[name] = value

    def observe(self, sim):
        values = self.sampler.gauges(sim)
        now = sim.now_ms
        step = 0 if self.last_ms is None else now - self.last_ms
        self.last_ms = now

        def value(mid):
            return values.get(mid) if mid in self.has else None

        for name, mid in (("under_replicated_ms", "under_replicated"), ("under_min_isr_ms", "under_min_isr"),
                          ("at_min_isr_ms", "at_min_isr"), ("offline_ms", "offline_partitions")):
            self._time(name, (value(mid) or 0) > 0, step)
        self._peak("offline_max", value("offline_partitions"))
        active = value("active_controller")
        self.controller_seen = self.controller_seen or bool(active)
        self._time("no_active_controller_ms", self.controller_seen and not active, step)
        self._peak("active_controller_max", active)
        self._peak("max_lag_peak", value("max_lag"))
        self._peak("fenced_brokers_max", value("fenced_brokers"))
        self._peak("metadata_lag_ms_peak", value("metadata_lag"))
        latencies = [v for v in (value("request_latency_avg") or {}).values() if v is not None]
        self._peak("request_latency_avg_peak", round(max(latencies), 3) if latencies else None)

    def summary(self):
        totals = self.sampler.totals
        for name in ("unclean_elections", "isr_shrinks", "isr_expands", "record_errors"):
            if self.out[name] is not None:
                self.out[name] = totals[name]
        return {"sample_ms": SAMPLE_MS, **self.out}


def run_with_metrics(sim):
    """Run ``sim`` to its end, sampling every SAMPLE_MS; returns the summary dict."""
    summary = RunSummary(sim)
    summary.observe(sim)
    while not sim.finished:
        sim.advance_to(sim.now_ms + SAMPLE_MS)
        summary.observe(sim)
    return summary.summary()
