"""Jobs' simulations in worker processes (app/workers.py): a cancelled job's worker is killed and
gone, a job past its time limit is killed, a worker past its memory limit is stopped with an error
naming the limit, and a run saved through a worker is the very run simulated in the server."""
import os
import time

import pytest

from app import create_app, runner_of
from app.jobs import JobPool
from app.jobwork import saved_run_rows
from app.replay.save import capture_result, prepare_captured
from app.replay.seek import history_digest_of_texts
from app.workers import WorkerProcesses
from engine.scenario.library import library
from engine.simulation import Simulation


def spin(seconds, cancelled=None):
    """Pure CPU for ``seconds`` (a stand-in for a long simulation that never checks anything)."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
    return n


def hog(limit_mb, cancelled=None):
    """Grows its resident memory 16 MB at a time (touched pages, so they count), about 320 MB/s:
    fast enough to pass any limit in a second, slow enough that a poll delayed by a loaded machine
    (two full test runs on two cores) still stops it within 200 MB of the limit."""
    held = []
    while len(held) * 16 < limit_mb:
        held.append(b"x" * (16 * 2 ** 20))
        time.sleep(0.05)
    return len(held)


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


@pytest.fixture
def processes():
    workers = WorkerProcesses(1, memory_limit_bytes=200 * 2 ** 20)
    workers.warm(wait=True)
    yield workers
    workers.close()


def running_pid(job, processes, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if job.state == "running" and processes.pids():
            return processes.pids()[0]
        time.sleep(0.02)
    raise AssertionError("the job did not start in a worker")


def test_a_cancelled_job_kills_its_worker_process_and_the_next_job_gets_a_fresh_one(processes):
    pool = JobPool(workers=2, queue_limit=4, time_limit_s=60, processes=processes)
    job = pool.submit("test", lambda job: job.offload(spin, 60))
    pid = running_pid(job, processes)
    time.sleep(0.3)
    job.cancel()
    assert job.wait(5) and job.state == "cancelled" and job.status == 409
    assert gone(pid) and processes.pids() == []
    again = pool.submit("test", lambda job: {"n": job.offload(spin, 0.05)})
    assert again.wait(30) and again.state == "done" and again.result["n"] > 0
    assert processes.pids() and processes.pids()[0] != pid


def test_a_job_past_its_time_limit_is_killed(processes):
    pool = JobPool(workers=2, queue_limit=4, time_limit_s=0.5, processes=processes)
    started = time.monotonic()
    job = pool.submit("test", lambda job: job.offload(spin, 60))
    pid = running_pid(job, processes)
    assert job.wait(10) and job.state == "failed" and job.status == 408
    assert time.monotonic() - started < 5
    assert "time limit of 0.5 s" in job.error["message"]
    assert gone(pid)


def test_a_worker_past_its_memory_limit_is_stopped_with_an_error_naming_the_limit(processes):
    pool = JobPool(workers=2, queue_limit=4, time_limit_s=60, processes=processes)
    job = pool.submit("test", lambda job: job.offload(hog, 2000))
    pid = running_pid(job, processes)
    assert job.wait(30) and job.state == "failed" and job.status == 408, job.error
    message = job.error["message"]
    assert "worker process's memory reached" in message and "limit of 200 MB" in message
    assert "ISRLAB_JOB_WORKER_MEMORY_MB" in message
    reached = float(message.split("reached ")[1].split(" MB")[0].replace(",", ""))
    assert 200 <= reached < 400                 # stopped at the limit, not when the machine ran out
    assert gone(pid)


def test_a_run_saved_through_a_worker_is_the_run_simulated_in_the_server(tmp_path):
    scenario = library()["kip101-scenario-2-v2.6"]
    app = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                      "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db", "JOB_PROCESSES": 1})
    try:
        http = app.test_client()
        reply = http.post("/api/runs", json={"scenario": scenario, "title": "via a worker"})
        assert reply.status_code == 201, reply.json
        assert app.extensions["isrlab"]["jobs"].processes.stats["calls"] == 1     # it did go through one
        stored = app.extensions["isrlab_runs"].service._saved_digest(reply.json["id"])     # noqa: SLF001
    finally:
        runner_of(app).stop()
        app.extensions["isrlab_runs"].close()
        app.extensions["isrlab"]["jobs"].close()
    from engine.scenario.document import load
    doc = load(scenario)
    sim = Simulation(doc)
    here = prepare_captured(capture_result(sim, sim.run()), title="in the server", source="link")
    assert stored == history_digest_of_texts(row[-1] for row in here["events"])
    # and the worker's encoded rows are byte for byte the server's
    workers = WorkerProcesses(1)
    try:
        there = workers.call(saved_run_rows, doc, doc["duration_ms"], {}, "save", "in the server", "link")
    finally:
        workers.close()
    assert there["events"] == here["events"] and there["violations"] == here["violations"]
    assert {k: v for k, v in there["row"].items() if k != "created_ms"} == \
        {k: v for k, v in here["row"].items() if k != "created_ms"}
    assert os.getpid() not in workers.pids()
