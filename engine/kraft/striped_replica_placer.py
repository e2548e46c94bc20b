"""Replica placement of the KRaft controller: Kafka's ``StripedReplicaPlacer``
(org.apache.kafka.metadata.placement, the same at 3.9.0 and 4.1.0; docs/model.md §21.3).

Brokers are grouped by rack (brokers without a rack form one more rack, sorted first, as
``OptionalStringComparator`` puts an absent rack before every name). Each partition takes its
first replica from the rack at a moving offset and the others from the following racks, round
robin; inside a rack, brokers are taken round robin from a random start, unfenced ones before
fenced ones, and the first replica (the leader) only from unfenced ones. Once as many partitions
have been placed as there are unfenced brokers, the rack list and every rack's broker lists are
shuffled. The scenario's topics are placed with every broker unfenced (``striped_placement``);
fenced brokers are kept here so the placer can be checked against Kafka's own tests.

The random draws come from ``rng`` (``engine.core.rng.JavaRandom``: ``randrange`` is
``nextInt``, ``shuffle`` is ``Collections.shuffle``) in Kafka's order: each rack's fenced then
unfenced start offset, racks in the order Kafka's ``HashMap`` walks them (``_hash_order``), then
the rack offset; a shuffle takes the rack list, then each rack's fenced and unfenced brokers.
"""


class _BrokerList:
    """StripedReplicaPlacer.BrokerList: brokers walked round robin, one pass per epoch."""
    __slots__ = ("brokers", "index", "offset", "epoch")

    def __init__(self):
        self.brokers = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng):
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch):
        """The next broker in this iteration epoch, or -1 when the epoch has had them all. A new
        epoch starts over one position further on."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    """StripedReplicaPlacer.Rack: its unfenced and fenced brokers."""
    __slots__ = ("fenced", "unfenced")

    def __init__(self):
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def next(self, epoch):
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


def _java_order(name):
    """OptionalStringComparator: no rack first, then String.compareTo (UTF-16 code units)."""
    return (name is not None, (name or "").encode("utf-16-be"))


def _java_hash(name):
    """Optional<String>.hashCode: String.hashCode over UTF-16 code units; 0 for no rack."""
    if name is None:
        return 0
    h = 0
    data = name.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _hash_order(names):
    """The order a java.util.HashMap holding ``names`` (in insertion order) iterates them: by
    bucket ((h ^ h >>> 16) & (capacity - 1), the capacity doubling from 16 past 3/4 full), then
    insertion order within a bucket."""
    capacity = 16
    while len(names) > capacity * 3 // 4:
        capacity *= 2
    buckets = []
    for name in names:
        h = _java_hash(name)
        buckets.append((h ^ (h >> 16)) & (capacity - 1))
    return [name for _, _, name in sorted(zip(buckets, range(len(names)), names))]


class RackList:
    """StripedReplicaPlacer.RackList: the racks, walked round robin from a moving offset."""

    def __init__(self, rng, brokers):
        """``brokers``: [(id, rack name or None)] or [(id, rack, fenced)], in the order the
        cluster lists them."""
        self.rng = rng
        self.racks = {}
        self.unfenced = 0
        for entry in brokers:
            broker, rack = entry[0], entry[1]
            fenced = len(entry) > 2 and entry[2]
            if rack not in self.racks:
                self.racks[rack] = _Rack()
            (self.racks[rack].fenced if fenced else self.racks[rack].unfenced).brokers.append(broker)
            self.unfenced += 0 if fenced else 1
        self.total = len(brokers)
        self.walk = _hash_order(list(self.racks))    # Kafka's racks.values() order
        for name in self.walk:
            self.racks[name].fenced.initialize(rng)
            self.racks[name].unfenced.initialize(rng)
        self.names = sorted(self.racks, key=_java_order)
        self.epoch = 0
        self.offset = rng.randrange(len(self.names)) if self.names else 0

    def place(self, replication_factor):
        """One partition's replicas, the first (the preferred leader) an unfenced broker of the
        first rack from the offset that has one left in this epoch."""
        if not 0 < replication_factor <= self.total or not self.unfenced:
            raise ValueError(f"cannot place {replication_factor} replicas on {self.total} brokers "
                             f"({self.unfenced} unfenced)")
        if self.epoch == self.unfenced and self.unfenced > 1:
            self._shuffle()   # as many partitions as unfenced brokers placed: avoid repeating them
            self.epoch = 0
        if self.offset == len(self.names):
            self.offset = 0
        first = self.offset
        steps = 0
        while True:
            broker = self.racks[self.names[first]].unfenced.next(self.epoch)
            if broker >= 0:
                replicas = [broker]
                break
            first = (first + 1) % len(self.names)
            steps = self._step(steps)
        index = self.offset
        for _ in range(1, replication_factor):
            broker = -1
            steps = 0       # each replica's search ends within one round of the racks (and a pass-over)
            while broker < 0:
                if index == first:
                    first = -1      # the leader's rack is passed over once
                else:
                    broker = self.racks[self.names[index]].next(self.epoch)
                index = (index + 1) % len(self.names)
                steps = self._step(steps)
            replicas.append(broker)
        self.epoch += 1
        self.offset += 1
        return replicas

    def _step(self, steps):
        """Kafka's loops have no exit when no rack has a broker left in this epoch; ours stop. With
        ``replication_factor`` at most the brokers, one search (the leader's, or one further
        replica's) finds a broker within a round of the racks plus the leader's pass-over; a limit
        over the whole partition would stop a long but finite walk (8 brokers, racks of 1 and 7,
        replication factor 8: Kafka places it)."""
        if steps > 2 * len(self.names) + 2:
            raise RuntimeError("StripedReplicaPlacer: no rack has a broker left in this epoch")
        return steps + 1

    def _shuffle(self):
        self.rng.shuffle(self.names)
        for name in self.walk:
            self.rng.shuffle(self.racks[name].fenced.brokers)
            self.rng.shuffle(self.racks[name].unfenced.brokers)


def striped_placement(rng, brokers, partitions, replication_factor):
    """StripedReplicaPlacer.place for one new topic: {"<partition>": [replicas]}. ``brokers``:
    [(id, rack or None)] in id order, all unfenced; ``replication_factor`` at most their number
    (the scenario's check)."""
    racks = RackList(rng, brokers)
    return {str(p): racks.place(replication_factor) for p in range(partitions)}
