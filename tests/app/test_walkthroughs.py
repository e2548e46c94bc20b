"""Every walkthrough step says what its run does, at the moment it says it (issue 33, item 3).

Each step's claims (app/guides/claims.py) are checked against a fresh run of the library story the
walkthrough follows: the isr_shrink of ReplicaManager#maybeShrinkIsr at 45006 ms, the follower's
HW one fetch (replica.fetch.wait.max.ms = 500 ms) behind the leader's, NOT_ENOUGH_REPLICAS once
the ISR is below min.insync.replicas, and so on.
"""
import pytest

from app.guides import BY_STORY, WALKTHROUGHS
from app.guides.claims import State, check, event, state
from app.guides.walkthroughs import Step
from engine.scenario.library import library
from engine.simulation import Simulation

LIBRARY = library()


def test_six_walkthroughs_each_on_its_own_library_story():
    assert len(WALKTHROUGHS) == 6
    assert len({w.id for w in WALKTHROUGHS}) == 6 and len(BY_STORY) == 6
    for walk in WALKTHROUGHS:
        assert walk.story in LIBRARY, walk.story
        times = [s.t_ms for s in walk.steps]
        assert times == sorted(times) and len(set(times)) == len(times), walk.id   # one step per moment
        assert all(0 <= t <= LIBRARY[walk.story]["duration_ms"] for t in times)
        assert 5 <= len(walk.steps) <= 8
        for s in walk.steps:
            assert s.claims and s.kafka and s.title and s.text


@pytest.mark.parametrize("walk", WALKTHROUGHS, ids=lambda w: w.id)
def test_every_step_is_true_to_the_run(walk):
    failures = check(Simulation(LIBRARY[walk.story]), walk.steps, walk.partition)
    assert failures == []


def test_a_false_step_is_caught():
    """The check can fail: a shrink claimed 1 ms early, a wrong ISR, a follower HW that is not
    yet there (it arrives 500 ms after the leader's, at 5506 ms)."""
    doc = LIBRARY["isr-shrink-slow-follower"]
    early = [Step(45005, "x", "x", "x", [event("isr_shrink", broker=0, isr=[0, 1])])]
    wrong = [Step(45006, "x", "x", "x", [event("isr_shrink", broker=0, isr=[0])])]
    assert len(check(Simulation(doc), early, "orders-0")) == 1
    assert len(check(Simulation(doc), wrong, "orders-0")) == 1
    hw = LIBRARY["hw-follower-one-fetch-behind"]
    too_soon = [Step(5505, "x", "x", "x", [state(1, hw=1)])]
    (failure,) = check(Simulation(hw), too_soon, "orders-0")
    assert isinstance(failure[1], State) and failure[2]["hw"] == 0


def test_the_follower_hw_lags_the_leader_by_one_fetch_wait():
    """Kafka 2.6 ReplicaFetcherThread#processPartitionData: follower HW = min(leader HW in the
    response, own LEO); the response that carries the new HW is the one parked for
    replica.fetch.wait.max.ms (500 ms default) because it found no new data."""
    walk = BY_STORY["hw-follower-one-fetch-behind"]
    leader = next(s for s in walk.steps if any(getattr(c, "type", None) == "high_watermark" for c in s.claims))
    follower = next(s for s in walk.steps if s.t_ms > leader.t_ms and any(isinstance(c, State) and c.broker == 1
                                                                         and c.values.get("hw") == 1 for c in s.claims))
    assert follower.t_ms - leader.t_ms == 501
