#!/usr/bin/env python3
"""What one live room costs a room worker, per frame, under each interpreter (a benchmark script).

Runs the very ``Runner`` a room worker runs (app/runner/core.py) with R rooms of a library story,
one viewer each, on a simulated clock at FPS ticks per second, and reports CPU microseconds per
room-frame: advancing the simulation, building the frame (entities, diff, JSON) and planning the
sends. Budgets are lifted so every tick builds every room's frame: the figure is the cost, not
what a busy machine's fairness let through. CPU time (``time.process_time``), so the figure holds
on a machine shared with other work, unlike frames per second.

The first interpreter is the baseline; each other is printed as a ratio against it, measured in
the same run.

    .venv/bin/python scripts/bench_room_cpu.py                       # this Python, then pypy3
    .venv/bin/python scripts/bench_room_cpu.py --rooms 100 --seconds 20 --story isr-expansion
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(rooms, seconds, warmup, fps, story):
    """Runs inside the interpreter being measured; returns {part: CPU us per room-frame}."""
    sys.path.insert(0, ROOT)
    from app.config import load_settings
    from app.runner import frames as frames_mod, room as room_mod
    from app.runner.core import Runner

    class Clock:
        now = 1000.0

        def __call__(self):
            return self.now

    class Count:
        frames = 0

        def send(self, room_id, text, sids, everyone):
            self.frames += 1

        def backlog(self, sid):
            return 0

    settings = load_settings({"ISRLAB_MAX_ROOMS": str(rooms + 1), "ISRLAB_FPS": str(fps)})
    settings.update(RUNNER_AUTOSTART=False, FRAME_BUDGET=100.0, TICK_BUDGET=100.0)
    clock, sink = Clock(), Count()
    runner = Runner(settings, sink, clock=clock, wall=lambda: clock.now)
    for i in range(rooms):
        runner.join(runner.create(library_name=story).id, f"viewer-{i}")
    spent = {}

    def timed(cls, name, label):
        inner = getattr(cls, name)

        def wrapper(*args, **kwargs):
            started = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started
        setattr(cls, name, wrapper)

    def run(ticks):
        for _ in range(ticks):
            clock.now += 1.0 / fps
            runner.tick(clock.now)

    run(int(warmup * fps))                   # PyPy's JIT warms up; every room reaches its steady state
    timed(room_mod.Room, "advance", "simulation")
    timed(room_mod.Room, "build_frame", "frame")
    timed(room_mod.Room, "plan_sends", "sends")
    timed(frames_mod.FrameBuilder, "update", "frame: diff + JSON")
    started, before = time.process_time(), sink.frames
    run(int(seconds * fps))
    total = time.process_time() - started
    frames = max(1, sink.frames - before)
    out = {label: 1e6 * value / frames for label, value in spent.items()}
    out["total"] = 1e6 * total / frames
    out["frames"] = frames
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rooms", type=int, default=50, help="rooms in the one worker (default 50: 100 on two)")
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated seconds measured")
    ap.add_argument("--warmup", type=float, default=20.0, help="simulated seconds first, not measured")
    ap.add_argument("--fps", type=int, default=30, help="ticks per second (ISRLAB_FPS)")
    ap.add_argument("--story", default="isr-expansion")
    ap.add_argument("--python", action="append", help="interpreters (default: this one, then pypy3)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.rooms, args.seconds, args.warmup, args.fps, args.story)))
        return 0
    pythons = args.python or [sys.executable] + ([shutil.which("pypy3")] if shutil.which("pypy3") else [])
    print(f"{args.rooms} rooms of {args.story}, {args.fps} ticks/s, {args.seconds:g} simulated s "
          f"after {args.warmup:g} s of warm-up; CPU us per room-frame (load average {os.getloadavg()[0]:.1f})")
    base = None
    for python in pythons:
        cmd = [python, os.path.abspath(__file__), "--child", "--rooms", str(args.rooms), "--seconds",
               str(args.seconds), "--warmup", str(args.warmup), "--fps", str(args.fps), "--story", args.story]
        result = json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        base = base or result
        parts = ", ".join(f"{k} {v:.0f}" for k, v in result.items() if k not in ("total", "frames"))
        print(f"  {python}: {result['total']:.0f} us per room-frame ({parts}); "
              f"x{result['total'] / base['total']:.2f} of the first; "
              f"{args.rooms} rooms at {args.fps} frames/s need {result['total'] * args.rooms * args.fps / 1e4:.0f}% "
              f"of a core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
