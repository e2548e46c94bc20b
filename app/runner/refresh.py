"""Which partitions a live frame redraws: all of them in a small cluster, a rotating window of
them in a large one.

Why: at 2,000 records/s every partition's high watermark and log end offset move between two
frames, so a 256-partition cluster would resend all 256 partition entities 30 times a second —
frames of 250-340 KB that cost ~40-90 ms each to build, which starves the server's other rooms and
saturates viewers' connections. A large cluster therefore redraws at most ``PARTITIONS_PER_FRAME``
partitions per frame in rotation (each is at most ``ceil(partitions / PARTITIONS_PER_FRAME)``
frames old, a few tenths of a second), while any partition whose *structure* changed — a new
partition registration (state znode version or KRaft partition epoch: leader, leader epoch or ISR written), a replica's broker stopping
or starting, a replica becoming leader or learning a new leader epoch — or whose log the story
says may have lost records is redrawn in the very frame it happened. What the viewer sees of
leadership and ISR is therefore never stale; only offsets of quiet partitions lag by a fraction
of a second.
"""

from .registration import partition_registration

PARTITIONS_PER_FRAME = 48


def structure_of(sim, key, replicas):
    """What must never be drawn late: the state znode's version and every replica's process and
    local leadership. Cheap (no log reads), computed for every partition every frame."""
    registration = partition_registration(sim, key)
    local = []
    for b in replicas:
        broker = sim.brokers[b]
        part = broker.partitions.get(key) if broker.running else None
        local.append((broker.running, part.leader_epoch if part else None, bool(part and part.is_leader)))
    return (registration[0] if registration else None, tuple(local))


class PartitionRefresh:
    """Keeps the last drawn entity of every partition and decides which to rebuild this frame."""

    def __init__(self, per_frame=PARTITIONS_PER_FRAME):
        self.per_frame = per_frame
        self.cursor = 0
        self.drawn = {}          # key -> entity last built
        self.structure = {}      # key -> structure_of(...) when it was built

    def entities(self, sim, keys, dirty, build):
        """``{key: entity}`` for every key in ``keys`` (a list in a stable order); ``build(sim,
        key)`` makes a fresh entity; ``dirty`` keys are always rebuilt."""
        n = len(keys)
        if n <= self.per_frame:
            return {key: build(sim, key) for key in keys}
        window = {keys[(self.cursor + i) % n] for i in range(self.per_frame)}
        self.cursor = (self.cursor + self.per_frame) % n
        out = {}
        for key in keys:
            topic, index = sim.split_key(key)
            shape = structure_of(sim, key, sim.topics[topic]["assignment"][str(index)])
            if key in window or key in dirty or self.structure.get(key) != shape or key not in self.drawn:
                self.drawn[key] = build(sim, key)
                self.structure[key] = shape
            out[key] = self.drawn[key]
        return out
