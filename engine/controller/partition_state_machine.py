"""The controller's partition state writes (Kafka's PartitionStateMachine, §9.6).

Every write re-reads the state znode and writes conditionally on its zkVersion (and, from 2.1, on
the /controller_epoch zkVersion: KAFKA-6082); a BADVERSION is retried with a fresh read. What to
write is decided by the election strategies of ``engine.controller.election`` (offline, controlled shutdown,
preferred, replica removal); every decision bumps the leader epoch.
"""
from engine.controller.election import (controlled_shutdown_election, offline_election, preferred_election,
                       remove_replica_from_isr)
from engine.server.partition import partition_state_json


class PartitionStateMachine:
    """Mixin of ``Controller``: conditional partition-state writes, the decisions, and the phases that write."""

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
                if self.sim.rules_1_5:
                    # StateChangeFailedException for this partition alone (§9.1): the others go on
                    continue
                return self.resign(f"{self.sim.state_path(key)} was written by controller epoch "
                                   f"{state['controller_epoch']} > ours {self.epoch}")  # engine <= 1.4.0
            self.states[key] = state
            decision = op["decide"](key, state, op["extra"])
            if decision is not None:
                plans.append((key, state, decision))
        if not plans:
            return self._finish_update(op)
        writes = []
        for key, state, (leader, isr, kind, _reason) in plans:
            data = partition_state_json(leader, state["leader_epoch"] + 1, isr, self.epoch,
                                        self._recovery_state(state, kind))
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
                if self.sim.rules_1_5:
                    return self.controller_moved("a partition-state write failed its "
                                                 "/controller_epoch zkVersion check")
                return self.resign("ControllerMovedException: /controller_epoch zkVersion changed "
                                   "(another controller was elected)")  # engine <= 1.4.0
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
            self._send_leader_and_isr(changed, only_to=self._recipients(op))
        self._continue()

    def _recipients(self, op):
        """Who gets the LeaderAndIsr of a decision (docs/model.md §9.8). ReplicaStateMachine's
        OfflineReplica sends the shrunk ISR to the *other* replicas only
        (``partitionReplicaAssignment.filterNot(_ == replicaId)``, 0.10 - 3.9): the removed one, if
        still alive (a controlled shutdown), got StopReplica. An offline election tells its live
        replicas (``Election.leaderForOffline``: ``isReplicaOnline``, shutting-down brokers
        excluded). Preferred elections tell every live replica, controlled-shutdown elections too
        (``liveOrShuttingDownReplicas``, 0.10 and 2.1+) except in 1.1 - 2.0.x, whose
        ``leaderForControlledShutdown`` leaves the shutting-down old leader out (KAFKA-7482)."""
        if not self.sim.rules_1_3:
            return None  # engine 1.2.0: every live replica
        if op["decide"] == self._decide_remove_replica:
            return [b for b in self.live if b != op["extra"]]
        if op["decide"] == self._decide_offline:
            return self._electable()
        if (op["decide"] == self._decide_controlled_shutdown
                and self.era.shutdown_election_skips_shutting_down):
            return self._electable()
        return None

    def _record_decision(self, key, old, decision, version):
        leader, isr, kind, reason = decision
        epoch = old["leader_epoch"] + 1
        self.states[key] = {"leader": leader, "leader_epoch": epoch, "isr": list(isr),
                            "controller_epoch": self.epoch, "zk_version": version}
        recovery = self._recovery_state(old, kind)
        if recovery:
            self.states[key]["leader_recovery_state"] = recovery
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

    def _recovery_state(self, old, kind):
        """KIP-704 (3.2+, docs/model.md §17.6): an unclean election marks the partition RECOVERING
        (1); every other controller decision keeps the previous state."""
        if not self.era.leader_recovery:
            return 0
        return 1 if kind == "unclean" else old.get("leader_recovery_state", 0)

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
