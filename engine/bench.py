"""``python -m engine bench``: the reference workload, timed against a bare event loop.

Reference workload (issue: engine speed): 5 brokers, one topic with 30 partitions at RF 3, a
producer at 1000 records/s with acks=all, two consumers, 60 s of simulated time, one broker crash
and restart. Every fetch round trip Kafka would make is simulated. The baseline is a bare
heap-and-dispatch loop measured in the same run, so the ratio is comparable across machines.
"""
import heapq
import resource
import time

from .simulation import Simulation


def reference_scenario(duration_ms=60000):
    return {
        "name": "bench: 5 brokers, 30 partitions RF 3, 1000 records/s acks=all",
        "seed": 7, "kafka_version": "2.6", "brokers": 5,
        "topics": [{"name": "bench", "partitions": 30, "replication_factor": 3}],
        "clients": [
            {"name": "p1", "type": "producer", "topic": "bench", "acks": "all", "rate_per_s": 1000},
            {"name": "c1", "type": "consumer", "topic": "bench", "auto.offset.reset": "earliest"},
            {"name": "c2", "type": "consumer", "topic": "bench", "auto.offset.reset": "earliest"},
        ],
        "timeline": [{"at_ms": duration_ms // 4, "op": "crash", "broker": 3},
                     {"at_ms": duration_ms // 2, "op": "restart", "broker": 3}],
        "duration_ms": duration_ms,
    }


def bare_loop_rate(events=1_000_000):
    """Events/s of the simplest possible kernel: push (time, seq, fn, arg), pop, call."""
    heap = []
    state = {"n": 0}

    def handler(arg):
        state["n"] += 1

    for i in range(1000):
        heapq.heappush(heap, (i, i, handler, None))
    seq = 1000
    started = time.perf_counter()
    for _ in range(events):
        t, _s, fn, arg = heapq.heappop(heap)
        fn(arg)
        seq += 1
        heapq.heappush(heap, (t + 1 + (seq % 7), seq, fn, arg))
    return events / (time.perf_counter() - started)


def run_bench(duration_ms=60000):
    scenario = reference_scenario(duration_ms)
    bare = bare_loop_rate()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    sim = Simulation(scenario)
    sim.advance_to(duration_ms)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    events = sim.scheduler.events
    acked = sum(1 for r in sim.records.values() if r.status == "acked")
    rate = events / wall
    print(f"reference workload: {duration_ms / 1000:.0f} s simulated, {events} events, "
          f"{sim.network.sent} messages, {acked} records acked")
    print(f"wall time           {wall:8.2f} s")
    print(f"simulated s / wall s {duration_ms / 1000 / wall:8.1f}x real time")
    print(f"events/s            {rate:10.0f}")
    print(f"bare loop events/s  {bare:10.0f}")
    print(f"ratio to bare loop  {rate / bare:8.2f}")
    print(f"peak memory         {peak / 1e6:8.1f} MB (max RSS of the process; "
          f"{rss_before * 1024 / 1e6:.0f} MB before the run)")
    return 0
