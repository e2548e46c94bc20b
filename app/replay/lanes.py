"""The lanes seek indexes are built in: saved runs, small links and large links each have their own.

Why: a link (``/l/<code>``) carries its scenario, and opening it re-simulates the whole run before
the first frame. With one builder for everything, a viewer opening a small link waited behind a
stranger's long one (4 s measured, issue 34). Each lane has one builder (a worker process under
the production server, the request's own thread otherwise) and a bound on the builds waiting in
it; past the bound the opener is told which lane is full and when to try again (429 with
Retry-After) instead of queueing without end.
"""
import threading

from engine.core.budget import estimate

from ..errors import UserError

#: a link whose run is estimated at more simulated events than this goes to the large lane
LARGE_LINK_EVENTS = 400_000
#: builds waiting or running in one lane before the next opener is refused
LANE_QUEUE = 4
RETRY_AFTER_S = 10
LANES = ("saved", "link", "link-large")


class LaneFull(UserError):
    """A lane has LANE_QUEUE builds already: 429, naming the lane."""


class BuildLanes:
    def __init__(self, make_executor, queue=LANE_QUEUE, large_events=LARGE_LINK_EVENTS):
        self._make_executor = make_executor          # () -> an executor with one worker
        self.queue = queue
        self.large_events = large_events
        self._lock = threading.Lock()
        self._executors = {}
        self._pending = dict.fromkeys(LANES, 0)

    def lane_of(self, run):
        """Saved runs have their lane; a link goes by the work its scenario is estimated at."""
        if run.get("saved"):
            return "saved"
        return "link-large" if estimate(run["scenario"]) > self.large_events else "link"

    def run(self, lane, fn, *args, in_process):
        """``fn(*args)`` in ``lane``: in its worker process when ``in_process`` is False, here
        otherwise; refused with 429 when the lane already holds ``queue`` builds."""
        with self._lock:
            if self._pending[lane] >= self.queue:
                raise LaneFull("replay", f"the {lane} lane is already preparing {self._pending[lane]} "
                               f"replays", f"at most {self.queue} at once; try again in {RETRY_AFTER_S} s",
                               status=429).with_retry_after(RETRY_AFTER_S)
            self._pending[lane] += 1
            executor = None if in_process else self._executor(lane)
        try:
            return fn(*args) if executor is None else executor.submit(fn, *args).result()
        finally:
            with self._lock:
                self._pending[lane] -= 1

    def _executor(self, lane):
        if lane not in self._executors:
            self._executors[lane] = self._make_executor()
        return self._executors[lane]

    def close(self):
        with self._lock:
            executors, self._executors = list(self._executors.values()), {}
        for executor in executors:
            executor.shutdown(wait=False, cancel_futures=True)
