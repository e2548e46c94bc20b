"""What a room's viewers see, as a flat map of entities (``"b:1"``, ``"p:orders-0"``, ``"z:/controller"``).

This is ``engine.view.cluster_view`` cut into pieces that can be diffed one by one, with two
parts made incremental because the engine's versions walk every record on each call (fine for
one result, too slow 30 times a second on a long run):

* ``RecordDigest`` (records.py): record outcomes counted as they settle, instead of
  ``records_summary``'s pass over every record; it also notices acknowledged records (acks=1 as
  well as acks=all) that are no longer in the current leader's log, i.e. lost so far.
* ``MessageTap``: every message sent since the last frame, from the network's observer hook; the
  view's in-flight list only shows messages that happen to be on the wire at frame time, and with
  a 1 ms link that is almost never.

Everything here reads the simulation and never changes it.
"""
import json
from collections import deque

from .records import LOSS_EVENTS, RecordDigest, producer_settings  # noqa: F401  (LOSS_EVENTS: room.py)
from .partition_state import active_controller
from .refresh import PartitionRefresh
from engine import eras
from engine.kraft import kraft_view
from engine.scenario.racks import same_rack_partitions
from engine.view import broker_view, links_view, partition_view, zk_view

LOG_TAIL = 12            # record ids per replica sent each frame (the detail view asks for more)
MESSAGES_PER_FRAME = 120


def mark_user_ops(doc, commands):
    """``doc`` (a session's ``replay_scenario()``) with its live commands marked ``"by": "user"``,
    so a saved run keeps who did what (docs/scenario-format.md §2.2). A scripted operation
    identical to a command at the same millisecond sorts first, so the later copies are marked."""
    wanted = {}
    for c in commands:
        k = json.dumps(c, sort_keys=True)
        wanted[k] = wanted.get(k, 0) + 1
    for op in reversed(doc["timeline"]):
        k = json.dumps({f: v for f, v in op.items() if f != "by"}, sort_keys=True)
        if wanted.get(k):
            wanted[k] -= 1
            op["by"] = "user"
    return doc


# -- messages --------------------------------------------------------------------------------------
class MessageTap:
    """The network observer: remembers what was sent or dropped since the last drain.

    It lives inside the simulation (``sim.network.observer``), so it must survive a snapshot:
    pickling keeps no messages and a restored simulation gets a fresh, detached tap.
    """
    __slots__ = ("sent", "on_deliver")

    def __init__(self):
        self.sent = deque(maxlen=4096)
        self.on_deliver = None       # KRaft: the FetchClock, told of every delivery

    def __call__(self, kind, env):
        if kind == "deliver":
            if self.on_deliver is not None:
                self.on_deliver(env)
            return  # deliveries are implied
        if env.source == env.target:
            return  # a broker talking to itself has nothing to draw
        label = env.type
        if label.startswith("Zk") and isinstance(env.body, dict) and env.body.get("op"):
            label = f"{label}:{env.body['op']}"
        self.sent.append((env.id, env.source, env.target, label, env.sent_at_ms, env.deliver_at_ms,
                          1 if kind == "drop" else 0))

    def drain(self):
        out = list(self.sent)
        self.sent.clear()
        return out

    def __reduce__(self):
        return (MessageTap, ())


class FetchClock:
    """KRaft: what the Raft leader knows of each replica's metadata fetches, as Kafka's
    ``LeaderState.ReplicaState`` keeps it for DescribeQuorum (kafka-metadata-quorum.sh describe
    --replication): the offset of its last Fetch, when that Fetch arrived (lastFetchTimestamp) and
    when it was last caught up with the leader's log end (lastCaughtUpTimestamp), on the simulated
    clock. A new leader (or epoch) starts from nothing, -1, as Kafka's new LeaderState does.

    Told of every delivery by the MessageTap; reads the simulation, never changes it."""

    def __init__(self, sim):
        self.sim = sim
        self.epoch_of = None          # (leader id, epoch) the states belong to
        self.states = {}              # replica id -> [end, last fetch ms, last caught up ms, leader end at last fetch]

    def __call__(self, env):
        body = env.body
        if env.type != "Fetch" or not isinstance(body, dict) or "partitions" in body or "replica_id" not in body:
            return  # a replica's partition Fetch, not one of the metadata log
        leader = self.sim.quorum.voters.get(env.target)
        if leader is None or leader.role != "leader" or not leader.running:
            return  # answered NOT_LEADER: nothing the leader tracks
        if self.epoch_of != (leader.node_id, leader.epoch):
            self.epoch_of, self.states = (leader.node_id, leader.epoch), {}
        now, offset, leader_end = self.sim.scheduler.now_ms, body["fetch_offset"], len(leader.log)
        state = self.states.setdefault(body["replica_id"], [-1, -1, -1, 0])
        # ReplicaState.updateFollowerState: caught up now, or up to where the leader was at the last fetch
        if offset >= leader_end:
            state[2] = max(state[2], now)
        elif state[3] > 0 and offset >= state[3]:
            state[2] = max(state[2], state[1])
        state[0], state[1], state[3] = offset, now, leader_end

    def view(self):
        """replica id (a string) -> [end offset, last fetch ms, last caught up ms] as the Raft
        leader knows them; empty while no voter leads the epoch they were taken in."""
        leader = self.sim.quorum.voters.get(self.epoch_of[0]) if self.epoch_of else None
        if leader is None or leader.role != "leader" or not leader.running or leader.epoch != self.epoch_of[1]:
            return {}
        return {str(r): s[:3] for r, s in self.states.items()}


_PRIORITY = {"LeaderAndIsr": 0, "UpdateMetadata": 0, "StopReplica": 0, "ControlledShutdown": 0, "AlterIsr": 0,
             # KRaft: elections, registrations and ISR requests are rare and tell the story
             "Vote": 0, "BeginQuorumEpoch": 0, "EndQuorumEpoch": 0, "BrokerRegistration": 0, "AlterPartition": 0, "BrokerHeartbeat": 3,
             "OffsetsForLeaderEpoch": 1, "Produce": 2, "Metadata": 3, "ListOffsets": 3, "Fetch": 4}


def _priority(msg):
    label = msg[3]
    base = label[:-8] if label.endswith("Response") else label
    if msg[6]:
        return -1  # drops show a fault at work
    if base.startswith("Zk"):
        return 5 if base.endswith(":ping") or base == "ZkWatchEvent" else 1
    return _PRIORITY.get(base, 3)


def sample_messages(messages, limit=MESSAGES_PER_FRAME):
    """At most ``limit`` messages, the rarer kinds first (control requests, drops, ZooKeeper writes),
    in sending order. Returns (kept, skipped count)."""
    if len(messages) <= limit:
        return messages, 0
    ranked = sorted(range(len(messages)), key=lambda i: (_priority(messages[i]), i))[:limit]
    ranked.sort()
    return [messages[i] for i in ranked], len(messages) - limit


# -- partitions ----------------------------------------------------------------------------------------
def partition_entity(sim, key, tail=LOG_TAIL):
    """One partition as ``engine.view.partition_view`` draws it (same fields and meanings), with
    the newest ``tail`` record ids as ``[first offset, [ids]]`` (the epochs are in the runs) and
    ``lag`` always present (None where the leader tracks no lag)."""
    view = partition_view(sim, key, 0)
    view["replicas"] = list(view["replicas"])
    for entry in view["replica_state"]:
        entry.setdefault("lag", None)
        log = sim.brokers[entry["broker"]].logs.get(key)
        if log is None:
            entry["tail"] = [0, []]
            continue
        first = max(log.log_start_offset, log.leo - tail)
        entry["tail"] = [first, [rid for _e, rid in log.read(first, tail)]]
    return view


def partition_detail(sim, key, tail=200):
    """The focused partition with a long tail of ``[offset, epoch, id]`` per replica (inspect)."""
    view = partition_entity(sim, key, tail=0)
    for entry in view["replica_state"]:
        log = sim.brokers[entry["broker"]].logs.get(key)
        entry.pop("tail", None)
        if log is None:
            entry["records"] = []
            continue
        first = max(log.log_start_offset, log.leo - tail)
        entry["records"] = [[first + i, e, rid] for i, (e, rid) in enumerate(log.read(first, tail))]
    return view


# -- the whole picture -------------------------------------------------------------------------------
class LiveView:
    """Entities of one simulation, frame after frame."""

    def __init__(self, sim):
        self.sim = sim
        self.digest = RecordDigest(sim)
        self.tap = MessageTap()
        sim.network.observer = self.tap
        self.frame_no = 0
        self.history_seen = len(sim.history)
        self.violations_seen = 0
        self.refresh = PartitionRefresh()
        self.fetch_clock = None
        if sim.quorum is not None:
            self.fetch_clock = self.tap.on_deliver = FetchClock(sim)
        self._zk_version, self._zk_entities = None, {}
        self._user_ops = None             # (at_ms, op) of the recorded session's own commands
        self._defaults = None             # (kafka_version, its topic and broker defaults)

    def meta(self):
        sim = self.sim
        sc = sim.scenario
        meta = {"name": sc["name"], "description": sc["description"], "seed": sc["seed"],
                "kafka_version": sc["kafka_version"], "duration_ms": sc["duration_ms"],
                # docs/model.md §17: who writes ISR changes, and the name of the request
                "isr_path": "controller" if sim.era.alter_isr else "zookeeper",
                "alter_isr_api": sim.era.alter_isr_api if sim.era.alter_isr else None,
                "kraft": bool(sim.era.kraft),      # a controller quorum instead of ZooKeeper
                "brokers": list(sim.broker_ids),
                "topics": [{"name": name, "partitions": spec["partitions"],
                            "replication_factor": spec["replication_factor"],
                            "config": dict(sim.topic_configs.get(name, {}))}
                           for name, spec in sim.topics.items()],
                "config": dict(sim.config), "network": dict(sc["network"]),
                # where a value comes from, as kafka-configs.sh names it: server.properties (the
                # scenario's config) or the era's default (static/js/configs.js)
                "static_config": dict(sc.get("config") or {}),
                "config_defaults": self._config_defaults(sc["kafka_version"]),
                "commands": len(sim.commands)}
        if "racks" in sc:   # docs/model.md §21.6: the racks and the partitions crowding one
            meta["racks"] = dict(sc["racks"])
            meta["inter_rack_latency_ms"] = sc.get("inter_rack_latency_ms", 0)
            meta["same_rack_partitions"] = same_rack_partitions(sc, sim.topics)
        return meta

    def _config_defaults(self, version):
        """The era's topic and broker defaults: a pure function of the version, kept, because
        computing them again cost a quarter of a small room's frame."""
        cached = self._defaults
        if cached is None or cached[0] != version:
            cached = self._defaults = (version, eras.defaults(version, ("topic", "broker")))
        return cached[1]

    def new_history(self):
        """History events since the last call, as (index, event) pairs."""
        history = self.sim.history
        start, end = self.history_seen, len(history)
        self.history_seen = end
        fresh = history[start:end]
        if any(e["type"] == "fault" for e in fresh):
            fresh = [self._with_origin(e) if e["type"] == "fault" else e for e in fresh]
        return start, fresh

    def _with_origin(self, event):
        """A copy of a timeline operation's event saying who asked for it: a live command of a
        viewer, or a command of the recorded session this run replays (``"by": "user"``), is
        "user"; the scenario's timeline is "scenario". The page labels them apart."""
        if self._user_ops is None:
            self._user_ops = {(op["at_ms"], op["op"]) for op in self.sim.scenario["timeline"] if op.get("by") == "user"}
        mine = (event["t_ms"], event.get("op")) in self._user_ops or any(
            c["at_ms"] == event["t_ms"] and c["op"] == event.get("op") for c in self.sim.commands[-200:])
        return {**event, "origin": "user" if mine else "scenario"}

    def with_origins(self, pairs):
        """(index, event) pairs with every timeline operation's event labelled by ``_with_origin``."""
        return [(i, self._with_origin(e)) if e["type"] == "fault" else (i, e) for i, e in pairs]

    def new_violations(self):
        v = self.sim.violations
        start, self.violations_seen = self.violations_seen, len(v)
        return v[start:]

    def entities(self, dirty_keys=()):
        sim = self.sim
        self.frame_no += 1
        out = {"meta": self.meta(), "controller": active_controller(sim), "links": links_view(sim)}
        if sim.quorum is not None:     # KRaft: the quorum and its metadata log instead of znodes
            out["quorum"] = kraft_view.quorum_view(sim)
            out["quorum"]["fetches"] = self.fetch_clock.view() if self.fetch_clock else {}
        for broker in sim.brokers.values():
            out[f"b:{broker.node_id}"] = broker_view(sim, broker)
        keys = [sim.key(topic, p) for topic, spec in sim.topics.items() for p in range(spec["partitions"])]
        drawn = self.refresh.entities(sim, keys, dirty_keys or (), partition_entity)
        for key, entity in drawn.items():
            out["p:" + key] = entity
        if sim.quorum is None:
            out.update(self._znodes(sim))
        for name, client in sim.clients.items():
            view = client.view()
            spec = getattr(client, "spec", {}) or {}
            view["topic"] = spec.get("topic")
            if view["type"] == "producer":
                view.update(producer_settings(client, self.digest.acks_sent.get(name)))
                view["rate_per_s"] = spec.get("rate_per_s") or 0
            else:
                view["isolation_level"] = client.config.get("isolation.level", "read_uncommitted") \
                    if hasattr(client, "config") else None
            out["c:" + name] = view
        if sim.finished and not self.digest.finalized:
            self.digest.finalize()   # the engine settled every record's fate at the end of the run
        else:
            self.digest.update(self.frame_no, dirty_keys)
        out["records"] = self.digest.summary()
        out["ledger"] = self.digest.ledger()
        return out

    def _znodes(self, sim):
        """The znode entities, rebuilt only when ZooKeeper committed a transaction since the last
        frame (every change to the tree takes a new zxid): a large cluster has hundreds of znodes
        that rarely change between two frames."""
        tree = sim.zk_server.tree
        version = (id(tree), tree.zxid)
        if self._zk_version != version:
            self._zk_version = version
            self._zk_entities = {"z:" + node.pop("path"): node for node in zk_view(sim)}
        return self._zk_entities

    def messages(self):
        kept, skipped = sample_messages(self.tap.drain())
        return [list(m) for m in kept], skipped
