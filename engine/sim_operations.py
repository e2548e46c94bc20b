"""Timeline operations applied to the running cluster (docs/scenario-format.md §2): crashes, restarts,
pauses, network faults, produce and consume commands, topic creation and config changes. Scripted
operations and live commands (``Simulation.apply``) both run here, one millisecond after they are
scheduled for live ones, so a recorded session replays byte for byte.
"""
from engine.clients.producer_consumer import Consumer, acks_label, acks_value
from engine.scenario.racks import rack_members
from engine.scenario.zones import RACK_OPS, rack_targets


class TimelineOperations:
    """Mixin of ``Simulation``: one ``_op_<name>`` per operation, run by ``_run_op``."""

    # -- timeline operations ---------------------------------------------------------------------------
    def _run_op(self, op):
        fields = {k: v for k, v in op.items() if k not in ("at_ms", "by")}   # "by": who, not what
        if "controller" in op:  # KRaft eras: a controller of the quorum (docs/model.md §20.8)
            from engine.kraft.kraft_operations import controller_op
            note = controller_op(self, op)
        elif "rack" in op and op["op"] in RACK_OPS:   # a zone fault (docs/model.md §21.5)
            note, nodes = self._rack_op(op)
            fields.update(nodes)
        else:
            note = getattr(self, "_op_" + op["op"])(op)
        self.emit("fault", **fields, reason=note or describe_op(op))

    def _rack_op(self, op):
        """The operation on every node of the rack, in id order, at this same instant; a node it
        does not apply to says so in the reason, as a single operation's would. Returns the
        reason and the nodes ({"brokers": [...], "controllers": [...]}) for the fault entry."""
        from engine.kraft.kraft_operations import controller_op
        targets = rack_targets(self.scenario, op["op"], op["rack"])
        if op["op"] == "isolate":
            self._isolate_rack(op, [node for node, _ in targets])
            notes = []
        else:
            notes = []
            for node, kind in targets:
                sub = {k: v for k, v in op.items() if k != "rack"}
                sub[kind] = node
                note = controller_op(self, sub) if kind == "controller" else getattr(self, "_op_" + op["op"])(sub)
                if note:
                    notes.append(note)
        nodes = {"brokers": [n for n, kind in targets if kind == "broker"]}
        controllers = [n for n, kind in targets if kind == "controller"]
        if controllers:
            nodes["controllers"] = controllers
        reason = describe_op(op) + ": " + _members_text(nodes) + "".join(f"; {n}" for n in notes)
        return reason, nodes

    def _isolate_rack(self, op, members):
        """A zone cut off: every node of the rack loses its links to the nodes ``from`` names
        outside the rack ("all", "brokers", "controllers" count only those); the links inside
        the rack stay."""
        target = op.get("from", "all")
        inside = set(members)
        if target == "all":
            others = [n for n in self.network.nodes if n not in inside]
        elif target == "zk":
            others = ["zk"]
        elif target == "brokers":
            others = [b for b in self.broker_ids if b not in inside]
        elif target == "clients":
            others = list(self.clients)
        elif target == "controllers":
            others = [v for v in self.quorum.voter_ids if v not in inside]
        else:
            others = self.nodes_of(target)
        for node in members:
            self.network.isolate(node, [n for n in others if n != node])

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
                          + ("the controller fences it once its heartbeats have stopped for "
                             "broker.session.timeout.ms" if self.era.kraft
                             else "the ZooKeeper session lives until it expires")
                          if mode == "process" else
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
            others = self.nodes_of(target)
        self.network.isolate(me, others)
        return None

    def nodes_of(self, target):
        """Network nodes named by ``target``: ``"controllers"`` is every voter (KRaft eras)."""
        names = target if isinstance(target, list) else [target]
        out = []
        for name in names:
            if isinstance(name, dict):   # {"rack": name}: every node of the rack (§21.5)
                out.extend(rack_members(self.scenario, name["rack"], "rack"))
            else:
                out.extend(self.quorum.voter_ids if name == "controllers" and self.quorum else [name])
        return out

    def _op_cut(self, op):
        for a in self.nodes_of(op["from"]):
            for b in self.nodes_of(op["to"]):
                self.network.cut(a, b)

    def _op_partition(self, op):
        self.network.partition([self.nodes_of(g) for g in op["groups"]])

    def _op_heal(self, op):
        if "rack" in op:   # every link of the rack's nodes, and no other (§21.5)
            self.network.heal_nodes(rack_members(self.scenario, op["rack"], "rack"))
            return None
        if op.get("from") is None:
            self.network.heal()
            return
        for a in self.nodes_of(op["from"]):
            for b in self.nodes_of(op["to"]):
                self.network.heal(a, b)

    def _op_slow(self, op):
        for a in self.nodes_of(op["from"]):
            for b in self.nodes_of(op["to"]):
                self.network.slow(a, b, op["latency_ms"])

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
        if self.quorum is None:
            self._create_topic_znodes(topic)
            return None
        controller = self.quorum.active_controller()
        if controller is None:
            self.pending_topics.append(topic)
            return "no active controller: the topic is created once there is one"
        controller.create_topic(topic)
        return None

    def _op_set_config(self, op):
        self.topic_configs[op["topic"]][op["key"]] = op["value"]
        self.log_configs.clear()   # the topic's LogConfig is rebuilt on next use
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


def describe_op(op):
    name = op["op"]
    if "broker" in op or ("rack" in op and name != "heal"):
        extra = f" ({op.get('mode', 'process')})" if name == "crash" else ""
        target = f"broker {op['broker']}" if "broker" in op else f"rack {op['rack']}"
        return f"{name} {target}{extra}"
    if name in ("cut", "slow"):
        return f"{name} {_label(op['from'])} -> {_label(op['to'])}"
    if name == "partition":
        return "partition into " + " | ".join(_label(g) for g in op["groups"])
    if name == "heal":
        if "rack" in op:
            return f"heal every link of rack {op['rack']}"
        return f"heal {_label(op['from'])} <-> {_label(op['to'])}" if "from" in op else "heal every link"
    return name


def _label(node):
    """A node, or a list of nodes, as the story prints it; {"rack": "az-b"} as "rack az-b"."""
    if isinstance(node, dict):
        return f"rack {node['rack']}"
    if isinstance(node, list) and any(isinstance(n, dict) for n in node):
        return "[" + ", ".join(_label(n) if isinstance(n, dict) else repr(n) for n in node) + "]"
    return str(node)


def _members_text(nodes):
    parts = [_plural(kind[:-1], ids) for kind, ids in nodes.items() if ids]
    return ", ".join(parts) or "no broker"


def _plural(kind, ids):
    return f"{kind}{'s' if len(ids) > 1 else ''} " + ", ".join(map(str, ids))
