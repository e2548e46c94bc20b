#!/usr/bin/env python3
"""Load benchmark of the live web simulator (a benchmark script, not a test).

Starts ``python -m app serve`` on a free port (or uses --url), then measures over real websockets:

  A. N viewers of one live simulation (default 50), spread over several client processes
     (one Python Socket.IO client process saturates near 30-40 viewers on its own);
  B. R independent simulations at once (default 20), one viewer each;
  C. both at once (one room with N viewers + R-1 other rooms with one viewer each);
  D. the page rendering a 9-broker, 50-partition cluster in headless Chromium: frame times from
     requestAnimationFrame (Performance API), at two window sizes.

For each load it prints updates/s per viewer (min and median), update latency p50/p99 (frame
stamped with the server's wall clock when built, compared with the viewer's clock on arrival:
same machine), payload sizes, and the CPU of the server and of the client processes.

    .venv/bin/python scripts/bench_ws.py                 # everything, ~2 minutes
    .venv/bin/python scripts/bench_ws.py --only A --viewers 50 --duration 20
"""
import argparse
import json
import multiprocessing as mp
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, ".venv", "bin", "python")
CLK = os.sysconf("SC_CLK_TCK")

BIG = {"name": "9 brokers, 50 partitions", "brokers": 9, "seed": 3,
       "topics": [{"name": f"t{i}", "partitions": 10, "replication_factor": 3} for i in range(5)],
       "clients": [{"name": f"p{i}", "type": "producer", "topic": f"t{i}", "acks": "all", "rate_per_s": 100}
                   for i in range(5)] + [{"name": "c1", "type": "consumer", "topic": "t0",
                                          "auto.offset.reset": "earliest"}],
       "timeline": [{"at_ms": 20000, "op": "crash", "broker": 4}, {"at_ms": 45000, "op": "restart", "broker": 4}],
       "duration_ms": 600000}


# -- helpers -------------------------------------------------------------------------------------------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """CPU seconds of ``pid`` and every live process under it (the server's gunicorn worker, its
    room workers and job processes): the server is a tree of processes."""
    return sum(cpu_by_process(pid).values())


def cpu_by_process(pid):
    """{(pid, command): CPU seconds} of ``pid`` and the processes under it."""
    out = {}
    for p in [pid] + descendants(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[(p, cmd)] = (int(fields[11]) + int(fields[12])) / CLK
    return out


def process_label(cmd):
    for needle, label in (("app.rooms.worker", "room worker"), ("app serve", "web"), ("jobwork", "job worker"),
                          ("spark", "spark")):
        if needle in cmd:
            return label
    return cmd.split(" ")[0].rsplit("/", 1)[-1]


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                kids = []
            out.extend(kids)
            todo.extend(kids)
    return out


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


def create_room(base, library=None, scenario=None):
    body = {"library": library} if library else {"scenario": scenario}
    return post(base + "/api/rooms", body)["room"]


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


# -- viewer processes ------------------------------------------------------------------------------------
WALL_MS = re.compile(r'\\"wall_ms\\":([-0-9.e+]+)')
FULL = re.compile(r'\\"full\\":1')


def light_viewer_process(base, rooms, start_at, end_at, out):
    """Viewers as plain WebSockets speaking Engine.IO 4 / Socket.IO 5 by hand, all in one thread:
    every frame is received whole, its ``wall_ms`` read with a regular expression instead of
    parsing the frame. python-socketio's client costs three threads per viewer and a JSON parse per
    frame: with 100 viewers on the server's own two cores the harness took a third of the CPU."""
    import selectors
    import websocket
    url = base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    stats = [{"n": 0, "lat": [], "bytes": 0, "full": 0} for _ in rooms]
    sel = selectors.DefaultSelector()
    socks = []
    for i, room in enumerate(rooms):
        ws = websocket.create_connection(url, origin=base, skip_utf8_validation=True)
        assert ws.recv().startswith("0"), "no Engine.IO open packet"
        ws.send("40")
        while not ws.recv().startswith("40"):
            pass
        ws.send('420["join",' + json.dumps({"room": room}) + "]")
        while True:
            reply = ws.recv()
            if reply.startswith("430"):
                assert '"ok":true' in reply, reply
                break
        socks.append(ws)
        sel.register(ws.sock, selectors.EVENT_READ, i)
    t0 = os.times()
    start_ms, end_ms = start_at * 1000, end_at * 1000
    while time.time() < end_at + 0.3:
        for key, _ in sel.select(timeout=0.2):
            i = key.data
            ws = socks[i]
            text = ws.recv()
            if text == "2":                       # Engine.IO ping: answer or be dropped
                ws.send("3")
                continue
            if not text.startswith('42["frame"'):
                continue
            now = time.time() * 1000.0
            if start_ms <= now <= end_ms:
                s = stats[i]
                s["n"] += 1
                s["lat"].append(now - float(WALL_MS.search(text).group(1)))
                s["bytes"] += len(text)
                s["full"] += 1 if FULL.search(text) else 0
    t1 = os.times()
    for ws in socks:
        ws.close()
    out.put({"stats": stats, "cpu": (t1.user - t0.user) + (t1.system - t0.system)})


def viewer_process(base, rooms, start_at, end_at, out):
    import socketio
    stats = [{"n": 0, "lat": [], "bytes": 0, "full": 0} for _ in rooms]
    clients = []
    for i, room in enumerate(rooms):
        c = socketio.Client(reconnection=False, websocket_extra_options={"skip_utf8_validation": True})

        def on_frame(text, i=i):
            now = time.time() * 1000.0
            frame = json.loads(text)
            if start_at * 1000 <= now <= end_at * 1000:
                s = stats[i]
                s["n"] += 1
                s["lat"].append(now - frame["wall_ms"])
                s["bytes"] += len(text)
                s["full"] += frame["full"]
        c.on("frame", on_frame)
        c.connect(base, transports=["websocket"])
        reply = c.call("join", {"room": room}, timeout=15)
        assert reply and reply["ok"], reply
        clients.append(c)
    t0 = os.times()
    time.sleep(max(0.0, end_at - time.time()) + 0.3)
    t1 = os.times()
    for c in clients:
        c.disconnect()
    out.put({"stats": stats, "cpu": (t1.user - t0.user) + (t1.system - t0.system)})


def run_load(base, server_pid, viewer_rooms, duration, procs_max=4, per_proc=17, label="", client="light"):
    """viewer_rooms: one room id per viewer. Returns a summary dict."""
    n = len(viewer_rooms)
    if client == "light":      # one thread per process reads many sockets: two processes do
        procs_max, per_proc = 2, 60
    target = light_viewer_process if client == "light" else viewer_process
    procs = max(1, min(procs_max, -(-n // per_proc)))
    chunks = [viewer_rooms[i::procs] for i in range(procs)]
    setup = 4 + n * 0.08
    start_at = time.time() + setup
    end_at = start_at + duration
    q = mp.Queue()
    ps = [mp.Process(target=target, args=(base, chunk, start_at, end_at, q)) for chunk in chunks]
    for p in ps:
        p.start()
    time.sleep(max(0.0, start_at - time.time()))
    p0, w0 = cpu_by_process(server_pid), time.time()
    time.sleep(max(0.0, end_at - time.time()))
    p1, w1 = cpu_by_process(server_pid), time.time()
    c0, c1 = sum(p0.values()), sum(p1.values())
    parts = {}
    for key, seconds in p1.items():
        who = process_label(key[1])
        parts[who] = parts.get(who, 0.0) + 100 * (seconds - p0.get(key, 0.0)) / (w1 - w0)
    results = [q.get(timeout=120) for _ in ps]
    for p in ps:
        p.join(timeout=30)
    stats = [s for r in results for s in r["stats"]]
    rates = [s["n"] / duration for s in stats]
    lat = [x for s in stats for x in s["lat"]]
    total_bytes = sum(s["bytes"] for s in stats)
    frames = sum(s["n"] for s in stats)
    return {"label": label, "viewers": n, "client_processes": procs, "duration_s": duration,
            "updates_per_s_min": min(rates), "updates_per_s_median": statistics.median(rates),
            "latency_ms_p50": pct(lat, 50), "latency_ms_p99": pct(lat, 99), "latency_ms_max": max(lat) if lat else None,
            "bytes_per_update": total_bytes / max(1, frames), "full_frames": sum(s["full"] for s in stats),
            "server_cpu_pct": 100 * (c1 - c0) / (w1 - w0),
            "server_cpu_pct_by_process": {k: round(v, 1) for k, v in parts.items()},
            "server_cpu_us_per_update": 1e6 * (c1 - c0) / max(1, frames),
            "load_average": os.getloadavg()[0],
            "client_cpu_pct": 100 * sum(r["cpu"] for r in results) / duration}


def show(r):
    print(f"  {r['label']}: {r['viewers']} viewers over {r['client_processes']} client processes, {r['duration_s']} s")
    print(f"    updates/s per viewer: min {r['updates_per_s_min']:.1f}, median {r['updates_per_s_median']:.1f}"
          f"   (target >= 20)")
    print(f"    update latency: p50 {r['latency_ms_p50']:.1f} ms, p99 {r['latency_ms_p99']:.1f} ms, "
          f"max {r['latency_ms_max']:.1f} ms   (target p99 < 100 ms)")
    print(f"    payload: {r['bytes_per_update']:.0f} bytes per update, {r['full_frames']} full frames")
    by = ", ".join(f"{k} {v:.0f}%" for k, v in sorted(r["server_cpu_pct_by_process"].items()))
    print(f"    CPU: server {r['server_cpu_pct']:.0f}% of one core ({by}), viewers' processes "
          f"{r['client_cpu_pct']:.0f}%   (2 cores = 200%); {r['server_cpu_us_per_update']:.0f} us of server CPU "
          f"per update delivered; load average {r['load_average']:.1f}")


# -- page frame rate ------------------------------------------------------------------------------------
def page_fps(base, seconds, viewports, css=None):
    from playwright.sync_api import sync_playwright
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        for width, height in viewports:
            ctx = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
            page = ctx.new_page()
            page.goto(base + "/")
            page.wait_for_function("() => window.isrlab && window.isrlab.store.clock")
            reply = page.evaluate("(doc) => window.isrlab.load({scenario: doc}, true)", BIG)
            assert reply["ok"], reply
            page.wait_for_function("() => window.isrlab.store.partitions.size === 50")
            if css:
                page.add_style_tag(content=css)
            page.wait_for_timeout(3000)
            before = page.evaluate("() => ({...window.isrlab.perf, parts: undefined, frames_in: window.isrlab.store.frames})")
            times = page.evaluate("""(ms) => new Promise(resolve => {
                const t = []; let last = performance.now(); const t0 = last;
                function f(now) { t.push(now - last); last = now;
                  if (now - t0 < ms) requestAnimationFrame(f); else resolve(t); }
                requestAnimationFrame(f); })""", seconds * 1000)
            after = page.evaluate("() => ({...window.isrlab.perf, parts: undefined, frames_in: window.isrlab.store.frames})")
            visible = page.evaluate("() => Array.from(document.querySelectorAll('.pcard')).filter(c => { const r = c.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }).length")
            renders = after["renders"] - before["renders"]
            out.append({"viewport": f"{width}x{height}", "fps": len(times) / seconds,
                        "frame_ms_p50": pct(times, 50), "frame_ms_p95": pct(times, 95), "frame_ms_p99": pct(times, 99),
                        "frame_ms_max": max(times), "long_frames_over_33ms": sum(1 for t in times if t > 33.4),
                        "server_updates_per_s": (after["frames_in"] - before["frames_in"]) / seconds,
                        "render_ms_per_update": (after["render"] - before["render"]) / max(1, renders),
                        "visible_partition_cards": visible})
            ctx.close()
        browser.close()
    return out


# -- main ---------------------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="use a running server (default: start one)")
    ap.add_argument("--viewers", type=int, default=50)
    ap.add_argument("--rooms", type=int, default=20)
    ap.add_argument("--duration", type=float, default=15.0, help="seconds measured per load")
    ap.add_argument("--scenario", default="isr-expansion", help="library scenario the viewers watch")
    ap.add_argument("--only", default="ABCD", help="which loads: letters from ABCD")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--client", choices=("light", "socketio"), default="light",
                    help="viewers: plain WebSockets in one thread per process (light), or python-socketio "
                         "clients (three threads each, a JSON parse per frame)")
    args = ap.parse_args()

    server = None
    if args.url:
        base, pid = args.url.rstrip("/"), None
    else:
        port = free_port()
        env = dict(os.environ, ISRLAB_PORT=str(port), ISRLAB_MAX_ROOMS="200", ISRLAB_MAX_VIEWERS="500",
                   ISRLAB_MAX_ROOMS_PER_ADDRESS="200",
                   ISRLAB_QUOTA_PER_CLIENT="10000")     # every room comes from this one address
        server = subprocess.Popen([PY, "-m", "app", "serve"], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base, pid = f"http://127.0.0.1:{port}", server.pid
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/healthz")
                break
            except OSError:
                time.sleep(0.1)
    if pid is None:
        raise SystemExit("--url needs the server on this machine for CPU figures; run without it")
    print(f"server {base} (pid {pid}), {os.cpu_count()} cores, scenario {args.scenario}, "
          f"{args.duration:g} s per load")
    results = {}
    try:
        if "A" in args.only:
            room = create_room(base, library=args.scenario)
            results["A"] = run_load(base, pid, [room] * args.viewers, args.duration,
                                    label=f"A. one simulation, {args.viewers} viewers", client=args.client)
            show(results["A"])
            _close(base, [room])
        if "B" in args.only:
            rooms = [create_room(base, library=args.scenario) for _ in range(args.rooms)]
            results["B"] = run_load(base, pid, rooms, args.duration, label=f"B. {args.rooms} independent simulations", client=args.client)
            show(results["B"])
        if "C" in args.only:
            main_room = create_room(base, library=args.scenario)
            others = [create_room(base, library=args.scenario) for _ in range(args.rooms - 1)]
            results["C"] = run_load(base, pid, [main_room] * args.viewers + others, args.duration, procs_max=4,
                                    per_proc=18, label=f"C. both at once: {args.viewers} viewers of one + "
                                                       f"{args.rooms - 1} more simulations", client=args.client)
            show(results["C"])
        if "D" in args.only:
            print("  D. the page, 9 brokers / 50 partitions (producers 5 x 100 records/s), headless Chromium")
            results["D"] = page_fps(base, 10, [(1600, 1000), (1920, 2400)])
            for r in results["D"]:
                print(f"    {r['viewport']}: {r['fps']:.1f} frames/s (rAF), frame time p50 {r['frame_ms_p50']:.1f} ms, "
                      f"p95 {r['frame_ms_p95']:.1f} ms, p99 {r['frame_ms_p99']:.1f} ms, max {r['frame_ms_max']:.1f} ms; "
                      f"{r['long_frames_over_33ms']} frames > 33 ms; {r['server_updates_per_s']:.1f} updates/s in, "
                      f"{r['render_ms_per_update']:.2f} ms JS render per update; "
                      f"{r['visible_partition_cards']} partition cards on screen   (target >= 30 frames/s)")
        with urllib.request.urlopen(base + "/healthz") as r:
            results["server_stats"] = json.loads(r.read())["stats"]
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


def _close(base, rooms):
    """Rooms without viewers pause themselves; nothing to do (they are removed when idle)."""
    return rooms


if __name__ == "__main__":
    mp.set_start_method("spawn")
    sys.exit(main())
