"""Frames: what a room sends its viewers, serialised once and shared.

A room's state is a flat map of entities (``"b:1"``, ``"p:orders-0"``, ``"z:/controller"``, ...).
Each frame gets a sequence number; an entity remembers the frame in which it last changed, and a
removed entity leaves a tombstone. A viewer that holds frame ``base`` is sent only what changed
after ``base``: viewers that kept up all hold the previous frame and share one payload, a viewer
that skipped frames (its connection was still busy) gets one catch-up payload from its own base,
and a new viewer, or one further behind than the retained history, gets a full frame (base 0).

Payload (JSON text)::

    {"seq": 12, "base": 11, "run": 1, "full": 0, "wall_ms": 1.7e12,
     "clock": {...}, "set": {"p:orders-0": {...}}, "del": ["z:/isr_change_notification/..."],
     "events": [{"i": 345, "t_ms": ..., "type": ...}], "violations": [...],
     "msgs": [[id, source, target, type, sent_at_ms, deliver_at_ms, dropped]], "msgs_skipped": 0}

Events and violations are append-only streams, numbered by their index in the simulation's
history; a viewer merges them by index, so a catch-up payload never duplicates or loses one.
This module never reads a clock: the runner passes the wall time it stamps on each frame.
"""
import json
from collections import deque

KEEP_FRAMES = 300           # deltas can be built from this many frames back
EVENTS_IN_FULL = 400        # newest events carried by a full frame
EVENTS_PER_PAYLOAD = 600    # at most this many events in one catch-up payload
VIOLATIONS_KEPT = 500

try:        # CPython: orjson writes a frame's entities several times faster than json
    import orjson
except ImportError:   # PyPy (orjson has no PyPy build): the standard library
    orjson = None

_json_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _orjson_dumps(value, _dumps=getattr(orjson, "dumps", None), _opts=getattr(orjson, "OPT_NON_STR_KEYS", 0)):
    return _dumps(value, option=_opts).decode()


_dumps = _orjson_dumps if orjson is not None else _json_dumps


def dumps(value):
    return _dumps(value)


class FrameBuilder:
    def __init__(self):
        self.seq = 0
        self.run = 0
        self.values = {}
        self.texts = {}
        self.changed = {}        # key -> seq of its last change
        self.removed = {}        # key -> seq of its removal
        self.batches = deque()   # (seq, [event texts], [violation texts])
        self.events = deque(maxlen=EVENTS_IN_FULL)
        self.violations = deque(maxlen=VIOLATIONS_KEPT)
        self.msgs_text = "[]"
        self.msgs_skipped = 0
        self.clock_text = "{}"
        self.wall_ms = 0.0
        self.oldest_base = 1     # a base below this cannot be served as a delta
        self._cache = {}

    def reset(self):
        """A new run (restart, new scenario): every viewer needs a full frame."""
        self.run += 1
        self.values.clear()
        self.texts.clear()
        self.changed.clear()
        self.removed.clear()
        self.batches.clear()
        self.events.clear()
        self.violations.clear()
        self.msgs_text = "[]"
        self.clock_text = "{}"
        self.oldest_base = self.seq + 1
        self._cache = {}

    def update(self, entities, clock, wall_ms, events=(), violations=(), msgs=(), msgs_skipped=0):
        """Record the state of a new frame. ``events`` are (index, event dict) pairs. Returns
        True when anything changed (a new frame exists), False when the frame would be empty."""
        values, texts = self.values, self.texts
        changed_keys = []
        for key, value in entities.items():
            old = values.get(key)
            # the same object is unchanged (an entity kept between frames, like the metrics
            # catalog): comparing it with itself deeply cost more than the rest of the frame
            if old is value:
                continue
            if old is None or old != value:
                values[key] = value
                texts[key] = _dumps(value)
                changed_keys.append(key)
        removed_keys = [k for k in values if k not in entities] if len(values) > len(entities) else []
        if removed_keys:
            for key in removed_keys:
                del values[key]
                del texts[key]
                self.changed.pop(key, None)
        event_texts = [_dumps({"i": i, **e}) for i, e in events]
        violation_texts = [_dumps(v) for v in violations]
        clock_text = _dumps(clock)
        if not (changed_keys or removed_keys or event_texts or violation_texts or msgs
                or clock_text != self.clock_text):
            return False
        self.seq += 1
        seq = self.seq
        for key in changed_keys:
            self.changed[key] = seq
            self.removed.pop(key, None)
        for key in removed_keys:
            self.removed[key] = seq
        self.batches.append((seq, event_texts, violation_texts))
        self.events.extend(event_texts)
        self.violations.extend(violation_texts)
        self.msgs_text = _dumps(list(msgs))
        self.msgs_skipped = msgs_skipped
        self.clock_text = clock_text
        self.wall_ms = wall_ms
        floor = seq - KEEP_FRAMES
        if floor >= self.oldest_base:
            self.oldest_base = floor + 1
            while self.batches and self.batches[0][0] <= floor:
                self.batches.popleft()
            if self.removed:
                self.removed = {k: s for k, s in self.removed.items() if s > floor}
        self._cache = {}
        return True

    def touch(self, clock, wall_ms):
        """A frame in which only the clock may have changed (nothing happened in the simulation)."""
        clock_text = _dumps(clock)
        if clock_text == self.clock_text:
            return False
        return self.update(self.values, clock, wall_ms)

    def base_for(self, last_seq):
        """The base a viewer holding ``last_seq`` is served from (0 = full frame)."""
        return last_seq if last_seq >= self.oldest_base else 0

    def payload(self, base):
        """The JSON text bringing a viewer from frame ``base`` (0 = nothing) to the current one."""
        base = self.base_for(base)
        cached = self._cache.get(base)
        if cached is not None:
            return cached
        full = base == 0
        texts = self.texts
        if full:
            sets = [f"{_dumps(k)}:{t}" for k, t in texts.items()]
            dels = []
            events = list(self.events)
            violations = list(self.violations)
        else:
            changed = self.changed
            sets = [f"{_dumps(k)}:{texts[k]}" for k, s in changed.items() if s > base]
            dels = [k for k, s in self.removed.items() if s > base]
            # newest first, stopping at the base: a viewer that kept up needs the last batch only,
            # and walking all KEEP_FRAMES of them for it was a tenth of a room worker's time
            newer = []
            for batch in reversed(self.batches):
                if batch[0] <= base:
                    break
                newer.append(batch)
            events, violations = [], []
            for _seq, ev, vi in reversed(newer):
                events.extend(ev)
                violations.extend(vi)
            if len(events) > EVENTS_PER_PAYLOAD:
                events = events[-EVENTS_PER_PAYLOAD:]
        text = "".join((
            '{"seq":', str(self.seq), ',"base":', str(base), ',"run":', str(self.run),
            ',"full":', "1" if full else "0", ',"wall_ms":', repr(self.wall_ms),
            ',"clock":', self.clock_text,
            ',"set":{', ",".join(sets), '},"del":', _dumps(dels),
            ',"events":[', ",".join(events), '],"violations":[', ",".join(violations),
            '],"msgs":', self.msgs_text, ',"msgs_skipped":', str(self.msgs_skipped), "}"))
        self._cache[base] = text
        return text
