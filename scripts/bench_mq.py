#!/usr/bin/env python3
"""Frames through the message queue (a benchmark script, not a test): what a viewer on web
process B sees of a room created on web process A, next to a viewer on A.

Starts its own ``redis-server`` on a free port, the room host (``isrlab rooms``) and two
``isrlab serve`` processes, creates R rooms of the isr-expansion story on A (default 4), joins
each from one viewer on A and one on B, and prints per side: frames/s per viewer (min, median)
and update latency p50/p99 (the frame's wall clock when built in the room worker, against the
viewer's clock on arrival: same machine). Everything it starts is ended by its pid.

    .venv/bin/python scripts/bench_mq.py --rooms 4 --duration 10
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import redis
import socketio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from app.rooms import mq  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready_within(predicate, timeout):
    """True once ``predicate()`` is true (an exception counts as not yet: the process is still
    starting), False when ``timeout`` seconds pass first. tests/app/test_message_queue.py uses it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.1)
    return False


def wait(predicate, timeout):
    if not ready_within(predicate, timeout):
        raise SystemExit("a process did not start in time")


class Viewer:
    def __init__(self, base):
        self.arrivals, self.latency = [], []
        self.lock = threading.Lock()
        self.client = socketio.Client(reconnection=False)
        self.client.on("frame", self._frame)
        self.client.connect(base, transports=["websocket"])

    def _frame(self, text):
        now = time.time() * 1000.0
        frame = json.loads(text)
        with self.lock:
            self.arrivals.append(time.monotonic())
            self.latency.append(now - frame["wall_ms"])

    def window(self, start, end):
        with self.lock:
            n = sum(1 for t in self.arrivals if start <= t < end)
            lat = [lat for t, lat in zip(self.arrivals, self.latency) if start <= t < end]
        return n / (end - start), lat


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rooms", type=int, default=4)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="isrlab-bench-mq-")
    procs = []

    def start(argv, env=None, name="p"):
        log = open(os.path.join(folder, name + ".log"), "w")
        proc = subprocess.Popen(argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(proc)
        return proc

    try:
        port = free_port()
        start(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--dir", folder], name="redis")
        url = f"redis://127.0.0.1:{port}/0"
        wait(lambda: redis.Redis.from_url(url).ping(), 20)
        start([sys.executable, "-m", "app", "rooms", "--workers", str(args.workers)],
              {"ISRLAB_MESSAGE_QUEUE": url, "ISRLAB_ROOM_WORKER_SPARE": "0"}, "host")
        wait(lambda: redis.Redis.from_url(url).exists(mq.HOST_KEY), 90)
        bases = []
        for name in ("a", "b"):
            web_port = free_port()
            start([sys.executable, "-m", "app", "serve", "--port", str(web_port)],
                  {"ISRLAB_MESSAGE_QUEUE": url, "ISRLAB_ACCESS_LOG": "0", "ISRLAB_JOB_PROCESSES": "0",
                   "ISRLAB_INSTANCE_PATH": os.path.join(folder, name)}, name)
            base = f"http://127.0.0.1:{web_port}"
            wait(lambda: urllib.request.urlopen(base + "/healthz", timeout=2).status == 200, 60)
            bases.append(base)
        side = {"A": [], "B": []}
        for _ in range(args.rooms):
            a, b = Viewer(bases[0]), Viewer(bases[1])
            room = a.client.call("create", {"library": "isr-expansion"}, timeout=30)["room"]["room"]
            assert b.client.call("join", {"room": room}, timeout=30)["ok"]
            side["A"].append(a)
            side["B"].append(b)
        time.sleep(2.0)                               # past the joins' full frames
        start_t = time.monotonic()
        time.sleep(args.duration)
        end_t = time.monotonic()
        print(f"{args.rooms} rooms of isr-expansion, {args.workers} room workers, one viewer per room on "
              f"each web process, {args.duration:g} s (cpus: {os.cpu_count()})")
        for name, viewers in side.items():
            rates, lats = [], []
            for viewer in viewers:
                rate, lat = viewer.window(start_t, end_t)
                rates.append(rate)
                lats += lat
            print(f"  web {name}: frames/s per viewer min {min(rates):.1f} median {statistics.median(rates):.1f}; "
                  f"latency p50 {percentile(lats, 0.5):.1f} ms p99 {percentile(lats, 0.99):.1f} ms")
        for viewer in side["A"] + side["B"]:
            viewer.client.disconnect()
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
