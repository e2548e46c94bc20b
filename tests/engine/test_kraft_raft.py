"""The controller quorum's Raft rules fixed in engine 1.3.0 (docs/model.md §20.1), with Kafka's
numbers: ``controller.quorum.fetch.timeout.ms`` 2000, election timeout uniform in [1000, 2000).
Each test also re-simulates the run as engine 1.2.0, which must keep the old behaviour."""
import pytest

from engine.simulation import Simulation

FETCH_TIMEOUT_MS = 2000


def quorum_doc(era, duration_ms=20000):
    return {"name": "raft", "kafka_version": era, "brokers": 3, "duration_ms": duration_ms,
            "config": {}, "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
            "clients": [], "timeline": []}


def raft_events(result, kind, after_ms=0, **match):
    return [e for e in result["history"] if e["type"] == kind and e["t_ms"] > after_ms
            and all(e.get(k) == v for k, v in match.items())]


def _slow_link_then_crash(engine_version):
    """The active controller's link to one follower is slow (2.5 s, longer than the fetch timeout),
    so that follower keeps timing out, asking for pre-votes and going back to its leader without
    a successful fetch; then the active controller crashes."""
    sim = Simulation(quorum_doc("4.1"), engine_version=engine_version)
    sim.advance_to(3000)
    active = sim.quorum.active
    slow = [v for v in sim.quorum.voter_ids if v != active][1]
    sim.apply({"op": "slow", "from": active, "to": slow, "latency_ms": 2500})
    sim.advance_to(6000)
    sim.apply({"op": "crash", "controller": active})
    return sim.run(), active


def test_a_granted_pre_vote_naming_the_known_leader_counts():
    """Defect 5 (fails on engine 1.2.0's rule): KafkaRaftClient.handleVoteResponse @ 4.1.0 moves a
    prospective voter to follower only when it has no leader (maybeHandleCommonResponse,
    ``!quorum.hasLeader()``); the follower that never fetched grants the pre-vote and names the
    old leader, and the grant counts: a leader is elected within the fetch timeout of the crash."""
    result, crashed = _slow_link_then_crash(None)
    elected = raft_events(result, "raft_leader_elected", after_ms=6000)
    assert elected and elected[0]["controller"] != crashed
    assert elected[0]["epoch"] == 2
    # the last fetch was answered before the crash: fetch timeout + a pre-vote and a vote round trip
    assert elected[0]["t_ms"] <= 6000 + FETCH_TIMEOUT_MS + 10
    old, _ = _slow_link_then_crash("1.2.0")
    assert not raft_events(old, "raft_leader_elected", after_ms=6000)  # engine 1.2.0: stuck


def _check_quorum_resign(era, engine_version=None):
    """The active controller is cut off from the other voters: it resigns by check-quorum."""
    sim = Simulation(quorum_doc(era, 9000), engine_version=engine_version)
    sim.advance_to(3000)
    leader = sim.quorum.active
    epoch = sim.quorum.voters[leader].epoch
    sim.apply({"op": "isolate", "controller": leader, "from": "controllers"})
    result = sim.run()
    resigned = raft_events(result, "raft_leader_resigned", controller=leader)
    assert resigned and resigned[0]["epoch"] == epoch
    return result, leader, epoch, resigned[0]["t_ms"]


def test_a_resigned_leader_becomes_unattached_in_the_next_epoch_in_4_1():
    """Defect 7 (fails on engine 1.2.0's rule): KafkaRaftClient.pollResigned @ 4.1.0 — when the
    election timeout passes in Resigned state, transitionToUnattached(epoch + 1) with the resigned
    state's expired timeout, so the voter goes prospective at once in epoch + 1."""
    result, leader, epoch, t_resign = _check_quorum_resign("4.1")
    nxt = raft_events(result, "raft_prospective", after_ms=t_resign, controller=leader)[0]
    assert nxt["epoch"] == epoch + 1
    assert 1000 <= nxt["t_ms"] - t_resign < 2000  # one election timeout in Resigned state
    old, leader, epoch, t_resign = _check_quorum_resign("4.1", "1.2.0")
    assert raft_events(old, "raft_prospective", after_ms=t_resign, controller=leader)[0]["epoch"] == epoch


def test_a_resigned_leader_becomes_candidate_in_3_9():
    """KafkaRaftClient.pollResigned @ 3.9.0: transitionToCandidate (epoch + 1, voting for itself)."""
    result, leader, epoch, t_resign = _check_quorum_resign("3.9-kraft")
    nxt = raft_events(result, "raft_candidate", after_ms=t_resign, controller=leader)[0]
    assert nxt["epoch"] == epoch + 1
    assert 1000 <= nxt["t_ms"] - t_resign < 2000


def _graceful_shutdown_of_the_active_controller(era, engine_version=None):
    sim = Simulation(quorum_doc(era, 10000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    epoch = sim.quorum.voters[leader].epoch
    successors = sorted(v for v in sim.quorum.voter_ids if v != leader)  # all caught up: by id
    sim.apply({"op": "shutdown", "controller": leader})
    return sim.run(), leader, epoch, successors


@pytest.mark.parametrize("era,round_trips_ms", [("3.9-kraft", 3), ("4.1", 5)])
def test_a_graceful_shutdown_of_the_active_controller_hands_leadership_over_at_once(era, round_trips_ms):
    """Defect 6 (fails on engine 1.2.0's rule, which crashed the process): KafkaRaftClient.shutdown
    -> pollLeader -> transitionToResigned(nonLeaderVotersByDescendingFetchOffset) and EndQuorumEpoch
    (3.9.0 / 4.1.0); the first preferred successor's fetch timeout becomes
    strictExponentialElectionBackoffMs(0, 2) = 0, so it is elected in epoch + 1 (4.1's pre-vote
    does not bump the epoch) within the network round trips (1 ms links) of EndQuorumEpoch,
    (pre-)Vote and BeginQuorumEpoch. The old leader stops once it knows the new leader."""
    result, leader, epoch, successors = _graceful_shutdown_of_the_active_controller(era)
    resigned = raft_events(result, "raft_leader_resigned", controller=leader)
    assert resigned and resigned[0]["successors"] == successors
    t0 = resigned[0]["t_ms"]
    elected = raft_events(result, "raft_leader_elected", after_ms=4000)
    assert elected[0]["controller"] == successors[0] and elected[0]["epoch"] == epoch + 1
    # EndQuorumEpoch (1 ms), [4.1: a pre-vote round trip], a Vote round trip
    assert elected[0]["t_ms"] == t0 + round_trips_ms
    stopped = raft_events(result, "controller_stopped", controller=leader)
    assert stopped[0]["t_ms"] == elected[0]["t_ms"] + 1  # when BeginQuorumEpoch names the leader
    assert result["controller"]["active"] == successors[0]
    old, leader, epoch, _ = _graceful_shutdown_of_the_active_controller(era, "1.2.0")
    assert raft_events(old, "raft_leader_elected", after_ms=4000)[0]["t_ms"] > 4000 + 1500


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_an_epoch_skipped_after_a_crash_is_a_split_vote_the_history_shows(era):
    """Defect 11 (user report "Raft epoch jumps 1 -> 3 with no split vote shown"): Kafka's
    behaviour, not a bug of the rules — both followers' fetch timeouts (2000 ms, not randomised:
    FollowerState) expire in the same millisecond, both become candidates in epoch 2 and each
    refuses the other (one vote per epoch), so epoch 2 has no winner and a leader comes in epoch 3
    after an election timeout (3.9: and a backoff). Engine 1.3.0 names the lost epoch in the next
    candidacy's reason; engine 1.2.0 did not."""
    sim = Simulation(quorum_doc(era, 16000))
    sim.advance_to(4000)
    crashed = sim.quorum.active
    sim.apply({"op": "crash", "controller": crashed})
    result = sim.run()
    timeouts = raft_events(result, "raft_fetch_timeout", after_ms=4000)
    assert len({e["controller"] for e in timeouts}) == 2 and len({e["t_ms"] for e in timeouts}) == 1
    elected = raft_events(result, "raft_leader_elected", after_ms=4000)[0]
    assert elected["epoch"] == 3
    retry = "raft_prospective" if era == "4.1" else "raft_candidate"
    told = [e for e in raft_events(result, retry, after_ms=4000, controller=elected["controller"])
            if e["reason"].startswith("epoch 2 had no winner")]
    assert told and f"refused by [{({*sim.quorum.voter_ids} - {crashed, elected['controller']}).pop()}]" \
        in told[0]["reason"]


def test_a_shutting_down_candidate_does_not_stand_again_after_its_backoff_3_9():
    """Second reading (KafkaRaftClient.pollCandidate @ 3.9.0): with a shutdown pending a candidate
    only keeps asking for votes, so the end of an election backoff starts no new candidacy; the
    voter stays candidate until the 5000 ms shutdown timeout. (Engine 1.3.0 before this fix stood
    again in epoch + 1 after the backoff.)"""
    sim = Simulation(quorum_doc("3.9-kraft", 20000))
    sim.advance_to(3000)
    cut = [v for v in sim.quorum.voter_ids if v != sim.quorum.active][0]
    voter = sim.quorum.voters[cut]
    sim.apply({"op": "isolate", "controller": cut})  # its candidacy gets no answer
    t = 3000
    while not voter.backing_off:  # its first election timeout passed: the backoff is running
        t += 1
        sim.advance_to(t)
    epoch = voter.epoch
    sim.apply({"op": "shutdown", "controller": cut})
    sim.advance_to(t + 1)
    assert voter.backing_off and voter.shutting_down  # the shutdown began within the backoff
    result = sim.run()
    assert not raft_events(result, "raft_candidate", after_ms=t, controller=cut)
    stopped = raft_events(result, "controller_stopped", after_ms=t, controller=cut)
    assert stopped and stopped[0]["t_ms"] == t + 1 + 5000 and voter.epoch == epoch


class _Request:
    """The envelope fields a voter's request handlers read."""
    def __init__(self, body):
        self.body = body


def _answer(voter, handler, body):
    """What ``voter`` answers a request, handled at once (its reply is caught, not sent)."""
    answers = []
    voter.reply = lambda env, reply: answers.append(reply)
    getattr(voter, handler)(_Request(body))
    del voter.reply
    return answers[0]


def _pre_vote_answer(voter, epoch):
    """What ``voter`` answers an up-to-date pre-vote from another voter in ``epoch``."""
    other = [v for v in voter.voters if v != voter.node_id][0]
    return _answer(voter, "on_vote", {"candidate_id": other, "candidate_epoch": epoch + 1,
                                      "pre_vote": True, "last_offset": len(voter.log),
                                      "last_offset_epoch": voter.log[-1]["epoch"]})


@pytest.mark.parametrize("engine_version", [None, "1.2.0"])
def test_a_vote_response_names_the_leader_the_voter_knows_4_1(engine_version):
    """Second reading (KafkaRaftClient.buildVoteResponse: quorum.leaderIdOrSentinel() @ 4.1.0;
    KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsResigned asserts the resigned voter's
    grant names itself): a resigned voter names itself, a prospective voter the leader it still
    knows. Engine 1.2.0 named a leader only as follower or leader."""
    sim = Simulation(quorum_doc("4.1", 20000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    pro = sim.quorum.voters[min(v for v in sim.quorum.voter_ids if v != leader)]
    pro._become_prospective()  # as on a fetch timeout: it still knows its leader
    answer = _pre_vote_answer(pro, pro.epoch)
    assert answer["vote_granted"] and pro.leader_id == leader
    assert answer["leader"] == (None if engine_version else leader)
    sim.apply({"op": "isolate", "controller": leader, "from": "controllers"})
    sim.advance_to(4000 + 3000 + 5)  # check-quorum: it resigns
    old = sim.quorum.voters[leader]
    assert old.role == "resigned"
    answer = _pre_vote_answer(old, old.epoch)
    assert answer["vote_granted"]
    assert answer["leader"] == (None if engine_version else leader)


@pytest.mark.parametrize("engine_version", [None, "1.2.0"])
def test_a_prospective_voter_that_knows_the_leader_ignores_its_begin_quorum_epoch_4_1(engine_version):
    """Second reading (KafkaRaftClient.handleBeginQuorumEpochRequest -> maybeTransition @ 4.1.0):
    a BeginQuorumEpoch of the voter's own epoch makes it follow only if it knows no leader; a
    prospective voter still knows its leader, so it stays prospective (engine 1.2.0 followed)."""
    sim = Simulation(quorum_doc("4.1", 20000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    pro = sim.quorum.voters[min(v for v in sim.quorum.voter_ids if v != leader)]
    pro._become_prospective()  # as on a fetch timeout
    _answer(pro, "on_begin_quorum_epoch", {"leader": leader, "epoch": pro.epoch})
    assert pro.role == ("follower" if engine_version else "prospective") and pro.leader_id == leader


@pytest.mark.parametrize("engine_version", [None, "1.2.0"])
def test_a_prospective_voter_with_no_leader_grants_a_vote_4_1(engine_version):
    """Second reading (KafkaRaftClient.handleVoteRequest, QuorumState.unattachedOrProspectiveCanGrantVote
    and prospectiveAddVotedState @ 4.1.0): a prospective voter that knows no leader and has not
    voted in its epoch grants a candidate of that epoch whose log is up to date, and stays
    prospective with a new election timeout (engine 1.2.0 refused)."""
    sim = Simulation(quorum_doc("4.1", 20000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    pro_id, cand_id = sorted(v for v in sim.quorum.voter_ids if v != leader)
    pro = sim.quorum.voters[pro_id]
    pro._transition("unattached", pro.epoch + 1)  # as a pre-vote from a higher epoch does
    pro._become_prospective()
    assert pro.leader_id is None and pro.voted_for is None
    answer = _answer(pro, "on_vote", {"candidate_id": cand_id, "candidate_epoch": pro.epoch,
                                      "pre_vote": False, "last_offset": len(pro.log),
                                      "last_offset_epoch": pro.log[-1]["epoch"]})
    assert answer["vote_granted"] == (engine_version is None)
    assert pro.role == "prospective"
    assert pro.voted_for == (None if engine_version else cand_id)


def _restart(era, who, engine_version=None, down_ms=1000):
    """Crash a controller of a settled quorum at 4000 ms and restart it ``down_ms`` later."""
    sim = Simulation(quorum_doc(era, 12000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    epoch = sim.quorum.voters[leader].epoch
    target = leader if who == "leader" else min(v for v in sim.quorum.voter_ids if v != leader)
    sim.apply({"op": "crash", "controller": target})
    sim.advance_to(4000 + down_ms)
    sim.apply({"op": "restart", "controller": target})
    return sim, leader, epoch, target


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_restarted_follower_follows_its_leader_at_once(era):
    """Second reading (QuorumState.initialize @ 3.9.0 / 4.1.0: a quorum-state file naming a leader
    gives a FollowerState): a follower back after 1 s fetches from its leader again and nothing
    else happens. Engine 1.2.0 restarted it unattached: in 3.9 it stood as candidate after its
    election timeout and deposed the healthy active controller."""
    sim, leader, epoch, target = _restart(era, "follower")
    result = sim.run()
    started = raft_events(result, "controller_started", after_ms=4000, controller=target)[0]
    assert f"as follower of {leader}" in started["reason"]
    assert sim.quorum.active == leader and sim.quorum.voters[target].epoch == epoch
    assert not raft_events(result, "controller_deactivated", after_ms=4001)
    sim, _, _, target = _restart(era, "follower", "1.2.0")
    old = sim.run()
    assert "starts unattached" in raft_events(old, "controller_started", after_ms=4000)[0]["reason"]
    if era == "3.9-kraft":
        assert raft_events(old, "controller_deactivated", after_ms=4001, controller=leader)


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_restarted_leader_starts_resigned_and_its_followers_stand_at_once(era):
    """Second reading (QuorumState.initialize @ 3.9.0 / 4.1.0: a voter that was leader of its
    epoch starts Resigned, with no preferred successors; pollResigned sends EndQuorumEpoch, and
    endEpochElectionBackoff of an empty list is strictExponentialElectionBackoffMs(0, 0) = 0): the
    followers stand as soon as it is back, instead of waiting for their fetch timeout."""
    sim, leader, epoch, _ = _restart(era, "leader", down_ms=500)
    result = sim.run()
    assert raft_events(result, "raft_leader_resigned", after_ms=4500, controller=leader)
    elected = raft_events(result, "raft_leader_elected", after_ms=4000)[0]
    assert elected["epoch"] == epoch + 1 and 4501 <= elected["t_ms"] <= 4501 + 10
    sim, _, _, _ = _restart(era, "leader", "1.2.0", down_ms=500)
    old = sim.run()
    assert raft_events(old, "raft_leader_elected", after_ms=4000)[0]["t_ms"] > 4000 + 1000


def test_a_restarted_candidate_asks_again_in_its_epoch_3_9():
    """Second reading (QuorumState.initialize @ 3.9.0: a voter that voted for itself starts
    Candidate in the stored epoch, retries 1): cut off, it stood in epoch + 1; restarted, it asks
    again in that epoch instead of starting unattached (engine 1.2.0)."""
    for engine_version, expected in ((None, "as candidate"), ("1.2.0", "unattached")):
        sim = Simulation(quorum_doc("3.9-kraft", 12000), engine_version=engine_version)
        sim.advance_to(4000)
        cut = min(v for v in sim.quorum.voter_ids if v != sim.quorum.active)
        voter = sim.quorum.voters[cut]
        sim.apply({"op": "isolate", "controller": cut})
        while voter.role != "candidate":
            sim.advance_to(sim.scheduler.now_ms + 1)
        epoch = voter.epoch
        sim.apply({"op": "crash", "controller": cut})
        sim.advance_to(sim.scheduler.now_ms + 10)
        sim.apply({"op": "restart", "controller": cut})
        sim.advance_to(sim.scheduler.now_ms + 5)
        result = sim.run()
        started = raft_events(result, "controller_started", after_ms=4000, controller=cut)[0]
        assert f"starts {expected} in epoch {epoch}" in started["reason"]
        if engine_version is None:
            again = raft_events(result, "raft_candidate", after_ms=started["t_ms"] - 1, controller=cut)
            assert (again[0]["t_ms"], again[0]["epoch"]) == (started["t_ms"], epoch)


def _two_down_then_one_back(era, engine_version=None):
    """The active controller and one follower crash; the other follower stands (3.9) or asks for
    pre-votes (4.1) and gets refused connections; the crashed follower is back 300 ms later."""
    sim = Simulation(quorum_doc(era, 12000), engine_version=engine_version)
    sim.advance_to(4000)
    leader = sim.quorum.active
    epoch = sim.quorum.voters[leader].epoch
    back, asking = sorted(v for v in sim.quorum.voter_ids if v != leader)
    sim.apply({"op": "crash", "controller": leader})
    sim.apply({"op": "crash", "controller": back})
    kind = "raft_prospective" if era == "4.1" else "raft_candidate"
    while not raft_events({"history": sim.history}, kind, after_ms=4000, controller=asking):
        sim.advance_to(sim.scheduler.now_ms + 1)
    sim.advance_to(sim.scheduler.now_ms + 300)
    sim.apply({"op": "restart", "controller": back})
    t_back = sim.scheduler.now_ms + 1
    result = sim.run()
    return raft_events(result, "raft_leader_elected", after_ms=4000)[0], t_back, epoch, asking


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_nominee_asks_a_voter_again_after_a_failed_vote_request(era):
    """Second reading (KafkaRaftClient.maybeSendVoteRequests @ 3.9.0 / 4.1.0, every poll of a
    candidate / prospective: a Vote to each voter with no answer yet, controller.quorum.retry.backoff.ms
    after a failed one): the voter back from a crash is asked within ~20 ms and the election is won
    in epoch + 1 at once. Engine 1.2.0 asked once, so the nominee waited for its election timeout."""
    elected, t_back, epoch, asking = _two_down_then_one_back(era)
    assert elected["controller"] == asking and elected["epoch"] == epoch + 1
    assert elected["t_ms"] - t_back <= 30
    old, t_back, _, _ = _two_down_then_one_back(era, "1.2.0")
    assert old["t_ms"] - t_back > 300
