"""``python -m app run``: headless runs, saved when asked, and the same facts as the engine."""
import json
import os
import subprocess
import sys

from app.store import db, runs
from engine.scenarios import library
from engine.simulation import Simulation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_app(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, ISRLAB_INSTANCE_PATH=str(tmp_path / "instance"))
    return subprocess.run([sys.executable, "-m", "app", "run", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_run_and_save_from_the_command_line(tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    out = run_app(["kip101-scenario-1-v0.10", "--save", "--db", url, "--title", "from the CLI", "--index", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    result = Simulation(library()["kip101-scenario-1-v0.10"]).run()
    assert reply["lost"] == sum(r["lost"] for r in result["records"]) and reply["events"] == len(result["history"])
    engine = db.make_engine(url)
    run = runs.get_run(engine, reply["run_id"])
    assert run["title"] == "from the CLI" and run["source"] == "headless" and run["finished"] is True
    assert runs.run_events(engine, run["id"]) == result["history"]
    assert runs.seek_index(engine, run["id"], reply["engine_version"])["history_matches"] is True
    assert reply["link"] == f"/s/{run['slug']}"
    engine.dispose()


def test_scenario_file_seed_override_and_plain_output(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(library()["isr-expansion"]))
    out = run_app([str(path), "--seed", "99"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "seed 99" in out.stdout and "records:" in out.stdout


def test_bad_input_exits_2_with_a_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"brokers": 0}))
    out = run_app([str(bad)], tmp_path)
    assert out.returncode == 2 and "brokers" in out.stderr
    out = run_app([str(tmp_path / "missing.json")], tmp_path)
    assert out.returncode != 0 and "cannot read" in out.stderr
