"""Background jobs of the report page: one at a time, progress and result read from the job's
JSON lines, failure kept with its error. The job process is a stand-in script here (the real one,
``python -m app sweep``, is run by tests/spark/test_resume.py)."""
import json
import os
import stat
import time

import pytest

from app.reports.jobs import Busy, Jobs

SCRIPT = """#!/bin/sh
[ "$4" = "-" ] && cat > "$DOC_COPY"
echo '{"progress": {"done": 1, "total": 4, "rate_per_s": 2.0, "eta_s": 1.5, "elapsed_s": 0.5}}'
sleep 1
echo '{"progress": {"done": 4, "total": 4, "rate_per_s": 2.0, "eta_s": 0.0, "elapsed_s": 2.0}}'
echo 'not json'
echo '{"sweep": {"sweep_id": "x", "runs_done": 4}}'
[ "$FAIL" = "1" ] && { echo "error: something broke" >&2; exit 3; }
exit 0
"""


def fake_python(tmp_path):
    path = tmp_path / "fakepy"
    path.write_text(SCRIPT)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def wait(job, timeout=20):
    deadline = time.monotonic() + timeout
    while job.state == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    return job


def test_a_job_reports_progress_and_its_result(tmp_path, monkeypatch):
    monkeypatch.setenv("DOC_COPY", str(tmp_path / "received.json"))
    jobs = Jobs("sqlite:///x.db", python=fake_python(tmp_path))
    job = jobs.start_sweep({"id": "x"}, "x")
    assert job.args[:1] == ["sweep"] and "--progress" in job.args and "json" in job.args
    with pytest.raises(Busy):
        jobs.start_analysis("x")
    wait(job)
    assert job.state == "done" and job.returncode == 0
    assert job.progress["done"] == 4 and job.result == {"sweep": {"sweep_id": "x", "runs_done": 4}}
    assert jobs.running() is None and jobs.latest("x") is job
    # the document reached the job on its standard input: no temporary file exists to leak
    assert job.args[1] == "-" and json.loads((tmp_path / "received.json").read_text()) == {"id": "x"}


def test_a_refused_sweep_leaves_no_file_behind(tmp_path):
    import glob
    import tempfile
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "isrlab-sweep-*")))
    jobs = Jobs("sqlite:///x.db", python=fake_python(tmp_path))
    first = jobs.start_sweep({"id": "x"}, "x")
    with pytest.raises(Busy):
        jobs.start_sweep({"id": "y"}, "y")
    wait(first)
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "isrlab-sweep-*"))) <= before


def test_a_failed_job_keeps_its_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIL", "1")
    jobs = Jobs("sqlite:///x.db", python=fake_python(tmp_path))
    job = wait(jobs.start_analysis("x"))
    time.sleep(0.2)
    assert job.state == "failed" and job.returncode == 3 and list(job.errors) == ["error: something broke"]
    assert jobs.start_analysis("x").state == "running"   # the next one may start
