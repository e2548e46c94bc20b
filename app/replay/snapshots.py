"""Snapshots of one straight run for fast seeking, sharing what does not change between them.

``Simulation.snapshot()`` pickles the whole state, and the state of a run grows with its length
(every record, every history event, every replica's log): at the end of a one-hour run one
snapshot is ~27 MB and takes 0.4-1 s to load. Seeking needs a snapshot every few simulated
seconds, so snapshots here are *deltas over a shared pool*:

* Every large list or dict in the state (a replica's log, the history, the records by id, a
  consumer's reads, ...) is cut into chunks of ``CHUNK`` consecutive elements. A full chunk whose
  elements did not change between two snapshots is written once into the *pool* stream; later
  snapshots refer to it (and to everything it holds) by pickle memo index, which costs one opcode
  to write and nothing to load.
* A snapshot (a *delta*) pickles the rest of the state — scheduler, in-flight messages, broker
  and client state, the young tail of each large container — with a pickler whose memo is a copy
  of the pool's, so shared objects become memo references. Loading it uses an unpickler whose
  memo is a copy of the loaded pool's memo: shared objects are the pool's own objects.

Sharing an object between restored simulations is sound only when no restored simulation
mutates it. A restored simulation only ever re-simulates the recorded (straight) run, so a
shared element must not change after it was pooled, anywhere in the straight run. That is
checked, not assumed: ``SnapshotWriter.verify()`` at the end of the build recomputes the state of
every pooled element and compares it with its state when it was pooled, and the writer records
any live reference to a mutable object nested inside a pooled element (aliasing). When a check
fails the snapshots must not be used; ``build`` then rebuilds sharing only deeply immutable
elements. A simulation that will leave the recorded path (a fork) must be made independent first
(``independent_copy``), and a restored simulation must never be finalised (``result()``).

Snapshots are pickles: load only what this program wrote (the store signs them).
"""
import io
import pickle
from itertools import chain
from operator import is_

from engine.snapshots import SnapshotUnpickler

CHUNK = 256
#: Protocol 3 writes explicit memo indices (PUT n). Protocols 4-5 use MEMOIZE, whose index is the
#: unpickler's memo length, which CPython does not carry over when a memo is assigned.
PROTOCOL = 3
BIG = 2 * CHUNK
_ATOMS = frozenset((type(None), bool, int, float, str, bytes))


class NotShareable(Exception):
    """An element whose state cannot be summarised safely (a function, an open handle...)."""


def _slot_names(cls):
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        names.extend(s for s in slots if s not in ("__dict__", "__weakref__"))
    return names


_SLOTS = {}
_MISSING = object()
_MISSING_STATE = ("<unset>",)


def state_of(x, nested, immutable_only, depth=0):
    """A value that changes whenever ``x`` (or anything inside it) changes; mutable containers
    inside ``x`` are appended to ``nested``. Raises NotShareable."""
    t = type(x)
    if t in _ATOMS:
        return x
    if t is tuple:
        return tuple([state_of(e, nested, immutable_only, depth + 1) for e in x])
    if immutable_only:
        raise NotShareable(t.__name__)
    if depth > 4:
        raise NotShareable("too deep")
    if t is dict:
        if depth:
            nested.append(x)
        return ("d",) + tuple([(state_of(k, nested, True, depth + 1), state_of(v, nested, False, depth + 1))
                               for k, v in x.items()])
    if t is list:
        if depth:
            nested.append(x)
        return ("l",) + tuple([state_of(e, nested, False, depth + 1) for e in x])
    if depth:
        raise NotShareable(t.__name__)
    # a plain object holding simple values (a Record): its slots and attributes
    names = _SLOTS.get(t)
    if names is None:
        if any(getattr(t, m, None) is not getattr(object, m, None)
               for m in ("__reduce__", "__reduce_ex__", "__getstate__", "__setstate__")):
            raise NotShareable(t.__name__)
        names = _SLOTS[t] = tuple(_slot_names(t))
    values = [t]
    for name in names:
        value = getattr(x, name, _MISSING)
        values.append(_MISSING_STATE if value is _MISSING else state_of(value, nested, False, depth + 1))
    d = getattr(x, "__dict__", None)
    if d is not None:
        values.append(state_of(d, nested, False, depth + 1))
    return tuple(values)


def chunk_state(elements, immutable_only):
    nested = []
    return tuple([state_of(e, nested, immutable_only) for e in elements]), nested


class _Track:
    """A large container followed across snapshots (kept alive so its id stays unique)."""
    __slots__ = ("obj", "tid", "chunks", "pending", "blocked")

    def __init__(self, obj, tid):
        self.obj = obj
        self.tid = tid
        self.chunks = {}    # chunk index -> pooled chunk (tuple of elements, or (keys, values))
        self.pending = {}   # chunk index -> (chunk, state) seen at the previous snapshot
        self.blocked = {}   # chunk index -> chunk that must not be shared (aliased)


class SnapshotWriter:
    """Snapshots of one simulation, taken in time order along one straight run.

    ``take(sim)`` returns ``(pool_segment, delta)``: bytes to append to the run's pool stream,
    then the snapshot itself. ``share``: "all" (shares stable elements of any simple kind),
    "immutable" (only deeply immutable elements such as log entries) or "none".
    """

    def __init__(self, share="all"):
        if share not in ("all", "immutable", "none"):
            raise ValueError(share)
        self.share = share
        self._pool_out = io.BytesIO()
        self._pool = pickle.Pickler(self._pool_out, protocol=PROTOCOL)
        self._tracks = {}
        self._next_tid = 0
        self._pooled = []            # (chunk, state hash, immutable_only, is_dict) for verify()
        self._nested = []            # (container, state) inside pooled elements, checked each time
        self._refs = {}
        self._seen = set()
        self._candidates = []
        self.problems = []
        self.pooled_elements = 0

    # -- the pickler hook ----------------------------------------------------------------------------
    def _persistent_id(self, obj):
        t = type(obj)
        if t is list or t is dict:
            refs = self._refs
            key = id(obj)
            refs[key] = refs.get(key, 0) + 1
            if len(obj) >= BIG and self.share != "none":
                return self._container_pid(obj, t is dict)
        return None

    def _container_pid(self, obj, is_dict):
        track = self._tracks.get(id(obj))
        if track is None:
            self._next_tid += 1
            track = self._tracks[id(obj)] = _Track(obj, self._next_tid)
        elif id(obj) in self._seen:
            return ("R", track.tid)   # referenced again in this snapshot
        self._seen.add(id(obj))
        if is_dict:
            keys, values = list(obj), list(obj.values())
            n_full = len(keys) // CHUNK
            chunks = tuple([self._chunk(track, j, (tuple(keys[j * CHUNK:(j + 1) * CHUNK]),
                                                   tuple(values[j * CHUNK:(j + 1) * CHUNK])), True)
                            for j in range(n_full)])
            return ("D", track.tid, chunks, dict(zip(keys[n_full * CHUNK:], values[n_full * CHUNK:])))
        n_full = len(obj) // CHUNK
        chunks = tuple([self._chunk(track, j, tuple(obj[j * CHUNK:(j + 1) * CHUNK]), False)
                        for j in range(n_full)])
        return ("L", track.tid, chunks, obj[n_full * CHUNK:])

    def _chunk(self, track, j, part, is_dict):
        pooled = track.chunks.get(j)
        if pooled is not None:
            if _same(pooled, part, is_dict):
                return pooled
            del track.chunks[j]
        blocked = track.blocked.get(j)
        if blocked is not None:
            if _same(blocked, part, is_dict):
                return part
            del track.blocked[j]
        if is_dict and not all(type(k) in _ATOMS for k in part[0]):
            track.blocked[j] = part
            return part
        immutable_only = self.share == "immutable"
        try:
            state, nested = chunk_state(part[1] if is_dict else part, immutable_only)
        except NotShareable:
            track.pending.pop(j, None)
            track.blocked[j] = part
            return part
        previous = track.pending.get(j)
        if previous is not None and _same(previous[0], part, is_dict) and previous[1] == state:
            # unchanged for a whole snapshot interval: share it from the next snapshot on
            self._candidates.append((track, j, part, state, nested, immutable_only, is_dict))
        else:
            track.pending[j] = (part, state)
        return part

    # -- taking a snapshot ---------------------------------------------------------------------------
    def take(self, sim):
        self._seen = set()
        self._refs = {}
        self._candidates = []
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=PROTOCOL)
        pickler.memo = self._pool.memo
        pickler.persistent_id = self._persistent_id
        pickler.dump(sim)
        for key in [k for k in self._tracks if k not in self._seen]:
            del self._tracks[key]
        self._check_nested()
        refs = self._refs
        for track, j, part, state, nested, immutable_only, is_dict in self._candidates:
            del track.pending[j]
            if any(refs.get(id(n), 0) > 1 for n in nested):
                track.blocked[j] = part      # a list or dict in it is also live state: keep it private
                continue
            track.chunks[j] = part
            self._pool.dump(part)
            self._pooled.append((part, hash(state), immutable_only, is_dict))
            self._nested.extend((n, state_of(n, [], False)) for n in nested)
            self.pooled_elements += len(part[1] if is_dict else part)
        self._candidates = []
        self._refs = {}
        segment = self._pool_out.getvalue()
        self._pool_out.seek(0)
        self._pool_out.truncate()
        return segment, out.getvalue()

    def _check_nested(self):
        for obj, state in self._nested:
            if state_of(obj, [], False) != state:
                self.problems.append(f"a {type(obj).__name__} inside a shared element changed")
                return

    def verify(self):
        """Problems found: shared elements whose state changed after they were shared. Call at the
        end of the straight run (before anything finalises the simulation)."""
        problems = list(self.problems)
        self._check_nested()
        problems.extend(p for p in self.problems if p not in problems)
        for part, state_hash, immutable_only, is_dict in self._pooled:
            try:
                state, _ = chunk_state(part[1] if is_dict else part, immutable_only)
            except NotShareable as exc:
                problems.append(f"a shared element became unshareable ({exc})")
                continue
            if hash(state) != state_hash:
                problems.append("a shared element changed after it was shared")
                break
        return problems


def _same(a, b, is_dict):
    if is_dict:
        return len(a[0]) == len(b[0]) and all(map(is_, a[0], b[0])) and all(map(is_, a[1], b[1]))
    return len(a) == len(b) and all(map(is_, a, b))


class SnapshotReader:
    """Loads the pool stream (it may grow while a build is under way) and restores deltas."""

    def __init__(self):
        self._buf = io.BytesIO()
        self._unpickler = SnapshotUnpickler(self._buf)
        self._read_pos = 0
        self.pool_bytes = 0

    def add_pool_segment(self, segment):
        if not segment:
            return
        self._buf.seek(0, io.SEEK_END)
        self._buf.write(segment)
        self.pool_bytes += len(segment)
        self._buf.seek(self._read_pos)
        end = self._buf.getbuffer().nbytes
        while self._buf.tell() < end:
            self._unpickler.load()
        self._read_pos = self._buf.tell()
        # keep memory bounded: the loaded bytes are no longer needed
        self._buf = io.BytesIO()
        self._read_pos = 0
        memo = self._unpickler.memo
        self._unpickler = SnapshotUnpickler(self._buf)
        self._unpickler.memo = memo

    def restore(self, delta):
        u = SnapshotUnpickler(io.BytesIO(delta))
        u.memo = self._unpickler.memo
        made = {}

        def persistent_load(pid):
            obj = made.get(pid[1])
            if obj is None:
                kind, tid, chunks, tail = pid
                if kind == "L":
                    obj = list(chain.from_iterable(chunks))
                    obj.extend(tail)
                else:
                    obj = dict(zip(chain.from_iterable([c[0] for c in chunks]),
                                   chain.from_iterable([c[1] for c in chunks])))
                    obj.update(tail)
                made[tid] = obj
            return obj

        u.persistent_load = persistent_load
        sim = u.load()
        sim.trace = None
        return sim


def independent_copy(sim):
    """A simulation sharing nothing with the pool: safe to leave the recorded path (fork)."""
    return type(sim).restore(sim.snapshot())
