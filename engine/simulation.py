"""Build a simulated cluster from a scenario and run it: ``Simulation(scenario).run()``.

The simulation is a pure function of (scenario, seed, commands): the only clock is the
scheduler's, the only randomness the seeded streams. ``apply(op)`` injects a live command; it is
scheduled like a timeline operation one millisecond later and recorded in ``commands``, so the
scenario plus its commands replays the live session byte for byte (``replay_scenario``).
The operations themselves are in ``sim_operations``; ``Simulation`` stays defined here (snapshots
pickle it by this module path).
"""
import copy
import pickle

from engine import eras, snapshots
from engine.server.broker import Broker
from engine.clients.producer_consumer import Consumer, Producer
from engine.history import hw_event
from engine.invariants import Invariants
from engine.core.network import Network
from engine.core.rng import Streams
from engine.scenario.document import ScenarioError, _Track, check_op, load
from engine.scenario.racks import rack_of
from engine.core.scheduler import new_scheduler
from engine.sim_operations import TimelineOperations, describe_op  # noqa: F401
from engine.version import (ENGINE_VERSION, V1_1_0, V1_2_0, has_1_3_rules,  # noqa: F401
                            has_1_4_rules, has_1_5_rules, supported)
from engine.zookeeper.server import ZkServer
from engine.core import jit_hints

# PyPy: the hottest handlers get traces of their own (engine/core/jit_hints.py); nothing elsewhere
jit_hints.apply()

TOP_LEVEL_ZNODES = ("/brokers/ids", "/brokers/topics", "/isr_change_notification", "/admin",
                    "/config/topics")


class LogConfigs(dict):
    """topic -> its LogConfig: the broker defaults with the topic's overrides, as Kafka keeps one
    per topic and rebuilds it when the topic's config changes (TopicConfigHandler). The produce and
    replication paths read a setting per append; a merged dict makes that one lookup instead of a
    ``topic_config`` call. Built on first use, cleared on every change to ``topic_configs``
    (``_register_topic``, ``set_config``); never pickled (``__getstate__``)."""
    __slots__ = ("sim",)

    def __init__(self, sim):
        super().__init__()
        self.sim = sim

    def __missing__(self, topic):
        overrides = self.sim.topic_configs.get(topic, {})
        # every broker key, overridden or not; an unknown key still fails (KeyError)
        config = self[topic] = {key: overrides[key] if key in overrides else default
                                for key, default in self.sim.config.items()}
        return config


class Simulation(TimelineOperations):
    #: the engine behaviour this run follows (a class default: snapshots pickled before it existed
    #: continue as engine 1.2.0, whose rules they hold; see ``rules_1_3``)
    engine_version = V1_2_0
    #: KRaft eras: the controller quorum (docs/model.md §20); a class default for old snapshots
    quorum = None
    #: engine 1.3.0's rules (docs/model.md §19): False re-simulates a run of 1.1.0 or 1.2.0 exactly.
    #: Every fix of 1.3.0 asks ``sim.rules_1_3``; the class default is what snapshots pickled by an
    #: older engine continue with.
    rules_1_3 = False
    #: engine 1.4.0's rules (docs/model.md §19): False re-simulates a run of 1.1.0 – 1.3.0 exactly.
    #: Every fix of 1.4.0 asks ``sim.rules_1_4``; False too for snapshots pickled before it.
    rules_1_4 = False
    #: engine 1.5.0's rules (docs/model.md §19): False re-simulates a run of 1.1.0 – 1.4.0 exactly.
    rules_1_5 = False
    #: the last producer id handed out (engine 1.5.0: idempotent producers and InitProducerId)
    last_producer_id = -1

    #: high-watermark moves in the history as tuples (engine/history.py): a sweep run's choice
    compact_history = False

    def __init__(self, scenario, trace=None, engine_version=None, compact_history=False):
        """``engine_version``: None runs the current engine; "1.1.0" re-simulates a run saved by
        engine 1.1.0 exactly (docs/model.md §19); another version runs as ``supported`` names.
        ``compact_history``: keep high-watermark moves as tuples (``engine.history``), for a run
        whose history only the digest reads (a sweep run; no ``trace`` then)."""
        self.scenario = load(scenario)
        sc = self.scenario
        self.engine_version = supported(engine_version)
        self.rules_1_3 = has_1_3_rules(self.engine_version)
        self.rules_1_4 = has_1_4_rules(self.engine_version)
        self.rules_1_5 = has_1_5_rules(self.engine_version)
        self.era = eras.ERAS[sc["kafka_version"]]
        self.scheduler = new_scheduler()
        self.streams = Streams(sc["seed"])
        self.network = Network(self.scheduler, self.streams.fork("network"),
                               sc["network"]["latency_ms"], sc["network"]["jitter_ms"])
        if self.engine_version == V1_1_0:
            self.network.compat_1_1_0 = True  # engine 1.1.0 compatibility: docs/model.md §19
        if sc.get("inter_rack_latency_ms"):   # links across racks take longer (docs/model.md §21.4)
            self.network.set_racks(rack_of(sc), sc["inter_rack_latency_ms"])
        self.config = {**eras.defaults(sc["kafka_version"]), **sc["config"]}
        self.trace = trace
        self.compact_history = compact_history and trace is None
        self.history = []
        self.violations = []
        self.records = {}
        self.consumed = {}
        self.commands = []
        self._keys = {}
        self._key_parts = {}
        self.topics = {}
        self.topic_configs = {}
        self.log_configs = LogConfigs(self)
        self.invariants = Invariants(self)
        self.zk_server = ZkServer(self)
        self.zk_server.observer = self.invariants.on_znode_write
        self.quorum = None
        if not self.era.kraft:
            self.network.add_node("zk", self.zk_server)
        for path in TOP_LEVEL_ZNODES:
            self.zk_server.tree.ensure_path(path)
        self.broker_ids = list(sc["brokers"])
        self.brokers = {}
        broker_class = Broker
        if self.era.kraft:  # docs/model.md §20: a controller quorum instead of ZooKeeper
            from engine.kraft.kraft_broker import KraftBroker
            from engine.kraft.kraft_scenario import voter_ids
            from engine.kraft.quorum import Quorum
            broker_class = KraftBroker
            self.quorum = Quorum(self, voter_ids(sc))
        for index, bid in enumerate(self.broker_ids):
            broker = broker_class(self, bid)
            self.brokers[bid] = broker
            self.network.add_node(bid, broker)
            self.scheduler.schedule_boot(index, broker.start)
        if self.quorum is not None and sc["controllers"] == "combined":
            for bid in self.broker_ids:  # §20.11: one process per broker hosts its voter
                self.quorum.add_colocated_voter(self.brokers[bid])
        elif self.quorum is not None:
            for index, vid in enumerate(self.quorum.voter_ids):
                self.quorum.add_voter(len(self.broker_ids) + index, vid)
        self.max_fetch_records = max(1, self.config["replica.fetch.max.bytes"]
                                     // self.config["sim.record.size.bytes"])
        self.pending_topics = list(sc["topics"])
        for topic in sc["topics"]:
            self._register_topic(topic)
        self.clients = {}
        for spec in sc["clients"]:
            self._add_client(spec)
        for op in sc["timeline"]:
            self.scheduler.schedule_op(op["at_ms"], self._run_op, op)
        self.finished = False

    # -- naming --------------------------------------------------------------------------------------
    @property
    def now_ms(self):
        return self.scheduler.now_ms

    def key(self, topic, partition):
        try:
            return self._keys[(topic, partition)]
        except KeyError:
            key = f"{topic}-{partition}"
            self._keys[(topic, partition)] = key
            self._key_parts[key] = (topic, partition)
            return key

    def split_key(self, key):
        return self._key_parts[key]

    def state_path(self, key):
        topic, part = self._key_parts[key]
        return f"/brokers/topics/{topic}/partitions/{part}/state"

    def key_of_state_path(self, path):
        parts = path.split("/")
        return self.key(parts[3], int(parts[5]))

    def topic_config(self, topic, key):
        return self.log_configs[topic][key]

    # -- the story -------------------------------------------------------------------------------------
    def emit(self, type_, **fields):
        event = {"t_ms": self.scheduler.now_ms, "type": type_}
        event.update(fields)
        self.history.append(event)
        if self.trace is not None:
            self.trace(event)
        if type_ in ("broker_started", "broker_stopped") and self.pending_topics and self.quorum is None:
            self._maybe_create_topics()
        return event

    # -- topics (an admin writing to ZooKeeper, as kafka-topics.sh --zookeeper does) -------------------
    def _register_topic(self, topic):
        self.topics[topic["name"]] = topic
        self.topic_configs[topic["name"]] = dict(topic.get("config", {}))
        self.log_configs.clear()
        for p in range(topic["partitions"]):
            self.key(topic["name"], p)

    def _maybe_create_topics(self):
        """The scenario's topics are created once every broker that is up has registered."""
        if any(b.state == "starting" for b in self.brokers.values()):
            return
        if not any(b.state == "running" for b in self.brokers.values()):
            return
        pending, self.pending_topics = self.pending_topics, []
        for topic in pending:
            self._create_topic_znodes(topic)

    def _create_topic_znodes(self, topic):
        tree = self.zk_server.tree
        if topic.get("config"):
            tree.create(f"/config/topics/{topic['name']}", {"version": 1, "config": topic["config"]})
        tree.create(f"/brokers/topics/{topic['name']}",
                    {"version": 1, "partitions": topic["assignment"]})

    # -- clients ------------------------------------------------------------------------------------------
    def _client_config(self, kind, overrides):
        keys = eras.defaults(self.scenario["kafka_version"], (kind,))
        if kind == "consumer" and self.rules_1_5:   # docs/model.md §12: the consumer's own defaults
            keys.update(eras.consumer_defaults(self.scenario["kafka_version"]))
        return {**keys, **{k: v for k, v in self.scenario["config"].items() if k in keys}, **overrides}

    def _add_client(self, spec):
        if spec["type"] == "producer":
            client = Producer(self, spec["name"], spec, self._client_config("producer", spec.get("config", {})))
        else:
            client = Consumer(self, spec["name"], spec, self._client_config("consumer", spec.get("config", {})))
        self.clients[spec["name"]] = client
        self.network.add_node(spec["name"], client)
        if client.rack is not None and self.network.inter_rack_ms:
            # a consumer with client.rack stands in that rack: links to other racks cost more
            self.network.rack_of[spec["name"]] = client.rack   # (docs/model.md §21.8)
        self.scheduler.schedule_at(max(spec.get("start_ms", 0), self.now_ms), client.start)
        if spec.get("stop_ms") is not None:
            self.scheduler.schedule_at(spec["stop_ms"], self._stop_client, spec["name"])
        return client

    def _stop_client(self, name):
        self.clients[name].stop()

    def register_record(self, record):
        self.records[record.id] = record

    # -- engine hooks ----------------------------------------------------------------------------------
    def on_leader_hw(self, broker, part, old, new, cause):
        # the commonest event of a run: in a sweep a compact tuple (engine/history.py), else
        # self.emit("high_watermark", ...) inlined
        move = (self.scheduler.now_ms, part.topic, part.index, broker.node_id, old, new,
                part.leader_epoch, cause)   # history.HW_FIELDS, the ISR last
        if self.compact_history:
            self.history.append((*move, list(part.isr)))   # a copy: the ISR at this move
        else:
            event = hw_event(*move, part.isr)
            self.history.append(event)
            if self.trace is not None:
                self.trace(event)
        self.invariants.on_leader_hw(broker, part, old, new)

    def on_log_recovered(self, broker, key, log):
        self.invariants.on_hw(broker, key, log)

    def on_log_reconciled(self, broker, key, log):
        self.invariants.on_log_reconciled(broker, key, log)

    def on_append(self, broker, part, base, ids):
        records = self.records
        epoch = part.leader_epoch
        for rid in ids:
            if rid in records:
                records[rid].leader_epoch = epoch

    def on_truncated(self, broker, key):
        self.invariants.on_truncated(broker, key)

    def on_new_leader(self, broker, part):
        self.invariants.on_log_reconciled(broker, part.key, part.log)
        self.invariants.check_records(part.key, part.log,
                                      f"broker {broker.node_id} became leader in epoch {part.leader_epoch}")

    def on_acked(self, record):
        self.invariants.on_acked(record)

    def on_acked_records(self, key, records):
        """``on_acked`` for each of a batch's ``records``, all of partition ``key``."""
        self.invariants.on_acked_records(key, records)

    def on_consumed(self, consumer, key, offset, record_id):
        self.invariants.on_consumed(consumer, key, offset, record_id)

    def on_consumed_records(self, consumer, key, offset, records):
        """``on_consumed`` for each of a fetch's ``records`` ((epoch, id) from ``offset`` on)."""
        self.invariants.on_consumed_records(consumer, key, offset, records)

    def allocate_producer_id(self):
        """A new producer id, unique in the run (Kafka's ProducerIdManager hands out blocks of
        ids from ZooKeeper; the engine counts from 0)."""
        self.last_producer_id += 1
        return self.last_producer_id

    # -- running ------------------------------------------------------------------------------------------
    def run(self, logs=True):
        self.advance_to(self.scenario["duration_ms"])
        return self.result(logs)

    def advance_to(self, time_ms, stop=None):
        """Process every event up to ``time_ms`` (never past the scenario's end)."""
        end = min(time_ms, self.scenario["duration_ms"])
        stopped = self.scheduler.run_until(end, stop)
        self._check_end()
        return stopped

    def step_event(self, limit_ms=None):
        """Advance to the next history event (single-step in the UI)."""
        count = len(self.history)
        end = self.scenario["duration_ms"] if limit_ms is None else min(limit_ms, self.scenario["duration_ms"])
        self.scheduler.run_until(end, lambda: len(self.history) > count)
        self._check_end()
        return self.history[count:]

    def _check_end(self):
        """The end of the run is a step of its own: record outcomes are settled there (records
        in no live leader's log become lost), so reading the result never changes the run."""
        if self.scheduler.now_ms >= self.scenario["duration_ms"] and not self.finished:
            self.finished = True
            self.invariants.finalize()

    def apply(self, op):
        """Validate a live command against the current state, schedule it 1 ms from now and record
        it. Raises ScenarioError (field, message, allowed) when it makes no sense."""
        op = dict(op)
        op["at_ms"] = self.now_ms + 1
        if op["at_ms"] > self.scenario["duration_ms"]:
            raise ScenarioError("at_ms", "the run has ended", f"before {self.scenario['duration_ms']} ms")
        if op.get("op") not in OPS_LIVE:
            raise ScenarioError("op", f"{op.get('op')!r} is not an operation", ", ".join(OPS_LIVE))
        checked = check_op(op, "command", self.scenario, dict(self.topics), self._live_track())
        self.commands.append(checked)
        self.scheduler.schedule_op(checked["at_ms"], self._run_op, checked)
        return checked

    def _live_track(self):
        track = _Track(self.scenario)
        for bid, broker in self.brokers.items():
            if broker.paused:
                track.brokers[bid] = "paused"
            elif broker.state in ("running", "starting", "shutting_down"):
                track.brokers[bid] = "running"
            else:
                track.brokers[bid] = "stopped"
        if self.quorum is not None:  # KRaft eras: the voters' process states (§20.8)
            for vid, voter in self.quorum.voters.items():
                track.controllers[vid] = "paused" if voter.paused else \
                    ("running" if voter.running else "stopped")
        for name, client in self.clients.items():
            track.clients.setdefault(name, {"name": name, "type": "producer" if isinstance(client, Producer)
                                            else "consumer"})
            track.nodes.add(name)
        return track

    def replay_scenario(self):
        """The scenario with the live commands merged into its timeline: replays this session."""
        doc = copy.deepcopy(self.scenario)
        doc["timeline"] = sorted(doc["timeline"] + copy.deepcopy(self.commands),
                                 key=lambda op: op["at_ms"])
        if self.commands:
            # Live commands can make a scripted operation pointless (a user crashed a broker the
            # script crashes later); the run ignored it, and so must its replay.
            doc["recorded"] = True
        return doc

    # -- snapshots (exact: the whole state, scheduler heap included) -------------------------------
    def __getstate__(self):
        state = dict(self.__dict__)
        state["trace"] = None  # an observer of this process, not part of the simulation
        state.pop("log_configs", None)  # a cache of topic_configs, rebuilt on load
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.log_configs = LogConfigs(self)

    def snapshot(self):
        """The complete state as bytes; ``Simulation.restore`` continues exactly from here.
        Pickle: trusted input only (snapshots are made and read by this program)."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(blob, trace=None):
        sim = snapshots.loads(blob)   # old module paths too (engine.snapshots)
        sim.trace = trace
        return sim

    def result(self, logs=True):
        from engine.result import build_result
        return build_result(self, logs)


OPS_LIVE = ("produce", "crash", "restart", "shutdown", "pause", "resume", "flush", "isolate", "cut",
            "partition", "heal", "slow", "expire_session", "elect_preferred", "consume", "stop_client",
            "create_topic", "set_config")
