"""One run of a sweep, summarised: what a sweep keeps of a run instead of its result document.

``simulate(row, cell, profile, sweep_id)`` builds the run's scenario from its cell and seed
(``run_scenario``: the fault phase drawn from the seed, then healing), runs the engine and
returns one tuple in the order of ``RUN_FIELDS`` with two lists: the compact replication events
(``EVENT_FIELDS``) and a produce-latency histogram (``(bucket_ms, count)``). Only what the
analysis needs comes back: a 60 s run has ~4000 history events, mostly high-watermark moves;
~60-100 of them are kept. ``history_sha256`` (``engine.result.history_digest``) pins the whole
history, so a re-simulation can prove it reproduced the run exactly.

It lives in the engine (standard library only, Python 3.9 syntax) because the sweep worker
process (``engine.tools.worker``, e.g. under PyPy) runs it without the app; Spark executors call it
in process through ``app.sweeps.worker``. A ``cell`` is what ``app.sweeps.spec.cells`` makes.
"""
import copy
import hashlib
import time
import traceback

from engine import eras
from engine.metrics.run_summary import run_with_metrics
from engine.tools.faults import fault_timeline
from engine.result import compact_json, history_digest
from engine.scenario.document import ScenarioError
from engine.simulation import ENGINE_VERSION, Simulation

#: history event types kept for analysis (the rest — HW moves, become_follower, ZK client
#: chatter — are pinned by the digest only)
KEPT_TYPES = frozenset((
    "broker_started", "broker_stopped", "broker_registered", "session_expired",
    "controller_elected", "controller_resigned", "partition_created", "leader_elected",
    "partition_offline", "isr_shrink", "isr_expand", "isr_update_failed", "truncation",
    "become_leader", "produce_error", "produce_failed", "fault", "violation", "partition_change"))
#: events that write a partition's state znode (leader, ISR): the authoritative state
ZK_STATE_TYPES = ("partition_created", "leader_elected", "partition_offline", "isr_shrink", "isr_expand")
#: ... and in KRaft eras (docs/model.md §20.5) the committed PartitionChangeRecords: the controller's
#: own ISR changes (fencing, controlled shutdown) and leaderless partitions (leader -1) appear only
#: as ``partition_change`` (``kind`` "shrink" / "expand" against the previous ISR, the leader
#: filled in when the record leaves it unchanged). A KRaft history has no ``partition_created``:
#: the first ``become_leader`` of a partition (the PartitionRecord's leader) carries its first
#: state. Rows of these types carry ``leader`` / ``isr_size`` only when they are such states.
STATE_TYPES = ZK_STATE_TYPES + ("partition_change", "become_leader")
#: timeline operations that disturb the cluster (the start of a "fault" for detection times)
DISRUPTIVE_OPS = frozenset(("crash", "pause", "isolate", "partition", "cut", "expire_session", "slow",
                            "shutdown"))
NER_ERRORS = frozenset(("NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"))
_SKIP_DETAIL = frozenset(("t_ms", "type", "reason", "topic", "partition", "broker", "records"))

RUN_FIELDS = (
    "run_key", "sweep_id", "run_no", "cell_id", "seed", "status", "error", "kafka_version",
    "engine_version", "scenario_json", "history_sha256", "history_len", "sim_events", "cpu_ms",
    "end_ms", "duration_ms", "fault_start_ms", "fault_end_ms", "brokers", "partitions", "faults",
    "records_sent", "acked", "failed", "failed_ner", "pending", "lost", "lost_acks_all",
    "violations", "converged", "offline_end", "under_replicated_end", "brokers_down_end",
    "latency_count", "latency_sum_ms", "latency_max_ms")
EVENT_FIELDS = ("seq", "t_ms", "type", "topic", "partition", "broker", "leader", "leader_epoch",
                "isr_size", "min_isr", "kind", "count", "details")
#: the one extra event row of a run carrying its Kafka metrics summary (engine.metrics.run_summary)
#: in ``details``, at seq = the history's length and t_ms = the run's end; runs stored before it
#: have none (docs/sweeps.md)
METRICS_TYPE = "kafka_metrics"


def run_scenario(cell, profile, seed):
    """The scenario of one run: the cell's scenario with this seed and a fault timeline drawn from
    the seed (fault phase, then healing phase)."""
    scenario = copy.deepcopy(cell["scenario"])
    scenario["seed"] = seed
    faults = fault_timeline(scenario, {k: tuple(v) for k, v in profile.items()}, seed,
                            start_ms=cell["fault_start_ms"], fault_end_ms=cell["fault_end_ms"],
                            session_timeout_ms=cell["session_timeout_ms"])
    scenario["timeline"] = sorted(scenario["timeline"] + faults, key=lambda op: op["at_ms"])
    return scenario


def loadable(scenario):
    """The normalised scenario in a form ``engine.load`` accepts again: a producer without acks
    is normalised to ``"acks": null``, which load then rejects (engine issue, reported), so the
    key is dropped (the era's default applies either way)."""
    for client in scenario.get("clients", []):
        if client.get("type") == "producer" and "acks" in client and client["acks"] is None:
            del client["acks"]
    return scenario


def latency_bucket(ms):
    """Exact below 100 ms, then two significant digits (relative error < 10%)."""
    if ms < 100:
        return ms
    scale = 10 ** (len(str(ms)) - 2)
    return ms // scale * scale


def topic_min_isr(scenario):
    out = {}
    for topic in scenario["topics"]:
        value = topic.get("config", {}).get("min.insync.replicas")
        if value is None:
            value = scenario["config"].get("min.insync.replicas")
        if value is None:
            value = eras.default(scenario["kafka_version"], "min.insync.replicas")
        out[topic["name"]] = value
    return out


def compact_events(history, scenario):
    """The kept events as tuples in EVENT_FIELDS order (seq = index in the full history)."""
    min_isr = topic_min_isr(scenario)
    kraft = KraftStates(scenario) if scenario.get("controllers") is not None else None
    out = []
    for seq, e in enumerate(history):
        if e.__class__ is tuple:   # a compact high-watermark move (engine/history.py): not kept
            continue
        type_ = e["type"]
        if type_ not in KEPT_TYPES:
            continue
        if type_ in ZK_STATE_TYPES:
            isr, leader = e.get("isr"), _int(e.get("leader"))
        else:
            isr, leader = None, None
        if kraft is not None:
            isr, leader = kraft.state(e, isr, leader)
        topic = e.get("topic")
        kind = None
        count = None
        if type_ == "leader_elected":
            kind = e.get("kind")
        elif type_ == "fault":
            kind = e.get("op")
        elif type_ == "broker_stopped":
            kind = e.get("mode") or e.get("state")
        elif type_ in ("produce_error", "produce_failed"):
            kind = e.get("error")
            count = len(e.get("records") or ())
        elif type_ == "violation":
            kind = e.get("invariant")
            count = len(e.get("records") or ())
        elif type_ == "truncation":
            kind = e.get("cause")
            count = e.get("removed")
        elif type_ == "isr_shrink":
            kind = e.get("by", "leader")
        elif type_ == "partition_change" and kraft is not None:
            kind = kraft.isr_change(e)
        details = {k: v for k, v in e.items() if k not in _SKIP_DETAIL}
        out.append((seq, e["t_ms"], type_, topic, e.get("partition"), _int(e.get("broker")),
                    leader,
                    _int(e.get("leader_epoch")), len(isr) if isr is not None else None,
                    min_isr.get(topic) if isr is not None else None, kind, count,
                    compact_json(details) if details else None))
    return out


class KraftStates:
    """A KRaft run's partition states as the analysis reads them (see STATE_TYPES)."""

    def __init__(self, scenario):
        self.leaders = {}        # (topic, partition) -> leader last named
        self.isr_sizes = {}      # (topic, partition) -> ISR size of the last state
        self.rf = {t["name"]: t["replication_factor"] for t in scenario["topics"]}

    def state(self, e, isr, leader):
        key = (e.get("topic"), e.get("partition"))
        type_ = e["type"]
        if type_ == "partition_change":
            isr, leader = e.get("isr"), _int(e.get("leader", self.leaders.get(key)))
        elif type_ == "become_leader" and key not in self.leaders:
            isr, leader = e.get("isr"), _int(e.get("broker"))
        if leader is not None:
            self.leaders[key] = leader
        return isr, leader

    def isr_change(self, change):
        """"shrink", "expand" or None: the ISR size against the previous PartitionChangeRecord's
        (the first is compared with the replication factor: a partition starts with a full ISR)."""
        key = (change.get("topic"), change.get("partition"))
        before = self.isr_sizes.get(key, self.rf.get(key[0]))
        after = len(change.get("isr") or ())
        self.isr_sizes[key] = after
        if before is None or after == before:
            return None
        return "shrink" if after < before else "expand"


def _int(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def summarise(result, scenario):
    """The per-run counts (a dict) and the latency histogram of acknowledged records."""
    sent = acked = failed = ner = pending = lost = lost_all = 0
    lat_count = lat_sum = lat_max = 0
    hist = {}
    for r in result["records"]:
        sent += 1
        status = r["status"]
        if status == "acked":
            acked += 1
            if r["lost"]:
                lost += 1
                if r["acks"] == "all":
                    lost_all += 1
            if r["acked_ms"] is not None and r["sent_ms"] is not None:
                ms = r["acked_ms"] - r["sent_ms"]
                lat_count += 1
                lat_sum += ms
                lat_max = ms if ms > lat_max else lat_max
                b = latency_bucket(ms)
                hist[b] = hist.get(b, 0) + 1
        elif status == "failed":
            failed += 1
            if r["error"] in NER_ERRORS:
                ner += 1
        elif status == "pending":
            pending += 1
    offline = under = 0
    for p in result["partitions"].values():
        if p["offline"]:
            offline += 1
        if set(p["isr"]) != set(p["replicas"]):
            under += 1
    down = sum(1 for b in result["brokers"].values() if b["state"] != "running")
    summary = {"records_sent": sent, "acked": acked, "failed": failed, "failed_ner": ner,
               "pending": pending, "lost": lost, "lost_acks_all": lost_all,
               "violations": len(result["violations"]), "converged": offline == 0 and under == 0 and down == 0,
               "offline_end": offline, "under_replicated_end": under, "brokers_down_end": down,
               "latency_count": lat_count, "latency_sum_ms": lat_sum, "latency_max_ms": lat_max}
    return summary, sorted(hist.items())


def simulate(row, cell, profile, sweep_id):
    """One run: ``row`` = (run_no, run_key, cell_id, seed); ``cell`` as app.sweeps.spec.cells gives.
    Returns (RUN_FIELDS tuple, events, latency histogram). Never raises for a bad run: an
    invalid scenario is status "invalid", an engine exception status "error" (both kept as
    findings)."""
    run_no, key, cell_id, seed = row
    scenario = run_scenario(cell, profile, seed)
    started = time.process_time()
    base = {"run_key": key, "sweep_id": sweep_id, "run_no": run_no, "cell_id": cell_id, "seed": seed,
            "status": "ok", "error": None, "kafka_version": scenario["kafka_version"],
            "engine_version": ENGINE_VERSION, "duration_ms": scenario["duration_ms"],
            "fault_start_ms": cell["fault_start_ms"], "fault_end_ms": cell["fault_end_ms"],
            "brokers": len(scenario["brokers"]),
            "partitions": sum(t["partitions"] for t in scenario["topics"]),
            "faults": sum(1 for op in scenario["timeline"]
                          if op["op"] in DISRUPTIVE_OPS and op["at_ms"] < cell["fault_end_ms"])}
    events, hist = [], []
    try:
        sim = Simulation(scenario, compact_history=True)   # HW moves as tuples: only digested
        kafka_metrics = run_with_metrics(sim)   # the same run, read every 100 ms (docs/model.md §22.7)
        result = sim.result(logs=False)  # the summary reads no replica's records
    except ScenarioError as exc:
        return _failed(base, "invalid", str(exc), scenario, started), events, hist
    except Exception:  # noqa: BLE001 - an engine bug is a finding of the sweep, not the end of it
        return _failed(base, "error", traceback.format_exc(limit=8)[-2000:], scenario, started), events, hist
    summary, hist = summarise(result, sim.scenario)
    history = result["history"]
    base.update(summary)
    base.update({"scenario_json": compact_json(loadable(copy.deepcopy(sim.scenario))), "history_sha256": history_digest(history),
                 "history_len": len(history), "sim_events": result["stats"]["events"],
                 "end_ms": result["end_ms"]})
    events = compact_events(history, sim.scenario)
    events.append(metrics_row(kafka_metrics, len(history), result["end_ms"]))
    base["cpu_ms"] = int((time.process_time() - started) * 1000)
    return tuple(base.get(f) for f in RUN_FIELDS), events, hist


def metrics_row(summary, history_len, end_ms):
    """The run's Kafka metrics as one event row in EVENT_FIELDS order."""
    return (history_len, end_ms, METRICS_TYPE, None, None, None, None, None, None, None, None, None,
            compact_json(summary))


def _failed(base, status, error, scenario, started):
    base.update({"status": status, "error": error, "scenario_json": compact_json(scenario),
                 "history_sha256": None, "history_len": 0, "sim_events": 0, "end_ms": 0,
                 "cpu_ms": int((time.process_time() - started) * 1000)})
    for f in RUN_FIELDS:
        if f not in base:
            base[f] = False if f == "converged" else 0
    return tuple(base.get(f) for f in RUN_FIELDS)
