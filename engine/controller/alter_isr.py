"""The controller's side of KIP-497 (2.7+): ``KafkaController.processAlterIsr`` (2.7 - 3.2) and
``tryProcessAlterPartition`` (3.3+), one event on the controller's event queue per request
(docs/model.md §17.7).

Validation against the controller's cached partition state, then one multi-op per partition,
guarded by the ``/controller_epoch`` zkVersion and conditional on the zkVersion the *leader*
sent (a stale one fails as BADVERSION -> INVALID_UPDATE_VERSION). The written znodes are read
back into the cache, UpdateMetadata goes to every live broker, then the answer to the leader.
The leader epoch is not bumped and no LeaderAndIsr is sent (docs/model.md §17.7).
"""
from engine.server.partition import partition_state_json


class AlterIsrController:
    """Mixin of ``Controller``: AlterIsr / AlterPartition requests from partition leaders."""

    def on_alter_isr(self, env):
        if not self.active:
            self.broker.reply(env, {"error": "NOT_CONTROLLER", "partitions": {}})
            return
        self._enqueue("alter_isr", env)

    def _event_alter_isr(self, env):
        body = env.body
        broker = body["broker"]
        if self.live.get(broker) != body["broker_epoch"]:
            self.broker.reply(env, {"error": "STALE_BROKER_EPOCH", "partitions": {}})
            return self._continue()
        answers, writes, plans = {}, [], []
        for req in body["partitions"]:
            key = req["key"]
            error, cached = self._validate_alter_isr(broker, req)
            if error is not None:
                answers[key] = {"error": error}
            elif cached is not None:
                answers[key] = self._alter_isr_answer(cached)  # already in the desired state
            else:
                data = partition_state_json(broker, req["leader_epoch"], req["new_isr"], self.epoch,
                                            req.get("leader_recovery_state", 0))
                writes.append(["multi", {"ops": [["check", "/controller_epoch", self.epoch_zk_version],
                                                 ["set", self.sim.state_path(key), data,
                                                  req["zk_version"]]]}])
                plans.append(key)
        ctx = (env, answers, plans)
        if not writes:
            return self._alter_isr_reply(ctx)
        self.zk.call("pipeline", writes, self._alter_isr_written, ctx)

    def _validate_alter_isr(self, broker, req):
        """(error, None), (None, cached state) for an idempotent retry, or (None, None) to write."""
        st = self.states.get(req["key"])
        if st is None:
            return "UNKNOWN_TOPIC_OR_PARTITION", None
        same = (st["leader"] == broker and st["leader_epoch"] == req["leader_epoch"]
                and st["isr"] == req["new_isr"])
        recovery = st.get("leader_recovery_state", 0)
        asked = req.get("leader_recovery_state", 0)
        if not self.era.kip841:
            # 2.7 - 3.2 processAlterIsr: only a stale leader epoch is fenced; the zkVersion is
            # checked by ZooKeeper itself; no leader / membership / liveness check.
            if req["leader_epoch"] < st["leader_epoch"]:
                return "FENCED_LEADER_EPOCH", None
            return None, (st if same else None)
        # 3.3+ tryProcessAlterPartition (KAFKA-14154, -14144, -14140)
        if req["zk_version"] > st["zk_version"] or req["leader_epoch"] > st["leader_epoch"]:
            return "NOT_CONTROLLER", None
        if req["leader_epoch"] != st["leader_epoch"]:
            return "FENCED_LEADER_EPOCH", None
        if same and recovery == asked and req["zk_version"] <= st["zk_version"]:
            return None, st
        if req["zk_version"] != st["zk_version"]:
            return "INVALID_UPDATE_VERSION", None
        if (asked == 1 and len(req["new_isr"]) > 1) or (recovery == 0 and asked == 1):
            return "INVALID_REQUEST", None
        eligible = {b for b in self.live if b not in self.shutting_down}
        if any(r not in eligible for r in req["new_isr"]):
            return "INELIGIBLE_REPLICA", None
        return None, None

    @staticmethod
    def _alter_isr_answer(st):
        return {"error": None, "leader": st["leader"], "leader_epoch": st["leader_epoch"],
                "isr": list(st["isr"]), "zk_version": st["zk_version"]}

    def _alter_isr_written(self, ctx, result, error):
        env, answers, plans = ctx
        if error:
            self.broker.reply(env, {"error": "UNKNOWN_SERVER_ERROR", "partitions": {}})
            return self._continue()
        done = []
        for key, (res, err) in zip(plans, result):
            if err is None:
                done.append(key)
            elif err == "BADVERSION" and res.get("failed_op") == 0:
                # ControllerMovedException: the whole request fails with UNKNOWN_SERVER_ERROR.
                self.broker.reply(env, {"error": "UNKNOWN_SERVER_ERROR", "partitions": {}})
                if self.sim.rules_1_3:
                    # processAlterIsr / processAlterPartition catch every Throwable themselves: no
                    # resignation here; the /controller watch (ControllerChange) does it (§17.7).
                    return self._continue()
                # engine 1.2.0: resigned at once
                return self.resign("ControllerMovedException: /controller_epoch zkVersion changed "
                                   "(another controller was elected)")
            elif err == "BADVERSION":
                answers[key] = {"error": "INVALID_UPDATE_VERSION"}
            elif err == "NONODE" and not self.sim.rules_1_3:
                answers[key] = {"error": "UNKNOWN_TOPIC_OR_PARTITION"}  # engine 1.2.0
            else:
                # Errors.forException of a KeeperException (not an ApiException): §17.7
                answers[key] = {"error": "UNKNOWN_SERVER_ERROR"}
        if not done:
            return self._alter_isr_reply(ctx)
        # updateLeaderAndIsrCache: the written znodes are read back from ZooKeeper
        self.zk.call("pipeline", [["get", {"path": self.sim.state_path(k)}] for k in done],
                     self._alter_isr_reread, (env, answers, done))

    def _alter_isr_reread(self, ctx, result, error):
        env, answers, done = ctx
        if not error:
            for key, (res, err) in zip(done, result):
                if not err:
                    self.states[key] = self._state_from(res)
                    answers[key] = self._alter_isr_answer(self.states[key])
        self._alter_isr_reply((env, answers, done))

    def _alter_isr_reply(self, ctx):
        env, answers, _plans = ctx
        keys = [req["key"] for req in env.body["partitions"] if req["key"] in self.states]
        self._send_update_metadata(list(self.live), keys, include_brokers=False)
        for req in env.body["partitions"]:
            answers.setdefault(req["key"], {"error": "UNKNOWN_SERVER_ERROR"})
        self.broker.reply(env, {"error": None, "partitions": answers})
        self._continue()
