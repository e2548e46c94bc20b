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
"""
from .election import (controlled_shutdown_election, imbalanced_partitions, offline_election,
                       preferred_election, remove_replica_from_isr)
from .messages import LEADER_AND_ISR, UPDATE_METADATA, STOP_REPLICA
from .partition import partition_state_json

CHANNEL_RETRY_BACKOFF_MS = 100
AUTO_REBALANCE_FIRST_DELAY_MS = 5000


class Controller:
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
        self.sim.emit("controller_resigned", broker=self.node_id, epoch=self.epoch, reason=reason)
        epoch = self.epoch
        self._reset()
        self.epoch = epoch

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
        self._next_event()

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
        return {"leader": data["leader"], "leader_epoch": data["leader_epoch"], "isr": list(data["isr"]),
                "controller_epoch": data["controller_epoch"], "zk_version": res["stat"]["version"]}

    # -- broker changes (§9.2-9.4) -----------------------------------------------------------------
    def _event_broker_change(self, _arg):
        self.zk.call("get_children", {"path": "/brokers/ids", "watch": True}, self._broker_ids_listed)

    def _broker_ids_listed(self, _ctx, result, error):
        if error:
            return self._continue()
        ids = sorted(int(i) for i in result["children"])
        if self.era.broker_epoch:
            self.zk.call("pipeline", [["get", {"path": f"/brokers/ids/{i}"}] for i in ids],
                         self._broker_epochs_read, ids)
        else:
            self._broker_change(ids, {i: self.live.get(i, -1) for i in ids})

    def _broker_epochs_read(self, ids, result, error):
        if error:
            return self._continue()
        epochs = {i: res["stat"]["czxid"] for i, (res, err) in zip(ids, result) if not err}
        self._broker_change([i for i in ids if i in epochs], epochs)

    def _broker_change(self, ids, epochs):
        new = [i for i in ids if i not in self.live]
        dead = [i for i in self.live if i not in ids]
        bounced = [i for i in ids if i in self.live and self.era.broker_epoch
                   and epochs[i] != self.live[i]] if self.era.broker_epoch else []
        if not (new or dead or bounced):
            return self._continue()
        self.sim.emit("broker_change", broker=self.node_id, new=new, dead=dead, bounced=bounced,
                      reason=f"controller {self.node_id} re-read /brokers/ids: {ids}")
        failed = sorted(dead + bounced)
        started = sorted(new + bounced)
        phases = []
        if failed:
            phases.append((self._phase_broker_failure, failed))
        if started:
            phases.append((self._phase_broker_startup, (started, {i: epochs[i] for i in started})))
        self._then(*phases)
        self._continue()

    def _phase_broker_failure(self, dead):
        """onBrokerFailure (§9.3): elect new leaders first, then drop the dead from the ISRs."""
        for b in dead:
            self.live.pop(b, None)
            self.shutting_down.pop(b, None)
            self.channels.pop(b, None)
        led = [k for k, st in self.states.items() if st["leader"] in dead]
        self._then((self._phase_elect_offline, led),
                   *[(self._phase_remove_replica, b) for b in dead],
                   (self._phase_update_metadata_if_quiet, bool(led)))
        self._continue()

    def _phase_update_metadata_if_quiet(self, any_leader_lost):
        if not any_leader_lost:
            self._send_update_metadata(list(self.live), [], include_brokers=True)
        self._continue()

    def _phase_broker_startup(self, arg):
        """onBrokerStartup (§9.4): metadata first, then LeaderAndIsr for its replicas (the
        broker becomes follower and truncates), then retry offline partitions."""
        started, epochs = arg
        existing = [b for b in self.live if b not in started]
        self.live.update(epochs)
        self._send_update_metadata(existing, [], include_brokers=True)
        self._send_update_metadata(started, list(self.states), include_brokers=True)
        hosted = [k for k, ar in self.assignments.items() if any(b in ar for b in started)
                  and k in self.states]
        self._send_leader_and_isr(hosted, only_to=started)
        self._then((self._phase_elect_offline, None))
        self._continue()

    # -- partition state writes --------------------------------------------------------------------
    def _update_partitions(self, keys, decide, extra):
        """Read the state znodes fresh, decide, write conditionally, retry BADVERSION.
        ``decide(key, state, extra)`` returns (leader, isr, kind, reason) or None."""
        if not keys:
            return self._continue()
        op = {"keys": list(keys), "decide": decide, "extra": extra, "changed": [], "attempt": 0}
        self._read_for_update(op)

    def _read_for_update(self, op):
        self.zk.call("pipeline", [["get", {"path": self.sim.state_path(k)}] for k in op["keys"]],
                     self._on_read_for_update, op)

    def _on_read_for_update(self, op, result, error):
        if error:
            return self._continue()
        plans = []
        for key, (res, err) in zip(op["keys"], result):
            if err:
                continue
            state = self._state_from(res)
            if state["controller_epoch"] > self.epoch:
                return self.resign(f"{self.sim.state_path(key)} was written by controller epoch "
                                   f"{state['controller_epoch']} > ours {self.epoch}")
            self.states[key] = state
            decision = op["decide"](key, state, op["extra"])
            if decision is not None:
                plans.append((key, state, decision))
        if not plans:
            return self._finish_update(op)
        writes = []
        for key, state, (leader, isr, _kind, _reason) in plans:
            data = partition_state_json(leader, state["leader_epoch"] + 1, isr, self.epoch)
            path = self.sim.state_path(key)
            if self.era.controller_writes_fenced:
                writes.append(["multi", {"ops": [["check", "/controller_epoch", self.epoch_zk_version],
                                                 ["set", path, data, state["zk_version"]]]}])
            else:
                writes.append(["set", {"path": path, "value": data, "version": state["zk_version"]}])
        self.zk.call("pipeline", writes, self._on_written, (op, plans))

    def _on_written(self, ctx, result, error):
        op, plans = ctx
        if error:
            return self._continue()
        retry = []
        for (key, state, decision), (res, err) in zip(plans, result):
            if err is None:
                version = res["results"][1]["version"] if "results" in res else res["stat"]["version"]
                self._record_decision(key, state, decision, version)
                op["changed"].append(key)
            elif err == "BADVERSION" and res.get("failed_op") == 0 and self.era.controller_writes_fenced:
                return self.resign("ControllerMovedException: /controller_epoch zkVersion changed "
                                   "(another controller was elected)")
            elif err == "BADVERSION":
                retry.append(key)
        if retry and op["attempt"] < 5:
            op["attempt"] += 1
            op["keys"] = retry
            return self._read_for_update(op)
        self._finish_update(op)

    def _finish_update(self, op):
        changed = op["changed"]
        if changed:
            self._send_leader_and_isr(changed, only_to=None)
        self._continue()

    def _record_decision(self, key, old, decision, version):
        leader, isr, kind, reason = decision
        epoch = old["leader_epoch"] + 1
        self.states[key] = {"leader": leader, "leader_epoch": epoch, "isr": list(isr),
                            "controller_epoch": self.epoch, "zk_version": version}
        topic, part = self.sim.split_key(key)
        common = {"topic": topic, "partition": part, "leader_epoch": epoch, "zk_version": version}
        if kind == "remove_replica":
            self.sim.emit("isr_shrink", broker=self.node_id, by="controller", isr_before=old["isr"],
                          isr=list(isr), leader=leader, reason=reason, **common)
            if leader == -1 and old["leader"] != -1:
                self.offline[key] = None
                if not isr:
                    kept = "the ISR is emptied (<= 1.0 with unclean election enabled)"
                elif isr == old["isr"]:
                    kept = f"the ISR keeps its last member {list(isr)}"
                else:
                    kept = f"ISR {list(isr)}; a leader is elected only by the next election"
                self.sim.emit("partition_offline", broker=self.node_id, leader=-1, isr=list(isr),
                              reason=f"leader {old['leader']} was removed with its broker: "
                                     f"leader -1, {kept}", **common)
            return
        self.offline.pop(key, None)
        self.sim.emit("leader_elected", broker=self.node_id, leader=leader, kind=kind,
                      previous_leader=old["leader"], isr_before=old["isr"], isr=list(isr),
                      reason=reason, **common)

    # -- decisions -------------------------------------------------------------------------------------
    def _electable(self):
        return {b for b in self.live if b not in self.shutting_down}

    def _decide_offline(self, key, st, _extra):
        live = self._electable()
        if st["leader"] in live:
            return None
        ar = self.assignments[key]
        unclean = self.sim.topic_config(self.sim.split_key(key)[0], "unclean.leader.election.enable")
        result = offline_election(ar, st["isr"], live, unclean)
        if result is None:
            if key not in self.offline:
                self.offline[key] = None
                topic, part = self.sim.split_key(key)
                self.sim.emit("partition_offline", broker=self.node_id, topic=topic, partition=part,
                              leader=st["leader"], isr=st["isr"],
                              reason=f"no replica of AR {ar} is both alive and in ISR {st['isr']}, and "
                                     f"unclean.leader.election.enable={str(unclean).lower()}")
            return None
        leader, isr, kind = result
        if kind == "clean":
            reason = (f"leader {st['leader']} is not alive: {leader} is the first replica in AR order "
                      f"{ar} that is alive and in ISR {st['isr']}")
        else:
            reason = (f"no live replica in ISR {st['isr']}; unclean.leader.election.enable=true: "
                      f"{leader} is the first live replica in AR {ar}; ISR = [{leader}] and whatever "
                      f"it never fetched is gone")
        return leader, isr, kind, reason

    def _decide_remove_replica(self, key, st, replica):
        ar = self.assignments[key]
        unclean = self.sim.topic_config(self.sim.split_key(key)[0], "unclean.leader.election.enable")
        result = remove_replica_from_isr(st["leader"], st["isr"], replica,
                                         self.era.controller_keeps_last_isr_member, unclean)
        if result is None or replica not in ar:
            return None
        leader, isr = result
        why = ("is shutting down" if replica in self.shutting_down else "is dead")
        kept = " (the last ISR member is kept)" if isr == st["isr"] else ""
        return leader, isr, "remove_replica", (f"controller removes broker {replica} from the ISR: "
                                               f"it {why}{kept}; leader epoch +1")

    def _decide_controlled_shutdown(self, key, st, broker):
        if st["leader"] != broker:
            return None
        result = controlled_shutdown_election(self.assignments[key], st["isr"], set(self.live),
                                              self.shutting_down)
        if result is None:
            return None
        leader, isr, kind = result
        return leader, isr, kind, (f"broker {broker} is shutting down: {leader} is the first replica "
                                   f"in AR {self.assignments[key]} alive, in ISR {st['isr']} and not "
                                   f"shutting down")

    def _decide_preferred(self, key, st, _extra):
        ar = self.assignments[key]
        result = preferred_election(ar, st["isr"], self._electable(), st["leader"])
        if result is None:
            return None
        leader, isr, kind = result
        return leader, isr, kind, (f"preferred replica {ar[0]} (first in AR {ar}) is alive and in ISR "
                                   f"{st['isr']}: move leadership back from {st['leader']}")

    # -- phases that write -------------------------------------------------------------------------------
    def _phase_elect_offline(self, keys):
        """triggerOnlinePartitionStateChange: elect every partition whose leader is not alive."""
        if keys is None:
            electable = self._electable()
            keys = [k for k, st in self.states.items() if st["leader"] not in electable]
        self._update_partitions(keys, self._decide_offline, None)

    def _phase_remove_replica(self, replica):
        """OfflineReplica for every partition with a replica on the broker: the state is read
        fresh from ZooKeeper, since a leader may have added it back to the ISR meanwhile."""
        keys = [k for k, ar in self.assignments.items() if replica in ar and k in self.states]
        self._update_partitions(keys, self._decide_remove_replica, replica)

    def _phase_new_partitions(self, keys):
        """onNewPartitionCreation: leader = first live replica in AR, ISR = live replicas, epoch 0."""
        if not keys:
            return self._continue()
        live = self._electable()
        creates, plans = [], []
        for key in keys:
            ar = self.assignments[key]
            isr = [r for r in ar if r in live]
            if not isr:
                continue
            data = partition_state_json(isr[0], 0, isr, self.epoch)
            creates.append(["create", {"path": self.sim.state_path(key), "value": data, "makepath": True}])
            plans.append((key, data))
        if not creates:
            return self._continue()
        self.zk.call("pipeline", creates, self._on_partitions_created, plans)

    def _on_partitions_created(self, plans, result, error):
        if error:
            return self._continue()
        created = []
        for (key, data), (res, err) in zip(plans, result):
            if err:
                continue
            self.states[key] = {"leader": data["leader"], "leader_epoch": 0, "isr": list(data["isr"]),
                                "controller_epoch": self.epoch, "zk_version": 0}
            topic, part = self.sim.split_key(key)
            self.sim.emit("partition_created", broker=self.node_id, topic=topic, partition=part,
                          leader=data["leader"], leader_epoch=0, isr=list(data["isr"]),
                          replicas=self.assignments[key],
                          reason=f"new partition: leader = first live replica of AR "
                                 f"{self.assignments[key]}, ISR = live replicas, leader epoch 0")
            created.append(key)
        self._send_leader_and_isr(created, only_to=None)
        self._continue()

    # -- topic creation ------------------------------------------------------------------------------------
    def _event_topic_change(self, _arg):
        self.zk.call("get_children", {"path": "/brokers/topics", "watch": True}, self._topics_listed)

    def _topics_listed(self, _ctx, result, error):
        if error:
            return self._continue()
        new = [t for t in result["children"] if t not in self.topics]
        if not new:
            return self._continue()
        self.zk.call("pipeline", [["get", {"path": f"/brokers/topics/{t}"}] for t in new],
                     self._topics_read, new)

    def _topics_read(self, topics, result, error):
        if error:
            return self._continue()
        keys = []
        for t, (res, err) in zip(topics, result):
            if not err:
                before = set(self.assignments)
                self._add_topic(t, res["data"])
                keys += [k for k in self.assignments if k not in before]
        self._then((self._phase_new_partitions, keys))
        self._continue()

    def _event_unclean_enabled(self, topic):
        """unclean.leader.election.enable turned on for a topic: retry its offline partitions."""
        keys = [k for k in self.offline if self.sim.split_key(k)[0] == topic]
        self._update_partitions(keys, self._decide_offline, None)

    # -- ISR change notifications (§4.2 controller side) ------------------------------------------------
    def _event_isr_change(self, _arg):
        self.zk.call("get_children", {"path": "/isr_change_notification", "watch": True},
                     self._isr_notes_listed)

    def _isr_notes_listed(self, _ctx, result, error):
        if error or not result["children"]:
            return self._continue()
        notes = result["children"]
        self.zk.call("pipeline", [["get", {"path": f"/isr_change_notification/{n}"}] for n in notes],
                     self._isr_notes_read, notes)

    def _isr_notes_read(self, notes, result, error):
        if error:
            return self._continue()
        keys = {}
        for res, err in result:
            if not err:
                for p in res["data"]["partitions"]:
                    key = self.sim.key(p["topic"], p["partition"])
                    if key in self.assignments:
                        keys[key] = None
        keys = list(keys)
        self.zk.call("pipeline", [["get", {"path": self.sim.state_path(k)}] for k in keys],
                     self._isr_states_read, (notes, keys))

    def _isr_states_read(self, ctx, result, error):
        notes, keys = ctx
        if not error:
            for key, (res, err) in zip(keys, result):
                if not err:
                    self.states[key] = self._state_from(res)
            self._send_update_metadata(list(self.live), keys, include_brokers=False)
            self.sim.emit("isr_change_notification", broker=self.node_id, stage="processed",
                          notifications=notes, partitions=keys,
                          reason=f"controller {self.node_id} read {len(notes)} notification(s), "
                                 f"refreshed the ISR of {len(keys)} partition(s) from ZooKeeper and "
                                 f"sent UpdateMetadata to every live broker")
        self.zk.call("pipeline", [["delete", {"path": f"/isr_change_notification/{n}"}] for n in notes],
                     self._continue)

    # -- controlled shutdown (§9.8) ---------------------------------------------------------------------
    def on_controlled_shutdown(self, env):
        if not self.active:
            self.broker.reply(env, {"error": "NOT_CONTROLLER", "partitions_remaining": []})
            return
        self._enqueue("controlled_shutdown", env)

    def _event_controlled_shutdown(self, env):
        broker = env.body["broker"]
        if broker not in self.live:
            self.broker.reply(env, {"error": "BROKER_NOT_AVAILABLE", "partitions_remaining": []})
            return self._continue()
        self.shutting_down[broker] = None
        followed = [k for k, st in self.states.items()
                    if st["leader"] != broker and broker in self.assignments[k]]
        if followed:
            self._send_stop_replica(broker, followed)
        self._then((self._phase_controlled_shutdown_move, broker),
                   (self._phase_remove_replica_keys, (broker, followed)),
                   (self._phase_controlled_shutdown_reply, env))
        self._continue()

    def _phase_controlled_shutdown_move(self, broker):
        led = [k for k, st in self.states.items()
               if st["leader"] == broker and len(self.assignments[k]) > 1]
        self._update_partitions(led, self._decide_controlled_shutdown, broker)

    def _phase_remove_replica_keys(self, arg):
        broker, keys = arg
        self._update_partitions(keys, self._decide_remove_replica, broker)

    def _phase_controlled_shutdown_reply(self, env):
        broker = env.body["broker"]
        remaining = [k for k, st in self.states.items()
                     if st["leader"] == broker and len(self.assignments[k]) > 1]
        self.broker.reply(env, {"error": None, "partitions_remaining": remaining})
        self._continue()

    # -- preferred replica election (§9.7) --------------------------------------------------------------
    def _event_preferred_election_znode(self, _arg):
        self.zk.call("get", {"path": "/admin/preferred_replica_election", "watch": True},
                     self._preferred_znode_read)

    def _preferred_znode_read(self, _ctx, result, error):
        if error:
            return self._continue()
        keys = [self.sim.key(p["topic"], p["partition"]) for p in result["data"]["partitions"]]
        keys = [k for k in keys if k in self.states]
        self._then((self._phase_preferred, keys), (self._phase_delete_preferred_znode, None))
        self._continue()

    def _phase_preferred(self, keys):
        self._update_partitions(keys, self._decide_preferred, None)

    def _phase_delete_preferred_znode(self, _arg):
        self.zk.call("delete", {"path": "/admin/preferred_replica_election"}, self._rearm_preferred)

    def _rearm_preferred(self, *_args):
        self.zk.call("exists", {"path": "/admin/preferred_replica_election", "watch": True},
                     self._continue)

    def _auto_rebalance_tick(self, epoch):
        if not self.active or epoch != self.epoch:
            return
        if self.broker.config["auto.leader.rebalance.enable"]:
            self._enqueue("auto_rebalance", None)
        self.broker.set_timer(self.broker.config["leader.imbalance.check.interval.seconds"] * 1000,
                              self._auto_rebalance_tick, epoch)

    def _event_auto_rebalance(self, _arg):
        keys = imbalanced_partitions(self.assignments,
                                     {k: st["leader"] for k, st in self.states.items()},
                                     self._electable(),
                                     {k: st["isr"] for k, st in self.states.items()},
                                     self.broker.config["leader.imbalance.per.broker.percentage"])
        if keys:
            self.sim.emit("auto_rebalance", broker=self.node_id, partitions=keys,
                          reason=f"leader imbalance above leader.imbalance.per.broker.percentage "
                                 f"{self.broker.config['leader.imbalance.per.broker.percentage']}%")
        self._update_partitions(keys, self._decide_preferred, None)

    # -- requests to brokers -----------------------------------------------------------------------
    def _partition_state(self, key):
        st = self.states[key]
        topic, part = self.sim.split_key(key)
        return {"key": key, "topic": topic, "partition": part, "controller_epoch": st["controller_epoch"],
                "leader": st["leader"], "leader_epoch": st["leader_epoch"], "isr": list(st["isr"]),
                "zk_version": st["zk_version"], "replicas": list(self.assignments[key])}

    def _send_leader_and_isr(self, keys, only_to):
        """LeaderAndIsr to the live replicas of each partition, then UpdateMetadata to all."""
        per_broker = {}
        for key in keys:
            state = self._partition_state(key)
            for b in self.assignments[key]:
                if b in self.live and (only_to is None or b in only_to):
                    per_broker.setdefault(b, []).append(state)
        for b in sorted(per_broker):
            self._channel_send(b, LEADER_AND_ISR, {"controller_id": self.node_id,
                                                   "controller_epoch": self.epoch,
                                                   "broker_epoch": self.live[b],
                                                   "partitions": per_broker[b]})
        if keys:
            self._send_update_metadata(list(self.live), keys, include_brokers=True)

    def _send_update_metadata(self, brokers, keys, include_brokers):
        parts = [self._partition_state(k) for k in keys if k in self.states]
        body = {"controller_id": self.node_id, "controller_epoch": self.epoch, "partitions": parts,
                "live_brokers": dict(self.live) if include_brokers else None}
        for b in sorted(brokers):
            if b in self.live:
                self._channel_send(b, UPDATE_METADATA, body)

    def _send_stop_replica(self, broker, keys):
        self._channel_send(broker, STOP_REPLICA, {"controller_id": self.node_id,
                                                  "controller_epoch": self.epoch,
                                                  "partitions": keys, "delete": False})

    # -- the controller channel (ControllerChannelManager) ----------------------------------------------
    def _channel_send(self, broker, type_, body):
        channel = self.channels.get(broker)
        if channel is None:
            channel = self.channels[broker] = {"queue": [], "in_flight": False}
        channel["queue"].append((type_, body))
        self._channel_pump(broker, channel)

    def _channel_pump(self, broker, channel):
        if channel["in_flight"] or not channel["queue"]:
            return
        type_, body = channel["queue"][0]
        channel["in_flight"] = True
        self.broker.request(broker, type_, body, self.broker.config["controller.socket.timeout.ms"],
                            self._on_channel_response, (broker, channel))

    def _on_channel_response(self, ctx, _body, error):
        broker, channel = ctx
        if self.channels.get(broker) is not channel:
            return
        channel["in_flight"] = False
        if error:
            # RequestSendThread: reconnect and send the same request again until it gets through.
            self.broker.set_timer(CHANNEL_RETRY_BACKOFF_MS, self._channel_retry, ctx)
            return
        channel["queue"].pop(0)
        self._channel_pump(broker, channel)

    def _channel_retry(self, ctx):
        broker, channel = ctx
        if self.channels.get(broker) is channel:
            self._channel_pump(broker, channel)

    def view(self):
        return {"active": self.active, "epoch": self.epoch,
                "live_brokers": sorted(self.live), "shutting_down": sorted(self.shutting_down),
                "offline_partitions": sorted(self.offline), "queue": [n for n, _ in self.queue]}
