"""Links between nodes: latency with seeded jitter, one-way cuts, partitions, heal.

Nodes are broker ids (int), ``"zk"`` for the ZooKeeper ensemble and client names (str). A link
is directed: ``cut(a, b)`` drops a->b only. Every kind of fault (isolate, partition, cut) is kept
as a set of blocked directed pairs, so "heal one link" and "heal all" are exact.

Delivery is FIFO per directed link (Kafka talks over TCP): a jittered message never overtakes an
earlier one. A message whose link is blocked when it is sent or when it would arrive does not get
through while the cut lasts; since every connection is TCP, the sender's kernel keeps
retransmitting it with exponential backoff, so when the link heals the held messages arrive, in
order, one link latency after the first retransmission at or after the heal (``engine/core/tcp.py``:
200 ms doubling up to 120 s; nothing after tcp_retries2) — unless the sender's machine lost power
meanwhile (its kernel state is gone), or the receiving process is a new one (a request then meets
a reset; anything else is discarded). A sender that gives up on a request at its timeout closes
the connection (Kafka's NetworkClient): the kernel still retransmits what it held, as an orphan,
for tcp_orphan_retries; a request that gets through is processed, as in Kafka, and its late
answer is ignored.
Racks (docs/model.md §21.4): a link between two nodes of different racks takes
``inter_rack_ms`` more, on top of its latency (or its ``slow`` override) and jitter; a node in no
rack (ZooKeeper, every client) never pays it. The extra is fixed per link, so it keeps every link
FIFO; such links take the general path of ``send``, which enforces FIFO anyway.
A request to a node whose *process* is down (machine up) is answered with a synthesised
``NETWORK_EXCEPTION`` (connection refused), one round trip later; a powered-off or cut node
simply never answers and the sender's request timeout fires — unless the powered-off machine
boots first: a peer that sent it a request while it was off keeps retransmitting, and the booted
machine answers that with a reset, failing every request the peer awaits on the connection
(``CONNECTION_RESET``). A peer that sent nothing after the power failure just waits for its
timeout (an idle half-open connection is not noticed).
"""
from heapq import heappush

from engine.core.messages import CONNECTION_RESET, DISCONNECTED, Envelope, response_type
from engine.core.node import Node
from engine.core.tcp import TcpHolds

_new = object.__new__


class Network(TcpHolds):
    #: node id -> rack name, and the extra one-way latency between two racks (docs/model.md §21.4);
    #: class defaults, so that networks pickled before racks existed still load
    rack_of = None
    inter_rack_ms = 0

    def __init__(self, scheduler, rng, latency_ms=1, jitter_ms=0):
        self.scheduler = scheduler
        self.rng = rng
        self.latency_ms = latency_ms
        self.jitter_ms = jitter_ms
        self.nodes = {}
        self.blocked = set()        # (source, target) pairs that drop messages
        self.link_latency = {}      # (source, target) -> one-way latency override
        self._last_delivery = {}    # (source, target) -> deliver time of the last message (FIFO)
        self._next_id = 0
        self.in_flight = {}         # envelope id -> Envelope (for the view)
        self.unanswered = {}        # powered-off node -> {peer: peer incarnation} that sent to it
        self.held = {}              # (source, target) -> [(envelope, source power cycles, target incarnation)]
        self.sent = 0
        self.dropped = 0
        self.observer = None        # callable(kind, envelope) for traces; kind: send|deliver|drop

    def add_node(self, node_id, node):
        self.nodes[node_id] = node

    def set_racks(self, rack_of, inter_rack_ms):
        """Place nodes in racks: ``rack_of`` {node id: rack name}; links across racks take
        ``inter_rack_ms`` more."""
        self.rack_of = dict(rack_of)
        self.inter_rack_ms = inter_rack_ms if rack_of else 0

    def link_delay(self, source, target):
        """The one-way latency of a link before jitter: its own (``slow``) or the network's, plus
        the inter-rack latency when its ends are in two different racks."""
        latency = self.link_latency.get((source, target), self.latency_ms)
        return latency + self.rack_extra(source, target) if self.inter_rack_ms else latency

    def rack_extra(self, source, target):
        """``inter_rack_ms`` when the link joins two different racks, else 0."""
        a, b = self.rack_of.get(source), self.rack_of.get(target)
        return self.inter_rack_ms if a is not None and b is not None and a != b else 0

    # -- faults -----------------------------------------------------------------------------
    def is_blocked(self, source, target):
        return (source, target) in self.blocked

    def cut(self, source, target):
        if source != target:
            self.blocked.add((source, target))

    def isolate(self, node, others):
        for other in others:
            self.cut(node, other)
            self.cut(other, node)

    def partition(self, groups):
        """Only nodes in the same group talk; nodes in no group form one more group."""
        group_of = {}
        for index, group in enumerate(groups):
            for node in group:
                group_of[node] = index
        rest = len(groups)
        members = list(self.nodes)
        for a in members:
            for b in members:
                if a != b and group_of.get(a, rest) != group_of.get(b, rest):
                    self.blocked.add((a, b))

    def heal_nodes(self, nodes):
        """Restore every link with an end in ``nodes`` (a rack's heal), and no other; what those
        links held gets through as after any heal."""
        members = set(nodes)
        self.blocked = {pair for pair in self.blocked
                        if pair[0] not in members and pair[1] not in members}
        for pair in [p for p in self.link_latency if p[0] in members or p[1] in members]:
            del self.link_latency[pair]
        for pair in [p for p in self.held if p[0] in members or p[1] in members]:
            self._release(pair)   # in the order the links first held something: deterministic

    def heal(self, source=None, target=None):
        if source is None:
            self.blocked.clear()
            self.link_latency.clear()
            pairs = list(self.held)
        else:
            pairs = [(source, target), (target, source)]
            for pair in pairs:
                self.blocked.discard(pair)
                self.link_latency.pop(pair, None)
        for pair in pairs:
            if pair in self.held and pair not in self.blocked:
                self._release(pair)

    def slow(self, source, target, latency_ms):
        self.link_latency[(source, target)] = latency_ms

    # -- sending ----------------------------------------------------------------------------
    def send(self, source, target, type_, body, correlation_id=None, is_request=False):
        sched = self.scheduler
        now = sched.now_ms
        msg_id = self._next_id = self._next_id + 1
        self.sent += 1
        if source == target:
            deliver = now
        elif not self.jitter_ms and not self.link_latency and not self._last_delivery \
                and not self.behind and not self.inter_rack_ms:
            deliver = now + self.latency_ms  # constant latency keeps every link FIFO by itself
        elif not self.jitter_ms and not self.link_latency and not self._last_delivery \
                and not self.inter_rack_ms:
            deliver = self.queued_behind((source, target), type_, correlation_id, is_request,
                                         now + self.latency_ms)
        else:
            latency = self.link_latency.get((source, target), self.latency_ms)
            if self.inter_rack_ms:
                latency += self.rack_extra(source, target)
            if self.jitter_ms:
                latency += self.rng.randint(0, self.jitter_ms)
            deliver = now + latency
            link = (source, target)
            last = self._last_delivery.get(link, 0)
            if deliver < last:
                deliver = last
            self._last_delivery[link] = deliver
            if self.behind:
                deliver = self.queued_behind(link, type_, correlation_id, is_request, deliver)
        # Envelope(...), built without the Python-level __init__ call (a third of its cost)
        env = _new(Envelope)
        env.id, env.source, env.target = msg_id, source, target       # (3-tuples: no tuple built)
        env.type, env.body, env.sent_at_ms = type_, body, now
        env.deliver_at_ms, env.correlation_id, env.is_request = deliver, correlation_id, is_request
        if self.blocked and (source, target) in self.blocked:
            self._hold(env)
            return env
        self.in_flight[msg_id] = env
        if self.observer:
            self.observer("send", env)
        # Scheduler.schedule_at, inlined on CPython: one call less per message
        sched._seq = seq = sched._seq + 1
        if sched.keyed:
            sched.push(deliver, seq, self._deliver, env)
        else:
            heappush(sched._heap, (deliver, seq, self._deliver, env))
        return env

    def _deliver(self, env):
        # Every message passes here: plain subscripts in try blocks instead of dict.get/pop
        # calls (the same semantics; a missing key is the rare case).
        try:
            del self.in_flight[env.id]
        except KeyError:
            pass
        if self.blocked and (env.source, env.target) in self.blocked:
            self._hold(env)
            return
        try:
            node = self.nodes[env.target]
        except KeyError:
            return
        if node is None:
            return
        state = node.net_state
        if state == "up":
            if self.observer:
                self.observer("deliver", env)
            if node.paused:
                node.deferred.append(("message", env))
                return
            if node.__class__.dispatch is not _NODE_DISPATCH:
                node.dispatch(env)
                return
            # Node.dispatch, inlined (every message of a broker or a client passes here)
            corr = env.correlation_id
            if corr is not None and not env.is_request:
                pending = node.pending
                try:
                    entry = pending[corr]
                except KeyError:
                    return  # late response to a request that timed out or a previous incarnation
                del pending[corr]
                body = env.body
                entry[0](entry[1], body,
                         DISCONNECTED if "error" in body and body["error"] == DISCONNECTED else None)
                return
            try:
                handler = node.handlers[env.type]
            except KeyError:
                handler = None
            if handler is not None:
                handler(env)
            else:
                node.dispatch(env)
        elif state == "refusing" and env.is_request:
            # Connection refused: the sender learns it one way-latency later.
            self.send(env.target, env.source, response_type(env.type), {"error": DISCONNECTED},
                      env.correlation_id)
        else:
            if state == "silent" and env.is_request and isinstance(env.correlation_id, tuple):
                self.unanswered.setdefault(env.target, {})[env.source] = env.correlation_id[0]
            self.dropped += 1
            if self.observer:
                self.observer("drop", env)

    def machine_booted(self, node_id):
        """A powered-off node is back: reset the connections of peers still retransmitting."""
        for peer, incarnation in self.unanswered.pop(node_id, {}).items():
            self.send(node_id, peer, CONNECTION_RESET, {"incarnation": incarnation})

    def in_flight_view(self):
        return [env.to_dict() for env in self.in_flight.values()]


#: the dispatch ``_deliver`` inlines; a node class that overrides it is dispatched the long way
_NODE_DISPATCH = Node.dispatch
