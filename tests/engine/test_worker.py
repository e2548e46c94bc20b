"""``python -m engine worker``: the JSON-lines protocol a sweep task speaks with its worker
process — a setup line answered with the engine version, then one answer line per run, equal to
what ``engine.tools.sweep_run.simulate`` returns in process."""
import io
import json
import sys

import pytest

from engine.tools import sweep_run, worker
from engine.simulation import ENGINE_VERSION

CELL = {"cell_id": 0, "profile": "p", "fault_start_ms": 1000, "fault_end_ms": 6000, "session_timeout_ms": 6000,
        "scenario": {"name": "w", "seed": 0, "kafka_version": "2.6", "brokers": [0, 1, 2],
                     "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
                     "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 20}],
                     "timeline": [], "duration_ms": 12000}}
PROFILES = {"p": {"crash_process": [20.0, 1000, 3000]}}
ROWS = [[0, "a" * 20, 0, 1], [1, "b" * 20, 0, 2]]


def without_cpu(line):
    run, events, hist = json.loads(line)
    run[sweep_run.RUN_FIELDS.index("cpu_ms")] = None
    return run, events, hist


def in_process(row):
    profile = {k: tuple(v) for k, v in PROFILES["p"].items()}
    return worker.encode(sweep_run.simulate(tuple(row), CELL, profile, "s"))


def test_serve_answers_the_setup_then_each_run_as_simulate_does():
    lines = [json.dumps({"setup": {"cells": {"0": CELL}, "profiles": PROFILES, "sweep_id": "s"}})]
    lines += [json.dumps(row) for row in ROWS]
    out = io.StringIO()
    assert worker.serve(io.StringIO("\n".join(lines) + "\n"), out) == 0
    answers = out.getvalue().splitlines()
    assert json.loads(answers[0]) == {"engine_version": ENGINE_VERSION}
    assert len(answers) == 3
    for row, answer in zip(ROWS, answers[1:]):
        run = dict(zip(sweep_run.RUN_FIELDS, json.loads(answer)[0]))
        assert (run["run_no"], run["run_key"], run["seed"], run["status"]) == (row[0], row[1], row[3], "ok")
        assert without_cpu(answer) == without_cpu(in_process(row))
    assert answers[1] != answers[2]                      # two seeds, two runs


def test_a_worker_process_speaks_the_protocol_and_ends_with_its_input():
    proc = worker.WorkerProcess(sys.executable)
    try:
        proc.setup({0: CELL}, PROFILES, "s")
        assert without_cpu(proc.simulate(ROWS[0])) == without_cpu(in_process(ROWS[0]))
    finally:
        proc.close()
    assert proc.proc.returncode == 0 and not proc.alive()


def test_an_interpreter_that_cannot_run_the_worker_is_an_error():
    proc = worker.WorkerProcess("/bin/false")
    with pytest.raises(worker.WorkerError):
        proc.setup({0: CELL}, PROFILES, "s")


def test_shared_workers_are_reused_and_replaced_when_dead():
    first = worker.shared_worker(sys.executable)
    try:
        assert worker.shared_worker(sys.executable) is first
        first.close()
        second = worker.shared_worker(sys.executable)
        assert second is not first and second.alive()
    finally:
        worker.shared_worker(sys.executable).close()
