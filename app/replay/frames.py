"""Replay frames: a replayed moment drawn exactly as the live page draws a room.

The live page consumes frames (``app.runner.frames``) built from ``app.runner.live_view``; a
replay viewer gets the same frames for its cursor's simulation, so the page's renderers show a
saved run the way they show a live one. Moving the cursor forward in place (play, step) yields
delta frames with the messages sent meanwhile (animated like live); a jump restores another
simulation and starts a new frame sequence (a full frame, with the recent replication story).

A simulation that has reached the end of its scenario is drawn from an independent copy: the
live view finalises a finished run (``result()``), which must never happen to a simulation that
shares its state with a seek index.
"""
from app.runner.frames import FrameBuilder
from app.runner.live_view import LiveView
from app.runner.room import fresh_story, story_events

from .seek import fork_copy

STORY_AT_JUMP = 3000     # history entries looked at for the story shown after a jump


class ReplayViewer:
    """One viewer's frames (kept on its cursor)."""

    def __init__(self, label):
        self.label = label
        self.frames = FrameBuilder()
        self.sim = None          # the simulation the live view was built on (the cursor's)
        self.view = None
        self.end_copy = None

    def frame(self, sim, clock, base, wall_ms):
        """The payload (JSON text) bringing a viewer holding frame ``base`` to ``sim``'s state."""
        drawn = sim
        if sim.finished:
            if self.end_copy is None or self.end_copy[0] is not sim or self.end_copy[1] != sim.now_ms:
                self.end_copy = (sim, sim.now_ms, fork_copy(sim))
            drawn = self.end_copy[2]
        if drawn is not self.sim:
            self.sim = drawn
            self.view = LiveView(drawn)
            self.frames.reset()
            history = drawn.history
            start = max(0, len(history) - STORY_AT_JUMP)
            events, _dropped = story_events(start, history[start:])
            events = self.view.with_origins(events)
            self.view.history_seen = len(history)
            self.view.violations_seen = 0
            dirty = ()
        else:
            events, dirty = fresh_story(self.view, drawn)
        violations = self.view.new_violations()
        msgs, skipped = self.view.messages()
        entities = self.view.entities(dirty)
        self.frames.update(entities, clock, wall_ms, events, violations, msgs, skipped)
        return self.frames.payload(base)
