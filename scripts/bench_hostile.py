"""Hostile-load benchmark (not a test): can one careless or hostile visitor stall the server?

Starts the real server (``python -m app serve`` on a free loopback port: gunicorn, one worker)
and for ``--seconds`` (default 60) drives, all at once:

* heavy saves and imports of the largest scenarios the budgets accept, in a loop;
* the longest accepted scenario links, opened and replayed;
* 20 concurrent counterexample searches;
* six large rooms (16 brokers, 256 partitions) at maximum speed, each with a viewer;
* a fork storm from one address;

while one client watches a small library room over a websocket and another polls ``/healthz``
and, in turn, a control: a bare threaded HTTP server from Python's standard library, in a session
of its own, whose answer times are this machine's floor under the same load (``serve_bare``).
Those two observers run in a process and a session of their own (as a viewer's browser would
be), so what they measure is the server's answer time and frame rate, not the wait for this
script's own GIL, which the ~30 load-generating threads hold most of the time, nor their wait for
the CPU share of the load generator's session (``own_session``: Linux shares CPU between sessions
first, then by nice value within each).
The load generator (this script's own process and session, after the server and the observers
have started) runs at ``--load-nice`` (default 10), set on its session as a whole: on a real
deployment the visitors' CPUs are not the server's, but here all of it shares two cores.
``--load-nice 0`` measures that shared-machine worst case: the load generator's session gets the
same share of the two cores as the server's. ``--loads`` drives only some of the loads.
Prints the small room's frames/s, ``/healthz`` p50/p99 beside the control's, the server's peak
RSS and thread count (gunicorn's worker, read from /proc), 500s seen, and requests refused
(413/429) versus run.
Aims (issue: bounded work): >= 20 frames/s, p99 < 200 ms, RSS < 1.5 GB, threads < 60, no 500.

    .venv/bin/python scripts/bench_hostile.py [--seconds 60] [--load-nice 0] [--loads heavy_save,search]

Only loopback is used; every loop stops at the deadline.
"""
import argparse
import collections
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import requests
import socketio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from engine.tools.bench import reference_scenario  # noqa: E402
from engine.scenario.library import library  # noqa: E402

LOADS = ("heavy_save", "long_link", "search", "fork_storm", "large_room")
STATUS = collections.Counter()
LOCK = threading.Lock()


def count(reply):
    with LOCK:
        STATUS[reply.status_code] += 1
    return reply


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port, instance):
    env = {**os.environ, "ISRLAB_INSTANCE_PATH": instance, "ISRLAB_ACCESS_LOG": "0",
           "ISRLAB_QUOTA_PER_CLIENT": os.environ.get("ISRLAB_QUOTA_PER_CLIENT", "30")}
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            requests.get(base + "/healthz", timeout=1)
            return proc, base
        except requests.RequestException:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def worker_pid(master):
    out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else master


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) * 1024, int(fields["Threads"])


def descendants(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in out] + [d for p in out for d in descendants(int(p))]


def serve_bare(port):
    """The control: a bare threaded HTTP/1.1 server (the standard library's, nothing else running
    in it) answering every GET with a small JSON body, in a session of its own like the server.
    Probed beside the real ``/healthz``, its answer times are the floor this machine and load set
    for any Python server, measured in the same seconds."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    os.setsid()

    class Health(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"                   # keep-alive, as the real prober uses

        def do_GET(self):                               # noqa: N802 (the standard library's name)
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass
    ThreadingHTTPServer(("127.0.0.1", port), Health).serve_forever()


def timed_get(session, url):
    started = time.perf_counter()
    try:
        reply = session.get(url, timeout=10)
    except requests.RequestException:
        return 10000.0, None
    return (time.perf_counter() - started) * 1000, reply


def observe(base, bare, seconds, out, ready):
    """The observers' process: a small library room's watcher and the /healthz prober, which also
    probes the bare control server at ``bare`` between two probes of the real one. Puts
    {"frames": [monotonic times], "health_ms": [...], "bare_ms": [...], "stats": [(t, runner
    stats)], "drops": n} on ``out`` when ``seconds`` have passed. It runs in a session of its own
    (see ``own_session``): a visitor's browser does not share the load generator's CPU."""
    os.setsid()
    deadline = time.monotonic() + seconds
    seen, health_ms, bare_ms, stats, drops = [], [], [], [], [0]
    watcher = socketio.Client()
    watcher.on("frame", lambda _data: seen.append(time.monotonic()))

    def dropped(*_):
        if time.monotonic() < deadline - 1:             # not the disconnect at the end
            drops[0] += 1
    watcher.on("disconnect", dropped)
    watcher.connect(base, transports=["websocket"])
    created = watcher.call("create", {"library": "isr-expansion"}, timeout=30)
    if not created.get("ok"):
        print(f"the small room was refused: {created}", file=sys.stderr)
    ready.set()                   # the room exists before the load starts: no quota race
    deadline = time.monotonic() + seconds
    session, control = requests.Session(), requests.Session()
    while time.monotonic() < deadline:
        elapsed, reply = timed_get(session, base + "/healthz")
        health_ms.append(elapsed)
        if reply is not None and reply.ok:                 # the runner's own counters, over time
            stats.append((time.monotonic(), reply.json().get("stats", {})))
        time.sleep(0.025)
        bare_ms.append(timed_get(control, bare)[0])
        time.sleep(0.025)
    watcher.disconnect()
    out.put({"frames": seen, "health_ms": health_ms, "bare_ms": bare_ms, "stats": stats,
             "drops": drops[0], "start": deadline - seconds})


def percentile(ordered, fraction):
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def big_scenario(seconds=60):
    """The largest kind of scenario the save budget accepts: bench-medium for about a minute."""
    return reference_scenario(seconds * 1000)


def large_room_scenario():
    return {"name": "large room", "brokers": 16, "duration_ms": 600_000,
            "topics": [{"name": "t", "partitions": 256, "replication_factor": 3}],
            "clients": [{"name": "p", "type": "producer", "topic": "t", "rate_per_s": 2000, "acks": "all"}]}


def loop(deadline, fn):
    while time.monotonic() < deadline:
        try:
            fn()
        except (requests.RequestException, socketio.exceptions.SocketIOError, OSError, ValueError):
            time.sleep(0.2)


def own_session():
    """Run this script in a session of its own. Linux's autogroup scheduler (on by default:
    /proc/sys/kernel/sched_autogroup_enabled) first shares CPU between sessions, and a nice value
    orders threads only within its session; so the load generator, the observers and the server
    (``start_server``: a session of its own) each get their own session, and ``--load-nice`` is
    set on the load generator's session as a whole (``lower_priority``). Without this, the load
    generator's nice value only ranked it against observers in the same session, and the
    observers' /healthz times were mostly their own wait for that session's CPU."""
    if os.getsid(0) == os.getpid():
        return
    try:
        os.setsid()
    except PermissionError:                     # a process group leader (a shell's job): start again
        raise SystemExit(subprocess.call([sys.executable, *sys.argv], start_new_session=True))


def lower_priority(nice):
    """This process's and its session's CPU priority (its autogroup's nice, where there is one)."""
    os.nice(nice)
    try:
        with open("/proc/self/autogroup", "w") as handle:
            handle.write(str(nice))
    except OSError:                             # no autogroup: the process's nice is all there is
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--load-nice", type=int, default=10,
                        help="CPU priority of the load generator (0: the same as the server)")
    parser.add_argument("--loads", default=",".join(LOADS),
                        help=f"which loads to drive, comma-separated (default all: {','.join(LOADS)}); "
                             "one alone shows what that load costs the observers")
    args = parser.parse_args()
    chosen = set(args.loads.split(","))
    if not chosen <= set(LOADS):
        parser.error(f"--loads: {', '.join(sorted(chosen - set(LOADS)))} unknown; choose from {', '.join(LOADS)}")
    own_session()
    port = free_port()
    instance = tempfile.mkdtemp(prefix="isrlab-bench-")
    proc, base = start_server(port, instance)
    worker = worker_pid(proc.pid)
    deadline = time.monotonic() + args.seconds
    results = {"frames": 0, "health_ms": [], "rss": 0, "threads": 0}
    session = requests.Session()
    headers = {"Content-Type": "application/json"}

    def post(path, body, who=None):
        extra = {"X-Forwarded-For": who} if who else {}
        return count(session.post(base + path, data=json.dumps(body), headers={**headers, **extra}, timeout=30))

    saved = post("/api/runs", {"scenario": library()["isr-expansion"]}).json()
    run_id = saved.get("id")

    def heavy_save():
        post("/api/runs", {"scenario": big_scenario()})
        post("/api/runs/import", {"format": "isrlab-run", "version": 1, "scenario": big_scenario(50)})

    def long_link():
        reply = post("/api/links", {"scenario": big_scenario()})
        if reply.ok:
            url = reply.json()["url"]
            count(session.get(base + url, timeout=30))

    def search():
        post("/api/search", {"scenario": library()["isr-expansion"], "runs": 50, "budget_s": 5})
        time.sleep(2)

    def fork_storm():
        if run_id:
            post(f"/api/replay/{run_id}/fork", {"t_ms": 5000})

    def sample():
        rss, threads = proc_status(worker)
        results["rss"] = max(results["rss"], rss)
        results["threads"] = max(results["threads"], threads)
        total = rss                      # with the job/index worker processes and Spark's JVM
        for child in descendants(worker):
            try:
                total += proc_status(child)[0]
            except (OSError, KeyError, ValueError):
                pass
        results["rss_all"] = max(results.get("rss_all", 0), total)
        time.sleep(0.5)

    def large_room():
        client = socketio.Client()
        client.on("disconnect", lambda *_: note_drop("large room viewer"))
        client.connect(base, transports=["websocket"])
        reply = client.call("create", {"scenario": large_room_scenario()}, timeout=30)
        if reply.get("ok"):
            client.call("control", {"action": "speed", "value": "max"}, timeout=30)
        while time.monotonic() < deadline:
            time.sleep(0.5)
        client.disconnect()

    def note_drop(who):
        if time.monotonic() < deadline - 1:             # not the disconnects at the end
            with LOCK:
                drops[who] = drops.get(who, 0) + 1
    drops = {}
    spawn = multiprocessing.get_context("spawn")
    observed, ready = spawn.Queue(), spawn.Event()
    bare_port = free_port()
    bare = spawn.Process(target=serve_bare, args=(bare_port,), daemon=True)
    bare.start()
    observer = spawn.Process(target=observe, args=(base, f"http://127.0.0.1:{bare_port}/healthz",
                                                   args.seconds, observed, ready))
    observer.start()
    ready.wait(timeout=60)
    if args.load_nice:                  # the server and the observers keep the priority they started with
        lower_priority(args.load_nice)
    deadline = time.monotonic() + args.seconds     # the load runs while the observers watch
    jobs = [(heavy_save, 3), (long_link, 2), (search, 20), (fork_storm, 2)]
    jobs = [(fn, n) for fn, n in jobs if fn.__name__ in chosen] + [(sample, 1)]
    threads = [threading.Thread(target=loop, args=(deadline, fn), daemon=True) for fn, n in jobs for _ in range(n)]
    if "large_room" in chosen:
        threads += [threading.Thread(target=large_room, daemon=True) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(1.0, deadline - time.monotonic() + 30))
    seen_by = observed.get(timeout=120)
    observer.join(timeout=30)
    results["health_ms"], results["stats"] = seen_by["health_ms"], seen_by["stats"]
    if seen_by["drops"]:
        drops["small room watcher"] = seen_by["drops"]
    start = seen_by["start"]
    window = [t for t in seen_by["frames"] if t >= start + 5]              # after the load ramped up
    fps = len(window) / max(args.seconds - 5, 1)
    health, floor = sorted(results["health_ms"]) or [0.0], sorted(seen_by["bare_ms"]) or [0.0]
    p99, floor_p99 = percentile(health, 0.99), percentile(floor, 0.99)
    bare.terminate()
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    refused = sum(n for code, n in STATUS.items() if code in (413, 429))
    stats = [(t, st) for t, st in results.get("stats", []) if t >= start + 5]
    if len(stats) >= 2:
        (t0, a), (t1, b) = stats[0], stats[-1]
        rate = lambda k: (b.get(k, 0) - a.get(k, 0)) / max(t1 - t0, 1e-9)     # noqa: E731
        print(f"server runner: {rate('ticks'):.1f} ticks/s, {rate('late_ticks'):.1f} late ticks/s, "
              f"{rate('frames'):.1f} frames built/s, {rate('frames_deferred'):.1f} frames deferred/s "
              f"(a small room sends one frame per tick; fewer frames seen than ticks = the client read slowly)")
    print(f"load generator at nice {args.load_nice} driving {', '.join(name for name in LOADS if name in chosen)}; "
          "the server and the observers at nice 0")
    print(f"small room: {fps:.1f} frames/s (aim >= 20)")
    print(f"/healthz: p50 {statistics.median(health):.0f} ms, p99 {p99:.0f} ms (aim < 200), {len(health)} probes")
    print(f"control, a bare threaded Python HTTP server in a session of its own, probed in turn: "
          f"p50 {statistics.median(floor):.0f} ms, p99 {floor_p99:.0f} ms; the server's p99 is "
          f"{p99 / max(floor_p99, 0.1):.1f}x the control's")
    print(f"server worker: peak RSS {results['rss'] / 2 ** 20:.0f} MB (aim < 1536), peak threads "
          f"{results['threads']} (aim < 60); with its worker processes and Spark's JVM: peak RSS "
          f"{results.get('rss_all', 0) / 2 ** 20:.0f} MB")
    print(f"viewers disconnected during the load: {drops or 'none'}")
    print(f"HTTP statuses: {dict(sorted(STATUS.items()))}; 500s: {STATUS[500]}; refused (413/429): {refused}; "
          f"answered 2xx: {sum(n for c, n in STATUS.items() if 200 <= c < 300)}")


if __name__ == "__main__":
    main()
