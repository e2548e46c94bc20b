"""Build a simulated cluster from a scenario and run it: ``Simulation(scenario).run()``.

The simulation is a pure function of (scenario, seed, commands): the only clock is the
scheduler's, the only randomness the seeded streams. ``apply(op)`` injects a live command; it is
scheduled like a timeline operation one millisecond later and recorded in ``commands``, so the
scenario plus its commands replays the live session byte for byte (``replay_scenario``).
"""
import copy
import pickle

from . import eras
from .broker import Broker
from .clients import Consumer, Producer, acks_label, acks_value
from .invariants import Invariants
from .network import Network
from .rng import Streams
from .scenario import ScenarioError, _Track, check_op, load
from .scheduler import Scheduler
from .zookeeper import ZkServer

ENGINE_VERSION = "1.0.0"
TOP_LEVEL_ZNODES = ("/brokers/ids", "/brokers/topics", "/isr_change_notification", "/admin",
                    "/config/topics")


class Simulation:
    def __init__(self, scenario, trace=None):
        self.scenario = load(scenario)
        sc = self.scenario
        self.era = eras.ERAS[sc["kafka_version"]]
        self.scheduler = Scheduler()
        self.streams = Streams(sc["seed"])
        self.network = Network(self.scheduler, self.streams.fork("network"),
                               sc["network"]["latency_ms"], sc["network"]["jitter_ms"])
        self.config = {**eras.defaults(sc["kafka_version"]), **sc["config"]}
        self.trace = trace
        self.history = []
        self.violations = []
        self.records = {}
        self.consumed = {}
        self.commands = []
        self._keys = {}
        self._key_parts = {}
        self.topics = {}
        self.topic_configs = {}
        self.invariants = Invariants(self)
        self.zk_server = ZkServer(self)
        self.zk_server.observer = self.invariants.on_znode_write
        self.network.add_node("zk", self.zk_server)
        for path in TOP_LEVEL_ZNODES:
            self.zk_server.tree.ensure_path(path)
        self.broker_ids = list(sc["brokers"])
        self.brokers = {}
        for index, bid in enumerate(self.broker_ids):
            broker = Broker(self, bid)
            self.brokers[bid] = broker
            self.network.add_node(bid, broker)
            self.scheduler.schedule_boot(index, broker.start)
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
        return self.topic_configs[topic].get(key, self.config[key]) if topic in self.topic_configs \
            else self.config[key]

    # -- the story -------------------------------------------------------------------------------------
    def emit(self, type_, **fields):
        event = {"t_ms": self.scheduler.now_ms, "type": type_}
        event.update(fields)
        self.history.append(event)
        if self.trace is not None:
            self.trace(event)
        if type_ in ("broker_started", "broker_stopped") and self.pending_topics:
            self._maybe_create_topics()
        return event

    # -- topics (an admin writing to ZooKeeper, as kafka-topics.sh --zookeeper does) -------------------
    def _register_topic(self, topic):
        self.topics[topic["name"]] = topic
        self.topic_configs[topic["name"]] = dict(topic.get("config", {}))
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
        return {**keys, **{k: v for k, v in self.scenario["config"].items() if k in keys}, **overrides}

    def _add_client(self, spec):
        if spec["type"] == "producer":
            client = Producer(self, spec["name"], spec, self._client_config("producer", spec.get("config", {})))
        else:
            client = Consumer(self, spec["name"], spec, self._client_config("consumer", spec.get("config", {})))
        self.clients[spec["name"]] = client
        self.network.add_node(spec["name"], client)
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
        self.emit("high_watermark", topic=part.topic, partition=part.index, broker=broker.node_id,
                  hw_before=old, hw=new, leader_epoch=part.leader_epoch,
                  reason=f"{cause}: min LEO over the leader, the ISR {part.isr} and caught-up "
                         f"followers is {new}")
        self.invariants.on_leader_hw(broker, part, old, new)

    def on_hw_changed(self, broker, key, log):
        self.invariants.on_hw(broker, key, log)

    def on_log_recovered(self, broker, key, log):
        self.invariants.on_hw(broker, key, log)

    def on_log_reconciled(self, broker, key, log):
        self.invariants.on_log_reconciled(broker, key, log)

    def on_append(self, broker, part, base, ids):
        records = self.records
        for i, rid in enumerate(ids):
            record = records.get(rid)
            if record is not None:
                record.leader_epoch = part.leader_epoch

    def on_replicated(self, broker, part, count):
        return None

    def on_truncated(self, broker, key):
        self.invariants.on_truncated(broker, key)

    def on_new_leader(self, broker, part):
        self.invariants.on_log_reconciled(broker, part.key, part.log)
        self.invariants.check_records(part.key, part.log,
                                      f"broker {broker.node_id} became leader in epoch {part.leader_epoch}")

    def on_acked(self, record):
        self.invariants.on_acked(record)

    def on_consumed(self, consumer, key, offset, record_id):
        self.invariants.on_consumed(consumer, key, offset, record_id)

    def producer_batches_in_log(self, log, producer):
        """The producer's last five batches in this log, as (base seq, count, base offset),
        oldest first: how a replica rebuilds producer state from its own log (§6)."""
        prefix = producer + "-"
        found = []  # newest first: [base seq, count, base offset]
        offset = log.leo
        for _epoch, rid in reversed(log.records):
            offset -= 1
            if not rid.startswith(prefix):
                continue
            record = self.records.get(rid)
            if record is None or record.batch_seq is None:
                continue
            if found and found[-1][0] == record.batch_seq:
                found[-1][2] = offset
                continue
            if len(found) == 5:
                break
            found.append([record.batch_seq, record.batch_count, offset])
        return [tuple(b) for b in reversed(found)]

    # -- timeline operations ---------------------------------------------------------------------------
    def _run_op(self, op):
        fields = {k: v for k, v in op.items() if k not in ("at_ms",)}
        note = getattr(self, "_op_" + op["op"])(op)
        self.emit("fault", **fields, reason=note or describe_op(op))

    def _broker_for(self, op, states):
        broker = self.brokers[op["broker"]]
        if broker.state in states and not (broker.paused and "paused" not in states):
            return broker, None
        state = "paused" if broker.paused else broker.state
        return None, f"ignored: broker {broker.node_id} is {state}"

    def _op_produce(self, op):
        name = op.get("producer", "producer")
        producer = self.clients.get(name)
        if producer is None:
            producer = self._add_client({"name": name, "type": "producer", "topic": op["topic"],
                                         "start_ms": self.now_ms})
            producer.start()
        acks = acks_value(op["acks"]) if "acks" in op else producer.acks
        ids = [producer.send_record(op["topic"], op.get("partition"), op.get("key"), op.get("value"), acks).id
               for _ in range(op["count"])]
        span = ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]}"
        return f"{name} sends {op['count']} record(s) to {op['topic']} with acks={acks_label(acks)}: {span}"

    def _op_crash(self, op):
        broker, why = self._broker_for(op, ("running", "starting", "shutting_down", "paused"))
        if broker is None:
            return why
        mode = op.get("mode", "process")
        self.emit("broker_stopped", broker=broker.node_id, state="crashed", mode=mode,
                  reason=("process crash: logs and checkpoints on disk survive (page cache intact); "
                          "the ZooKeeper session lives until it expires" if mode == "process" else
                          "power failure: whatever was not written back to disk is lost; checkpoint "
                          "files keep what they last wrote"))
        broker.crash(mode)
        return None

    def _op_restart(self, op):
        broker = self.brokers[op["broker"]]
        if broker.state not in ("stopped", "halted", "registration_failed"):
            return f"ignored: broker {broker.node_id} is {broker.state}"
        broker.start()
        return None

    def _op_shutdown(self, op):
        broker, why = self._broker_for(op, ("running",))
        if broker is None:
            return why
        broker.shutdown()
        return None

    def _op_pause(self, op):
        broker, why = self._broker_for(op, ("running", "starting", "shutting_down"))
        if broker is None:
            return why
        broker.pause()
        if op.get("for_ms"):
            self.scheduler.schedule(op["for_ms"], self._resume_broker, broker.node_id)
        return None

    def _resume_broker(self, broker_id):
        broker = self.brokers[broker_id]
        if broker.paused:
            self.emit("fault", op="resume", broker=broker_id, reason=f"pause of broker {broker_id} ends")
            broker.resume()

    def _op_resume(self, op):
        broker = self.brokers[op["broker"]]
        if not broker.paused:
            return f"ignored: broker {broker.node_id} is not paused"
        broker.resume()
        return None

    def _op_flush(self, op):
        broker = self.brokers[op["broker"]]
        broker.flush()
        return None

    def _op_isolate(self, op):
        target = op.get("from", "all")
        me = op["broker"]
        if target == "all":
            others = [n for n in self.network.nodes if n != me]
        elif target == "zk":
            others = ["zk"]
        elif target == "brokers":
            others = [b for b in self.broker_ids if b != me]
        elif target == "clients":
            others = list(self.clients)
        else:
            others = list(target)
        self.network.isolate(me, others)
        return None

    def _op_cut(self, op):
        self.network.cut(op["from"], op["to"])

    def _op_partition(self, op):
        self.network.partition(op["groups"])

    def _op_heal(self, op):
        self.network.heal(op.get("from"), op.get("to"))

    def _op_slow(self, op):
        self.network.slow(op["from"], op["to"], op["latency_ms"])

    def _op_expire_session(self, op):
        session = self.zk_server.session_of(op["broker"])
        if session is None:
            return f"ignored: broker {op['broker']} has no live ZooKeeper session"
        self.zk_server.expire(session.session_id, "expired on request (expire_session)")
        return None

    def _op_elect_preferred(self, op):
        if op.get("topic") is None:
            keys = list(self._key_parts)
        elif op.get("partition") is None:
            keys = [self.key(op["topic"], p) for p in range(self.topics[op["topic"]]["partitions"])]
        else:
            keys = [self.key(op["topic"], op["partition"])]
        parts = [{"topic": self._key_parts[k][0], "partition": self._key_parts[k][1]} for k in keys]
        tree = self.zk_server.tree
        if "/admin/preferred_replica_election" in tree.nodes:
            return "ignored: a preferred replica election is already in progress"
        tree.create("/admin/preferred_replica_election", {"version": 1, "partitions": parts},
                    makepath=True)
        return f"wrote /admin/preferred_replica_election for {len(parts)} partition(s)"

    def _op_consume(self, op):
        name = op["consumer"]
        client = self.clients.get(name)
        if client is not None:
            if client.running:
                return f"ignored: consumer {name} is already running"
            client.start()
            return None
        spec = {"name": name, "type": "consumer", "topic": op["topic"], "partition": op.get("partition"),
                "from": op.get("from"), "start_ms": self.now_ms}
        overrides = {k: op[k] for k in ("isolation.level",) if k in op}
        client = Consumer(self, name, spec, self._client_config("consumer", overrides))
        self.clients[name] = client
        self.network.add_node(name, client)
        client.start()
        return None

    def _op_stop_client(self, op):
        client = self.clients.get(op["client"])
        if client is None:
            return f"ignored: no client {op['client']}"
        client.stop()
        return None

    def _op_create_topic(self, op):
        topic = {k: op[k] for k in ("name", "partitions", "replication_factor", "assignment", "config")}
        self._register_topic(topic)
        self._create_topic_znodes(topic)

    def _op_set_config(self, op):
        self.topic_configs[op["topic"]][op["key"]] = op["value"]
        tree = self.zk_server.tree
        path = f"/config/topics/{op['topic']}"
        data = {"version": 1, "config": dict(self.topic_configs[op["topic"]])}
        if path in tree.nodes:
            tree.set(path, data)
        else:
            tree.create(path, data, makepath=True)
        if op["key"] == "unclean.leader.election.enable" and op["value"]:
            for broker in self.brokers.values():
                if broker.running and broker.controller.active:
                    broker.controller._enqueue("unclean_enabled", op["topic"])
        return None

    # -- running ------------------------------------------------------------------------------------------
    def run(self):
        self.advance_to(self.scenario["duration_ms"])
        return self.result()

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
        return state

    def snapshot(self):
        """The complete state as bytes; ``Simulation.restore`` continues exactly from here.
        Pickle: trusted input only (snapshots are made and read by this program)."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(blob, trace=None):
        sim = pickle.loads(blob)
        sim.trace = trace
        return sim

    def result(self):
        from .result import build_result
        return build_result(self)


OPS_LIVE = ("produce", "crash", "restart", "shutdown", "pause", "resume", "flush", "isolate", "cut",
            "partition", "heal", "slow", "expire_session", "elect_preferred", "consume", "stop_client",
            "create_topic", "set_config")


def describe_op(op):
    name = op["op"]
    if "broker" in op:
        extra = f" ({op['mode']})" if name == "crash" else ""
        return f"{name} broker {op['broker']}{extra}"
    if name in ("cut", "slow"):
        return f"{name} {op['from']} -> {op['to']}"
    if name == "partition":
        return "partition into " + " | ".join(str(g) for g in op["groups"])
    if name == "heal":
        return f"heal {op['from']} <-> {op['to']}" if "from" in op else "heal every link"
    return name
