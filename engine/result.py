"""The run result document (docs/scenario-format.md §5) and the live view of the cluster."""


import hashlib
import json

from engine.history import expand, hw_json
from engine.kraft import kraft_view
from engine.server.partition import isr_state

#: Compact JSON text, as the digest and the sweep's stored columns spell it. check_circular off:
#: the same text (results hold no cycles) without the bookkeeping of every container met: a
#: history event encodes 1.3-1.7x faster on CPython
compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
_DIGEST_SLICE = 512   # events per sha256 update


def history_digest(events):
    """SHA-256 over a run's history, one compact JSON text per event and a newline: how the store,
    the seek index and the Spark workers check that a replay is the run that was saved."""
    h = hashlib.sha256()
    # Fed in slices of joined text: one update per event costs a foreign call each on PyPy
    # (2 % of a sweep run there); a slice keeps the text built at once small.
    for start in range(0, len(events), _DIGEST_SLICE):
        h.update("".join([_event_json(e) + "\n" for e in events[start:start + _DIGEST_SLICE]]).encode())
    return h.hexdigest()


def _event_json(event):
    """An event's compact JSON text; a compact high-watermark move (``history``) as its dict's."""
    if event.__class__ is tuple:
        return hw_json(event) or compact_json(expand(event))
    return compact_json(event)


def build_result(sim, logs=True):
    """The result document; ``logs=False`` leaves out each replica's records (``replica_state``'s
    ``log``), which only a summary that reads none of them (a sweep run) may ask for."""
    if sim.quorum is not None:
        return _kraft_result(sim, logs)
    tree = sim.zk_server.tree
    controller = tree.nodes.get("/controller")
    epoch = tree.nodes.get("/controller_epoch")
    return {
        **_result_head(sim),
        "controller": {"broker": controller.data["brokerid"] if controller else None,
                       "epoch": epoch.data if epoch else 0},
        "brokers": _with_racks(sim, {str(b): broker_result(sim, broker) for b, broker in sim.brokers.items()}),
        "partitions": {key: partition_result(sim, key, with_logs=logs) for key in partition_keys(sim)},
        "zk": zk_dump(sim),
        **_result_tail(sim),
    }


def _result_head(sim):
    """The fields every result starts with, in either mode (key order is part of the bytes)."""
    return {"scenario": {"name": sim.scenario["name"], "seed": sim.scenario["seed"],
                         "kafka_version": sim.scenario["kafka_version"],
                         "engine_version": getattr(sim, "engine_version", None) or engine_version()},
            "end_ms": sim.now_ms}


def _result_tail(sim):
    """The fields every result ends with, in either mode."""
    return {"records": [r.to_dict() for r in sim.records.values()],
            "consumed": {name: list(reads) for name, reads in sim.consumed.items()},
            "history": sim.history,
            "violations": sim.violations,
            "stats": {"events": sim.scheduler.events, "messages_sent": sim.network.sent,
                      "messages_dropped": sim.network.dropped}}


def _kraft_result(sim, logs):
    """KRaft eras (docs/scenario-format.md §4.2, docs/model.md §20.9)."""
    return {
        **_result_head(sim),
        "controller": kraft_view.controller_result(sim),
        "brokers": _with_racks(sim, {str(b): _kraft_broker_result(sim, broker)
                                     for b, broker in sim.brokers.items()}),
        "partitions": {key: partition_result(sim, key, with_logs=logs) for key in partition_keys(sim)},
        "metadata_log": kraft_view.metadata_log_result(sim),
        **_result_tail(sim),
    }


def _kraft_broker_result(sim, broker):
    fields = kraft_view.broker_fields(sim, broker)
    return {"state": "paused" if broker.paused else broker.state,
            **{k: fields[k] for k in ("broker_epoch", "fenced", "in_controlled_shutdown",
                                      "metadata_offset")}}


def _with_racks(sim, brokers):
    """docs/scenario-format.md §4.3: each broker's ``rack`` (a name or null), only when the
    scenario has ``racks`` — the results of every other scenario stay byte for byte as they were."""
    racks = sim.scenario.get("racks")
    if racks is not None:
        for bid, entry in brokers.items():
            entry["rack"] = racks.get(bid)
    return brokers


def engine_version():
    from engine.version import ENGINE_VERSION
    return ENGINE_VERSION


def partition_keys(sim):
    return [sim.key(t, p) for t, spec in sim.topics.items() for p in range(spec["partitions"])]


def broker_result(sim, broker):
    session = sim.zk_server.session_of(broker.node_id)
    if broker.state in ("stopped", "halted", "registration_failed"):
        zk_state = "expired" if session is None else "orphaned"
    else:
        zk_state = broker.zk.state
    out = {"state": "paused" if broker.paused else broker.state, "zk_session": zk_state}
    if session is not None:
        out["zk_session_expires_at_ms"] = session.expires_at_ms
    return out


def partition_result(sim, key, with_logs):
    topic, part = sim.split_key(key)
    replicas = sim.topics[topic]["assignment"][str(part)]
    node = None
    if getattr(sim, "quorum", None) is not None:
        state = kraft_view.partition_state(sim, key)
    else:
        node = sim.zk_server.tree.nodes.get(sim.state_path(key))
        state = node.data if node else {"leader": -1, "leader_epoch": -1, "isr": []}
    leader = state["leader"]
    leader_broker = sim.brokers.get(leader)
    offline = leader == -1 or leader_broker is None or not leader_broker.running
    out = {"replicas": replicas, "leader": leader, "leader_epoch": state["leader_epoch"],
           "isr": list(state["isr"]), "zk_version": node.version if node else -1, "offline": offline,
           "replica_state": {}}
    for b in replicas:
        broker = sim.brokers[b]
        log = broker.logs.get(key)
        if log is None:
            continue
        entry = {"leo": log.leo, "hw": log.hw, "log_start_offset": log.log_start_offset,
                 "epoch_cache": [list(e) for e in log.epoch_cache],
                 "flushed_offset": log.flushed_offset}
        if with_logs:
            entry["log"] = [{"offset": log.log_start_offset + i, "epoch": e, "id": rid}
                            for i, (e, rid) in enumerate(log.records)]
        out["replica_state"][str(b)] = entry
    if sim.era.alter_isr:
        out["isr_state"] = isr_state_of(sim, key, leader_broker, out["isr"])
    if node is None and getattr(sim, "quorum", None) is not None:
        del out["zk_version"]
        out.update(kraft_view.partition_fields(state))
    return out


def isr_state_of(sim, key, leader_broker, committed):
    """docs/scenario-format.md §4.1: the leader's committed / maximal ISR and its pending change;
    with no live leader, the ISR of the state znode and nothing pending."""
    part = leader_broker.partitions.get(key) if leader_broker is not None and leader_broker.running \
        else None
    if part is None or not part.is_leader:
        return {"committed": list(committed), "maximal": list(committed), "pending": None}
    return isr_state(part)


def zk_dump(sim):
    out = {}
    for path, node in sorted(sim.zk_server.tree.nodes.items()):
        if path == "/":
            continue
        out[path] = {"data": node.data, "version": node.version, "ephemeral_owner": node.ephemeral_owner}
    return out
