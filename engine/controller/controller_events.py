"""Controller events that react to ZooKeeper and to brokers (§9.2, §9.3, §9.4, §4.2, §9.7, §9.8).

Kafka's controller handles these as events on its event thread: BrokerChange (brokers dying and
starting), TopicChange, IsrChangeNotification, ControlledShutdown and the preferred replica
election (through the /admin znode or the auto-rebalance task). Each is a list of phases run by
``Controller._continue``; the partition state writes they need are in ``PartitionStateMachine``.
"""
from engine.controller.election import imbalanced_partitions


class ControllerEvents:
    """Mixin of ``Controller``: the event handlers and their phases."""

    # -- broker changes (§9.2, §9.3, §9.4) -----------------------------------------------------------------
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
        error = self._controlled_shutdown_error(broker, env.body.get("broker_epoch", -1))
        if error:
            self.broker.reply(env, {"error": error, "partitions_remaining": []})
            return self._continue()
        self.shutting_down[broker] = None
        followed = [k for k, st in self.states.items()
                    if st["leader"] != broker and broker in self.assignments[k]
                    and (len(self.assignments[k]) > 1 or not self.sim.rules_1_5)]
        if followed:
            self._send_stop_replica(broker, followed)
        self._then((self._phase_controlled_shutdown_move, broker),
                   (self._phase_remove_replica_keys, (broker, followed)),
                   (self._phase_controlled_shutdown_reply, env))
        self._continue()

    def _controlled_shutdown_error(self, broker, broker_epoch):
        """doControlledShutdown's checks (KafkaController @ 2.2.0 - 3.7.0, KIP-380): a request
        with a broker epoch is first checked against ``liveBrokerIdAndEpochs(id)`` — an older
        epoch is STALE_BROKER_EPOCH, an unknown broker makes that lookup throw
        (UNKNOWN_SERVER_ERROR); only then an unknown broker is BROKER_NOT_AVAILABLE (§9.8)."""
        if self.sim.rules_1_3 and self.era.broker_epoch and broker_epoch != -1:
            if broker not in self.live:
                return "UNKNOWN_SERVER_ERROR"
            if broker_epoch < self.live[broker]:
                return "STALE_BROKER_EPOCH"
        if broker not in self.live:
            return "BROKER_NOT_AVAILABLE"  # engine 1.2.0: the only check
        return None

    # doControlledShutdown acts only on partitions with more than one replica (``partitionsToActOn``:
    # ``partitionReplicaAssignment(partition).size > 1`` @ 0.10.2.2 - 3.9.0), those it leads and those
    # it follows alike, and answers with the replicated partitions it still leads
    # (``partitionLeadersOnBroker``). A single-replica partition is left alone: no election, no
    # StopReplica, no ISR removal (§9.8). Engine 1.4.0 and older also sent StopReplica and the ISR
    # removal for a single-replica partition it did not lead (leaderless).
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
