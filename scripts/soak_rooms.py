#!/usr/bin/env python3
"""Memory soak of the live web simulator (a benchmark script, not a test).

Starts ``python -m app serve`` (room workers as ``isrlab serve`` runs them) on a free port, then for
``--minutes`` keeps creating rooms, watching each for a while with a plain WebSocket viewer and
leaving it, so rooms are created, played, left idle and removed (``ISRLAB_ROOM_IDLE_S`` is set low
for the soak). Every ``--every`` seconds it samples the resident memory of the web process and of
the room workers, and at the end prints the trend: the first and last quarter's medians and the
slope of a least-squares line through the web process's samples, in MB per 10 minutes.

    .venv/bin/python scripts/soak_rooms.py --minutes 30
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ws import create_room, descendants, free_port  # noqa: E402  (same folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(ROOT, ".venv", "bin", "python")
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * PAGE / 2 ** 20
    except OSError:
        return None


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def threads(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def web_process(root_pid):
    """The gunicorn worker that serves requests: of the processes named `app serve` (the arbiter,
    its worker, and children forked from the worker, which keep its command line), the one with
    the most threads (a thread per connection)."""
    tree = [root_pid] + descendants(root_pid)
    serving = [p for p in tree if "app serve" in cmdline(p)]
    return max(serving, key=threads) if serving else root_pid


def watch(base, room, seconds):
    """One viewer joins ``room``, takes its frames for ``seconds`` (answering pings), leaves."""
    import websocket
    url = base.replace("http://", "ws://") + "/socket.io/?EIO=4&transport=websocket"
    ws = websocket.create_connection(url, origin=base, timeout=10, skip_utf8_validation=True)
    try:
        ws.recv()
        ws.send("40")
        ws.recv()
        ws.send('420["join",' + json.dumps({"room": room}) + "]")
        end = time.time() + seconds
        frames = 0
        ws.settimeout(1.0)
        while time.time() < end:
            try:
                text = ws.recv()
            except websocket.WebSocketTimeoutException:
                continue                    # a room at the end of its run sends nothing more
            if text == "2":
                ws.send("3")
            elif text.startswith('42["frame"'):
                frames += 1
        return frames
    finally:
        ws.close()


def slope_mb_per_10min(samples):
    """Least-squares slope of (seconds, MB) samples, in MB per 10 minutes."""
    xs, ys = [s[0] for s in samples], [s[1] for s in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return 600 * sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--every", type=float, default=20.0, help="seconds between memory samples")
    ap.add_argument("--at-once", type=int, default=8, help="viewers watching at any moment")
    ap.add_argument("--watch", type=float, default=20.0, help="seconds a viewer watches its room")
    args = ap.parse_args()
    port = free_port()
    env = dict(os.environ, ISRLAB_PORT=str(port), ISRLAB_ROOM_IDLE_S="10", ISRLAB_QUOTA_PER_CLIENT="100000",
               ISRLAB_MAX_ROOMS_PER_ADDRESS="100", ISRLAB_ACCESS_LOG="0")
    server = subprocess.Popen([PY, "-m", "app", "serve"], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(base + "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        with urllib.request.urlopen(base + "/api/library") as r:
            stories = [s["id"] for s in json.loads(r.read())["scenarios"]]
        web = web_process(server.pid)
        stop = time.time() + args.minutes * 60
        made, frames, errors = [0], [0], []
        rng = random.Random(1)

        def viewer_loop():
            while time.time() < stop:
                try:
                    room = create_room(base, library=rng.choice(stories))
                    made[0] += 1
                    frames[0] += watch(base, room, args.watch * (0.5 + rng.random()))
                except Exception as exc:  # noqa: BLE001 - counted and shown, the soak goes on
                    errors.append(repr(exc)[:200])
                    time.sleep(1)
        threads = [threading.Thread(target=viewer_loop, daemon=True) for _ in range(args.at_once)]
        for t in threads:
            t.start()
        started, web_samples, worker_samples = time.time(), [], []
        print(f"soak: {args.minutes:g} min, {args.at_once} viewers at once, web process {web}", flush=True)
        while time.time() < stop:
            time.sleep(args.every)
            t = time.time() - started
            web_mb = rss_mb(web)
            workers = [rss_mb(p) for p in descendants(server.pid) if "app.rooms.worker" in cmdline(p)]
            with urllib.request.urlopen(base + "/healthz") as r:
                rooms = json.loads(r.read())["rooms"]
            web_samples.append((t, web_mb))
            worker_samples.append((t, sum(w for w in workers if w)))
            print(f"  {t / 60:5.1f} min: web {web_mb:6.1f} MB, room workers {worker_samples[-1][1]:6.1f} MB, "
                  f"{rooms} rooms, {made[0]} made, {len(errors)} errors", flush=True)
        for t in threads:
            t.join(timeout=args.watch * 2 + 10)
        quarter = max(1, len(web_samples) // 4)
        first = statistics.median(m for _, m in web_samples[:quarter])
        last = statistics.median(m for _, m in web_samples[-quarter:])
        print(f"rooms made {made[0]}, frames received {frames[0]}, errors {len(errors)}")
        print(f"web process RSS: first quarter median {first:.1f} MB, last quarter {last:.1f} MB "
              f"(x{last / first:.3f}); slope {slope_mb_per_10min(web_samples):+.2f} MB per 10 min")
        print(f"room workers RSS: first quarter median {statistics.median(m for _, m in worker_samples[:quarter]):.1f} MB, "
              f"last quarter {statistics.median(m for _, m in worker_samples[-quarter:]):.1f} MB; "
              f"slope {slope_mb_per_10min(worker_samples):+.2f} MB per 10 min")
        for e in errors[:5]:
            print("  error:", e)
    finally:
        server.terminate()
        server.wait(timeout=20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
