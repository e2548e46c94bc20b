"""A partition's HW, LEO and ISR size over a whole replayed run, for the page's time chart.

The history records HW moves and ISR changes but not every replica's LEO, so the series is
sampled from one re-simulation of the run: a simulation from the seek index's first snapshot,
advanced to ``POINTS`` evenly spaced moments (the re-simulation is deterministic, so these are the
states a seek to those moments shows). It costs one pass over the run, bounded by a wall-clock
budget: a run too long for it gets the samples reached so far (``complete`` false). Results are
cached per run and partition.
"""
import collections
import threading
import time

POINTS = 300
BUDGET_S = 8.0
MARK_TYPES = ("fault", "leader_elected", "partition_offline", "truncation")
_cache = collections.OrderedDict()
_lock = threading.Lock()
CACHE_SIZE = 64


def sample(sim, key, brokers):
    """(t, ISR size, [LEO per replica], [HW per replica]) of partition ``key`` now."""
    node = sim.zk_server.tree.nodes.get(sim.state_path(key))
    isr = len(node.data["isr"]) if node else 0
    leo, hw = [], []
    for b in brokers:
        log = sim.brokers[b].logs.get(key)
        leo.append(log.leo if log else 0)
        hw.append(log.hw if log else 0)
    return [sim.now_ms, isr, leo, hw]


def partition_series(seeker, key, points=POINTS, budget_s=BUDGET_S):
    """``{brokers, points, marks, end_ms, complete}``; None when ``key`` is not a partition."""
    sim = seeker.at_time(0)
    topic, _, index = key.rpartition("-")
    spec = sim.topics.get(topic)
    if spec is None or not index.isdigit() or str(int(index)) not in spec["assignment"]:
        return None
    brokers = list(spec["assignment"][str(int(index))])
    end = seeker.end_ms
    out, complete = [], True
    deadline = time.monotonic() + budget_s
    for i in range(points):
        t = round(end * i / max(1, points - 1))
        if t > sim.now_ms:
            sim.advance_to(t)
        out.append(sample(sim, key, brokers))
        if time.monotonic() > deadline and i < points - 1:
            complete = False
            break
    marks = [[e["t_ms"], e["type"], e.get("reason", e["type"])] for e in sim.history
             if e["type"] in MARK_TYPES and (e["type"] == "fault" or sim.key(e.get("topic"), e.get("partition")) == key)]
    return {"brokers": brokers, "points": out, "marks": marks[-200:], "end_ms": end, "complete": complete}


def cached_series(cache_key, compute):
    with _lock:
        if cache_key in _cache:
            _cache.move_to_end(cache_key)
            return _cache[cache_key]
    value = compute()
    with _lock:
        _cache[cache_key] = value
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return value
