"""What a viewer sees of a running simulation: a JSON-able picture of the cluster right now.

``cluster_view(sim)`` is what the live web view draws each frame: brokers (state, ZooKeeper
session and its expiry deadline), every partition's replicas (LEO, HW, the log as runs of leader
epochs plus its newest records, ISR membership and how close each follower is to
``replica.lag.time.max.ms``), the znode tree, messages in flight, clients and record outcomes.
It never changes the simulation; the same simulation state always gives the same view.
"""
from engine.kraft import kraft_view
from engine.server.partition import NEVER_MS
from engine.result import isr_state_of
from engine.scenario.racks import same_rack_of

LOG_TAIL = 40


CONFIG_KEYS = ("replica.lag.time.max.ms", "zookeeper.session.timeout.ms", "min.insync.replicas",
               "unclean.leader.election.enable", "replica.fetch.wait.max.ms")
KRAFT_CONFIG_KEYS = ("replica.lag.time.max.ms", "broker.session.timeout.ms",
                     "broker.heartbeat.interval.ms", "min.insync.replicas",
                     "unclean.leader.election.enable", "replica.fetch.wait.max.ms",
                     "eligible.leader.replicas.version")


def cluster_view(sim, log_tail=LOG_TAIL):
    if sim.quorum is not None:
        return _kraft_cluster_view(sim, log_tail)
    tree = sim.zk_server.tree
    controller = tree.nodes.get("/controller")
    epoch = tree.nodes.get("/controller_epoch")
    return {
        "t_ms": sim.now_ms,
        "duration_ms": sim.scenario["duration_ms"],
        "finished": sim.finished,
        "name": sim.scenario["name"],
        "kafka_version": sim.scenario["kafka_version"],
        "config": {k: sim.config[k] for k in CONFIG_KEYS},
        "controller": {"broker": controller.data["brokerid"] if controller else None,
                       "epoch": epoch.data if epoch else 0},
        "brokers": [broker_view(sim, b) for b in sim.brokers.values()],
        "partitions": [partition_view(sim, key, log_tail) for key in _keys(sim)],
        "zk": zk_view(sim),
        **_view_tail(sim),
    }


def _view_tail(sim):
    """What every frame ends with, in either mode: messages, links, clients, records."""
    return {"messages": sim.network.in_flight_view(),
            "links": links_view(sim),
            "clients": {name: client.view() for name, client in sim.clients.items()},
            "records": records_summary(sim),
            "history_len": len(sim.history),
            "violations": len(sim.violations)}


def _kraft_cluster_view(sim, log_tail):
    """KRaft eras (docs/model.md §20.9): the quorum instead of the znode tree."""
    return {
        "t_ms": sim.now_ms, "duration_ms": sim.scenario["duration_ms"], "finished": sim.finished,
        "name": sim.scenario["name"], "kafka_version": sim.scenario["kafka_version"],
        "config": {k: sim.config[k] for k in KRAFT_CONFIG_KEYS if k in sim.config},
        "controller": kraft_view.controller_summary(sim),
        "brokers": [broker_view(sim, b) for b in sim.brokers.values()],
        "partitions": [partition_view(sim, key, log_tail) for key in _keys(sim)],
        "zk": None,
        "quorum": kraft_view.quorum_view(sim),
        **_view_tail(sim),
    }


def _keys(sim):
    return [sim.key(t, p) for t, spec in sim.topics.items() for p in range(spec["partitions"])]


def broker_view(sim, broker):
    if sim.quorum is not None:
        return _kraft_broker_view(sim, broker)
    session = sim.zk_server.session_of(broker.node_id)
    zk = {"client_state": broker.zk.state if broker.running or broker.state == "starting" else "none",
          "session_id": session.session_id if session else None,
          "last_heard_by_zk_ms": session.last_heard_ms if session else None,
          "expires_at_ms": session.expires_at_ms if session else None}
    state = broker.state
    if broker.paused:
        state = "paused"
    isolated = [n for n in sim.network.nodes
                if n != broker.node_id and sim.network.is_blocked(broker.node_id, n)
                and sim.network.is_blocked(n, broker.node_id)]
    out = {"id": broker.node_id, "state": state, "net_state": broker.net_state,
           "controller": broker.controller.active, "controller_epoch": broker.controller.epoch,
           "broker_epoch": broker.broker_epoch, "zk": zk, "isolated_from": isolated,
           "leads": sorted(k for k, p in broker.partitions.items() if p.is_leader)}
    return _with_rack(sim, broker, out)


def _with_rack(sim, broker, out):
    """docs/scenario-format.md §4.3: ``rack`` (a name or null), only when the scenario has racks."""
    if "racks" in sim.scenario:
        out["rack"] = broker.rack
    return out


def _kraft_broker_view(sim, broker):
    state = "paused" if broker.paused else broker.state
    isolated = [n for n in sim.network.nodes
                if n != broker.node_id and sim.network.is_blocked(broker.node_id, n)
                and sim.network.is_blocked(n, broker.node_id)]
    out = {"id": broker.node_id, "state": state, "net_state": broker.net_state,
           "controller": broker.node_id == sim.quorum.active, "controller_epoch": kraft_view.raft_epoch(sim),
           "zk": None, "isolated_from": isolated,
           "leads": sorted(k for k, p in broker.partitions.items() if p.is_leader)}
    out.update(kraft_view.broker_fields(sim, broker))
    return _with_rack(sim, broker, out)


def partition_view(sim, key, log_tail):
    topic, index = sim.split_key(key)
    node = None
    if sim.quorum is not None:
        state = kraft_view.partition_state(sim, key)
    else:
        node = sim.zk_server.tree.nodes.get(sim.state_path(key))
        state = node.data if node else {"leader": -1, "leader_epoch": -1, "isr": []}
    replicas = sim.topics[topic]["assignment"][str(index)]
    leader_broker = sim.brokers.get(state["leader"])
    leader_part = leader_broker.partitions.get(key) if leader_broker and leader_broker.running else None
    lag_max = sim.config["replica.lag.time.max.ms"]
    now = sim.now_ms
    out = []
    for b in replicas:
        broker = sim.brokers[b]
        log = broker.logs.get(key)
        part = broker.partitions.get(key) if broker.running else None
        entry = {"broker": b, "leo": log.leo if log else 0, "hw": log.hw if log else 0,
                 "log_start_offset": log.log_start_offset if log else 0,
                 "flushed_offset": log.flushed_offset if log else 0,
                 "epoch_cache": [list(e) for e in log.epoch_cache] if log else [],
                 "segments": epoch_runs(log) if log else [],
                 "tail": log_tail_view(log, log_tail) if log else [],
                 "in_isr": b in state["isr"], "is_leader": bool(part and part.is_leader),
                 "local_leader_epoch": part.leader_epoch if part else None,
                 "local_isr": list(part.isr) if part and part.is_leader else None,
                 "running": broker.running}
        if leader_part is not None and leader_part.is_leader and b != state["leader"]:
            remote = leader_part.remotes.get(b)
            if remote is not None:
                caught = remote.last_caught_up_ms
                entry["lag"] = {"last_caught_up_ms": None if caught == NEVER_MS else caught,
                                "ms_behind": None if caught == NEVER_MS else now - caught,
                                "lag_max_ms": lag_max, "leader_view_leo": remote.leo}
        out.append(entry)
    view = {"key": key, "topic": topic, "partition": index, "replicas": replicas,
            "leader": state["leader"], "leader_epoch": state["leader_epoch"], "isr": list(state["isr"]),
            "zk_version": node.version if node else -1,
            "offline": state["leader"] == -1 or leader_part is None,
            "replica_state": out}
    if "racks" in sim.scenario:   # replicas that share a rack (docs/model.md §21.6)
        view["same_rack"] = same_rack_of(sim.scenario, replicas)
    if sim.quorum is not None:  # KRaft eras: partition epoch instead of zkVersion (§20.9)
        del view["zk_version"]
        view.update(kraft_view.partition_fields(state))
    if sim.era.alter_isr:  # scenario-format §4.1 (docs/model.md §17.9)
        view["isr_state"] = isr_state_of(sim, key, leader_broker, state["isr"])
        pending = leader_part.pending if leader_part is not None and leader_part.is_leader else None
        if pending is not None:  # what the leader asked the controller for (view only)
            view["isr_state"]["proposed"] = list(pending["new_isr"])
        if state.get("leader_recovery_state") and sim.quorum is None:
            view["leader_recovery_state"] = state["leader_recovery_state"]
    return view


def epoch_runs(log):
    """The log as [[start_offset, end_offset_exclusive, leader_epoch], ...] runs (kept by the log)."""
    return [list(run) for run in log.runs]


def log_tail_view(log, count):
    first = max(log.log_start_offset, log.leo - count)
    return [[first + i, epoch, rid] for i, (epoch, rid) in enumerate(log.read(first, count))]


def zk_view(sim):
    out = []
    for path, node in sorted(sim.zk_server.tree.nodes.items()):
        if path == "/":
            continue
        out.append({"path": path, "data": node.data, "version": node.version,
                    "ephemeral_owner": node.ephemeral_owner, "czxid": node.czxid,
                    "mzxid": node.mzxid})
    return out


def links_view(sim):
    net = sim.network
    return {"blocked": sorted([list(pair) for pair in net.blocked], key=str),
            "slow": sorted([[a, b, ms] for (a, b), ms in net.link_latency.items()], key=str),
            "latency_ms": net.latency_ms}


def records_summary(sim):
    counts = {"acked": 0, "failed": 0, "pending": 0, "unacknowledged": 0}
    errors = {}
    for record in sim.records.values():
        counts[record.status] = counts.get(record.status, 0) + 1
        if record.error and record.status == "failed":
            errors[record.error] = errors.get(record.error, 0) + 1
    counts["lost_acks_all"] = len(sim.invariants.reported_lost)
    counts["errors"] = errors
    counts["total"] = len(sim.records)
    return counts


def recent_records(sim, limit=100):
    """The newest records with their fate (for the ledger)."""
    records = list(sim.records.values())[-limit:]
    lost = sim.invariants.reported_lost
    out = []
    for r in records:
        d = r.to_dict()
        d["lost"] = d["lost"] or r.id in lost
        out.append(d)
    return out
