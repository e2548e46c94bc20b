"""Kafka's metrics over a run (docs/model.md §22): ``MetricsSampler(sim)`` reads the simulation
and gives, at any moment, the value of every metric its era has (``engine.metrics.catalog``).

Gauges are read from the state at the moment asked. Meters and the producer's error rate are
fed from the history, in order, as Kafka marks them: ``isr_shrink`` / ``isr_expand`` committed
by a leader (IsrShrinksPerSec / IsrExpandsPerSec of that broker's ReplicaManager; up to 2.3 also
an ``isr_update_failed`` one, which Kafka marked whatever its ZooKeeper write answered), unclean
``leader_elected`` (the controller's UncleanLeaderElectionsPerSec), ``produce_failed`` (the
producer's record-error-rate, by the batch's records). A broker's meters live as long as its
process: a ``broker_starting`` entry starts new ones, as a new JVM registers new meters.

The sampler keeps its own state (meters, where it is in the history) and never writes to the
simulation: sampling a run any number of times leaves it byte for byte the same.
"""
from engine import eras
from engine.clients.producer_consumer import Producer
from engine.metrics import catalog, controller, sensors
from engine.metrics.replica_manager import answering, isr_gauges, max_lag, metadata_lag_ms
from engine.metrics.yammer import Meter, Timer

#: KRaft elections that mark UncleanLeaderElectionsPerSec: a leader outside the previous ISR
#: (3.9.0 ControllerMetricsChanges: electionWasClean) or a RECOVERING leader (4.1.0 TopicDelta:
#: electionWasUnclean), i.e. the engine's "unclean" and ELR's "last_known_leader" elections
KRAFT_UNCLEAN = ("unclean", "last_known_leader")


def _round(value, digits=4):
    return None if value is None else round(value, digits)


class MetricsSampler:
    def __init__(self, sim):
        self.version = sim.scenario["kafka_version"]
        self.kraft = sim.era.kraft
        self.catalog = catalog.metrics_of(self.version)
        self.ids = [m["id"] for m in self.catalog]
        # request-latency-avg with no response in the windows: 0 up to 2.1, NaN from 2.2 (KAFKA-7528)
        self.avg_nan = eras.VERSIONS.index(self.version) >= eras.VERSIONS.index("2.4")
        # Partition.maybeShrinkIsr / maybeExpandIsr @ 0.10.2.2 - 2.3.1 mark the meter after
        # updateIsr returns, whether the conditional write succeeded or was refused ("Cached
        # zkVersion ... skip updating ISR"); from 2.4.0 (KAFKA-8371) only a successful write marks
        self.marks_failed_isr_writes = \
            eras.VERSIONS.index(self.version) < eras.VERSIONS.index("2.4")
        self.seen = 0              # history entries consumed
        self.meters = {}           # broker -> {"isr_shrinks": Meter, "isr_expands": Meter, "unclean": Meter}
        self.started = {}          # broker -> its process's start (ms)
        self.image_unclean = Meter(0)   # KRaft: the controllers' meter over the committed log
        self.errors = {}           # producer -> its errors sensor (sensors stat)
        self.timers = {}           # (broker, incarnation) -> [Timer, times consumed]
        self.held = {}             # (broker, incarnation) -> controller counts of the last event end
        #: marks over the whole run, whichever process made them (what a sweep keeps)
        self.totals = {"isr_shrinks": 0, "isr_expands": 0, "unclean_elections": 0, "record_errors": 0}

    # -- the history ---------------------------------------------------------------------------
    def _broker_meters(self, broker):
        meters = self.meters.get(broker)
        if meters is None:        # a broker seen before its start entry: meters from the run's start
            meters = self._start(broker, 0)
        return meters

    def _start(self, broker, t_ms):
        self.started[broker] = t_ms
        meters = self.meters[broker] = {"isr_shrinks": Meter(t_ms), "isr_expands": Meter(t_ms),
                                        "unclean": Meter(t_ms)}
        return meters

    def consume(self, history):
        """Feed the history entries added since the last call (compact HW tuples are skipped)."""
        for index in range(self.seen, len(history)):
            e = history[index]
            if e.__class__ is tuple:
                continue
            kind = e["type"]
            t = e["t_ms"]
            if kind == "broker_starting":
                self._start(e["broker"], t)
            elif kind == "isr_shrink" and "by" not in e:     # the leader committed it
                self._broker_meters(e["broker"])["isr_shrinks"].mark(t)
                self.totals["isr_shrinks"] += 1
            elif kind == "isr_expand":
                self._broker_meters(e["broker"])["isr_expands"].mark(t)
                self.totals["isr_expands"] += 1
            elif kind == "isr_update_failed" and self.marks_failed_isr_writes:
                mid = "isr_shrinks" if e["wanted"] == "isr_shrink" else "isr_expands"
                self._broker_meters(e["broker"])[mid].mark(t)
                self.totals[mid] += 1
            elif kind == "leader_elected":
                if self.kraft:
                    if e.get("kind") in KRAFT_UNCLEAN:
                        self.image_unclean.mark(t)
                        self.totals["unclean_elections"] += 1
                elif e.get("kind") == "unclean":
                    self._broker_meters(e["broker"])["unclean"].mark(t)
                    self.totals["unclean_elections"] += 1
            elif kind == "produce_failed":
                stat = self.errors.setdefault(e["producer"], sensors.new_stat())
                records = len(e.get("records") or ())
                sensors.record(stat, records, t)
                self.totals["record_errors"] += records
        self.seen = len(history)

    # -- values ----------------------------------------------------------------------------------
    def values(self, sim):
        """``{metric id: (cluster value, {process: value})}`` at ``sim.now_ms``. A cluster value is
        None when no process that has the metric answers."""
        self.consume(sim.history)
        now = sim.now_ms
        out = {}
        brokers = [b for b in sim.brokers.values() if answering(b)]
        per = {b.node_id: isr_gauges(sim, b) for b in brokers}
        wanted = set(self.ids)
        for index, mid in enumerate(("under_replicated", "under_min_isr", "at_min_isr")):
            if mid in wanted:
                out[mid] = _sum({b: v[index] for b, v in per.items()})
        out["max_lag"] = _max({b.node_id: max_lag(b) for b in brokers})
        for mid in ("isr_shrinks", "isr_expands"):
            out[mid] = _meter_sum({b.node_id: self._broker_meters(b.node_id)[mid].read(now)
                                   for b in brokers})
        if self.kraft:
            self._kraft_values(sim, brokers, out)
        else:
            self._zk_values(sim, brokers, out)
        out["record_error_rate"], out["request_latency_avg"] = self._producer_values(sim)
        return {mid: out[mid] for mid in self.ids}

    def _zk_values(self, sim, brokers, out):
        now = sim.now_ms
        out["active_controller"] = _sum({b.node_id: controller.zk_active(b) for b in brokers})
        counts = {b.node_id: controller.zk_counts_shown(sim, b, self.held) for b in brokers}
        out["offline_partitions"] = _sum({b: c[0] for b, c in counts.items()})
        out["active_brokers"] = _sum({b: c[1] for b, c in counts.items()})
        out["fenced_brokers"] = _sum({b: 0 for b in counts})
        out["unclean_elections"] = _meter_sum({b.node_id: self._broker_meters(b.node_id)["unclean"].read(now)
                                               for b in brokers})
        out["leader_election"] = _timer_sum({b.node_id: self._timer(b).read(now) for b in brokers})

    def _timer(self, broker):
        """The broker process's LeaderElectionRateAndTimeMs, fed from its controller's record."""
        key = (broker.node_id, broker.incarnation)
        entry = self.timers.get(key)
        if entry is None:
            entry = self.timers[key] = [Timer(self.started.get(broker.node_id, 0)), 0]
        times = broker.controller.broker_change_times
        for end_ms, duration_ms in times[entry[1]:]:
            entry[0].update(end_ms, duration_ms)
        entry[1] = len(times)
        return entry[0]

    def _kraft_values(self, sim, brokers, out):
        now = sim.now_ms
        out["active_controller"] = _sum(controller.kraft_active(sim))
        answers = controller.any_controller_answers(sim)
        offline, active, fenced = controller.kraft_image_counts(sim)
        image = "controllers"
        out["offline_partitions"] = (offline, {image: offline}) if answers else (None, {})
        out["active_brokers"] = (active, {image: active}) if answers else (None, {})
        out["fenced_brokers"] = (fenced, {image: fenced}) if answers else (None, {})
        unclean = self.image_unclean.read(now)
        out["unclean_elections"] = (list(unclean), {image: list(unclean)}) if answers else (None, {})
        out["metadata_lag"] = _max({b.node_id: metadata_lag_ms(sim, b) for b in brokers})

    def _producer_values(self, sim):
        """(record-error-rate, request-latency-avg) per running producer (a closed producer
        deregisters its metrics)."""
        now = sim.now_ms
        rates, latencies = {}, {}
        for name, client in sim.clients.items():
            if not isinstance(client, Producer) or not client.running:
                continue
            stat = self.errors.get(name)
            rates[name] = sensors.rate(stat, now) if stat is not None else 0.0
            latency = client.request_time
            if latency is None:
                latencies[name] = None if self.avg_nan else 0.0
            else:
                latencies[name] = sensors.finite(sensors.avg(latency, now, self.avg_nan))
        return (rates, rates), (latencies, latencies)

    def gauges(self, sim):
        """The cluster values of the gauges only (and the producers' request-latency-avg), for a
        run summary read every 100 ms: no meter, timer or per-process detail."""
        self.consume(sim.history)
        under = below = at = lag = 0
        brokers = [b for b in sim.brokers.values() if answering(b)]
        for broker in brokers:
            u, b, a = isr_gauges(sim, broker)
            under += u
            below += b
            at += a
            lag = max(lag, max_lag(broker))
        some = bool(brokers)
        out = {"under_replicated": under if some else None, "under_min_isr": below if some else None,
               "at_min_isr": at if some else None, "max_lag": lag if some else None}
        if self.kraft:
            answers = controller.any_controller_answers(sim)
            offline, _active, fenced = controller.kraft_image_counts(sim)
            out["active_controller"] = _sum(controller.kraft_active(sim))[0]
            out["offline_partitions"] = offline if answers else None
            out["fenced_brokers"] = fenced if answers else None
            out["metadata_lag"] = _max({b.node_id: metadata_lag_ms(sim, b) for b in brokers})[0]
        else:
            out["active_controller"] = sum(controller.zk_active(b) for b in brokers) if some else None
            counts = [controller.zk_counts_shown(sim, b, self.held) for b in brokers]
            out["offline_partitions"] = sum(c[0] for c in counts) if some else None
            out["fenced_brokers"] = 0 if some else None
        out["request_latency_avg"] = self._producer_values(sim)[1][0]
        return out

    def sample(self, sim):
        """One compact sample: ``[t_ms, value of each metric in catalog order]`` (JSON-ready)."""
        values = self.values(sim)
        return [sim.now_ms] + [wire(values[mid][0]) for mid in self.ids]


def wire(value):
    """A cluster value as the page gets it: numbers rounded, meters and timers as lists, a
    client metric as {client-id: number}."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: _round(v, 3) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, int) or v is None else _round(v) for v in value]
    return value


def _sum(per):
    return (sum(per.values()) if per else None), per


def _max(per):
    known = [v for v in per.values() if v is not None]
    return (max(known) if known else None), per


def _meter_sum(per):
    """Count and one-minute rate summed over the answering processes."""
    if not per:
        return None, per
    return [sum(c for c, _ in per.values()), sum(r for _, r in per.values())], per


def _timer_sum(per):
    """Count and rate summed; mean over every timed event; the largest max."""
    if not per:
        return None, per
    count = sum(v[0] for v in per.values())
    total = sum(v[2] * v[0] for v in per.values() if v[2] is not None)
    maxes = [v[3] for v in per.values() if v[3] is not None]
    return [count, sum(v[1] for v in per.values()), total / count if count else None,
            max(maxes) if maxes else None], per
