"""Seek indexes are built in lanes (app/replay/lanes.py, issue 34 item 11): a small link is never
held up by a large link being decoded, and a full lane refuses with 429, Retry-After and its name."""
import threading
import time

import pytest

from app.errors import UserError
from app.replay.lanes import LANE_QUEUE, BuildLanes
from engine.scenario.library import library


def _run(saved, duration_ms=10_000, rate=20):
    doc = {**library()["isr-expansion"], "duration_ms": duration_ms}
    doc["clients"] = [{**c, "rate_per_s": rate} for c in doc["clients"]]
    return {"saved": saved, "scenario": doc}


def test_each_kind_of_run_has_its_lane():
    lanes = BuildLanes(make_executor=None)
    assert lanes.lane_of(_run(True)) == "saved"
    assert lanes.lane_of(_run(False)) == "link"
    assert lanes.lane_of(_run(False, duration_ms=600_000, rate=400)) == "link-large"


def test_a_small_link_is_not_held_up_by_a_large_one():
    """Two builders: while the large lane is busy (a builder that takes 3 s), the small link's
    build answers at once."""
    from concurrent.futures import ThreadPoolExecutor
    lanes = BuildLanes(make_executor=lambda: ThreadPoolExecutor(max_workers=1))
    started = threading.Event()

    def slow():
        started.set()
        time.sleep(3)
        return "large"
    large = threading.Thread(target=lanes.run, args=("link-large", slow), kwargs={"in_process": False})
    large.start()
    assert started.wait(5)
    t0 = time.monotonic()
    assert lanes.run("link", lambda: "small", in_process=False) == "small"
    assert time.monotonic() - t0 < 0.5
    large.join()
    lanes.close()


def test_a_full_lane_refuses_with_429_naming_it():
    lanes = BuildLanes(make_executor=None, queue=LANE_QUEUE)
    gate, inside = threading.Event(), threading.Semaphore(0)

    def hold():
        inside.release()
        gate.wait(10)
    threads = [threading.Thread(target=lanes.run, args=("link", hold), kwargs={"in_process": True})
               for _ in range(LANE_QUEUE)]
    for t in threads:
        t.start()
    for _ in threads:
        assert inside.acquire(timeout=5)
    with pytest.raises(UserError) as refused:
        lanes.run("link", lambda: None, in_process=True)
    gate.set()
    for t in threads:
        t.join()
    assert refused.value.status == 429 and refused.value.retry_after > 0
    assert "link lane" in refused.value.message
    assert lanes.run("link", lambda: "again", in_process=True) == "again"     # room once they finish
