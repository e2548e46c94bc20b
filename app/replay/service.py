"""The replay service of a server: seek indexes kept in the store, loaded seekers, cursors.

``ReplayService(engine, key)`` answers "the simulation of saved run R at time t / after event n /
one step before this" for the web layer and the tests. It

* builds a run's seek index when first needed (in this process, or in a worker process so a
  long build does not hold the GIL the live rooms need), signs the snapshots and saves them in
  one transaction; a later server start loads them, verifying every signature, instead of
  re-simulating;
* keeps the seekers of the most recently used runs in memory (their pools are most of a
  run's state);
* keeps *cursors*: a viewer's current simulation, moved forward in place while it plays or steps
  (no restore), restored from the nearest snapshot when it jumps back.
"""
import collections
import logging
import os
import secrets
import threading
import time

from engine.simulation import ENGINE_VERSION
from engine.view import cluster_view

from ..errors import UserError
from ..store import runs as store_runs
from ..store.models import RunEvent
from ..workers import background_init  # the index builder's worker: niced, leaves with the server
from . import engines
from .lanes import BuildLanes
from .seek import (FORMAT, Seeker, SeekIndexError, Signer, build_index, fork_copy, gc_paused,
                   history_digest_of_texts)

log = logging.getLogger(__name__)
KEY_FILE = "snapshot.key"


def snapshot_key(instance_path, configured=None):
    """The key that signs snapshots: ``configured`` (settings) or a random key kept in the
    instance folder (created on first use, readable by the owner only)."""
    if configured:
        return configured.encode() if isinstance(configured, str) else configured
    os.makedirs(instance_path, exist_ok=True)
    path = os.path.join(instance_path, KEY_FILE)
    try:
        with open(path, "rb") as handle:
            key = handle.read().strip()
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    key = secrets.token_hex(32).encode()
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(path + ".tmp", path)
    return key



class ReplayError(UserError):
    """A request the replay cannot serve; ``status`` 404 when what it names does not exist."""


class _Cursor:
    __slots__ = ("token", "run_id", "sim", "used", "lock", "extra")

    def __init__(self, token, run_id, sim):
        self.token, self.run_id, self.sim = token, run_id, sim
        self.used = time.monotonic()
        self.lock = threading.Lock()
        self.extra = {}          # what the web layer keeps per viewer (its frames)


def _build_worker(scenario, end_ms, finalize, engine_version=None):
    """Runs in a worker process: the built index (bytes only), under the run's engine version."""
    from engine.tools.cli import tune_gc
    tune_gc()
    return build_index(scenario, end_ms, finalize=finalize, engine_version=engine_version)


class ReplayService:
    def __init__(self, engine, key, *, max_seekers=3, max_bytes=400 * 2 ** 20, max_cursors=24,
                 cursor_idle_s=900, worker_processes=False):
        self.engine = engine
        self.signer = Signer(key)
        self.max_seekers = max_seekers
        self.max_bytes = max_bytes                  # loaded seekers, LRU by measured size
        self.max_cursors = max_cursors
        self.cursor_idle_s = cursor_idle_s
        self._seekers = collections.OrderedDict()   # run_id -> (Seeker, run)
        self._cursors = {}
        self._lock = threading.RLock()
        self._building = {}                          # run_id -> threading.Event
        self.lanes = BuildLanes(self._new_builder)
        self._worker_processes = worker_processes
        self._scenarios = collections.OrderedDict()  # "sc:<digest>" -> scenario (not saved runs)
        self.stats = {"builds": 0, "loads": 0, "build_ms": 0}

    # -- runs ---------------------------------------------------------------------------------------
    def run(self, run_id):
        """The saved run (or a registered scenario, as a run that is not saved)."""
        if isinstance(run_id, str):
            with self._lock:
                doc, made_by = self._scenarios.get(run_id, (None, None))
            if doc is None:
                raise ReplayError("run", "this replay is no longer open on the server", "open the link again", 404)
            return self._versioned({"id": run_id, "scenario": doc, "end_ms": doc["duration_ms"],
                                    "duration_ms": doc["duration_ms"], "finished": True,
                                    "engine_version": made_by or ENGINE_VERSION, "saved": False})
        run = store_runs.get_run(self.engine, run_id)
        if run is None:
            raise ReplayError("run", f"no saved run {run_id!r}", "the id of a saved run", 404)
        run["saved"] = True
        return self._versioned(run)

    @staticmethod
    def _versioned(run):
        """The run with the engine version it re-simulates under (docs/model.md §19)."""
        run["replay_engine_version"] = engines.run_as(run.get("engine_version"))
        run["engine_note"] = engines.note(run.get("engine_version"))
        return run

    def register_scenario(self, scenario, keep=32, engine_version=None):
        """A replay of a scenario that is not saved (a scenario link): its key ("sc:...").
        ``engine_version``: the engine that made the link (its "e"); None = this one."""
        text = store_runs.canonical_json(scenario)
        if engines.run_as(engine_version) != ENGINE_VERSION:    # an old link replays its own history
            text = f"{engines.run_as(engine_version)}|{text}"
        key = "sc:" + history_digest_of_texts([text])[:24]
        with self._lock:
            self._scenarios[key] = (scenario, engine_version)
            self._scenarios.move_to_end(key)
            while len(self._scenarios) > keep:
                old, _ = self._scenarios.popitem(last=False)
                self._seekers.pop(old, None)
                self._drop_cursors(old)
        return key

    # -- indexes ------------------------------------------------------------------------------------
    def seeker(self, run_id, run=None):
        """The run's seeker: from memory, else loaded from the store, else built (and saved)."""
        with self._lock:
            hit = self._seekers.get(run_id)
            if hit is not None:
                self._seekers.move_to_end(run_id)
                return hit[0]
            waiting = self._building.get(run_id)
            if waiting is None:
                waiting = self._building[run_id] = threading.Event()
                owner = True
            else:
                owner = False
        if not owner:
            waiting.wait()
            with self._lock:
                hit = self._seekers.get(run_id)
            if hit is None:
                raise ReplayError("run", "the run's seek index could not be prepared", "try again")
            return hit[0]
        try:
            run = run or self.run(run_id)
            seeker = (self._load(run) if run["saved"] else None) or self._build(run)
            with self._lock:
                self._seekers[run_id] = (seeker, run)
                self._evict()
            return seeker
        finally:
            with self._lock:
                self._building.pop(run_id, None)
            waiting.set()

    def cached_bytes(self):
        with self._lock:
            return sum(s.nbytes() for s, _run in self._seekers.values())

    def _evict(self):
        """Least recently used seekers go while there are too many or they hold too many bytes
        (the newest always stays: it is the one a viewer is waiting for)."""
        while len(self._seekers) > 1 and (len(self._seekers) > self.max_seekers
                                          or self.cached_bytes() > self.max_bytes):
            old_id, _ = self._seekers.popitem(last=False)
            self._drop_cursors(old_id)

    def _load(self, run):
        index = store_runs.seek_index(self.engine, run["id"], engines.index_version(run["engine_version"]))
        if index is None or index["format"] != FORMAT:
            return None
        try:
            for snap in index["snapshots"]:
                self.signer.check(run["id"], snap["seq"], "pool", snap["pool"], snap["mac"])
            macs = {s["seq"]: s["mac"] for s in index["snapshots"]}
            engine, signer, run_id, index_id = self.engine, self.signer, run["id"], index["id"]

            def load_state(seq):
                found = store_runs.snapshot_state(engine, index_id, seq)
                if found is None:
                    raise SeekIndexError(f"snapshot {seq} of run {run_id} is missing")
                state, mac = found
                signer.check(run_id, seq, "state", state, macs[seq])
                return state

            seeker = Seeker(run["scenario"], index["snapshots"], [s["pool"] for s in index["snapshots"]],
                            load_state, min(run["end_ms"], index["details"].get("end_ms", run["end_ms"])))
        except SeekIndexError as exc:
            log.warning("seek index of run %s not used: %s; rebuilding it", run["id"], exc)
            return None
        seeker.info = dict(index["details"], history_matches=index["history_matches"], loaded=True,
                           engine_version=run["replay_engine_version"], engine_note=run["engine_note"])
        self.stats["loads"] += 1
        return seeker

    def _build(self, run):
        started = time.perf_counter()
        finalize = run["finished"] and run["end_ms"] >= run["duration_ms"]
        # its lane: saved runs, small links and large links never wait behind one another
        built = self.lanes.run(self.lanes.lane_of(run), _build_worker, run["scenario"], run["end_ms"],
                               finalize, run["replay_engine_version"], in_process=not self._worker_processes)
        if not run["saved"]:
            seeker = Seeker.from_built(run["scenario"], built)
            seeker.info = {"share": built["share"], "history_matches": True, "loaded": False,
                           "build_wall_ms": built["wall_ms"], "end_ms": built["end_ms"],
                           "engine_version": run["replay_engine_version"], "engine_note": run["engine_note"]}
            self.stats["builds"] += 1
            return seeker
        saved = self._saved_digest(run["id"])
        matches = saved in (built["history_digest"], built.get("final_digest"))
        if not matches:
            log.warning("run %s: re-simulation gives a different history than the one saved "
                        "(engine %s re-simulating as %s, saved with %s)", run["id"], ENGINE_VERSION,
                        run["replay_engine_version"], run["engine_version"])
        for snap in built["snapshots"]:
            snap["mac"] = self.signer.sign(run["id"], snap)
        details = {"share": built["share"], "problems": built["problems"][:5], "end_ms": built["end_ms"],
                   "events": built["events"], "pooled_elements": built["pooled_elements"],
                   "engine_version": run["replay_engine_version"], "engine_note": run["engine_note"]}
        store_runs.save_seek_index(self.engine, run["id"], engines.index_version(run["engine_version"]), fmt=FORMAT,
                                   snapshots=built["snapshots"], build_wall_ms=built["wall_ms"],
                                   history_matches=matches, details=details)
        seeker = Seeker.from_built(run["scenario"], built)
        seeker.info = dict(details, history_matches=matches, loaded=False, build_wall_ms=built["wall_ms"])
        self.stats["builds"] += 1
        self.stats["build_ms"] += round((time.perf_counter() - started) * 1000)
        return seeker

    def _saved_digest(self, run_id):
        from sqlalchemy import select

        from ..store.db import reading
        with reading(self.engine) as conn:
            texts = conn.execute(select(RunEvent.details).where(RunEvent.run_id == run_id)
                                 .order_by(RunEvent.seq)).scalars()
            return history_digest_of_texts(texts)

    @staticmethod
    def _new_builder():
        """One index builder process (spawned: the server's threads stay out of it)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=background_init, initargs=(os.getpid(),))

    def prepare(self, run_id):
        """Build or load the run's index in the background (e.g. right after saving)."""
        thread = threading.Thread(target=self._prepare_quietly, args=(run_id,), daemon=True,
                                  name=f"isrlab-index-{run_id}")
        thread.start()
        return thread

    def _prepare_quietly(self, run_id):
        try:
            self.seeker(run_id)
        except Exception:  # noqa: BLE001 - a background build must not take the server down
            log.exception("preparing the seek index of run %s failed", run_id)

    def forget(self, run_id):
        with self._lock:
            self._seekers.pop(run_id, None)
            self._drop_cursors(run_id)

    def close(self):
        self.lanes.close()

    # -- cursors -------------------------------------------------------------------------------------
    def _drop_cursors(self, run_id):
        for token in [t for t, c in self._cursors.items() if c.run_id == run_id]:
            del self._cursors[token]

    def _cursor(self, run_id, token, keep=True):
        if not keep and not token:
            return _Cursor(None, run_id, None)   # a one-off look: no simulation kept afterwards
        now = time.monotonic()
        with self._lock:
            for t in [t for t, c in self._cursors.items() if now - c.used > self.cursor_idle_s]:
                del self._cursors[t]
            cursor = self._cursors.get(token) if token else None
            if cursor is not None and cursor.run_id != run_id:
                cursor = None
            if cursor is None:
                if len(self._cursors) >= self.max_cursors:
                    oldest = min(self._cursors.values(), key=lambda c: c.used)
                    del self._cursors[oldest.token]
                token = secrets.token_urlsafe(12)
                cursor = self._cursors[token] = _Cursor(token, run_id, None)
            cursor.used = now
            return cursor

    def position(self, run_id, *, t_ms=None, event=None, step=None, cursor=None, look=None, stay=False,
                 keep=True):
        """Move a viewer's cursor on run ``run_id``; return ``(look(simulation), cursor token)``
        (``look`` runs under the cursor's lock; without it the simulation itself is returned).

        Exactly one of: ``t_ms`` (seek to a time), ``event`` (right after history[event]), or
        ``step`` = "forward" / "back" (one single step from the cursor's position); or ``stay``
        (look at the cursor's position without moving it). A stored
        snapshot that fails its signature check is never loaded: the index is rebuilt instead.
        ``keep=False`` without a cursor: a one-off look that keeps no simulation (token None).
        """
        try:
            return self._position(run_id, t_ms, event, step, cursor, look, stay, keep)
        except SeekIndexError as exc:
            # a stored snapshot failed its signature check or vanished: never load it; rebuild
            log.warning("run %s: %s; rebuilding its seek index", run_id, exc)
            self.forget(run_id)
            if not isinstance(run_id, str):
                store_runs.drop_seek_indexes(self.engine, run_id)
            return self._position(run_id, t_ms, event, step, None, look, stay, keep)

    def _position(self, run_id, t_ms, event, step, cursor, look, stay=False, keep=True):
        seeker = self.seeker(run_id)
        cur = self._cursor(run_id, cursor, keep)
        with cur.lock, gc_paused():
            sim = cur.sim
            if stay and sim is not None:
                pass
            elif step == "forward":
                sim = seeker.step(sim) if sim is not None else seeker.at_event(0)
            elif step == "back":
                sim = seeker.step_back(sim) if sim is not None else seeker.at_time(0)
            elif event is not None:
                sim = seeker.at_event(event, cursor=sim)
            else:
                sim = seeker.at_time(0 if t_ms is None else t_ms, cursor=sim)
            cur.sim = sim
            return (sim if look is None else look(sim, cur)), cur.token

    def view(self, run_id, **where):
        """``position`` and the engine's cluster view of it (JSON-able)."""
        def look(sim, _cursor):
            return {"t_ms": sim.now_ms, "history_len": len(sim.history), "view": cluster_view(sim)}
        out, token = self.position(run_id, look=look, **where)
        return dict(out, run_id=run_id, cursor=token)

    def fork_simulation(self, run_id, t_ms):
        """An independent simulation of the run at ``t_ms`` (continues the recorded scenario)."""
        sim = self.seeker(run_id).at_time(t_ms)
        return fork_copy(sim)
