"""The producer's partitioner (§12 client table): keyed records go to murmur2 of the key, as
the Java client's DefaultPartitioner; unkeyed ones round-robin up to 2.3 and to the sticky
partition of KIP-480 from 2.4.
"""


def murmur2(data):
    """Kafka's Utils.murmur2 (the default partitioner's hash of the key bytes)."""
    length = len(data)
    seed = 0x9747b28c
    m = 0x5bd1e995
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    tail = length - rest
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def key_partition(key, partitions):
    return (murmur2(str(key).encode()) & 0x7FFFFFFF) % partitions


class Partitioner:
    """Mixin of ``Producer``: which partition a record goes to."""

    def _available(self, topic):
        """Partitions of the topic with a known leader (recomputed on each metadata update)."""
        cached = self.available.get(topic)
        if cached is None:
            count = self.topic_partitions[topic]
            key = self.sim.key
            live = [p for p in range(count) if self.leaders.get(key(topic, p), (-1,))[0] >= 0]
            cached = self.available[topic] = live or list(range(count))
        return cached

    def _sticky(self):
        if self.spec.get("partitioner", "default") != "default":
            return False
        if not self.sim.rules_1_3:      # engine 1.2.0: sticky in eras "2.4" and "2.6" only
            return self.sim.era.version in ("2.4", "2.6")
        return self.sim.era.sticky_partitioner

    def _choose_partition(self, record):
        """DefaultPartitioner: murmur2 of the key; without a key, round-robin (<= 2.3) or the
        sticky partition (KIP-480, 2.4+)."""
        if record.partition is not None:
            return record.partition
        topic = record.topic
        if record.key is not None:
            return key_partition(record.key, self.topic_partitions[topic])
        available = self.available.get(topic)   # _available's cache, looked at first
        if available is None:
            available = self._available(topic)
        if self._sticky():
            current = self.sticky.get(topic)
            if current is None or current not in available:
                current = self._new_sticky(topic, None)
            return current
        self.round_robin += 1
        return available[(self.round_robin - 1) % len(available)]

    def _new_sticky(self, topic, previous, available=None):
        """StickyPartitionCache.nextPartition: a random available partition other than the last.
        ``available``: ``_available(topic)``, when the caller has it already."""
        if available is None:
            available = self._available(topic)
        # the same draw as from [p for p in available if p != previous], without the list
        skip = available.index(previous) if previous in available and len(available) > 1 else None
        if skip is None:
            choice = available[self.rng.randrange(len(available))]
        else:
            index = self.rng.randrange(len(available) - 1)
            choice = available[index if index < skip else index + 1]
        self.sticky[topic] = choice
        return choice
