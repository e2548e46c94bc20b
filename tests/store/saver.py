"""Saves runs in a loop until killed (the SIGKILL test runs this as a subprocess).

    python -m tests.store.saver URL SEED

Prints "committed <run id>" after each save has committed (flushed at once), so the test knows
which runs must have survived the kill."""
import random
import sys

from app.replay.save import capture_result, save_captured
from app.store import db
from engine.scenario.library import library
from engine.simulation import Simulation

SCENARIOS = ("isr-expansion", "preferred-leader-election", "kip101-scenario-1-v0.10", "acks1-loss-on-failover")


def main(url, seed):
    engine = db.open_store(url)
    rng = random.Random(seed)
    captured = []
    for name in SCENARIOS:
        sim = Simulation(library()[name])
        captured.append(capture_result(sim, sim.run()))
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        saved = save_captured(engine, rng.choice(captured), title=f"saver {seed} #{n}", source="headless")
        print(f"committed {saved['id']}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
