"""``python -m app run``: headless runs, saved when asked, and the same facts as the engine."""
import json
import os
import subprocess
import sys

from app.store import db, runs
from engine.scenario.library import library
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


def test_kraft_scenarios_run_from_both_command_lines(tmp_path):
    """``isrlab run --save`` and ``python -m engine run`` in a KRaft era (docs/model.md §20): the
    ELR worked example in 4.1 saves and indexes, loses nothing, and the engine's result has the
    quorum and the metadata log instead of znodes."""
    doc = library()["last-isr-member-elr"]
    path = tmp_path / "elr.json"
    path.write_text(json.dumps(doc))
    url = f"sqlite:///{tmp_path}/kraft.db"
    out = run_app([str(path), "--save", "--db", url, "--index", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    reply = json.loads(out.stdout)
    assert reply["kafka_version"] == "4.1" and reply["acked"] == 900 and reply["lost"] == 0
    engine = db.make_engine(url)
    assert runs.seek_index(engine, reply["run_id"], reply["engine_version"])["history_matches"] is True
    engine.dispose()
    env = dict(os.environ, PYTHONPATH=ROOT)
    plain = subprocess.run([sys.executable, "-m", "engine", "run", str(path)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    result = json.loads(plain.stdout)
    assert set(result["controller"]["voters"]) == {"3000", "3001", "3002"} and "zk" not in result
    assert any(r["type"] == "PartitionChangeRecord" for r in result["metadata_log"])
    assert [e["kind"] for e in result["history"] if e["type"] == "leader_elected"][-1] == "elr"
