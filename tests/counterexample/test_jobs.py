"""Search jobs are bounded: one runs, at most MAX_WAITING wait (more are refused with 429 and a
Retry-After), and a search can be cancelled whether it is waiting or running."""
import threading
import time

import pytest

from app.counterexample.jobs import MAX_WAITING, SearchJobs
from app.errors import UserError


def until(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never held")


class Gate:
    """A search that reports progress in batches until released (or cancelled)."""

    def __init__(self):
        self.release = threading.Event()
        self.batches = 0

    def __call__(self, params, progress):
        while not self.release.wait(0.01):
            progress({"done": self.batches})
            self.batches += 1
        return {"found": False}


def test_waiting_searches_are_bounded_and_refused_with_retry_after():
    gate = Gate()
    jobs = SearchJobs(gate)
    running = jobs.start({})
    until(lambda: jobs.view(running["id"])["state"] == "running")
    waiting = [jobs.start({}) for _ in range(MAX_WAITING)]
    with pytest.raises(UserError) as refused:
        jobs.start({})
    assert refused.value.status == 429 and refused.value.field == "search"
    assert refused.value.retry_after == 30 and f"{MAX_WAITING} searches" in refused.value.message
    gate.release.set()
    until(lambda: all(jobs.view(j["id"])["state"] == "done" for j in [running, *waiting]))
    jobs.start({})                                    # room again once they have finished


def test_a_cancelled_search_stops_between_batches_and_a_queued_one_never_runs():
    gate = Gate()
    jobs = SearchJobs(gate)
    running = jobs.start({})
    queued = jobs.start({})
    until(lambda: gate.batches >= 2)
    assert jobs.cancel(queued["id"])["state"] == "cancelled"
    jobs.cancel(running["id"])
    until(lambda: jobs.view(running["id"])["state"] == "cancelled")
    stopped_at = gate.batches
    time.sleep(0.1)
    assert gate.batches <= stopped_at + 1           # the loop no longer runs
    assert jobs.view(queued["id"])["state"] == "cancelled" and jobs.view(queued["id"])["report"] is None
    assert jobs.cancel("no-such-job") is None
