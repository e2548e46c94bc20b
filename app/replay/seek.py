"""Replaying saved runs: exact, fast seeking over a seek index of periodic snapshots.

A saved run is its scenario (with the live commands merged in), so it replays by deterministic
re-simulation. Seeking to simulated time ``t`` = the nearest snapshot at or before ``t`` +
``Simulation`` restored from it + ``advance_to(t)``: the state (and so the view) at ``t`` is the
one a straight run shows at ``t``. Snapshots (``app.replay.snapshots``) are taken along one
re-simulation of the run, one each ``EVENT_BUDGET`` scheduler events (checked every simulated
second), so re-simulating from a snapshot costs a bounded amount of work whatever the run's
length.

* ``build_index(scenario, end_ms)``: the re-simulation taking the snapshots (compressed); also
  returns a digest of the history it produced, compared with the saved history.
* ``Seeker``: one run's loaded index (the shared pool in memory, snapshot states fetched on
  demand): ``at_time(t)``, ``at_event(n)`` (right after the event that emitted history[n], as the
  live single-step does) and ``step_back(sim)``.
* ``Signer``: snapshots are pickles, so those kept in the store are signed (HMAC-SHA256 with the
  server's key) and a snapshot whose signature does not verify is never loaded; links and
  imported files only ever carry scenarios.

Simulations handed out by a ``Seeker`` share immutable parts with its pool: use them to look and
to re-simulate the recorded run (advance, step); to continue differently (a fork) take
``independent_copy`` first; never call ``result()`` on them.
"""
import contextlib
import gc
import hashlib
import hmac
import json
import threading
import time
import zlib

from engine.simulation import ENGINE_VERSION, Simulation
from engine.result import history_digest

from .snapshots import SnapshotReader, SnapshotWriter, independent_copy

FORMAT = 1
EVENT_BUDGET = 3000           # scheduler events between two snapshots (~40 ms to re-simulate)
STEP_MS = 1000                # how often the builder checks the budget
MAX_INTERVAL_MS = 600_000     # a snapshot at least this often, even in a quiet run
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class SeekIndexError(Exception):
    """A seek index that cannot be used (bad signature, wrong engine version, damaged)."""




def history_digest_of_texts(texts):
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\n")
    return h.hexdigest()


_gc_lock = threading.Lock()
_gc_state = {"depth": 0, "was_enabled": True}


@contextlib.contextmanager
def gc_paused():
    """No cyclic garbage collection while a seek restores and re-simulates (it allocates ~10^5
    objects that live on, so young collections would rescan them several times: a third of a
    seek's time at the tail). Nested and concurrent pauses share one switch; the collector comes
    back when the last ends and catches up then."""
    with _gc_lock:
        if _gc_state["depth"] == 0:
            _gc_state["was_enabled"] = gc.isenabled()
            gc.disable()
        _gc_state["depth"] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_state["depth"] -= 1
            if _gc_state["depth"] == 0 and _gc_state["was_enabled"]:
                gc.enable()


# -- building ----------------------------------------------------------------------------------------
def build_index(scenario, end_ms, *, event_budget=EVENT_BUDGET, share="all", finalize=False, engine_version=None):
    """Re-simulate ``scenario`` to ``end_ms`` taking snapshots (under ``engine_version``'s
    behaviour: the engine that made the run, None = the current one). Returns a dict: ``snapshots``
    (seq, t_ms, history_len, pool, state — compressed bytes), ``share`` (what sharing held up),
    ``problems``, ``history_digest`` (of the history at ``end_ms``; with ``finalize`` also
    ``final_digest`` after ``result()``), ``events`` and ``wall_ms``."""
    started = time.perf_counter()
    for mode in ([share] if share == "none" else [share, "immutable", "none"]):
        if mode == "immutable" and share == "none":
            continue
        built = _build(scenario, end_ms, event_budget, mode, finalize, engine_version)
        if not built["problems"]:
            break
    built["wall_ms"] = round((time.perf_counter() - started) * 1000)
    return built


def _build(scenario, end_ms, event_budget, share, finalize, engine_version=None):
    sim = Simulation(scenario, engine_version=engine_version)
    end_ms = min(int(end_ms), sim.scenario["duration_ms"])
    writer = SnapshotWriter(share)
    snapshots = []
    budget = event_budget if share != "none" else event_budget * 8

    def take():
        pool, state = writer.take(sim)
        snapshots.append({"seq": len(snapshots), "t_ms": sim.now_ms, "history_len": len(sim.history),
                          "pool": zlib.compress(pool, 1), "state": zlib.compress(state, 1)})

    take()  # t=0, before anything happened
    last_events, last_t = sim.scheduler.events, 0
    t = 0
    while t < end_ms:
        t = min(t + STEP_MS, end_ms)
        sim.advance_to(t)
        if sim.scheduler.events - last_events >= budget or t - last_t >= MAX_INTERVAL_MS or t == end_ms:
            take()
            last_events, last_t = sim.scheduler.events, t
    problems = writer.verify()
    out = {"snapshots": snapshots, "share": share, "problems": problems, "end_ms": end_ms,
           "events": sim.scheduler.events, "history_len": len(sim.history),
           "history_digest": history_digest(sim.history), "pooled_elements": writer.pooled_elements,
           "engine_version": sim.engine_version}
    if finalize and sim.now_ms >= sim.scenario["duration_ms"]:
        sim.result()          # the builder's own simulation: finalising it is harmless now
        out["final_digest"] = history_digest(sim.history)
    return out


# -- signing -----------------------------------------------------------------------------------------
class Signer:
    """HMAC-SHA256 over a snapshot's identity and bytes, keyed by the server's secret."""

    def __init__(self, key):
        if isinstance(key, str):
            key = key.encode()
        if not key or len(key) < 16:
            raise ValueError("the snapshot key must be at least 16 bytes")
        self._key = key

    def _mac(self, run_id, seq, kind, blob):
        header = f"isrlab-snapshot/{FORMAT}|{ENGINE_VERSION}|{run_id}|{seq}|{kind}|".encode()
        return hmac.new(self._key, header + blob, hashlib.sha256).digest()

    def sign(self, run_id, snap):
        return self._mac(run_id, snap["seq"], "pool", snap["pool"]) + \
            self._mac(run_id, snap["seq"], "state", snap["state"])

    def check(self, run_id, seq, kind, blob, mac):
        want = mac[:32] if kind == "pool" else mac[32:64]
        if len(mac) != 64 or not hmac.compare_digest(self._mac(run_id, seq, kind, blob), want):
            raise SeekIndexError(f"snapshot {seq} of run {run_id}: bad signature")


# -- seeking -----------------------------------------------------------------------------------------
#: decoded pool objects take about this many times their pickled size (measured on a one-hour run:
#: 27 MB of pickle -> ~80 MB of Python objects)
POOL_OBJECT_FACTOR = 3


class Seeker:
    """One run's seek index, loaded: the pool in memory, states fetched with ``load_state(seq)``
    (compressed bytes, already verified) and cached."""

    def __init__(self, scenario, snapshots, pool_segments, load_state, end_ms, state_cache=None):
        self.scenario = scenario
        self.end_ms = end_ms
        self.times = [s["t_ms"] for s in snapshots]
        self.history_lens = [s["history_len"] for s in snapshots]
        self._reader = SnapshotReader()
        self.pool_bytes = 0
        for segment in pool_segments:
            raw = zlib.decompress(segment)
            self.pool_bytes += len(raw)
            self._reader.add_pool_segment(raw)
        self._load_state = load_state
        self._states = {} if state_cache is None else state_cache
        self.stats = {"restores": 0}

    @classmethod
    def from_built(cls, scenario, built):
        snaps = built["snapshots"]
        states = {s["seq"]: s["state"] for s in snaps}
        return cls(scenario, snaps, [s["pool"] for s in snaps], states.__getitem__, built["end_ms"],
                   state_cache=states)

    def nbytes(self):
        """What this seeker holds in memory, measured: the pool it decoded (as pickled bytes, which
        the decoded objects exceed by a factor ``POOL_OBJECT_FACTOR``) and the cached states."""
        return int(self.pool_bytes * POOL_OBJECT_FACTOR) + sum(len(s) for s in self._states.values())

    def _restore(self, k):
        blob = self._states.get(k)
        if blob is None:
            blob = self._states[k] = self._load_state(k)
        self.stats["restores"] += 1
        return self._reader.restore(zlib.decompress(blob))

    def _index_for_time(self, t_ms):
        times = self.times
        lo, hi = 0, len(times) - 1
        while lo < hi:                 # last snapshot with t <= t_ms
            mid = (lo + hi + 1) // 2
            if times[mid] <= t_ms:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _index_for_event(self, n):
        lens = self.history_lens
        lo, hi = 0, len(lens) - 1
        while lo < hi:                 # last snapshot before history[n] was emitted
            mid = (lo + hi + 1) // 2
            if lens[mid] <= n:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def clamp(self, t_ms):
        return max(0, min(int(t_ms), self.end_ms))

    def at_time(self, t_ms, cursor=None):
        """The simulation at ``t_ms`` (after every event at or before it). ``cursor``: a
        simulation of this run (from this seeker) that may be moved forward instead of restoring."""
        t_ms = self.clamp(t_ms)
        k = self._index_for_time(t_ms)
        if cursor is not None and self.times[k] <= cursor.now_ms <= t_ms:
            sim = cursor
        else:
            sim = self._restore(k)
        sim.advance_to(t_ms)
        return sim

    def at_event(self, n, cursor=None):
        """The simulation right after the scheduler event that emitted ``history[n]`` (what the
        live single step shows). Past the last event: the end of the run."""
        n = max(0, int(n))
        k = self._index_for_event(n)
        if cursor is not None and len(cursor.history) <= n and self.history_lens[k] <= len(cursor.history):
            sim = cursor
        else:
            sim = self._restore(k)
        history = sim.history
        sim.advance_to(self.end_ms, lambda: len(history) > n)
        return sim

    def step(self, sim):
        """One event forward (the engine's ``step_event``), never past the run's end."""
        sim.step_event(self.end_ms)
        return sim

    def step_back(self, sim):
        """The single-step position before ``sim``'s: the latest state, strictly before it, at
        which a forward single step stops (right after an event that emitted history). At the
        start, the run's start."""
        current = len(sim.history)
        if current == 0:
            return self._restore(0)
        # stop positions (history lengths) between an earlier snapshot and the current one
        k = self._index_for_event(max(0, current - 1))
        while True:
            probe = self._restore(k)
            stops = []
            history = probe.history
            while len(history) < current:
                before = len(history)
                probe.advance_to(self.end_ms, lambda: len(history) > before)
                if len(history) == before:
                    break
                if len(history) < current:
                    stops.append(len(history))
            if stops:
                target = stops[-1]
                return self.at_event(target - 1)
            if k == 0:
                return self._restore(0)      # before the first step: the start of the run
            k -= 1


def fork_copy(sim):
    """A simulation that shares nothing with a seeker's pool (safe to continue differently)."""
    return independent_copy(sim)
