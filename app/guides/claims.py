"""What a walkthrough step claims about its run, in a form a test can check (tests/app/test_walkthroughs.py).

A step's narration is only worth reading if the run on screen does what it says, at the moment it
says. Each step therefore carries one or more claims:

* ``Event(type, **fields)`` — a history event of that type whose fields hold these values happens
  at the step's time (± its window);
* ``State(broker, **values)`` — once every event up to the step's time has run, the replica of the
  walkthrough's partition on ``broker`` has these ``leo`` / ``hw`` / ``isr`` values;
* ``Quiet(type, until_ms)`` — no event of that type from the step's time up to ``until_ms``;
* ``Acked(producer)`` — some record of that producer is acknowledged within the window.

``check(doc, steps)`` runs the story once and returns the claims that do not hold (empty: true).
"""
from collections import namedtuple

Event = namedtuple("Event", "type fields")
State = namedtuple("State", "broker values")
Quiet = namedtuple("Quiet", "type until_ms")
Acked = namedtuple("Acked", "producer")


def event(type_, **fields):
    return Event(type_, fields)


def state(broker, **values):
    return State(broker, values)


def _matches(e, claim):
    return e.get("type") == claim.type and all(e.get(k) == v for k, v in claim.fields.items())


def _replica(sim, broker, key):
    """(leo, hw, isr) of ``key`` on ``broker`` now; None when the broker holds no such log."""
    node = sim.brokers[broker]
    log, part = node.logs.get(key), node.partitions.get(key)
    if log is None:
        return None
    return {"leo": log.leo, "hw": log.hw, "isr": list(part.isr) if part is not None and part.is_leader else None}


def check(sim, steps, key):
    """Run ``sim`` (a fresh Simulation of the story) to its end, checking ``steps``' claims.
    Returns [(step index, claim, what was found)] for every claim that does not hold."""
    failures = []
    states = sorted(((s.t_ms, i, c) for i, s in enumerate(steps) for c in s.claims if isinstance(c, State)),
                    key=lambda x: (x[0], x[1]))
    for t_ms, i, claim in states:
        sim.advance_to(t_ms)
        found = _replica(sim, claim.broker, key)
        if found is None or any(found[k] != v for k, v in claim.values.items()):
            failures.append((i, claim, found))
    sim.advance_to(sim.scenario["duration_ms"])
    history = sim.history
    for i, step in enumerate(steps):
        low, high = step.t_ms - step.window_ms, step.t_ms + step.window_ms
        for claim in step.claims:
            if isinstance(claim, Event):
                near = [e for e in history if low <= e["t_ms"] <= high and e.get("type") == claim.type]
                if not any(_matches(e, claim) for e in near):
                    failures.append((i, claim, [{k: e.get(k) for k in ("t_ms", *claim.fields)} for e in near][:5]))
            elif isinstance(claim, Quiet):
                seen = [e["t_ms"] for e in history if step.t_ms <= e["t_ms"] <= claim.until_ms and e.get("type") == claim.type]
                if seen:
                    failures.append((i, claim, seen[:5]))
            elif isinstance(claim, Acked):
                acked = [r.id for r in sim.records.values() if r.producer == claim.producer
                         and r.acked_ms is not None and low <= r.acked_ms <= high]
                if not acked:
                    failures.append((i, claim, []))
    return failures
