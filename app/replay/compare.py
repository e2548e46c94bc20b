"""Comparing two runs on one time axis: the first moment they diverge, and what diverged.

Both runs are re-simulated in lockstep (from their seekers: restored simulations moved forward
along their recorded paths). At every ``STEP_MS`` of simulated time a digest of what a Kafka
engineer would compare is taken — per partition the leader, leader epoch, ISR and offline flag;
per replica LEO, high watermark, log start and the newest entry of its log (offset, epoch,
record id); the controller — and at the first step where the digests differ the last interval is
re-simulated millisecond by millisecond, so the reported moment is exact. Record fates (acked /
failed / lost, offset) are compared at the end of both runs.

What diverged is named the way the issue asks: ``leader``, ``isr``, ``log``, ``offline``,
``controller``, ``partitions`` (different topology), or ``record`` (a record's fate).

That first moment is often only timing: the same election a millisecond later, an offset one
record apart. What a reader cares about is the first *semantic* divergence
(``semantic_divergence``): the runs' partitions go through different sequences of states
(leader, leader epoch, ISR, offline) — one run elects a broker or changes an ISR the other never
does — compared as sequences, so the same change at another moment is not a divergence. Records
are counted as a saved run counts them (``Record.lost``: acknowledged, then lost): lost in A,
lost in B, acknowledged in one run and failed in the other; a record acknowledged in both at
different offsets is timing, counted apart.
"""
from .seek import fork_copy
from app.runner.partition_state import active_controller, partition_state

STEP_MS = 100


SCAN_MS = 10          # the semantic scan's step: two changes of one partition closer than this may merge


def _partition_keys(sim):
    return [(topic, p, sim.key(topic, p)) for topic, spec in sim.topics.items() for p in range(spec["partitions"])]


def _state(sim, key):
    """(leader, leader epoch, ISR, offline) of partition ``key``: the state znode, or the KRaft metadata image."""
    state, _version = partition_state(sim, key)
    leader = sim.brokers.get(state["leader"])
    offline = state["leader"] == -1 or leader is None or not leader.running
    return state["leader"], state["leader_epoch"], tuple(state["isr"]), offline


def partition_states(sim):
    """{partition key: (leader, leader epoch, ISR sorted, offline)}: what the semantic scan compares
    (an ISR is a set: the order it was written in is not a difference)."""
    out = {}
    for _topic, _p, key in _partition_keys(sim):
        leader, epoch, isr, offline = _state(sim, key)
        out[key] = (leader, epoch, tuple(sorted(isr)), offline)
    return out


def digest(sim):
    """{partition key: (leader, epoch, isr, offline, ((broker, leo, hw, start, last), ...))},
    plus the controller under the key None."""
    out = {}
    for topic, p, key in _partition_keys(sim):
        leader, epoch, isr, offline = _state(sim, key)
        replicas = []
        for b in sim.topics[topic]["assignment"][str(p)]:
            log = sim.brokers[b].logs.get(key)
            if log is None:
                replicas.append((b, None))
                continue
            last = log.record_at(log.leo - 1) if log.leo > log.log_start_offset else None
            replicas.append((b, log.leo, log.hw, log.log_start_offset, tuple(last) if last else None))
        out[key] = (leader, epoch, isr, offline, tuple(replicas))
    out[None] = active_controller(sim)["broker"]
    return out


def differences(a, b):
    """What differs between two digests, most telling first: [(kind, partition, detail)]."""
    found = []
    keys_a, keys_b = set(a) - {None}, set(b) - {None}
    if keys_a != keys_b:
        found.append(("partitions", None, {"a": sorted(keys_a), "b": sorted(keys_b)}))
    for key in sorted(keys_a & keys_b):
        la, ea, ia, oa, ra = a[key]
        lb, eb, ib, ob, rb = b[key]
        if la != lb or ea != eb:
            found.append(("leader", key, {"a": {"leader": la, "leader_epoch": ea}, "b": {"leader": lb, "leader_epoch": eb}}))
        if ia != ib:
            found.append(("isr", key, {"a": list(ia), "b": list(ib)}))
        if oa != ob:
            found.append(("offline", key, {"a": oa, "b": ob}))
        if ra != rb:
            for x, y in zip(ra, rb):
                if x != y:
                    found.append(("log", key, {"broker": x[0], "a": _replica(x), "b": _replica(y)}))
                    break
    if a.get(None) != b.get(None):
        found.append(("controller", None, {"a": a.get(None), "b": b.get(None)}))
    return found


def _replica(r):
    if r[1] is None:
        return None
    return {"leo": r[1], "hw": r[2], "log_start_offset": r[3],
            "last": None if r[4] is None else {"epoch": r[4][0], "id": r[4][1]}}


def first_divergence(seeker_a, seeker_b, step_ms=STEP_MS, progress=None):
    """The first simulated millisecond at which the two runs differ, with what differs; None if
    they agree up to the end of the shorter one. ``seeker_*``: ``app.replay.seek.Seeker``."""
    end = min(seeker_a.end_ms, seeker_b.end_ms)
    a, b = seeker_a.at_time(0), seeker_b.at_time(0)
    found = differences(digest(a), digest(b))
    if found:
        return _report(0, found)
    t = 0
    while t < end:
        nxt = min(t + step_ms, end)
        a.advance_to(nxt)
        b.advance_to(nxt)
        if digest(a) != digest(b):
            a, b = seeker_a.at_time(t), seeker_b.at_time(t)
            for ms in range(t + 1, nxt + 1):
                a.advance_to(ms)
                b.advance_to(ms)
                found = differences(digest(a), digest(b))
                if found:
                    return _report(ms, found)
            raise AssertionError("digests differed at a step but at no millisecond of it")
        t = nxt
        if progress:
            progress(t, end)
    return None


def _report(t_ms, found):
    kind, key, detail = found[0]
    return {"t_ms": t_ms, "kind": kind, "partition": key, "detail": detail,
            "also": [{"kind": k, "partition": p} for k, p, _d in found[1:8]]}


def _final_records(seeker, end):
    """The run's records at ``end`` ({id: Record}), finalised like a saved run's result when the
    run ends there (records in no live leader's log become lost)."""
    sim = fork_copy(seeker.at_time(end))
    if sim.now_ms >= sim.scenario["duration_ms"]:
        sim.result()            # an independent copy: finalising marks lost records
    return sim.records


def _lost(r):
    return r is not None and r.status == "acked" and r.lost     # what a saved run counts as lost


def record_fates(seeker_a, seeker_b, limit=20):
    """Records whose fate differs at the end of the shorter run, counted as a saved run counts them:
    ``lost_a`` / ``lost_b`` (acknowledged, then lost, in that run only), ``acked_failed``
    (acknowledged in one run, failed in the other); ``count`` is their sum and ``records`` the first
    ``limit`` of them by sending order. ``timing_only``: records with the same fate in both runs
    but another offset or status (pending, not sent yet) — not a difference of outcome."""
    end = min(seeker_a.end_ms, seeker_b.end_ms)
    fa, fb = _final_records(seeker_a, end), _final_records(seeker_b, end)
    counts = {"lost_a": 0, "lost_b": 0, "acked_failed": 0, "timing_only": 0}
    differ = []
    for rid in list(fa) + [r for r in fb if r not in fa]:
        x, y = fa.get(rid), fb.get(rid)
        if _lost(x) != _lost(y):
            why = "lost_a" if _lost(x) else "lost_b"
        elif x is not None and y is not None and {x.status, y.status} == {"acked", "failed"}:
            why = "acked_failed"
        else:
            if _fate(x) != _fate(y):
                counts["timing_only"] += 1
            continue
        counts[why] += 1
        differ.append({"id": rid, "why": why, "a": _fate(x), "b": _fate(y)})
    return {"count": counts["lost_a"] + counts["lost_b"] + counts["acked_failed"], **counts,
            "lost_total": {"a": sum(map(_lost, fa.values())), "b": sum(map(_lost, fb.values()))},
            "records": differ[:limit]}


def _fate(r):
    if r is None:
        return None
    return {"status": r.status, "offset": r.offset, "lost": bool(r.lost), "topic": r.topic, "partition": r.partition,
            "acked_ms": r.acked_ms, "sent_ms": r.sent_ms}


# -- the first semantic divergence ----------------------------------------------------------------
def state_paths(seeker, end, step_ms=SCAN_MS):
    """{partition: [(t_ms, state), ...]}: the states each partition goes through up to ``end``, each
    with the first scanned moment it was seen (``partition_states``; at most ``step_ms`` late)."""
    sim = seeker.at_time(0)
    paths = {key: [(0, st)] for key, st in partition_states(sim).items()}
    t = 0
    while t < end:
        t = min(t + step_ms, end)
        sim.advance_to(t)
        for key, st in partition_states(sim).items():
            path = paths.setdefault(key, [])
            if not path or path[-1][1] != st:
                path.append((t, st))
    return paths


def _exact_ms(seeker, key, seen_at, state, step_ms=SCAN_MS):
    """The millisecond partition ``key`` entered ``state``, scanned as seen at ``seen_at``."""
    if seen_at == 0:
        return 0
    sim = seeker.at_time(max(0, seen_at - step_ms))
    for ms in range(max(1, seen_at - step_ms + 1), seen_at + 1):
        sim.advance_to(ms)
        if partition_states(sim).get(key) == state:
            return ms
    return seen_at


def semantic_divergence(seeker_a, seeker_b, step_ms=SCAN_MS):
    """The earliest moment one run's partition moves to a state the other run's does not go through
    at that point of its sequence (an election, an ISR change, going offline), or None.
    ``{"t_ms", "kind", "partition", "first": "a"|"b", "a": side, "b": side}`` where a side is
    ``{"before", "after", "t_ms"}``: the state before the change, the one it changes to (None: no
    further change) and when."""
    end = min(seeker_a.end_ms, seeker_b.end_ms)
    pa, pb = state_paths(seeker_a, end, step_ms), state_paths(seeker_b, end, step_ms)
    if set(pa) != set(pb):
        return {"t_ms": 0, "kind": "partitions", "partition": None, "first": "a",
                "a": {"partitions": sorted(pa)}, "b": {"partitions": sorted(pb)}}
    best = None
    for key in sorted(pa):
        a, b = pa[key], pb[key]
        k = next((i for i in range(max(len(a), len(b)))
                  if i >= len(a) or i >= len(b) or a[i][1] != b[i][1]), None)
        if k is None:
            continue
        t = min(p[k][0] for p in (a, b) if k < len(p))
        if best is None or t < best[0]:
            best = (t, key, k)
    if best is None:
        return None
    _t, key, k = best
    sides = {}
    for name, path, seeker in (("a", pa[key], seeker_a), ("b", pb[key], seeker_b)):
        after = path[k] if k < len(path) else None
        sides[name] = {"before": path[k - 1][1], "after": after[1] if after else None,
                       "t_ms": _exact_ms(seeker, key, after[0], after[1], step_ms) if after else None}
    first = min((n for n in "ab" if sides[n]["t_ms"] is not None), key=lambda n: sides[n]["t_ms"])
    change = sides[first]
    kind = ("election" if change["before"][:2] != change["after"][:2] else
            "isr" if change["before"][2] != change["after"][2] else "offline")
    return {"t_ms": change["t_ms"], "kind": kind, "partition": key, "first": first, **sides}


def _record_moment(record):
    """When a record's differing fate shows: its acknowledgement (or sending) in the run it was acked in."""
    times = [f.get("acked_ms") or f.get("sent_ms") for f in (record["a"], record["b"]) if f is not None]
    return min((t for t in times if t is not None), default=0)


def compare(seeker_a, seeker_b):
    """The first semantic divergence (``semantic``, with its words), the first difference of any
    kind (``divergence``: often only timing), and the records that end differently."""
    from .compare_text import record_text, semantic_text, timing_text
    divergence = first_divergence(seeker_a, seeker_b)
    fates = record_fates(seeker_a, seeker_b)
    semantic = semantic_divergence(seeker_a, seeker_b)
    if semantic is None and fates["count"]:
        first = fates["records"][0]
        semantic = {"t_ms": _record_moment(first), "kind": "record", "partition": None, "record": first}
    if divergence is None and fates["count"]:
        first = fates["records"][0]
        divergence = {"t_ms": min(seeker_a.end_ms, seeker_b.end_ms), "kind": "record", "partition": None,
                      "detail": first, "also": []}
    for record in fates["records"]:
        record["text"] = record_text(record)
    if semantic is not None:
        semantic["text"] = semantic_text(semantic)
    if divergence is not None:
        divergence["text"] = timing_text(divergence)
    return {"semantic": semantic, "divergence": divergence, "records": fates,
            "end_ms": min(seeker_a.end_ms, seeker_b.end_ms)}
