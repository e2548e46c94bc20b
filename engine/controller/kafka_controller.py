"""Controller duties of the broker that holds ``/controller`` (ZooKeeper eras, §9).

Every broker runs the elector (``elect``); the winner loads the cluster from ZooKeeper and from
then on processes one event at a time (the 1.1+ controller event thread): broker changes, topic
creation, ``/isr_change_notification``, controlled shutdown, preferred elections. An event is a
list of *phases*; a phase that waits for ZooKeeper resumes in its callback and calls
``_continue`` when done. Everything is plain data and bound methods, so a controller in the middle
of an event can be snapshotted.

Every partition-state write re-reads the state znode first and writes conditionally on its
zkVersion (and, from 2.1, on the ``/controller_epoch`` zkVersion: KAFKA-6082). Every decision
bumps the leader epoch (§9.6) and is sent as LeaderAndIsr to the live replicas and as
UpdateMetadata to every live broker, over a per-broker channel that retries until delivered.

This module keeps the election through /controller, the event queue and failover; the rest of
``Controller`` comes from mixins along Kafka's own seams: ``controller_events`` (the event
handlers), ``partition_state_machine`` (state writes and elections) and ``channel_manager``
(control requests). The class stays defined here: snapshots pickle it by this module path.
"""
from engine.controller.alter_isr import AlterIsrController
from engine.controller.channel_manager import CHANNEL_RETRY_BACKOFF_MS, ControllerChannelManager  # noqa: F401
from engine.controller.controller_events import ControllerEvents
from engine.controller.partition_state_machine import PartitionStateMachine

AUTO_REBALANCE_FIRST_DELAY_MS = 5000


class Controller(ControllerChannelManager, ControllerEvents, PartitionStateMachine, AlterIsrController):
    #: LeaderElectionRateAndTimeMs (docs/model.md §22.4): when the BrokerChange event being
    #: processed started, and (end ms, duration ms) of each one processed by this process.
    #: Kafka's metric state, read only by engine/metrics; class defaults for older snapshots.
    broker_change_started_ms = None
    broker_change_times = ()
    #: (name, argument) of the event being processed (class default for older snapshots)
    current_event = None

    def __init__(self, broker):
        self.broker = broker
        self.sim = broker.sim
        self.era = broker.era
        self.active = False
        self.epoch = 0
        self.epoch_zk_version = -1
        self._reset()

    def _reset(self):
        self.live = {}            # broker id -> broker epoch (czxid of /brokers/ids/<id>)
        self.shutting_down = {}   # broker id -> None
        self.assignments = {}     # key -> AR
        self.topics = {}          # topic -> partition count
        self.states = {}          # key -> cached LeaderIsrAndControllerEpoch (+ zk_version)
        self.offline = {}         # key -> None: partitions left without a leader
        self.queue = []           # pending events: (name, arg)
        self.phases = []          # the current event's remaining phases: (method, arg)
        self.busy = False
        self.channels = {}        # broker id -> {"queue": [...], "in_flight": bool}

    @property
    def zk(self):
        return self.broker.zk

    @property
    def node_id(self):
        return self.broker.node_id

    # -- election through /controller (§9.1) -------------------------------------------------------
    def elect(self):
        if self.broker.running:
            self.zk.call("exists", {"path": "/controller", "watch": True}, self._on_controller_znode)

    def _on_controller_znode(self, _ctx, result, error):
        if error:
            return
        if result["stat"] is not None:
            owner = result["data"]["brokerid"]
            self.broker.controller_id = owner
            if owner != self.node_id and self.active:
                self.resign(f"/controller now belongs to broker {owner}")
            return
        if self.era.controller_writes_fenced:
            self.zk.call("get", {"path": "/controller_epoch"}, self._on_epoch_for_multi)
        else:
            self.zk.call("create", {"path": "/controller", "value": self._controller_json(),
                                    "ephemeral": True}, self._on_controller_created)

    def _controller_json(self):
        return {"version": 1, "brokerid": self.node_id, "timestamp": str(self.sim.now_ms)}

    def _on_epoch_for_multi(self, _ctx, result, error):
        """2.x: one multi-op creates /controller and bumps /controller_epoch (§9.1)."""
        if error == "NONODE":
            self.zk.call("create", {"path": "/controller_epoch", "value": 0}, self._retry_elect)
            return
        if error:
            return
        epoch, version = result["data"], result["stat"]["version"]
        self.zk.call("multi", {"ops": [["create", "/controller", self._controller_json(), True],
                                       ["set", "/controller_epoch", epoch + 1, version]]},
                     self._on_controller_multi, epoch + 1)

    def _retry_elect(self, _ctx, _result, _error):
        self.elect()

    def _on_controller_multi(self, epoch, result, error):
        if error:
            self.elect()  # someone else won: read who, and watch /controller again
            return
        self._become_controller(epoch, result["results"][1]["version"])

    def _on_controller_created(self, _ctx, result, error):
        """<= 2.0: the ephemeral node first, then a conditional /controller_epoch increment."""
        if error:
            self.elect()
            return
        self.zk.call("get", {"path": "/controller_epoch"}, self._on_epoch_for_increment)

    def _on_epoch_for_increment(self, _ctx, result, error):
        if error == "NONODE":
            self.zk.call("create", {"path": "/controller_epoch", "value": 0},
                         self._on_epoch_created)
            return
        if error:
            return
        epoch, version = result["data"], result["stat"]["version"]
        self.zk.call("set", {"path": "/controller_epoch", "value": epoch + 1, "version": version},
                     self._on_epoch_incremented, epoch + 1)

    def _on_epoch_created(self, _ctx, _result, _error):
        self.zk.call("get", {"path": "/controller_epoch"}, self._on_epoch_for_increment)

    def _on_epoch_incremented(self, epoch, result, error):
        if error:
            self.resign("ControllerMovedException while incrementing /controller_epoch")
            return
        self._become_controller(epoch, result["stat"]["version"])

    def _become_controller(self, epoch, epoch_version):
        self._reset()
        self.active = True
        self.epoch = epoch
        self.epoch_zk_version = epoch_version
        self.broker.controller_id = self.node_id
        self.broker.known_controller_epoch = max(self.broker.known_controller_epoch, epoch)
        self.sim.emit("controller_elected", broker=self.node_id, epoch=epoch,
                      reason=f"broker {self.node_id} created the ephemeral /controller and raised "
                             f"/controller_epoch to {epoch}")
        self._enqueue("failover", None)

    def resign(self, reason):
        if not self.active:
            return
        self.active = False
        self.broker_change_started_ms = None   # the event in progress is abandoned
        self.sim.emit("controller_resigned", broker=self.node_id, epoch=self.epoch, reason=reason)
        for name, env in self.queue:
            if name == "alter_isr":  # processAlterIsr when no longer active (docs/model.md §17.7)
                self.broker.reply(env, {"error": "NOT_CONTROLLER", "partitions": {}})
        epoch = self.epoch
        self._reset()
        self.epoch = epoch

    # -- ControllerMovedException (§9.1) -----------------------------------------------------------
    def controller_moved(self, what):
        """A ControllerMovedException ends the event being processed. ControlledShutdown catches it
        itself (``processControlledShutdown``: ``Try``) and the broker is answered NOT_CONTROLLER;
        every other event lands in ``ControllerEventManager``'s handler, ``maybeResign``
        (KafkaController @ 2.2.0 - 3.9.0): watch ``/controller`` again, read who holds it, and
        resign only if that is no longer this broker — someone else, or nobody."""
        self.phases = []
        name, arg = self.current_event or (None, None)
        if name == "controlled_shutdown":
            self.broker.reply(arg, {"error": "NOT_CONTROLLER", "partitions_remaining": []})
            return self._continue()
        self.zk.call("exists", {"path": "/controller", "watch": True}, self._maybe_resign_read, what)

    def _maybe_resign_read(self, what, _result, error):
        if error:
            return self.resign(f"ControllerMovedException: {what}; ZooKeeper error {error}")
        self.zk.call("get", {"path": "/controller"}, self._maybe_resign, what)

    def _maybe_resign(self, what, result, error):
        if error and error != "NONODE":
            return self.resign(f"ControllerMovedException: {what}; ZooKeeper error {error}")
        owner = -1 if error else result["data"]["brokerid"]
        self.broker.controller_id = owner
        if owner != self.node_id:
            holder = f"broker {owner}" if owner >= 0 else "nobody"
            return self.resign(f"ControllerMovedException: {what}, and /controller names {holder}")
        self._continue()   # still this broker's: only the event is abandoned

    def on_watch(self, event_type, path):
        """ZooKeeper watch events arrive at the broker; the controller reacts when active."""
        if path == "/controller":
            self.elect()
            return
        if not self.active:
            return
        if path == "/brokers/ids":
            self._enqueue("broker_change", None)
        elif path == "/brokers/topics":
            self._enqueue("topic_change", None)
        elif path == "/isr_change_notification":
            self._enqueue("isr_change", None)
        elif path == "/admin/preferred_replica_election" and event_type in ("CREATED", "CHANGED"):
            self._enqueue("preferred_election_znode", None)
        elif path == "/admin/preferred_replica_election":
            self.zk.call("exists", {"path": path, "watch": True}, self._ignore)

    def _ignore(self, *_args):
        return None

    # -- the event queue -------------------------------------------------------------------------
    def _enqueue(self, name, arg):
        self.queue.append((name, arg))
        if not self.busy:
            self._next_event()

    def _next_event(self):
        while self.queue and not self.busy and self.active:
            name, arg = self.queue.pop(0)
            self.busy = True
            self.current_event = (name, arg)
            self.broker_change_started_ms = self.sim.now_ms if name == "broker_change" else None
            self.phases = [(getattr(self, "_event_" + name), arg)]
            self._continue()

    def _continue(self, *_ignored):
        """Run the next phase of the current event (or finish it)."""
        if not self.active:
            return
        if self.phases:
            method, arg = self.phases.pop(0)
            method(arg)
            return
        self.busy = False
        if self.broker_change_started_ms is not None:
            self._time_broker_change()
        self._next_event()

    def _time_broker_change(self):
        """ControllerEventManager times each event by its ControllerState; BrokerChange's timer
        keeps the old name LeaderElectionRateAndTimeMs (ControllerState @ 1.1.1 - 3.9)."""
        now = self.sim.now_ms
        if not self.broker_change_times:
            self.broker_change_times = []
        self.broker_change_times.append((now, now - self.broker_change_started_ms))
        self.broker_change_started_ms = None

    def _then(self, *phases):
        """Run these phases before the rest of the current event."""
        self.phases[0:0] = list(phases)

    # -- failover (onControllerFailover, §9.1) -------------------------------------------------------
    def _event_failover(self, _arg):
        self.zk.call("pipeline", [["get_children", {"path": "/brokers/ids", "watch": True}],
                                  ["get_children", {"path": "/brokers/topics", "watch": True}],
                                  ["get_children", {"path": "/isr_change_notification", "watch": True}],
                                  ["exists", {"path": "/admin/preferred_replica_election", "watch": True}]],
                     self._failover_listed)

    def _failover_listed(self, _ctx, result, error):
        if error:
            return self.resign(f"ZooKeeper error {error} during failover")
        ids = [int(i) for i in (result[0][0] or {}).get("children", [])]
        topics = (result[1][0] or {}).get("children", []) if not result[1][1] else []
        notes = (result[2][0] or {}).get("children", []) if not result[2][1] else []
        reqs = [["get", {"path": f"/brokers/ids/{i}"}] for i in ids]
        reqs += [["get", {"path": f"/brokers/topics/{t}"}] for t in topics]
        # Stale ISR-change notifications are deleted before the state is loaded.
        reqs += [["delete", {"path": f"/isr_change_notification/{n}"}] for n in notes]
        self.zk.call("pipeline", reqs, self._failover_loaded, (ids, topics))

    def _failover_loaded(self, ctx, result, error):
        if error:
            return self.resign(f"ZooKeeper error {error} during failover")
        ids, topics = ctx
        for i, (res, err) in zip(ids, result):
            if not err:
                self.live[i] = res["stat"]["czxid"]
        for t, (res, err) in zip(topics, result[len(ids):]):
            if not err:
                self._add_topic(t, res["data"])
        keys = list(self.assignments)
        self.zk.call("pipeline", [["get", {"path": self.sim.state_path(k)}] for k in keys],
                     self._failover_states, keys)

    def _add_topic(self, topic, data):
        parts = data["partitions"]
        self.topics[topic] = len(parts)
        for p in sorted(parts, key=int):
            self.assignments[self.sim.key(topic, int(p))] = list(parts[p])

    def _failover_states(self, keys, result, error):
        if error:
            return self.resign(f"ZooKeeper error {error} during failover")
        new = []
        for key, (res, err) in zip(keys, result):
            if err:
                new.append(key)
            else:
                self.states[key] = self._state_from(res)
        live = list(self.live)
        self._send_update_metadata(live, list(self.states), include_brokers=True)
        self._send_leader_and_isr(list(self.states), only_to=None)
        dead_in_isr = sorted({r for ar in self.assignments.values() for r in ar if r not in self.live})
        self._then(*[(self._phase_remove_replica, b) for b in dead_in_isr],
                   (self._phase_elect_offline, None), (self._phase_new_partitions, new))
        self.broker.set_timer(AUTO_REBALANCE_FIRST_DELAY_MS, self._auto_rebalance_tick, self.epoch)
        self._continue()

    @staticmethod
    def _state_from(res):
        data = res["data"]
        state = {"leader": data["leader"], "leader_epoch": data["leader_epoch"], "isr": list(data["isr"]),
                 "controller_epoch": data["controller_epoch"], "zk_version": res["stat"]["version"]}
        if data.get("leader_recovery_state"):  # KIP-704, 3.3+ only (docs/model.md §17.6)
            state["leader_recovery_state"] = data["leader_recovery_state"]
        return state

    def view(self):
        return {"active": self.active, "epoch": self.epoch,
                "live_brokers": sorted(self.live), "shutting_down": sorted(self.shutting_down),
                "offline_partitions": sorted(self.offline), "queue": [n for n, _ in self.queue]}
