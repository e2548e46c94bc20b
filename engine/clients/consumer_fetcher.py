"""The consumer's fetching (Kafka's consumer Fetcher, §10): offset reset through ListOffsets,
Fetch to each partition's leader up to the high watermark (or, with ``client.rack``, to the
preferred read replica its leader names: ``read_replica``, §21.8), and the KIP-320 check that
detects a truncated log after a leader change (OffsetsForLeaderEpoch).
"""
from engine.core.messages import FETCH, LIST_OFFSETS, OFFSETS_FOR_LEADER_EPOCH
from engine.clients.network_client import DISCONNECTS


class ConsumerFetcher:
    """Mixin of ``Consumer``: offset reset, fetching, and KIP-320 position validation."""

    def _reset(self, key, policy):
        if policy == "none":
            self.error = f"OFFSET_OUT_OF_RANGE on {key} with auto.offset.reset=none"
            self.sim.emit("consumer_error", consumer=self.name, reason=self.error)
            self.running = False
            return
        self.resetting[key] = policy
        self.positions.pop(key, None)
        self._list_offsets(key)

    def _list_offsets(self, key):
        leader = self.leaders.get(key, (-1, -1))[0]
        if leader < 0:
            self.set_timer(self.config["retry.backoff.ms"], self._retry_reset, key)
            return
        policy = self.resetting[key]
        self.request(leader, LIST_OFFSETS, {"replica_id": -1, "partitions": {key: policy}},
                     self.config["request.timeout.ms"], self._on_list_offsets, key)

    def _retry_reset(self, key):
        if key in self.resetting and self.running:
            self.refresh_metadata()
            self._list_offsets(key)

    def _on_list_offsets(self, key, body, error):
        answer = None if error else body["partitions"].get(key)
        if error or answer is None or answer["error"]:
            self.set_timer(self.config["retry.backoff.ms"], self._retry_reset, key)
            return
        policy = self.resetting.pop(key, None)
        self.positions[key] = answer["offset"]
        self.fetch_epochs[key] = answer["leader_epoch"]
        self.sim.emit("consumer_reset", consumer=self.name, topic=self.sim.split_key(key)[0],
                      partition=self.sim.split_key(key)[1], offset=answer["offset"],
                      reason=f"auto.offset.reset={policy}: position set to {answer['offset']}")
        self._poll()

    def _poll(self, _=None):
        """Send a Fetch to every leader that has none outstanding (one per broker, like the
        Java consumer's Fetcher)."""
        if not self.running:
            return
        nodes = {}
        rack = self.rack
        now = self.scheduler.now_ms
        for key in self.positions:
            leader = self.leaders.get(key, (-1, -1))[0]
            if leader >= 0:
                nodes[leader if rack is None else self.read_target(key, leader, now)] = None
        for node in nodes:
            self._poll_node(node)

    def _poll_node(self, node):
        in_flight = self.in_flight
        if not self.running or (node in in_flight and in_flight[node]):
            return
        backoff = self.node_backoff  # node_ready(node), inlined (once per fetch round)
        if node in backoff and backoff[node][0] > self.scheduler.now_ms:
            # reconnect backoff: try this node again when it ends
            self.set_timer(backoff[node][0] - self.scheduler.now_ms, self._poll_node, node)
            return
        parts = {}
        detect = self.sim.era.consumer_truncation_detection
        leaders = self.leaders
        positions = self.positions
        validating = self.validating
        last_epochs = self.last_epochs
        fetch_epochs = self.fetch_epochs
        by_node = self.by_node  # _keys_led_by(node), its cached case inlined
        keys = self._keys_led_by(node) if by_node is None else by_node.get(node, ())
        for key in keys:
            if key not in positions or key in validating:
                continue
            pos = positions[key]
            if pos is None:
                continue
            leader, epoch = leaders[key]
            # fetch_epochs.get(key, epoch) != epoch, without the call
            if detect and key in last_epochs and key in fetch_epochs and fetch_epochs[key] != epoch:
                self._validate(key, leader, epoch)
                continue
            fetch_epochs[key] = epoch
            parts[key] = {"fetch_offset": pos, "current_leader_epoch": epoch if detect else -1}
        if not parts:
            return
        in_flight[node] = True
        config = self.config
        body = {"replica_id": -1, "max_wait_ms": config["fetch.max.wait.ms"], "min_bytes": 1,
                "partitions": parts}
        if self.rack is not None:
            body["rack_id"] = self.rack   # FetchRequest v11 (KIP-392): the consumer's client.rack
        self.request(node, FETCH, body, config["request.timeout.ms"], self._on_fetch, (node, parts))

    def _on_fetch(self, ctx, body, error):
        node, parts = ctx
        self.in_flight[node] = False
        if not self.running:
            return
        if error:
            if error in DISCONNECTS:
                self.node_failed(node)
            if self.rack is not None and self.sim.era.preferred_replica_cleared_on_error:
                for key in parts:   # KAFKA-14379 (3.3.2): the failed session's partitions
                    self.clear_read_replica(key, f"the fetch to broker {node} failed ({error})")
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
            return
        backoff = self.node_backoff  # node_ok(node), inlined
        if node in backoff:
            del backoff[node]
        refresh = False
        now = self.scheduler.now_ms
        positions = self.positions
        for key, resp in body["partitions"].items():
            offset = parts[key]["fetch_offset"]
            if key not in positions or positions[key] != offset:
                continue  # positions.get(key) != offset (the offset is never None)
            err = resp["error"]
            if err is None:
                records = resp["records"]
                if self.rack is not None and "preferred_read_replica" in resp:
                    self.update_read_replica(key, resp["preferred_read_replica"], node)
                if records:
                    sim = self.sim
                    topic, part = sim._key_parts[key]  # sim.split_key(key)
                    if "from_follower" in resp:   # read from a follower: the result says which
                        self.consumed.extend([{"id": rid, "topic": topic, "partition": part,
                                               "offset": i, "at_ms": now, "replica": node}
                                              for i, (_epoch, rid) in enumerate(records, offset)])
                    else:
                        self.consumed.extend([{"id": rid, "topic": topic, "partition": part,
                                               "offset": i, "at_ms": now}
                                              for i, (_epoch, rid) in enumerate(records, offset)])
                    # the invariants' bookkeeping, once per partition rather than once per record
                    sim.on_consumed_records(self.name, key, offset, records)
                    positions[key] = offset + len(records)
                    self.last_epochs[key] = records[-1][0]
            elif err == "OFFSET_OUT_OF_RANGE":
                # with a preferred read replica set it is forgotten, and nothing resets; without
                # one (the fetch went to the leader) the position resets
                if self.rack is None or self.clear_read_replica(
                        key, f"OFFSET_OUT_OF_RANGE at offset {offset} from broker {node}") is None:
                    self._reset(key, self.config["auto.offset.reset"])
            elif err not in self._fetch_errors_only_logged():
                refresh = True
                if self.rack is not None and self.sim.era.preferred_replica_cleared_on_error \
                        and err != "UNKNOWN_LEADER_EPOCH":
                    # KAFKA-14379 (3.3.2): requestMetadataUpdate(tp) forgets the replica too
                    self.clear_read_replica(key, f"{err} from broker {node}")
        if refresh:
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
        elif self.rack is not None:
            self._poll()   # a partition may have moved to another broker (a preferred replica)
        else:
            self._poll_node(node)

    def _fetch_errors_only_logged(self):
        """Engine 1.4.0: the fetch errors the consumer only logs (``Fetcher.initializeCompletedFetch``
        @ 2.4.0 – 3.3.1, ``FetchCollector.handleInitializeErrors`` @ 3.7.0 – 4.1.0): UNKNOWN_LEADER_EPOCH
        (the broker has not yet learned the epoch the consumer's metadata gave it) and
        UNKNOWN_SERVER_ERROR ask for no metadata update; the partition is fetched again in the next
        poll, at once. Engine 1.3.0 refreshed metadata after every error but OFFSET_OUT_OF_RANGE."""
        if self.sim.rules_1_4 and self.sim.era.consumer_truncation_detection:
            return ("UNKNOWN_LEADER_EPOCH", "UNKNOWN_SERVER_ERROR")
        return ()

    # -- KIP-320 client side: detect truncation after a leader change (§10) ---------------------------
    def _validate(self, key, leader, epoch):
        self.validating[key] = None
        self.request(leader, OFFSETS_FOR_LEADER_EPOCH,
                     {"replica_id": -1, "partitions": {key: {"leader_epoch": self.last_epochs[key],
                                                             "current_leader_epoch": epoch}}},
                     self.config["request.timeout.ms"], self._on_validated, (key, epoch))

    def _on_validated(self, ctx, body, error):
        key, epoch = ctx
        self.validating.pop(key, None)
        answer = None if error else body["partitions"].get(key)
        if error or answer is None or answer["error"]:
            self.refresh_metadata()
            self.set_timer(self.config["retry.backoff.ms"], self._poll)
            return
        self.fetch_epochs[key] = epoch
        end = answer["end_offset"]
        position = self.positions.get(key)
        if end == -1:
            self._reset(key, self.config["auto.offset.reset"])
            return
        if position is not None and end < position:
            topic, part = self.sim.split_key(key)
            self.positions[key] = end
            self.sim.emit("consumer_truncation_detected", consumer=self.name, topic=topic, partition=part,
                          offset=end, previous_position=position,
                          reason=f"OffsetsForLeaderEpoch(epoch {self.last_epochs[key]}) -> end offset "
                                 f"{end} < position {position}: the log was truncated; seek to {end}")
        self._poll()
