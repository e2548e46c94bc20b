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
"""
from ..runner.registration import active_controller, partition_registration
from .seek import fork_copy

STEP_MS = 100


def digest(sim):
    """{partition key: (leader, epoch, isr, offline, ((broker, leo, hw, start, last), ...))},
    plus the controller under the key None."""
    out = {}
    for topic, spec in sim.topics.items():
        for p in range(spec["partitions"]):
            key = sim.key(topic, p)
            _version, leader_id, leader_epoch, isr = partition_registration(sim, key) or (None, -1, -1, [])
            leader = sim.brokers.get(leader_id)
            offline = leader_id == -1 or leader is None or not leader.running
            replicas = []
            for b in spec["assignment"][str(p)]:
                log = sim.brokers[b].logs.get(key)
                if log is None:
                    replicas.append((b, None))
                    continue
                last = log.record_at(log.leo - 1) if log.leo > log.log_start_offset else None
                replicas.append((b, log.leo, log.hw, log.log_start_offset, tuple(last) if last else None))
            out[key] = (leader_id, leader_epoch, tuple(isr), offline, tuple(replicas))
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


def record_fates(seeker_a, seeker_b, limit=20):
    """Records whose fate differs at the end of the shorter run: [{id, a, b}] (first ``limit``,
    by id order of sending), and the count."""
    end = min(seeker_a.end_ms, seeker_b.end_ms)
    fates = []
    for seeker in (seeker_a, seeker_b):
        sim = fork_copy(seeker.at_time(end))
        if sim.now_ms >= sim.scenario["duration_ms"]:
            sim.result()            # an independent copy: finalising marks lost records
        lost = sim.invariants.reported_lost
        fates.append({rid: (r.status, r.offset, bool(r.lost or rid in lost), r.partition)
                      for rid, r in sim.records.items()})
    fa, fb = fates
    differ = []
    for rid in list(fa) + [r for r in fb if r not in fa]:
        x, y = fa.get(rid), fb.get(rid)
        if x != y:
            differ.append({"id": rid, "a": _fate(x), "b": _fate(y)})
    return {"count": len(differ), "records": differ[:limit]}


def _fate(f):
    if f is None:
        return None
    return {"status": f[0], "offset": f[1], "lost": f[2], "partition": f[3]}


def compare(seeker_a, seeker_b):
    divergence = first_divergence(seeker_a, seeker_b)
    fates = record_fates(seeker_a, seeker_b)
    if divergence is None and fates["count"]:
        first = fates["records"][0]
        divergence = {"t_ms": min(seeker_a.end_ms, seeker_b.end_ms), "kind": "record", "partition": None,
                      "detail": first, "also": []}
    return {"divergence": divergence, "records": fates,
            "end_ms": min(seeker_a.end_ms, seeker_b.end_ms)}
