#!/usr/bin/env python
"""KRaft timings over seeds (docs/model.md §20.1, §20.4): how long a cluster is without an active
controller after the active one crashes, and how long after a broker's crash the controller
fences it. Three brokers, three dedicated voters, default timeouts, 1 ms links.

    .venv/bin/python scripts/kraft_timings.py [--seeds 20]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from engine.simulation import Simulation  # noqa: E402

CONTROLLER_CRASH_MS = 4000
BROKER_CRASH_MS = 9000


def scenario(era, seed):
    return {"name": "kraft-timings", "kafka_version": era, "seed": seed, "brokers": 3,
            "duration_ms": 25000, "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 5}]}


def one_run(era, seed):
    sim = Simulation(scenario(era, seed))
    sim.advance_to(CONTROLLER_CRASH_MS - 1)
    sim.apply({"op": "crash", "controller": sim.quorum.active})  # runs at CONTROLLER_CRASH_MS
    sim.advance_to(BROKER_CRASH_MS - 1)
    sim.apply({"op": "crash", "broker": 0})
    history = sim.run()["history"]
    activated = next(e["t_ms"] for e in history
                     if e["type"] == "controller_activated" and e["t_ms"] > CONTROLLER_CRASH_MS)
    fenced = next(e["t_ms"] for e in history if e["type"] == "broker_fenced" and e["broker"] == 0)
    return activated - CONTROLLER_CRASH_MS, fenced - BROKER_CRASH_MS


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    for era in ("3.9-kraft", "4.1"):
        runs = [one_run(era, seed) for seed in range(args.seeds)]
        for label, values in (("no active controller (ms)", [r[0] for r in runs]),
                              ("crash to fenced (ms)", [r[1] for r in runs])):
            print(f"{era:10s} {label:26s} min {min(values)} median {statistics.median(values)} "
                  f"max {max(values)}")


if __name__ == "__main__":
    main()
