"""``python -m engine bench``: the reference workload, timed against two floors.

Reference workload (issue 13, bench-medium): 5 brokers, one topic with 30 partitions at RF 3, a
producer at 1000 records/s with acks=all, two consumers, 60 s of simulated time, one broker crash
and restart. Every fetch round trip Kafka would make is simulated.

Two floors are measured in the same run, so the ratios hold across machines and load:

* the bare loop: push (time, seq, fn, arg), pop, call — the fastest any heap kernel can go
  (in the kernel's layout: one queue per millisecond on PyPy);
* the engine's kernel: the real ``Scheduler``, ``Network`` and ``Node`` (request, reply, request
  timeout, timers) with handlers that do nothing but keep the traffic going, in the reference
  run's shape (about nine deliveries in ten, one timer in ten).

Run from CPython with ``pypy3`` on the PATH, it then measures the same again in a PyPy process
set up as a sweep's PyPy worker is (``engine.tools.worker``: its nursery size) and prints the ratio.

Under PyPy the workload runs twice more in the same process, and the best of those is printed as
the steady state: what a long-lived worker gets once the JIT has compiled the engine. The first
run is what ``python -m engine run`` under PyPy gets.

Two more figures say what an aim needs rather than how fast the run went:

* the aim of 20x real time (issue 13) as events/s, and as a fraction of the kernel floor: the
  golden digests pin the event count, so that fraction is what the handlers may cost at most;
* under PyPy, the bytes the run allocates per event (minor collections x the nursery), the bytes
  per event that survive the nursery, and the collector's share of the CPU. Unlike wall time on
  a shared machine, these repeat from run to run; the collector's time follows the survivors,
  not the allocation (docs/performance.md: the sixth round).
"""
import gc
import heapq
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time

from engine.core.network import Network
from engine.core.node import Node
from engine.core.rng import Streams
from collections import deque

from engine.core.scheduler import CalendarScheduler, new_scheduler
from engine.simulation import Simulation
from engine.tools.worker import engine_process_env

KERNEL_NODES = 5
KERNEL_LOOPS = 40      # request/response loops in flight, as fetchers and clients keep them
KERNEL_TIMERS = 12     # periodic timers, firing every few ms like the producer's ticks
REQUEST_TIMEOUT_MS = 30000
AIM_X_REAL_TIME = 20   # issue 13: bench-medium at 20x real time on CPython (issue 31: on PyPy)
STEADY_RUNS = 2        # runs after the first, under a JIT (see steady_state_wall)


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
    """Events/s of the simplest possible kernel: push (time, seq, fn, arg), pop, call — in the
    layout the engine's kernel uses on this interpreter (engine/core/scheduler.py)."""
    state = {"n": 0}

    def handler(arg):
        state["n"] += 1

    if isinstance(new_scheduler(), CalendarScheduler):
        return _bare_calendar_loop(events, handler)
    heap = []
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


def _bare_calendar_loop(events, handler):
    """The same loop over one FIFO queue per time and a heap of the times."""
    times, queues = [], {}

    def push(t, seq, fn, arg):
        if t not in queues:
            queues[t] = deque()
            heapq.heappush(times, t)
        queues[t].append((seq, fn, arg))

    for i in range(1000):
        push(i, i, handler, None)
    seq = 1000
    started = time.perf_counter()
    for _ in range(events):
        t = times[0]
        queue = queues[t]
        _s, fn, arg = queue.popleft()
        if not queue:
            heapq.heappop(times)
            del queues[t]
        fn(arg)
        seq += 1
        push(t + 1 + (seq % 7), seq, fn, arg)
    return events / (time.perf_counter() - started)


class _Host:
    """What ``Node`` needs of a simulation: its scheduler and network."""

    def __init__(self):
        self.scheduler = new_scheduler()
        self.network = Network(self.scheduler, Streams(0).fork("network"))


class _NoOpNode(Node):
    """A node whose request handler only answers, and whose response callback only asks again."""

    def __init__(self, node_id, host):
        Node.__init__(self, node_id, host)
        self.handlers = {"Ping": self._on_ping}

    def _on_ping(self, env):
        self.reply(env, env.body)

    def ask(self, ctx, _body=None, _error=None):
        target = (self.node_id + 1 + ctx % (KERNEL_NODES - 1)) % KERNEL_NODES
        self.request(target, "Ping", {}, REQUEST_TIMEOUT_MS, self.ask, ctx)

    def tick(self, period_ms):
        self.set_timer(period_ms, self.tick, period_ms)


def kernel_rate(events=300_000):
    """Events/s of the engine's own kernel with no-op handlers (see the module docstring)."""
    host = _Host()
    nodes = [_NoOpNode(i, host) for i in range(KERNEL_NODES)]
    for node in nodes:
        host.network.add_node(node.node_id, node)
    for i in range(KERNEL_LOOPS):
        nodes[i % KERNEL_NODES].ask(i)
    for i in range(KERNEL_TIMERS):
        nodes[i % KERNEL_NODES].tick(1 + i % 3)
    sched = host.scheduler
    started = time.perf_counter()
    end = 0
    while sched.events < events:
        end += 100
        sched.run_until(end)
    return sched.events / (time.perf_counter() - started)


class _GcMeter:
    """PyPy's collector during the workload: minor collections (each one a full nursery, so
    their count x the nursery size is what the run allocated), what they kept and the
    collector's time. Nothing on CPython, whose collector has no nursery."""

    def __init__(self):
        self.minors = 0
        self.kept = 0        # bytes the minor collections moved to the old generation
        self.used = None     # the GC's memory in use after the last one
        self.hooks = getattr(gc, "hooks", None)
        if self.hooks is None:
            return
        self.gc_ms = gc.get_stats().total_gc_time
        self.hooks.on_gc_minor = self._on_minor

    def _on_minor(self, stats):
        self.minors += stats.count
        # The survivors are what a minor collection copies, and what its time follows: a nursery
        # of garbage costs next to nothing (docs/performance.md: the sixth round). Counted as the GC's
        # growth between two minor collections: the survivors, plus what is allocated straight
        # into the old generation (large arrays); a major collection in between hides some.
        used = stats.total_memory_used
        if self.used is not None and used > self.used:
            self.kept += used - self.used
        self.used = used

    def stop(self):
        if self.hooks is not None:
            self.hooks.on_gc_minor = None
            self.gc_ms = gc.get_stats().total_gc_time - self.gc_ms

    def figures(self):
        if self.hooks is None:
            return {}
        nursery = _size_bytes(gc.get_stats().nursery_size)
        return {"minor_collections": self.minors, "nursery_bytes": nursery,
                "allocated_bytes": self.minors * nursery, "kept_bytes": self.kept,
                "gc_s": self.gc_ms / 1000}


def _size_bytes(text):
    """PyPy's GcStats gives sizes as text ("32.0MB", in units of 1024)."""
    for power, unit in enumerate(("kB", "MB", "GB"), start=1):
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * 1024 ** power)
    return int(float(text.rstrip("B")))


def measure(duration_ms=60000):
    """The workload, then the two floors, in this process: a dict of figures."""
    scenario = reference_scenario(duration_ms)
    # the workload first, so that its peak memory is its own; the floors after it
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    cpu_started = time.process_time()
    meter = _GcMeter()
    sim = Simulation(scenario)
    sim.advance_to(duration_ms)
    wall = time.perf_counter() - started
    meter.stop()
    out = {"interpreter": f"{sys.implementation.name} {platform.python_version()}",
           "duration_ms": duration_ms, "wall_s": wall, "cpu_s": time.process_time() - cpu_started,
           "load_average": os.getloadavg()[0],
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6,
           "rss_before_mb": rss_before * 1024 / 1e6, "events": sim.scheduler.events,
           "messages": sim.network.sent,
           "acked": sum(1 for r in sim.records.values() if r.status == "acked"), **meter.figures()}
    del sim
    if sys.implementation.name == "pypy":
        out["steady_wall_s"] = steady_state_wall(scenario)
    out["bare_loop_rate"] = bare_loop_rate()
    out["kernel_rate"] = kernel_rate()
    return out


def steady_state_wall(scenario, runs=STEADY_RUNS):
    """Wall time of the workload once the JIT has compiled it: the best of ``runs`` more runs in
    this process after the first. A sweep's PyPy worker and a long-lived engine process run this
    way; the first run pays for tracing and compiling (PyPy's ``jit-summary``: ~0.9 s of
    bench-medium's ~4.4 s) and for the interpreted runs before it."""
    best = None
    for _ in range(runs):
        started = time.perf_counter()
        Simulation(scenario).advance_to(scenario["duration_ms"])
        wall = time.perf_counter() - started
        best = wall if best is None else min(best, wall)
    return best


def report(m):
    rate = m["events"] / m["wall_s"]
    bare, kernel = m["bare_loop_rate"], m["kernel_rate"]
    print(f"bench-medium on {m['interpreter']}: {m['duration_ms'] / 1000:.0f} s simulated, "
          f"{m['events']} events, {m['messages']} messages, {m['acked']} records acked")
    print(f"  wall time             {m['wall_s']:10.2f} s   (CPU {m['cpu_s']:.2f} s; load average "
          f"{m['load_average']:.2f} at the end)")
    print(f"  x real time           {m['duration_ms'] / 1000 / m['wall_s']:10.1f}")
    print(f"  events/s              {rate:10.0f}")
    if "steady_wall_s" in m:
        steady = m["steady_wall_s"]
        print(f"  steady state          {steady:10.2f} s   {m['duration_ms'] / 1000 / steady:.1f}x real time "
              f"(JIT warm: the best of {STEADY_RUNS} more runs in this process, as a sweep worker's)")
    print("floors, measured in this run:")
    print(f"  bare heap loop        {bare:10.0f} events/s   engine / bare   {rate / bare:6.3f}")
    print(f"  kernel, no-op handlers{kernel:10.0f} events/s   engine / kernel {rate / kernel:6.3f}")
    print(f"  kernel / bare loop    {kernel / bare:10.3f}")
    aim = m["events"] / (m["duration_ms"] / 1000) * AIM_X_REAL_TIME
    print(f"{AIM_X_REAL_TIME}x real time needs  {aim:10.0f} events/s   {aim / rate:.1f}x this run; "
          f"engine / kernel {aim / kernel:.3f}")
    if "allocated_bytes" in m:
        print(f"allocated per event     {m['allocated_bytes'] / m['events']:10.0f} bytes "
              f"(~{m['minor_collections']} minor collections x {m['nursery_bytes'] >> 20} MB nursery); "
              f"collector {m['gc_s'] / m['cpu_s']:.0%} of the CPU")
        print(f"kept per event          {m['kept_bytes'] / m['events']:10.0f} bytes "
              f"(survived the nursery: the collector's time follows this, not the bytes above)")
    print(f"peak memory             {m['peak_rss_mb']:10.1f} MB (max RSS of the process; "
          f"{m['rss_before_mb']:.0f} MB before the run)")


def measure_under_pypy(duration_ms, interpreter):
    """The same measurement in a ``pypy3`` process set up as a sweep's PyPy worker is."""
    done = subprocess.run([interpreter, "-m", "engine", "bench", "--duration-ms", str(duration_ms),
                           "--pypy", "off", "--json"], env=engine_process_env(), cwd="/",
                          stdout=subprocess.PIPE, check=True)
    return json.loads(done.stdout)


def run_bench(duration_ms=60000, pypy="auto", as_json=False):
    """Measure here; then, from CPython, again under PyPy when ``pypy3`` is on the PATH (or
    ``pypy`` names an interpreter), with the ratio of the two wall times."""
    here = measure(duration_ms)
    if as_json:
        print(json.dumps(here))
        return 0
    report(here)
    interpreter = None if pypy == "off" or sys.implementation.name == "pypy" else \
        shutil.which("pypy3" if pypy == "auto" else pypy)
    if interpreter:
        print()
        there = measure_under_pypy(duration_ms, interpreter)
        report(there)
        print(f"PyPy / CPython (wall time, bench-medium) {here['wall_s'] / there['wall_s']:.2f}x")
    return 0
