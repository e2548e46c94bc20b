"""Saved runs survive a SIGKILL at any moment, and concurrent saves do not fail."""
import os
import random
import signal
import subprocess
import sys
import threading
import time

from app.replay.seek import history_digest
from app.replay.save import capture_result, save_captured, summary_of_result
from app.store import db, runs
from engine.scenario.library import library
from engine.simulation import Simulation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _verify_every_run(engine):
    """Each run loads fully and its scenario re-simulates to the saved history and summary."""
    replays = {}
    listed = runs.list_runs(engine, limit=500)
    for summary in listed["runs"]:
        run = runs.get_run(engine, summary["id"])
        events = runs.run_events(engine, run["id"])
        assert len(events) == run["events_count"] == runs.count_events(engine, run["id"])
        key = run["scenario_sha256"]
        if key not in replays:
            sim = Simulation(run["scenario"])
            result = sim.run()
            replays[key] = (history_digest(result["history"]), summary_of_result(result), len(result["violations"]))
        digest, counts, n_violations = replays[key]
        assert history_digest(events) == digest
        assert (run["records_total"], run["acked_count"], run["failed_count"], run["lost_count"]) == \
            (counts["records_total"], counts["acked"], counts["failed"], counts["lost"])
        assert len(runs.run_violations(engine, run["id"])) == run["violations_count"] == n_violations
    return listed["total"]


def test_runs_survive_sigkill_during_saves(store_url):
    db.open_store(store_url).dispose()
    rng = random.Random(42)
    committed = set()
    env = dict(os.environ, PYTHONPATH=ROOT)
    for round_no in range(8):
        proc = subprocess.Popen([sys.executable, "-m", "tests.store.saver", store_url, str(round_no)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        lines = []
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout))
        reader.start()
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        reader.join()
        assert proc.returncode == -signal.SIGKILL
        committed |= {int(line.split()[1]) for line in lines if line.startswith("committed ")}
    assert len(committed) >= 8
    engine = db.open_store(store_url)
    total = _verify_every_run(engine)
    ids = {r["id"] for r in runs.list_runs(engine, limit=500)["runs"]}
    assert committed <= ids                       # every committed run is there...
    assert total - len(committed) <= 8            # ...at most one run per kill committed unreported
    if engine.dialect.name == "sqlite":
        with engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    engine.dispose()


def test_many_sessions_save_at_once(store):
    sim = Simulation(library()["isr-expansion"])
    captured = capture_result(sim, sim.run())
    errors, saved = [], []

    def saver(i):
        try:
            for j in range(6):
                saved.append(save_captured(store, captured, title=f"thread {i} save {j}")["id"])
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    def reader():
        try:
            for _ in range(30):
                runs.list_runs(store, q="thread")
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))

    threads = [threading.Thread(target=saver, args=(i,)) for i in range(16)] + \
        [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(saved) == len(set(saved)) == 96
    assert runs.list_runs(store, q="thread")["total"] == 96
    assert runs.count_events(store, saved[-1]) == len(captured["events"])


def test_several_processes_save_at_once(store_url):
    """Separate server processes share one database (SQLite: file locks + busy timeout)."""
    db.open_store(store_url).dispose()
    env = dict(os.environ, PYTHONPATH=ROOT)
    code = ("import sys\nfrom tests.store.saver import *\n"
            "engine = db.open_store(sys.argv[1]); sim = Simulation(library()['isr-expansion'])\n"
            "cap = capture_result(sim, sim.run())\n"
            "for n in range(15): save_captured(engine, cap, title=f'proc {sys.argv[2]} {n}')\n"
            "print('done')")
    procs = [subprocess.Popen([sys.executable, "-c", code, store_url, str(i)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.strip() == "done", err[-2000:]
    engine = db.make_engine(store_url)
    assert runs.list_runs(engine, q="proc")["total"] == 60
    engine.dispose()
