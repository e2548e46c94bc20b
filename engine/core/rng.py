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
