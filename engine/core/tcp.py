"""What a cut holds back, and when TCP gets it through after the heal (docs/model.md §16, network).

Every connection is TCP. A segment that cannot cross a cut stays in the sender's kernel, which
retransmits it on the retransmission timer: the first retransmission ``TCP_RTO_MIN`` (200 ms)
after the original send, each later one after twice the previous interval, capped at
``TCP_RTO_MAX`` (120 s) — Linux's ``tcp_retransmit_timer`` with RFC 6298's exponential backoff.
So the k-th retransmission leaves ``0.2 * (2**k - 1)`` s after the first send while the interval
is below the cap: 0.2, 0.6, 1.4, 3.0, 6.2, 12.6, 25.4, 51.0, 102.2, 204.6 s, then every 120 s.
When the cut heals, what a connection held arrives, in order, one link latency after the first
retransmission at or after the heal (the instant the heal itself is included); anything the
sender writes on that link meanwhile queues behind it.

``tcp_retries2`` = 15: after the 15th retransmission (804.6 s) the kernel gives up (at 924.6 s)
and the connection is dead — a heal after the 15th retransmission delivers nothing. A connection
the process closed while data was still unacknowledged (a Kafka client disconnecting on a request
timeout) is an orphan: the kernel keeps retransmitting it, but only ``tcp_orphan_retries``
(0, meaning 8) times — a heal after the 8th retransmission (51.0 s) delivers nothing of it.

Each connection's retransmission schedule belongs to its first held segment; everything behind it
rides along, and what its sender writes on it before the retransmission gets through queues
behind. A connection is a link's lane (``lane``: Kafka opens one per client and per broker-side
channel; responses travel on the requester's), plus the orphans of closed ones (requests a Kafka
client gave up on; a ZooKeeper client's older connections, named by the "conn" its requests
carry).
"""
from engine.core.messages import (CONTROLLED_SHUTDOWN, DISCONNECTED, FETCH, LEADER_AND_ISR, LIST_OFFSETS,
                       OFFSETS_FOR_LEADER_EPOCH, RESPONSE_SUFFIX, STOP_REPLICA, UPDATE_METADATA,
                       ZK_REQUEST, response_type)

TCP_RTO_MIN_MS = 200
TCP_RTO_MAX_MS = 120000
TCP_RETRIES2 = 15
TCP_ORPHAN_RETRIES = 8
#: Kafka opens one connection per client and per broker-side channel: a request type names the
#: channel it travels on (a client's requests all share one connection to a broker).
CHANNELS = {FETCH: "fetcher", OFFSETS_FOR_LEADER_EPOCH: "fetcher", LIST_OFFSETS: "fetcher",
            LEADER_AND_ISR: "controller", UPDATE_METADATA: "controller", STOP_REPLICA: "controller",
            CONTROLLED_SHUTDOWN: "shutdown"}


def lane(type_, correlation_id, is_request):
    """The connection a message travels on, seen from its link: requests (and one-way messages)
    on the sender's connection of that channel, responses on the requester's."""
    if correlation_id is not None and not is_request:
        return "response:" + CHANNELS.get(type_[:-len(RESPONSE_SUFFIX)], "client")
    return CHANNELS.get(type_, "client")


def retransmission_offsets(retries=TCP_RETRIES2):
    """Cumulative ms from the first send to each of the first ``retries`` retransmissions."""
    out, total, interval = [], 0, TCP_RTO_MIN_MS
    for _ in range(retries):
        total += interval
        out.append(total)
        interval = min(interval * 2, TCP_RTO_MAX_MS)
    return out


_OFFSETS = retransmission_offsets()


def retransmission_at(first_sent_ms, now_ms, retries=TCP_RETRIES2):
    """The first retransmission instant at or after ``now_ms`` of a segment first sent at
    ``first_sent_ms``; None when the kernel has made its last retransmission before then."""
    for offset in _OFFSETS[:retries]:
        if first_sent_ms + offset >= now_ms:
            return first_sent_ms + offset
    return None


class TcpHolds:
    """Mixin of ``Network``: holding what a cut blocks, and its retransmission after the heal."""

    #: envelope ids of held requests whose sender closed the connection (orphans); a class
    #: default so that networks pickled before it existed still load
    orphaned = None
    #: (link, lane) -> when the retransmitted data of that connection arrives (same reason)
    behind = None
    #: engine 1.1.0 compatibility (docs/model.md §19): held data arrives one link latency after
    #: the heal, and a request timeout does not close the connection (``Simulation(...,
    #: engine_version="1.1.0")``, to re-simulate runs saved by 1.1.0 exactly)
    compat_1_1_0 = False

    def _hold(self, env):
        source, target = self.nodes.get(env.source), self.nodes.get(env.target)
        self.held.setdefault((env.source, env.target), []).append(
            (env, getattr(source, "power_cycles", 0), getattr(target, "incarnation", 0)))
        self.dropped += 1
        if self.observer:
            self.observer("hold", env)

    def close_connection(self, source, target, correlation_ids):
        """``source`` closed its connection to ``target`` (a request timeout): the held requests
        it was waiting for become orphans of its kernel, and answers to them held on the way
        back belong to a dead connection — neither holds up the new connection's traffic."""
        if self.compat_1_1_0:   # engine 1.1.0 compatibility: docs/model.md §19 (no orphans)
            return
        wanted = set(correlation_ids)
        if self.behind:   # the new connection does not queue behind the closed one's data
            for env in self.in_flight.values():
                if env.is_request and env.correlation_id in wanted and env.source == source \
                        and env.target == target:
                    self.behind.pop(((source, target), lane(env.type, env.correlation_id, True)), None)
        for pair, requests in (((source, target), True), ((target, source), False)):
            for entry in self.held.get(pair, ()):
                env = entry[0]
                if env.is_request == requests and env.correlation_id in wanted:
                    if self.orphaned is None:
                        self.orphaned = set()
                    self.orphaned.add(env.id)

    def _release(self, pair):
        now = self.scheduler.now_ms
        latency = self.link_delay(*pair)
        fifo = self.jitter_ms or self.link_latency or self.inter_rack_ms
        if self.compat_1_1_0:
            return self._release_at_heal(pair, now + latency, fifo)
        for key, group, retries in self._connections(self.held.pop(pair)):
            at = retransmission_at(group[0][0].sent_at_ms, now, retries)
            for entry in group:
                env = entry[0]
                if at is None:   # the kernel gave up on the connection: the data is gone
                    if self.observer:
                        self.observer("drop", env)
                    continue
                deliver = at + latency
                if fifo:
                    deliver = max(deliver, self._last_delivery.get(pair, 0))
                    self._last_delivery[pair] = deliver
                if key[0] == "live":   # what the sender writes on it meanwhile queues behind
                    if self.behind is None:
                        self.behind = {}
                    self.behind[(pair, key[1])] = deliver
                env.deliver_at_ms = deliver
                self.in_flight[env.id] = env
                self.scheduler.schedule_at(deliver, self._deliver_held, entry)

    def _release_at_heal(self, pair, deliver, fifo):
        """engine 1.1.0 compatibility: docs/model.md §19 — everything the link held arrives, in
        order, one link latency after the heal (no retransmission schedule, nothing dropped)."""
        for entry in self.held.pop(pair):
            env = entry[0]
            at = deliver
            if fifo:
                at = max(at, self._last_delivery.get(pair, 0))
                self._last_delivery[pair] = at
            env.deliver_at_ms = at
            self.in_flight[env.id] = env
            self.scheduler.schedule_at(at, self._deliver_held, entry)

    def queued_behind(self, link, type_, correlation_id, is_request, deliver):
        """A message sent on a connection whose held data is still being retransmitted arrives
        after it (TCP is FIFO per connection)."""
        key = (link, lane(type_, correlation_id, is_request))
        until = self.behind.get(key)
        if until is None:
            return deliver
        if until <= self.scheduler.now_ms:
            del self.behind[key]
            return deliver
        return max(deliver, until)

    def _connections(self, held):
        """Split what a link held into connections: [(key, entries, retries allowed)]. Live
        traffic is one connection per lane; requests a Kafka client gave up on are orphans; a
        ZooKeeper client's request names its connection ("conn"), and every connection older
        than the newest one held was closed by the client."""
        orphaned = self.orphaned or set()
        newest_zk = max((entry[0].body.get("conn", 0) for entry in held if entry[0].type == ZK_REQUEST),
                        default=0)
        groups = {}
        for entry in held:
            env = entry[0]
            if env.id in orphaned:
                orphaned.discard(env.id)
                key = ("orphan", "") if env.is_request else ("closed", "")
            elif env.type == ZK_REQUEST and env.body.get("conn", 0) < newest_zk:
                key = ("zk", env.body.get("conn", 0))
            else:
                key = ("live", lane(env.type, env.correlation_id, env.is_request))
            groups.setdefault(key, []).append(entry)
        return [(key, group, TCP_ORPHAN_RETRIES if key[0] in ("orphan", "zk") else TCP_RETRIES2)
                for key, group in groups.items()]

    def _deliver_held(self, entry):
        env, power_cycles, incarnation = entry
        source, target = self.nodes.get(env.source), self.nodes.get(env.target)
        if source is None or target is None or getattr(source, "power_cycles", 0) != power_cycles \
                or source.net_state == "silent":
            self.in_flight.pop(env.id, None)   # the sending machine went down: nothing retransmits
            return
        if getattr(target, "incarnation", 0) != incarnation and target.net_state != "silent":
            self.in_flight.pop(env.id, None)   # a new process knows nothing of this connection
            if env.is_request:
                self.send(env.target, env.source, response_type(env.type), {"error": DISCONNECTED},
                          env.correlation_id)
            return
        self._deliver(env)
