"""The controller's requests to brokers: LeaderAndIsr, UpdateMetadata and StopReplica, each sent
over a per-broker channel (Kafka's ControllerChannelManager) that keeps one request in flight and
resends it until it gets through (§9.6: every decision reaches the live replicas).
"""
from engine.core.messages import LEADER_AND_ISR, UPDATE_METADATA, STOP_REPLICA

CHANNEL_RETRY_BACKOFF_MS = 100


class ControllerChannelManager:
    """Mixin of ``Controller``: building control requests and the per-broker channels."""

    # -- requests to brokers -----------------------------------------------------------------------
    def _partition_state(self, key):
        st = self.states[key]
        topic, part = self.sim.split_key(key)
        out = {"key": key, "topic": topic, "partition": part, "controller_epoch": st["controller_epoch"],
               "leader": st["leader"], "leader_epoch": st["leader_epoch"], "isr": list(st["isr"]),
               "zk_version": st["zk_version"], "replicas": list(self.assignments[key])}
        if st.get("leader_recovery_state"):  # KIP-704 (LeaderAndIsr v6), docs/model.md §17.6
            out["leader_recovery_state"] = st["leader_recovery_state"]
        return out

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
