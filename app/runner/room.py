"""A room: one live simulation, the people watching it and how fast it runs.

The runner owns rooms and calls ``advance`` and ``build_frame`` from its background task; web
handlers call ``control``, ``apply`` and ``inspect`` from their own threads. Everything that
touches the simulation holds ``room.lock``. The wall clock is never read here: the runner passes
``now`` (monotonic seconds) in, so a test can drive a room with a fake clock.
"""
import copy
import threading
import time
from collections import deque

from engine.simulation import Simulation

from .errors import AppError
from .frames import FrameBuilder
from .limits import check_command, check_scenario, check_speed, retarget
from .capture import capture_live
from .live_view import LiveView, partition_detail
from .metrics import LiveMetrics
from .series import LiveSeries
from .story import EVENTS_PER_FRAME, STORY_SKIP, fresh_story, replayable, story_events  # noqa: F401 - imported from here too

MAX_OWED_WALL_S = 0.25     # a simulation that cannot keep up never owes more than this
STEP_BUDGET_S = 0.25       # wall time one "step" may take


class Viewer:
    __slots__ = ("sid", "last_seq", "sent", "skipped")

    def __init__(self, sid):
        self.sid = sid
        self.last_seq = 0
        self.sent = 0
        self.skipped = 0


class Room:
    def __init__(self, room_id, scenario, now, source=None, max_records=1_000_000, prepare=None,
                 engine_version=None):
        self.id = room_id
        self.max_records = max_records
        self.lock = threading.RLock()
        self.viewers = {}
        self.frames = FrameBuilder()
        self.speed = 1.0
        self.pause_on_violation = True
        self.created_s = now
        self.last_active_s = now
        self.run_no = 0
        self.notice = None
        self.owner = None
        self.frame_cost_s = 0.0           # what building and planning one frame costs (moving average)
        self.frame_credit = 0.0           # the frame time this room has earned (Runner.tick)
        self._load(scenario, now, source or {"kind": "custom"}, prepare, engine_version)

    # -- snapshots (a room worker's rooms survive its death: app/rooms/recovery.py) --------------------
    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("lock")
        state["viewers"] = {}          # connections belong to the web process; they join again
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.lock = threading.RLock()
        view = self.view               # the network's observer comes back fresh and detached
        view.tap = self.sim.network.observer = type(view.tap)()
        if view.fetch_clock is not None:
            view.tap.on_deliver = view.fetch_clock

    # -- loading -----------------------------------------------------------------------------------
    def _load(self, scenario, now, source, prepare=None, engine_version=None):
        # engine_version: a fork of an old run keeps its engine's behaviour (docs/model.md §19);
        # restart, replay and reconfigure keep the room's, loading another scenario the current
        sim = Simulation(scenario, engine_version=engine_version)   # ScenarioError goes back to the user
        if prepare is not None:
            # e.g. a fork moved to its moment, before anyone sees it; a simulation returned
            # (computed in a worker process) replaces the fresh one
            prepared = prepare(sim)
            sim = prepared if isinstance(prepared, Simulation) else sim
        self.sim = sim
        self.engine_version = sim.engine_version
        self.scenario = copy.deepcopy(sim.scenario)
        self.source = source
        self.view = LiveView(sim)
        self.series = LiveSeries()        # the chart's history since the start of this run
        self.series.observe(sim)
        self.metrics = LiveMetrics(sim)   # Kafka's own metrics since the start of this run
        self.metrics.observe(sim)
        self.frames.reset()
        self.run_no += 1
        self.playing = True
        self.paused_reason = None
        self.sim_clock = float(sim.now_ms)
        self.wall_last = now
        self.samples = deque(maxlen=64)
        self.actual_speed = 0.0
        self.behind = False
        self._token = None
        self.pause_at = None              # a walkthrough's next step: pause when the clock gets there
        self.rushing = False              # run_to: as fast as possible up to pause_at

    def load(self, scenario, now, source=None, notice=None):
        with self.lock:
            self._load(scenario, now, source or {"kind": "custom"})
            self.notice = notice
            return self.describe()

    @property
    def commands(self):
        """The live commands recorded so far (normalised operations with ``at_ms``)."""
        return list(self.sim.commands)

    def describe(self):
        with self.lock:
            sim = self.sim
            return {"room": self.id, "name": sim.scenario["name"], "kafka_version": sim.scenario["kafka_version"],
                    "t_ms": sim.now_ms, "duration_ms": sim.scenario["duration_ms"], "finished": sim.finished,
                    "playing": self.playing, "speed": self.speed, "viewers": len(self.viewers),
                    "commands": len(sim.commands), "source": self.source}

    # -- what the web layer reads: plain data, each call under the lock (the same calls reach a
    #    room living in a room worker process: app/rooms/)
    def now_ms(self):
        with self.lock:
            return self.sim.now_ms

    def info(self):
        """``describe()`` with the recorded live commands."""
        with self.lock:
            return {**self.describe(), "command_list": list(self.sim.commands)}

    def replay_document(self):
        """The live session as a scenario that replays it (see ``replayable``)."""
        with self.lock:
            return replayable(self.sim)[0]

    def series_of(self, key):
        """(the frames' run, partition ``key``'s chart since the run began, or None)."""
        with self.lock:
            return self.frames.run, self.series.of(self.sim, key)

    def metrics_now(self):
        """(the frames' run, Kafka's metrics of the run so far)."""
        with self.lock:
            return self.frames.run, self.metrics.of(self.sim)

    def capture(self):
        """What saving the session needs (``app.runner.capture``): list copies, milliseconds."""
        with self.lock:
            return capture_live(self.sim)

    # -- time ------------------------------------------------------------------------------------------
    def advance(self, now, slice_s, perf=time.perf_counter):
        """Move simulated time on by the wall time since the last call times the speed, spending at
        most ``slice_s`` of wall time; a run that cannot keep up falls behind (see actual_speed)."""
        dt = max(0.0, now - self.wall_last)
        self.wall_last = now
        sim = self.sim
        if not self.playing or sim.finished:
            self.samples.clear()
            self.actual_speed = 0.0
            self.behind = False
            return
        if self.speed == "max" or self.rushing:
            target = sim.scenario["duration_ms"]
        else:
            owed = max(self.sim_clock, sim.now_ms) + dt * 1000.0 * self.speed
            self.sim_clock = min(owed, sim.now_ms + self.speed * 1000.0 * MAX_OWED_WALL_S + 1)
            target = int(self.sim_clock)
        if self.pause_at is not None:
            target = min(target, self.pause_at)
        deadline = perf() + slice_s
        violations = sim.violations
        seen = len(violations)
        observe = self._observe                # samples at their own simulated moments, even at max speed
        if self.pause_on_violation:
            def stop():
                observe(sim)
                return perf() > deadline or len(violations) > seen
        else:
            def stop():
                observe(sim)
                return perf() > deadline
        sim.advance_to(target, stop)
        observe(sim)
        self.behind = self.speed == "max" or self.rushing or sim.now_ms + 1 < target
        self.samples.append((now, sim.now_ms))
        while len(self.samples) > 2 and now - self.samples[0][0] > 1.0:
            self.samples.popleft()
        first_wall, first_sim = self.samples[0]
        if now - first_wall > 0.05:
            self.actual_speed = (sim.now_ms - first_sim) / ((now - first_wall) * 1000.0)
        if self.pause_on_violation and len(violations) > seen:
            self.playing = False
            self.paused_reason = "violation"
        if self.pause_at is not None and sim.now_ms >= self.pause_at and not sim.finished:
            self.playing, self.paused_reason = False, "pause_at"
            self.pause_at, self.rushing = None, False
            self.sim_clock = float(sim.now_ms)
        if sim.finished:
            self.playing = False
            self.paused_reason = "finished"
        elif len(sim.records) >= self.max_records:
            self.playing = False
            self.paused_reason = "record limit"

    def _observe(self, sim):
        self.series.observe(sim)
        self.metrics.observe(sim)

    # -- frames ------------------------------------------------------------------------------------------
    def clock(self):
        sim = self.sim
        return {"room": self.id, "run": self.run_no, "t_ms": sim.now_ms,
                "duration_ms": sim.scenario["duration_ms"], "finished": sim.finished,
                "playing": self.playing, "paused_reason": self.paused_reason, "speed": self.speed,
                "actual_speed": round(self.actual_speed, 2), "behind": self.behind,
                "pause_on_violation": self.pause_on_violation, "history_len": len(sim.history),
                "violations": len(sim.violations), "commands": len(sim.commands),
                "viewers": len(self.viewers), "notice": self.notice, "source": self.source,
                "pause_at": self.pause_at}

    def build_frame(self, wall_ms):
        """Fold the simulation's current state into the frame builder (True if a frame was made)."""
        sim = self.sim
        token = (self.run_no, sim.now_ms, sim.scheduler.events, len(sim.commands), len(sim.history))
        if token == self._token:
            return self.frames.touch(self.clock(), wall_ms)
        self._token = token
        self._observe(sim)
        events, dirty = fresh_story(self.view, sim)
        violations = self.view.new_violations()
        msgs, skipped = self.view.messages()
        entities = self.view.entities(dirty)
        entities.update(self.metrics.entities())
        return self.frames.update(entities, self.clock(), wall_ms, events, violations, msgs, skipped)

    def plan_sends(self, backlog):
        """[(payload text, [sids])]: who gets which payload now. A viewer whose connection still
        holds an unsent frame skips this one (it catches up from its own base later)."""
        seq = self.frames.seq
        groups = {}
        for viewer in self.viewers.values():
            if viewer.last_seq == seq:
                continue
            if backlog(viewer.sid):
                viewer.skipped += 1
                continue
            groups.setdefault(self.frames.base_for(viewer.last_seq), []).append(viewer)
        plan = []
        for base, viewers in groups.items():
            text = self.frames.payload(base)
            for viewer in viewers:
                viewer.last_seq = seq
                viewer.sent += 1
            plan.append((text, [v.sid for v in viewers]))
        return plan

    # -- what users do ---------------------------------------------------------------------------------
    def control(self, action, now, value=None):
        """play | pause | step | speed | restart | replay | pause_on_violation. Returns a reply dict."""
        with self.lock:
            sim = self.sim
            self.notice = None
            if action == "play":
                if sim.finished:
                    raise AppError("action", "the run has ended", "restart or replay")
                if len(sim.records) >= self.max_records:
                    raise AppError("action", f"this run has produced {len(sim.records)} records, the limit of "
                                             "this server", "restart, or a scenario with fewer records")
                self.playing, self.paused_reason = True, None
                self.sim_clock = float(sim.now_ms)
                self.wall_last = now
                return {}
            if action == "pause":
                self.playing, self.paused_reason = False, "user"
                self.rushing = False
                return {}
            if action == "speed":
                self.speed = check_speed(value)
                self.sim_clock = float(sim.now_ms)
                return {"speed": self.speed}
            if action == "pause_on_violation":
                if not isinstance(value, bool):
                    raise AppError("value", "is not a boolean", "true or false")
                self.pause_on_violation = value
                return {"pause_on_violation": value}
            if action == "step":
                return {"events": self._step()}
            if action in ("pause_at", "run_to"):
                return self._pause_at(action, value)
            if action == "restart":
                self._load(self.scenario, now, self.source, engine_version=self.engine_version)
                return {"restarted": True}
            if action == "replay":
                doc, dropped = replayable(sim)
                commands = len(sim.commands)
                self._load(doc, now, {"kind": "replay", "of": self.source}, engine_version=self.engine_version)
                self.notice = f"replaying the session: {commands} live command(s) are now timeline operations" + (
                    f"; {dropped} scenario operation(s) that the live run ignored were left out" if dropped else "")
                return {"replayed": commands, "dropped": dropped}
            raise AppError("action", f"{str(action)[:30]!r} is not a control",
                           "play, pause, step, speed, restart, replay, pause_on_violation, pause_at, run_to")

    def _pause_at(self, action, value):
        """A walkthrough's controls (app/guides): ``pause_at`` t pauses the run when its clock
        reaches t (None: no longer), at whatever speed it plays; ``run_to`` t plays as fast as
        possible up to t and pauses there (the live page's "jump to step": time only moves on)."""
        sim = self.sim
        if value is None and action == "pause_at":
            self.pause_at, self.rushing = None, False
            return {"pause_at": None}
        if isinstance(value, bool) or not isinstance(value, int) or value <= sim.now_ms:
            raise AppError("value", f"{str(value)[:20]!r} is not a later moment of this run",
                           f"an integer t_ms after the clock's {sim.now_ms} (restart to go back)")
        if value > sim.scenario["duration_ms"]:
            raise AppError("value", f"{value} is after the end of the run", f"at most {sim.scenario['duration_ms']}")
        self.pause_at, self.rushing = value, action == "run_to"
        if self.rushing:
            if sim.finished:
                raise AppError("action", "the run has ended", "restart or replay")
            self.playing, self.paused_reason = True, None
        return {"pause_at": value}

    def _step(self, perf=time.perf_counter):
        """Pause and run to the next event of the replication story (HW moves alone do not stop it)."""
        sim = self.sim
        self.playing, self.paused_reason = False, "step"
        if sim.finished:
            raise AppError("action", "the run has ended", "restart or replay")
        deadline = perf() + STEP_BUDGET_S
        start = len(sim.history)
        while not sim.finished and perf() < deadline:
            new = sim.step_event()
            if any(e["type"] not in STORY_SKIP for e in new):
                break
        self.sim_clock = float(sim.now_ms)
        if sim.finished:
            self.paused_reason = "finished"
        return [{"i": start + i, **e} for i, e in enumerate(sim.history[start:]) if e["type"] not in STORY_SKIP][:50]

    def apply(self, op, limits):
        """A user's command, validated against the cluster as it is now and recorded. When the
        run is paused, time moves on by the 1 ms the command waits, so it takes effect now."""
        with self.lock:
            check_command(op, self.sim, limits)
            command = self.sim.apply(op)
            if not self.playing and not self.sim.finished:
                self.sim.advance_to(command["at_ms"])
                self.sim_clock = float(self.sim.now_ms)
            return command

    def reconfigure(self, version, config, now, limits):
        """Restart under another kafka_version and/or broker config, replaying the live commands."""
        with self.lock:
            doc, _dropped_ops = replayable(self.sim)
            if version is not None:
                doc, dropped = retarget(doc, version)
            else:
                dropped = []
            if config is not None:
                if not isinstance(config, dict):
                    raise AppError("config", "is not an object", "config key -> value")
                doc["config"] = {**doc.get("config", {}), **config}
                doc["config"] = {k: v for k, v in doc["config"].items() if v is not None}
            check_scenario(doc, limits)
            commands = len(self.sim.commands)
            self._load(doc, now, self.source, engine_version=self.engine_version)
            self.scenario = copy.deepcopy(self.sim.scenario)
            note = f"restarted under kafka_version {self.sim.scenario['kafka_version']}"
            if commands:
                note += f", replaying {commands} live command(s)"
            if dropped:
                note += "; dropped config keys this era does not know: " + ", ".join(dropped)
            self.notice = note
            return {"dropped": dropped, "replayed": commands}

    def inspect(self, key):
        with self.lock:
            sim = self.sim
            keys = [sim.key(t, p) for t, spec in sim.topics.items() for p in range(spec["partitions"])]
            if not isinstance(key, str) or key not in keys:
                raise AppError("partition", f"{str(key)[:60]!r} is not a partition of this cluster",
                               ", ".join(keys[:20]) + (" ..." if len(keys) > 20 else ""))
            return partition_detail(sim, key)

    def ledger(self, filters, page):
        """A page of the record ledger under filters (see ``RecordDigest.ledger_page``)."""
        with self.lock:
            rows, matched, scanned = self.view.digest.ledger_page(page=page, **filters)
            return {"rows": rows, "matched": matched, "scanned": scanned, "page": page}
