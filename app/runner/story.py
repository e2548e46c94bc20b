"""The replication story of a live room: which of the simulation's new events a frame carries
(HW moves collapsed, a cap per frame), and the session as a replayable scenario."""
import json
import re

from engine.scenario.document import ScenarioError, load as load_scenario

from .live_view import LOSS_EVENTS, mark_user_ops

EVENTS_PER_FRAME = 150     # replication-story events per frame (HW moves collapsed first)
STORY_SKIP = frozenset(("high_watermark",))


def story_events(start, events, limit=EVENTS_PER_FRAME):
    """(index, event) pairs worth sending: every event except that HW moves are collapsed to the
    last one per (partition, broker); newest kept when over ``limit``. Returns (pairs, dropped)."""
    story, hw = [], {}
    for offset, event in enumerate(events):
        if event["type"] in STORY_SKIP:
            hw[(event.get("topic"), event.get("partition"), event.get("broker"))] = (start + offset, event)
        else:
            story.append((start + offset, event))
    dropped = 0
    if len(story) > limit:
        dropped += len(story) - limit
        story = story[-limit:]
    room = limit - len(story)
    hw_pairs = sorted(hw.values(), key=lambda p: p[0])
    if room < len(hw_pairs):
        hw_pairs = hw_pairs[len(hw_pairs) - room:] if room > 0 else []
    merged = sorted(story + hw_pairs, key=lambda p: p[0])
    return merged, dropped


def fresh_story(view, sim):
    """The story since the view's last frame: (event pairs to send, keys of partitions whose logs
    may have lost records and must be redrawn whole). Over the per-frame cap, an
    ``events_skipped`` entry says how many were left out."""
    start, fresh = view.new_history()
    dirty = {sim.key(e["topic"], e["partition"]) for e in fresh
             if e["type"] in LOSS_EVENTS and e.get("topic") is not None and e.get("partition") is not None}
    events, dropped = story_events(start, fresh)
    if dropped:
        events.append((start + len(fresh) - 1, {"t_ms": sim.now_ms, "type": "events_skipped",
                                                 "count": dropped,
                                                 "reason": f"{dropped} events in this frame not shown"}))
        events.sort(key=lambda p: p[0])
    return events, dirty


def replayable(sim):
    """``sim.replay_scenario()``, checked to load. Since the engine marks replays of live sessions
    ``"recorded"`` a scripted op made pointless by a live command loads (and is ignored, as it was
    live); should a document still be refused, such scenario ops are left out rather than the
    session being unreplayable. Returns (document, number of operations left out)."""
    doc = sim.replay_scenario()
    commands = {json.dumps(c, sort_keys=True) for c in sim.commands}
    dropped = 0
    for _attempt in range(len(doc["timeline"]) + 1):
        try:
            load_scenario(doc)
            return mark_user_ops(doc, sim.commands), dropped
        except ScenarioError as exc:
            match = re.match(r"timeline\[(\d+)\]", exc.field or "")
            if not match:
                raise
            index = int(match.group(1))
            if json.dumps(doc["timeline"][index], sort_keys=True) in commands:
                raise
            del doc["timeline"][index]
            dropped += 1
    return mark_user_ops(doc, sim.commands), dropped
