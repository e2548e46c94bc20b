"""Seeded random streams, one per subsystem.

``Streams(seed).fork("network")`` always yields the same sequence for the same seed and name,
so a new draw in one subsystem (say, a fault generator) never reshuffles another (jitter).
Sub-seeds are derived with SHA-256, not ``hash()``, which is salted per process for strings.
"""
import hashlib
import random


def derive_seed(seed, name):
    digest = hashlib.sha256(f"{seed}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class Streams:
    __slots__ = ("seed", "_streams")

    def __init__(self, seed):
        self.seed = seed
        self._streams = {}

    def fork(self, name):
        stream = self._streams.get(name)
        if stream is None:
            stream = random.Random(derive_seed(self.seed, name))
            self._streams[name] = stream
        return stream


class JavaRandom:
    """``java.util.Random``'s sequence (a 48-bit linear congruential generator), with the two
    draws Kafka's replica placement makes: ``nextInt(bound)`` and ``Collections.shuffle``. A
    placement drawn from ``JavaRandom(s)`` is the one Kafka computes with ``new Random(s)``
    (docs/model.md §21.2). Subclasses may replace ``next`` (a test's fixed sequence)."""
    __slots__ = ("state",)
    MULTIPLIER = 0x5DEECE66D
    ADDEND = 0xB
    MASK = (1 << 48) - 1

    def __init__(self, seed):
        self.state = (seed ^ self.MULTIPLIER) & self.MASK     # Random.initialScramble

    def next(self, bits):
        self.state = (self.state * self.MULTIPLIER + self.ADDEND) & self.MASK
        value = self.state >> (48 - bits)
        return value - (1 << 32) if value >= 1 << 31 else value   # Java's (int) cast

    def randrange(self, bound):
        """Random.nextInt(bound): uniform in [0, bound), rejecting the top of the range."""
        r = self.next(31)
        m = bound - 1
        if bound & m == 0:
            return (bound * r) >> 31
        u = r
        while True:
            r = u % bound
            if u - r + m < 1 << 31:      # Java: u - r + m overflows (goes negative) -> draw again
                return r
            u = self.next(31)

    def shuffle(self, items):
        """Collections.shuffle(list, random): from the end, swap each slot with one at or before it."""
        for i in range(len(items), 1, -1):
            j = self.randrange(i)
            items[i - 1], items[j] = items[j], items[i - 1]


def java_random(seed, name):
    """A ``JavaRandom`` of its own for ``name``, derived from the run's seed like ``Streams``'."""
    return JavaRandom(derive_seed(seed, name))
