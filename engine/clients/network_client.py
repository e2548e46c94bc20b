"""What producers and consumers share, as Kafka's NetworkClient and Metadata do: the cluster
metadata they route by, and the connections to brokers (§6 client facts).
"""
from engine.clients.in_flight_requests import RequestTimeouts
from engine.core.messages import METADATA
from engine.core.node import Node

#: Request-level errors after which the client closes the connection and backs off before
#: reconnecting: a refused or reset connection, and its own request timeout (NetworkClient
#: disconnects a node whose in-flight request timed out) — so the next metadata request goes
#: to another broker instead of the one that just hung.
DISCONNECTS = ("NETWORK_EXCEPTION", "REQUEST_TIMED_OUT")


class ClientBase(RequestTimeouts, Node):
    """Shared client plumbing: metadata refresh (at most every retry.backoff.ms, from a broker
    not in reconnect backoff) and per-node reconnect backoff after a failed connection
    (reconnect.backoff.ms 50, doubling up to reconnect.backoff.max.ms 1000)."""

    RECONNECT_BACKOFF_MS = 50
    RECONNECT_BACKOFF_MAX_MS = 1000
    _idle_until = None   # the producer's skip of idle Sender passes (sender.py); backoff resets it
    #: follower fetching (engine/clients/read_replica.py): a consumer's client.rack, and the
    #: brokers its last metadata answer listed (kept only for a consumer with a rack)
    rack = None
    metadata_brokers = None

    def __init__(self, sim, name, config):
        Node.__init__(self, name, sim)
        self.name = name
        self.config = config
        self.running = False
        self.leaders = {}           # key -> (leader, leader_epoch)
        self.topic_partitions = {}  # topic -> count
        self.metadata_in_flight = False
        self.metadata_wanted = False
        self.metadata_timer = False
        self.last_metadata_attempt_ms = None
        self.node_backoff = {}      # node -> (until_ms, current backoff)
        self._bootstrap = 0
        self.metadata_ms = None     # when the last metadata answer arrived

    def start_metadata_refresh(self):
        """metadata.max.age.ms: refresh even without errors, so a client that has nothing
        outstanding still learns about new leaders."""
        self.set_timer(self.config["metadata.max.age.ms"], self._metadata_age_tick)

    def _metadata_age_tick(self, _):
        if not self.running:
            return
        age = self.config["metadata.max.age.ms"]
        now = self.scheduler.now_ms
        if self.metadata_ms is None or now - self.metadata_ms >= age:
            self.refresh_metadata()
        elif self.sim.rules_1_3:
            # Metadata.timeToNextUpdate: due at lastSuccessfulRefreshMs + metadata.max.age.ms
            # exactly (engine 1.2.0: at the next tick of a fixed metadata.max.age.ms period)
            self.set_timer(self.metadata_ms + age - now, self._metadata_age_tick)
            return
        self.set_timer(age, self._metadata_age_tick)

    # -- connections ----------------------------------------------------------------------------
    def node_ready(self, node):
        entry = self.node_backoff.get(node)
        return entry is None or entry[0] <= self.scheduler.now_ms

    def node_failed(self, node):
        """One failed connection, one backoff step (ClusterConnectionStates.disconnected): the
        requests failing with it do not escalate the backoff again."""
        previous = self.node_backoff.get(node)
        # engine 1.1.0 compatibility (docs/model.md §19): one backoff step per failed request
        if previous is not None and previous[0] > self.scheduler.now_ms and not self.network.compat_1_1_0:
            return
        backoff = self.RECONNECT_BACKOFF_MS if previous is None else \
            min(previous[1] * 2, self.RECONNECT_BACKOFF_MAX_MS)
        self.node_backoff[node] = (self.scheduler.now_ms + backoff, backoff)
        if self._idle_until is not None:
            self._idle_until = None

    def node_ok(self, node):
        if node in self.node_backoff:
            del self.node_backoff[node]
            if self._idle_until is not None:
                self._idle_until = None

    # -- metadata ---------------------------------------------------------------------------------
    def refresh_metadata(self, _=None):
        if not self.running:
            return
        if self.metadata_in_flight:
            self.metadata_wanted = True
            return
        now = self.scheduler.now_ms
        backoff = self.config["retry.backoff.ms"]
        if self.last_metadata_attempt_ms is not None and now < self.last_metadata_attempt_ms + backoff:
            if not self.metadata_timer:
                self.metadata_timer = True
                self.set_timer(self.last_metadata_attempt_ms + backoff - now, self._metadata_timer)
            return
        target = self._least_loaded_node()
        self.last_metadata_attempt_ms = now
        self.metadata_in_flight = True
        self.metadata_wanted = False
        self.request(target, METADATA, {"topics": None}, self.config["request.timeout.ms"],
                     self._on_metadata, target)

    def _metadata_timer(self, _):
        self.metadata_timer = False
        self.refresh_metadata()

    def _least_loaded_node(self):
        brokers = self.sim.broker_ids
        for i in range(len(brokers)):
            node = brokers[(self._bootstrap + i) % len(brokers)]
            if self.node_ready(node):
                self._bootstrap += i + 1
                return node
        self._bootstrap += 1
        return brokers[(self._bootstrap - 1) % len(brokers)]

    def _on_metadata(self, node, body, error):
        self.metadata_in_flight = False
        if self.sim.rules_1_3:
            # Metadata.update / failedUpdate set lastRefreshMs: retry.backoff.ms counts from the
            # answer (engine 1.2.0: from the request's send)
            self.last_metadata_attempt_ms = self.scheduler.now_ms
        if error or body.get("error"):
            self.node_failed(node)
            self.refresh_metadata()
            return
        self.node_ok(node)
        self.metadata_ms = self.scheduler.now_ms
        if self.rack is not None:
            self.metadata_brokers = frozenset(body["brokers"])
        counts = {}
        split = self.sim.split_key
        leaders = self.leaders
        # KIP-320 (2.2+): never go back to an older leader epoch (docs/model.md §6, client facts)
        keep_newer = self.sim.rules_1_3 and self.sim.era.client_rejects_stale_metadata
        no_epoch_if_leaderless = self.sim.era.leaderless_metadata_without_epoch
        for key, st in body["partitions"].items():
            topic, part = split(key)
            if part + 1 > counts.get(topic, 0):
                counts[topic] = part + 1
            epoch = st["leader_epoch"]
            if keep_newer:
                if no_epoch_if_leaderless and st["leader"] < 0:
                    # 2.4.x: LEADER_NOT_AVAILABLE comes without a leader epoch; updatePartitionInfo
                    # forgets the last seen one (lastSeenLeaderEpochs.remove) and takes the
                    # leaderless partition, so the next answer is taken whatever its epoch
                    leaders[key] = (-1, -1)
                    continue
                if key in leaders and epoch < leaders[key][1]:
                    continue   # a stale broker's answer: the cached, newer leader stays
            # engine 1.2.0: every answer overwrote the cached leader
            leaders[key] = (st["leader"], epoch)
        self.topic_partitions.update(counts)
        self.on_metadata_updated()
        if self.metadata_wanted:
            self.refresh_metadata()
        elif self.sim.rules_1_3 and self._metadata_invalid(counts):
            # requestUpdate(): again retry.backoff.ms after this answer (engine 1.2.0: nothing
            # asked again before metadata.max.age.ms)
            self.refresh_metadata()

    def _metadata_invalid(self, counts):
        """Metadata.handleMetadataResponse: UNKNOWN_TOPIC_OR_PARTITION for a topic the client
        uses, or LEADER_NOT_AVAILABLE for one of its partitions, is an InvalidMetadataException,
        and requestUpdate() asks again once retry.backoff.ms has passed since this answer."""
        leaders = self.leaders
        key = self.sim.key
        for topic in self.wanted_topics():
            if topic not in counts:
                return True
            for part in range(counts[topic]):
                if leaders.get(key(topic, part), (-1,))[0] < 0:
                    return True
        return False

    def wanted_topics(self):
        """The topics whose metadata the client is waiting for."""
        return ()

    def on_metadata_updated(self):
        raise NotImplementedError
