"""Bounded work: scenarios too big for a surface are refused before any work, heavy work runs as
background jobs (202, progress, cancel, time limit, bounded queues with 429 + Retry-After), a
large job never blocks a small one, and quotas count a client's costly actions together."""
import threading
import time

import pytest

from app import create_app, runner_of
from app.errors import UserError
from app.jobs import JobPool, rss_bytes
from app.quotas import Quotas
from engine.tools.bench import reference_scenario
from engine.scenario.library import library


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db",
                              "JOB_ANSWER_WITHIN_S": 0.8})
    yield application
    runner_of(application).stop()
    application.extensions["isrlab_runs"].close()
    application.extensions["isrlab"]["jobs"].close()


@pytest.fixture
def http(app):
    client = app.test_client()
    client.get("/api/runs")            # open the store (a fresh database is migrated): as a server's warm-up
    app.extensions["isrlab"]["jobs"].processes.warm(wait=True)      # and start the jobs' worker processes
    return client


def runs_in_store(http):
    return http.get("/api/runs").json["total"]


def wait_job(http, url, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = http.get(url).json["job"]
        if job["state"] not in ("queued", "running"):
            return job
        time.sleep(0.1)
    raise AssertionError("the job did not end")


def test_too_large_a_scenario_is_refused_on_every_surface_naming_what_to_change(http):
    huge = reference_scenario(3_600_000)              # an hour of 1,000 records/s on 30 partitions
    for path, body in (("/api/runs", {"scenario": huge}),
                       ("/api/links", {"scenario": huge}),
                       ("/api/runs/import", {"format": "isrlab-run", "version": 1, "scenario": huge}),
                       ("/api/compare", {"a": {"scenario": huge}, "b": {"variant": {"seed": 2}}}),
                       ("/api/rooms", {"scenario": huge})):
        reply = http.post(path, json=body)
        assert reply.status_code == 413, (path, reply.json)
        error = reply.json["error"]
        assert error["field"] == "duration_ms" and "rate_per_s" in error["message"], (path, error)
        assert "M simulation events" in error["message"] and "shorten duration_ms" in error["allowed"]
    assert runs_in_store(http) == 0


def test_a_quick_save_answers_with_the_run_and_a_slow_one_with_a_job(http):
    quick = http.post("/api/runs", json={"scenario": library()["kip101-scenario-2-v2.6"]})
    assert quick.status_code == 201 and quick.json["id"]
    slow = http.post("/api/runs", json={"scenario": reference_scenario(40_000)})
    assert slow.status_code == 202, slow.json
    job = slow.json["job"]
    assert job["url"] == f"/api/jobs/{job['id']}" and job["state"] in ("queued", "running")
    done = wait_job(http, job["url"])
    assert done["state"] == "done" and done["result"]["links"]["page"].startswith("/runs/")
    assert runs_in_store(http) == 2


def test_a_cancelled_job_stops_and_saves_nothing(http):
    slow = http.post("/api/runs", json={"scenario": reference_scenario(200_000)})
    assert slow.status_code == 202
    url = slow.json["job"]["url"]
    cancelled = http.delete(url)
    assert cancelled.status_code == 200
    job = wait_job(http, url, timeout=20)
    assert job["state"] == "cancelled" and job["error"]["field"] == "job"
    assert runs_in_store(http) == 0


def test_another_client_cannot_see_or_cancel_a_job(http):
    slow = http.post("/api/runs", json={"scenario": reference_scenario(100_000)})
    url = slow.json["job"]["url"]
    other = http.delete(url, environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert other.status_code == 404
    http.delete(url)
    wait_job(http, url)


def test_a_job_over_its_time_limit_is_stopped():
    pool = JobPool(workers=2, queue_limit=4, time_limit_s=0.2)
    started = threading.Event()

    def forever(job):
        started.set()
        while True:
            job.check()
            time.sleep(0.01)
    job = pool.submit("test", forever)
    assert job.wait(5) and job.state == "failed" and job.status == 408
    assert "time limit of 0.2 s" in job.error["message"]


def test_a_job_that_grows_the_server_past_its_memory_limit_is_stopped():
    """Real memory, read from /proc: the job allocates 8 MB between checks until it is stopped."""
    limit = rss_bytes() + 96 * 2 ** 20
    pool = JobPool(workers=2, queue_limit=4, time_limit_s=60, memory_limit_bytes=limit)
    held = []

    def hog(job):
        while True:
            job.check()
            held.append(bytearray(8 * 2 ** 20))
    job = pool.submit("test", hog)
    assert job.wait(30) and job.state == "failed" and job.status == 408
    assert "memory" in job.error["message"] and f"{limit / 2 ** 20:,.0f} MB" in job.error["message"]
    # stopped once the process passed the limit (other threads of the process count too, so the job's
    # own share may be a little under 96 MB), soon after it and not at once
    reached = float(job.error["message"].split("reached ")[1].split(" MB")[0].replace(",", ""))
    assert reached >= limit / 2 ** 20 - 1                # the message rounds to whole MB
    assert 48 <= len(held) * 8 <= 96 + 64
    held.clear()


def test_a_full_queue_answers_429_with_retry_after(app, http):
    pool = app.extensions["isrlab"]["jobs"]
    release = threading.Event()
    blockers = []
    for _ in range(pool.queue_limit + 4):
        try:
            blockers.append(pool.submit("block", lambda job: release.wait(10) and {}, estimated_events=10 ** 7))
        except UserError:
            break
        if len(blockers) == 1:               # the lane's worker holds the first: the rest fill the queue
            deadline = time.monotonic() + 10
            while blockers[0].state != "running" and time.monotonic() < deadline:
                time.sleep(0.01)
    reply = http.post("/api/runs", json={"scenario": reference_scenario(300_000)})
    release.set()
    assert reply.status_code == 429 and reply.headers["Retry-After"] == "5"
    assert reply.json["error"]["field"] == "job" and "large jobs are waiting" in reply.json["error"]["message"]


def test_a_small_job_is_not_blocked_by_a_large_one(app, http):
    pool = app.extensions["isrlab"]["jobs"]
    release = threading.Event()
    pool.submit("big", lambda job: release.wait(30) and {}, estimated_events=10 ** 7)
    try:
        started = time.monotonic()
        small = http.post("/api/runs", json={"scenario": library()["isr-change-propagation"]})
        if small.status_code == 202:             # a busy machine (seek indexes building): it still runs now
            assert wait_job(http, small.json["job"]["url"], timeout=15)["state"] == "done"
        else:
            assert small.status_code == 201
        # the large job holds its lane for 30 s: ending well before that means the small one did not
        # queue behind it (how fast it opens on an idle server is measured by bench_hostile.py)
        assert time.monotonic() - started < 15.0
    finally:
        release.set()


def test_quotas_count_costly_actions_together_per_client():
    clock = [0.0]
    quotas = Quotas(per_client=3, window_s=60, global_cap=5, clock=lambda: clock[0])
    for kind in ("room", "fork", "save"):
        quotas.charge("1.2.3.4", kind)
    with pytest.raises(UserError) as over:
        quotas.charge("1.2.3.4", "search")
    assert over.value.status == 429 and over.value.field == "quota" and over.value.retry_after == 61
    assert "1 room" in over.value.message and "1 fork" in over.value.message
    quotas.charge("5.6.7.8", "room")                   # another address is not affected
    quotas.charge("5.6.7.8", "room")
    with pytest.raises(UserError) as server_full:
        quotas.charge("9.9.9.9", "room")
    assert "in all" in server_full.value.allowed
    clock[0] = 61.0
    quotas.charge("1.2.3.4", "search")                 # the window moved on


def test_a_fork_counts_against_the_client_quota_and_its_room_cap(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db", "QUOTA_PER_CLIENT": 3,
                              "MAX_ROOMS_PER_ADDRESS": 2})
    http = application.test_client()
    http.get("/api/runs")
    try:
        saved = http.post("/api/runs", json={"scenario": library()["isr-expansion"]}).json
        forks = [http.post(f"/api/replay/{saved['id']}/fork", json={"t_ms": 1000}) for _ in range(3)]
        assert [f.status_code for f in forks] == [201, 201, 429]
        assert forks[2].json["error"]["field"] == "quota"
        runner = runner_of(application)
        assert {r.owner for r in runner.rooms.values()} == {"127.0.0.1"}
    finally:
        runner_of(application).stop()
        application.extensions["isrlab_runs"].close()


def test_a_client_past_its_quota_is_refused_before_its_body_is_read(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db", "QUOTA_PER_CLIENT": 1})
    http = application.test_client()
    try:
        assert http.post("/api/runs", json={"scenario": library()["isr-expansion"]}).status_code == 201
        # past the quota even a body that is not JSON at all is answered 429 (and not 400): the
        # quota is checked before anything of the request is parsed
        refused = http.post("/api/runs", data="{not json", content_type="application/json")
        assert refused.status_code == 429 and refused.json["error"]["field"] == "quota"
        assert http.get("/api/runs").status_code == 200        # reading is not a costly action
    finally:
        runner_of(application).stop()
        application.extensions["isrlab_runs"].close()
