"""Kafka's Raft tests (raft/src/test/java/org/apache/kafka/raft) written again against the simulated
controller quorum (docs/kafka-parity.md, section "Raft"). Tags: Kafka 3.9.0 (era "3.9-kraft") and
4.1.0 (era "4.1"). Defaults as Kafka's: controller.quorum.fetch.timeout.ms 2000, election timeout
uniform in [1000, 2000), election backoff max 1000; links of 1 ms."""
import pytest

from engine.kraft.raft_resign import strict_exponential_backoff_ms
from engine.simulation import Simulation

FETCH_TIMEOUT_MS = 2000
CHECK_QUORUM_MS = FETCH_TIMEOUT_MS * 3 // 2
SHUTDOWN_TIMEOUT_MS = 5000


def cluster(era, duration_ms=20000, controllers=None, engine_version=None):
    doc = {"name": "raft-parity", "kafka_version": era, "brokers": 3, "duration_ms": duration_ms,
           "config": {}, "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [], "timeline": []}
    if controllers is not None:
        doc["controllers"] = controllers
    return Simulation(doc, engine_version=engine_version)


def started(era, at_ms=4000, **kw):
    """A quorum that has elected its first leader, at ``at_ms``: (sim, leader, epoch, followers)."""
    sim = cluster(era, **kw)
    sim.advance_to(at_ms)
    leader = sim.quorum.active
    followers = sorted(v for v in sim.quorum.voter_ids if v != leader)
    return sim, leader, sim.quorum.voters[leader].epoch, followers


def history(sim, kind, after_ms=0, **match):
    return [e for e in sim.history if e["type"] == kind and e["t_ms"] > after_ms
            and all(e.get(k) == v for k, v in match.items())]


def voter(sim, vid):
    return sim.quorum.voters[vid]


# -- fetch timeout -----------------------------------------------------------------------------------
def test_voter_becomes_candidate_after_fetch_timeout_3_9():
    """Kafka: KafkaRaftClientTest.testVoterBecomeCandidateAfterFetchTimeout at 3.9.0 — a follower
    whose last Fetch was answered fetch.timeout.ms ago becomes candidate in epoch + 1."""
    sim, leader, epoch, followers = started("3.9-kraft")
    sim.apply({"op": "crash", "controller": leader})
    sim.advance_to(4000 + FETCH_TIMEOUT_MS + 10)
    timeouts = history(sim, "raft_fetch_timeout", after_ms=4000)
    assert sorted(e["controller"] for e in timeouts) == followers
    # the last answered Fetch came less than MAX_FETCH_WAIT_MS (500) before the crash
    assert all(4000 + FETCH_TIMEOUT_MS - 500 <= e["t_ms"] <= 4001 + FETCH_TIMEOUT_MS for e in timeouts)
    for e in timeouts:
        cand = history(sim, "raft_candidate", after_ms=4000, controller=e["controller"])[0]
        assert (cand["t_ms"], cand["epoch"]) == (e["t_ms"], epoch + 1)


def test_voter_becomes_prospective_after_fetch_timeout_4_1():
    """Kafka: KafkaRaftClientTest.testVoterBecomeProspectiveAfterFetchTimeout at 4.1.0 — the
    follower becomes prospective in the same epoch (KIP-996: pre-votes do not bump it)."""
    sim, leader, epoch, followers = started("4.1")
    sim.apply({"op": "crash", "controller": leader})
    sim.advance_to(4000 + FETCH_TIMEOUT_MS + 1)
    for e in history(sim, "raft_fetch_timeout", after_ms=4000):
        pro = history(sim, "raft_prospective", after_ms=4000, controller=e["controller"])[0]
        assert (pro["t_ms"], pro["epoch"]) == (e["t_ms"], epoch)
    assert not [e for e in history(sim, "raft_candidate", after_ms=4000) if e["t_ms"] <= 4000 + 1500]


# -- check-quorum --------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_leader_resigns_without_fetches_from_a_majority(era):
    """Kafka: KafkaRaftClientTest.testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters
    at 3.9.0 / 4.1.0 — with no Fetch from a majority for 1.5 x fetch.timeout.ms the leader resigns."""
    sim, leader, epoch, _ = started(era, 3000)
    sim.apply({"op": "isolate", "controller": leader, "from": "controllers"})
    sim.advance_to(3000 + CHECK_QUORUM_MS + 10)
    resigned = history(sim, "raft_leader_resigned", controller=leader)
    assert resigned and resigned[0]["epoch"] == epoch
    # the last Fetch arrived within one long poll (500 ms) before the cut
    assert CHECK_QUORUM_MS - 500 <= resigned[0]["t_ms"] - 3000 <= CHECK_QUORUM_MS + 1
    assert voter(sim, leader).role == "resigned"


def test_single_voter_leader_never_resigns():
    """Kafka: KafkaRaftClientTest.testLeaderShouldNotResignLeadershipIfOnlyOneVoters at 3.9.0 — a
    one-voter quorum has no check-quorum (KAFKA-16144)."""
    sim = cluster("3.9-kraft", 20000, controllers=[3000])
    sim.run()
    assert not history(sim, "raft_leader_resigned")
    assert voter(sim, 3000).role == "leader" and voter(sim, 3000).epoch == 1


# -- resigned -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era,role_event,epoch_step", [("3.9-kraft", "raft_candidate", 1),
                                                       ("4.1", "raft_prospective", 1)])
def test_election_timeout_after_resign(era, role_event, epoch_step):
    """Kafka: KafkaRaftClientTest.testElectionTimeoutAfterUserInitiatedResign at 3.9.0 (candidate in
    epoch + 1) and 4.1.0 (unattached in epoch + 1, then prospective there) — when the election
    timeout passes in Resigned state without a new leader."""
    sim, leader, epoch, _ = started(era, 3000)
    sim.apply({"op": "isolate", "controller": leader, "from": "controllers"})
    sim.advance_to(9000)
    t_resign = history(sim, "raft_leader_resigned", controller=leader)[0]["t_ms"]
    nxt = history(sim, role_event, after_ms=t_resign, controller=leader)[0]
    assert nxt["epoch"] == epoch + epoch_step
    assert 1000 <= nxt["t_ms"] - t_resign < 2000


# -- graceful shutdown and EndQuorumEpoch ---------------------------------------------------------------
@pytest.mark.parametrize("era,elected_after_ms", [("3.9-kraft", 3), ("4.1", 5)])
def test_leader_graceful_shutdown(era, elected_after_ms):
    """Kafka: KafkaRaftClientTest.testLeaderGracefulShutdown at 3.9.0 / 4.1.0 — the leader resigns,
    sends EndQuorumEpoch, and its shutdown completes only once it learns the new leader
    (BeginQuorumEpoch), who was elected in epoch + 1."""
    sim, leader, epoch, followers = started(era)
    sim.apply({"op": "shutdown", "controller": leader})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(t0 + elected_after_ms - 1)
    assert voter(sim, leader).running and voter(sim, leader).role in ("resigned", "unattached")
    sim.advance_to(6000)
    elected = history(sim, "raft_leader_elected", after_ms=4000)[0]
    assert (elected["epoch"], elected["t_ms"]) == (epoch + 1, t0 + elected_after_ms)
    assert history(sim, "controller_stopped", controller=leader)[0]["t_ms"] == elected["t_ms"] + 1
    assert not voter(sim, leader).running


def test_end_quorum_epoch_sent_based_on_fetch_offset():
    """Kafka: KafkaRaftClientTest.testEndQuorumEpochSentBasedOnFetchOffset at 3.9.0 — the preferred
    successors are ordered by descending fetched offset, not by id: a follower that lags comes last
    even with the lower id, and the caught-up one is elected."""
    sim, leader, epoch, (low, high) = started("3.9-kraft")
    sim.apply({"op": "pause", "controller": low})
    sim.advance_to(5200)  # the leader appends NoOps (every 500 ms) that only `high` fetches
    sim.apply({"op": "shutdown", "controller": leader})
    sim.advance_to(6000)
    resigned = history(sim, "raft_leader_resigned", controller=leader)[0]
    assert resigned["successors"] == [high, low]
    assert history(sim, "raft_leader_elected", after_ms=5200)[0]["controller"] == high


def test_handle_end_quorum_request_first_successor_elects_at_once():
    """Kafka: KafkaRaftClientTest.testHandleEndQuorumRequest at 3.9.0 — a follower first among the
    preferred successors starts its election as soon as EndQuorumEpoch arrives (backoff 0)."""
    sim, leader, epoch, (first, _) = started("3.9-kraft")
    sim.apply({"op": "shutdown", "controller": leader})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(t0 + 10)
    cand = history(sim, "raft_candidate", after_ms=4000)
    assert [(e["controller"], e["epoch"], e["t_ms"]) for e in cand] == [(first, epoch + 1, t0 + 1)]


def test_handle_end_quorum_request_with_lower_priority_waits_its_backoff():
    """Kafka: KafkaRaftClientTest.testHandleEndQuorumRequestWithLowerPriorityToBecomeLeader at 3.9.0
    — the second of two preferred successors waits strictExponentialElectionBackoffMs(1, 2) = 500 ms
    (election.backoff.max.ms 1000 >> 1) before its candidacy; here the first one is paused."""
    assert [strict_exponential_backoff_ms(p, 2, 1000) for p in (0, 1, 2)] == [0, 500, 1000]
    sim, leader, epoch, (first, second) = started("3.9-kraft")
    sim.apply({"op": "pause", "controller": first})
    sim.apply({"op": "shutdown", "controller": leader})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(t0 + 600)
    cand = history(sim, "raft_candidate", after_ms=4000)
    assert [(e["controller"], e["epoch"], e["t_ms"]) for e in cand] == [(second, epoch + 1, t0 + 1 + 500)]
    assert history(sim, "raft_leader_elected", after_ms=4000)[0]["controller"] == second


def test_follower_graceful_shutdown():
    """Kafka: KafkaRaftClientTest.testFollowerGracefulShutdown at 3.9.0 — a follower knows a remote
    leader, so its shutdown completes at once and nothing else changes."""
    sim, leader, epoch, (f, _) = started("3.9-kraft")
    sim.apply({"op": "shutdown", "controller": f})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(8000)
    assert history(sim, "controller_stopped", controller=f)[0]["t_ms"] == t0
    assert sim.quorum.active == leader and voter(sim, leader).epoch == epoch
    assert not history(sim, "raft_leader_resigned")


def test_graceful_shutdown_single_member_quorum():
    """Kafka: KafkaRaftClientTest.testGracefulShutdownSingleMemberQuorum at 3.9.0 — the only voter
    completes its shutdown at once."""
    sim = cluster("3.9-kraft", 10000, controllers=[3000])
    sim.advance_to(3000)
    sim.apply({"op": "shutdown", "controller": 3000})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(4000)
    assert history(sim, "controller_stopped", controller=3000)[0]["t_ms"] == t0


def test_leader_graceful_shutdown_timeout():
    """Kafka: KafkaRaftClientTest.testLeaderGracefulShutdownTimeout at 3.9.0 — with no voter to hand
    over to, the resigned leader stays up until the 5000 ms shutdown timeout, then stops."""
    sim, leader, epoch, followers = started("3.9-kraft")
    for f in followers:
        sim.apply({"op": "crash", "controller": f})
    sim.apply({"op": "shutdown", "controller": leader})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(t0 + SHUTDOWN_TIMEOUT_MS - 1)
    assert voter(sim, leader).running and voter(sim, leader).role == "resigned"
    sim.advance_to(t0 + SHUTDOWN_TIMEOUT_MS + 1)
    assert history(sim, "controller_stopped", controller=leader)[0]["t_ms"] == t0 + SHUTDOWN_TIMEOUT_MS


# -- elections ---------------------------------------------------------------------------------------------
def test_retry_election_3_9():
    """Kafka: KafkaRaftClientTest.testRetryElection at 3.9.0 checks the rejected path (refused by the
    other voter, the candidate backs off at once, then stands in epoch + 1; that path is
    test_retry_election_after_rejection_3_9 below); here no answer comes, pollCandidate's timeout
    path @ 3.9.0:
    a candidate waits its election timeout [1000, 2000), then backs off
    100 ms x U{0 .. 2^retries - 1} (at most 1000), and stands again in the next epoch."""
    sim, leader, epoch, (f, _) = started("3.9-kraft", 3000)
    sim.apply({"op": "isolate", "controller": f})
    sim.advance_to(15000)
    cands = history(sim, "raft_candidate", controller=f, after_ms=3000)
    assert len(cands) >= 4
    assert [e["epoch"] for e in cands] == list(range(epoch + 1, epoch + 1 + len(cands)))
    for retries, (a, b) in enumerate(zip(cands, cands[1:]), start=1):
        assert 1000 <= b["t_ms"] - a["t_ms"] < 2000 + min(1000, 100 * ((2 << (retries - 1)) - 1)) + 1


@pytest.mark.parametrize("engine_version", [None, "1.2.0"])
def test_retry_election_after_rejection_3_9(engine_version):
    """Kafka: KafkaRaftClientTest.testRetryElection at 3.9.0 — refused by a majority, a candidate
    backs off at once ("Even though our candidacy was rejected, we will backoff for jitter period
    before we bump the epoch"; handleVoteResponse, isVoteRejected), not after its election
    timeout. Here the candidate was cut off while the leader wrote on, so both others refuse its
    stale log. Engine 1.2.0 did not record refusals and waited for its election timeout."""
    sim = cluster("3.9-kraft", engine_version=engine_version)
    sim.advance_to(4000)
    cut = min(v for v in sim.quorum.voter_ids if v != sim.quorum.active)
    sim.apply({"op": "isolate", "controller": cut})
    sim.advance_to(9000)  # the leader appends NoOps the cut-off voter never gets
    sim.apply({"op": "heal"})
    t = sim.scheduler.now_ms
    while not history(sim, "raft_candidate", after_ms=t, controller=cut):
        sim.advance_to(sim.scheduler.now_ms + 1)
    t1 = history(sim, "raft_candidate", after_ms=t, controller=cut)[0]["t_ms"]
    sim.advance_to(t1 + 3)  # the two refusals are back (1 ms links)
    v = voter(sim, cut)
    assert v.role == "candidate" and v.backing_off == (engine_version is None)
    if engine_version is None:
        assert sorted(v.rejected) == sorted(x for x in sim.quorum.voter_ids if x != cut)


def test_follower_grants_pre_vote_if_it_has_not_fetched_yet():
    """Kafka: KafkaRaftClientPreVoteTest.testFollowerGrantsPreVoteIfHasNotFetchedYet at 4.1.0 — and
    the prospective voter, which still knows that leader, counts the grant (handleVoteResponse):
    with the leader crashed and the other follower never answered, a leader is elected in epoch + 1
    within the fetch timeout."""
    sim, leader, epoch, (first, second) = started("4.1", 3000)
    sim.apply({"op": "slow", "from": leader, "to": second, "latency_ms": 2500})
    sim.advance_to(6000)
    sim.apply({"op": "crash", "controller": leader})
    sim.advance_to(6000 + FETCH_TIMEOUT_MS + 10)
    elected = history(sim, "raft_leader_elected", after_ms=6000)
    assert elected and elected[0]["epoch"] == epoch + 1 and elected[0]["controller"] == first


def test_prospective_with_leader_transitions_to_follower_on_election_loss():
    """Kafka: KafkaRaftClientPreVoteTest.testProspectiveWithLeaderTransitionsToFollower at 4.1.0 — a
    prospective voter whose pre-vote a majority refuses follows its known leader again, same epoch."""
    sim, leader, epoch, (f, _) = started("4.1")
    sim.apply({"op": "isolate", "controller": f})
    sim.advance_to(9000)
    sim.apply({"op": "heal"})
    t_heal = sim.scheduler.now_ms
    sim.advance_to(t_heal + 2500)  # its next fetch timeout comes within fetch.timeout.ms
    pro = history(sim, "raft_prospective", controller=f, after_ms=t_heal)[0]
    sim.advance_to(pro["t_ms"] + 3)  # a pre-vote round trip
    v = voter(sim, f)
    assert (v.role, v.leader_id, v.epoch) == ("follower", leader, epoch)
    assert sim.quorum.active == leader


def test_resigned_voter_grants_pre_vote():
    """Kafka: KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsResigned at 4.1.0 (and
    ResignedStateTest.testGrantVote) — a resigned leader grants a pre-vote whose log is up to date,
    so the first preferred successor wins its pre-vote with it and stands one round trip later."""
    sim, leader, epoch, (first, second) = started("4.1")
    sim.apply({"op": "pause", "controller": second})  # only the resigned leader can grant
    sim.apply({"op": "shutdown", "controller": leader})
    t0 = sim.scheduler.now_ms + 1  # a live command runs 1 ms after it is given
    sim.advance_to(t0 + 10)
    cand = history(sim, "raft_candidate", after_ms=4000)
    assert [(e["controller"], e["epoch"], e["t_ms"]) for e in cand] == [(first, epoch + 1, t0 + 3)]


def test_unattached_to_unattached_keeps_the_election_timer():
    """Kafka: QuorumStateTest.testUnattachedToUnattached at 3.9.0 (the same check at 4.1.0) — run
    here in era 3.9-kraft: moving to unattached in a higher
    epoch does not reset the election timer: the voter stands when the first timer expires."""
    sim = cluster("3.9-kraft", 5000)
    sim.advance_to(1)
    v = min(sim.quorum.voters.values(), key=lambda x: x.election_deadline_ms)  # first to stand
    deadline = v.election_deadline_ms
    sim.advance_to(deadline - 500)
    v._transition("unattached", 5)
    assert v.election_deadline_ms == deadline
    sim.advance_to(deadline)
    cand = history(sim, "raft_candidate", controller=v.node_id)
    assert (cand[0]["t_ms"], cand[0]["epoch"]) == (deadline, 6)


# -- high watermark ----------------------------------------------------------------------------------------
def test_high_watermark_is_the_majority_end_offset():
    """Kafka: LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree at 3.9.0 — with three voters the
    high watermark is the second-highest end offset: it follows one follower while the other is
    paused, and stops while both are."""
    sim, leader, epoch, (a, b) = started("3.9-kraft")
    sim.apply({"op": "pause", "controller": b})
    sim.advance_to(6000)
    lead = voter(sim, leader)
    assert lead.hw == lead.voter_states[a]["end"] > lead.voter_states[b]["end"]
    sim.apply({"op": "pause", "controller": a})
    hw = lead.hw
    sim.advance_to(8000)
    assert len(lead.log) > hw == lead.hw  # the leader appends NoOps; nothing commits


def test_high_watermark_waits_for_the_new_leaders_first_record():
    """Kafka: LeaderStateTest (high watermark only past epochStartOffset: "the leader must commit one
    record from its own epoch") at 3.9.0 — a new leader exposes nothing until a majority has its
    LeaderChange record; then the HW passes it and it becomes the active controller."""
    sim, leader, epoch, _ = started("3.9-kraft")
    sim.apply({"op": "crash", "controller": leader})
    sim.advance_to(9000)
    elected = history(sim, "raft_leader_elected", after_ms=4000)[0]
    new = voter(sim, elected["controller"])
    start = new.epoch_start_offset
    assert new.log[start]["type"] == "LeaderChangeMessage" and new.log[start]["epoch"] == new.epoch
    activated = history(sim, "controller_activated", after_ms=4000)[0]
    assert activated["t_ms"] >= elected["t_ms"] + 2  # a follower's Fetch round trip at least
    assert sim.quorum.committed_log[start]["type"] == "LeaderChangeMessage"


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_single_voter_becomes_leader_at_once(era):
    """Kafka: KafkaRaftClientTest.testInitializeSingleMemberQuorum at 3.9.0 / 4.1.0
    (KafkaRaftClient.initialize: the only voter becomes candidate at once, 4.1 through
    prospective, and so leader) — at start and after a restart, in the next epoch, with no
    election timeout. Engine 1.2.0 waited one, [1000, 2000) ms."""
    sim = cluster(era, 10000, controllers=[3000])
    sim.advance_to(1)
    assert voter(sim, 3000).role == "leader" and voter(sim, 3000).epoch == 1
    sim.apply({"op": "crash", "controller": 3000})
    sim.advance_to(100)
    sim.apply({"op": "restart", "controller": 3000})
    sim.advance_to(102)
    assert voter(sim, 3000).role == "leader" and voter(sim, 3000).epoch == 2
    old = cluster(era, 10000, controllers=[3000], engine_version="1.2.0")
    old.advance_to(999)
    assert voter(old, 3000).role == "unattached"


# -- engine 1.4.0: BeginQuorumEpoch rounds, Fetch refusals ---------------------------------------------
def _messages(sim, kind, what="send"):
    """(t_ms, source, target, body) of every ``kind`` message the network sees from now on."""
    seen = []

    def observe(event, env):
        if event == what and env.type == kind:
            seen.append((sim.scheduler.now_ms, env.source, env.target, env.body))
    sim.network.observer = observe
    return seen


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_begin_quorum_epoch_heartbeat(era):
    """Kafka: KafkaRaftClientTest.testBeginQuorumEpochHeartbeat at 3.9.0 / 4.1.0 — the leader sends
    BeginQuorumEpoch to every other voter each beginQuorumEpochTimeoutMs (fetch.timeout.ms / 2 =
    1000 here), nothing in between, though the voters acknowledged and fetch. Engine 1.3.0 sent
    it once per voter."""
    sim, leader, epoch, followers = started(era, 3000)
    elected = history(sim, "raft_leader_elected")[-1]["t_ms"]
    sent = _messages(sim, "BeginQuorumEpoch")
    first = elected + ((3000 - elected) // 1000 + 1) * 1000    # the next round after 3000 ms
    sim.advance_to(first)
    assert sorted(dst for t, src, dst, body in sent if t == first) == followers
    sim.advance_to(first + 500)
    assert len(sent) == len(followers)                       # half a period: nothing new
    sim.advance_to(first + 1000)
    assert sorted(dst for t, src, dst, body in sent if t == first + 1000) == followers
    assert all(src == leader and body["epoch"] == epoch for t, src, dst, body in sent)
    old, leader, _, _ = started(era, 3000, engine_version="1.3.0")
    sent = _messages(old, "BeginQuorumEpoch")
    old.advance_to(first + 1000)
    assert sent == []


def test_resign_will_complete_fetch_purgatory():
    """Kafka: KafkaRaftClientTest.testResignWillCompleteFetchPurgatory at 3.9.0 — on resigning (here
    a graceful shutdown) the leader answers its parked Fetches NOT_LEADER_OR_FOLLOWER, naming
    itself as the leader of its epoch (the answers are built while it still leads). Engine 1.3.0
    named nobody."""
    for version, named in ((None, True), ("1.3.0", False)):
        sim, leader, epoch, followers = started("3.9-kraft", engine_version=version)
        answers = _messages(sim, "FetchResponse")
        sim.apply({"op": "shutdown", "controller": leader})
        sim.advance_to(4001)
        refused = [(dst, body) for t, src, dst, body in answers
                   if src == leader and body.get("error") == "NOT_LEADER_OR_FOLLOWER"]
        # the parked Fetches of both followers and of the three brokers (observers)
        assert sorted(dst for dst, _ in refused) == [0, 1, 2] + followers
        assert all(body["epoch"] == epoch for _, body in refused)
        assert all(body["leader"] == (leader if named else None) for _, body in refused)


def _fetch(sim, source, target, epoch):
    """A Fetch from ``source`` (a broker: an observer) in Raft epoch ``epoch``, as it arrives."""
    sim.network.send(source, target, "Fetch", {"replica_id": source, "epoch": epoch,
                                               "fetch_offset": 0, "last_fetched_epoch": -1},
                     (0, 10 ** 9), True)


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_fetch_in_a_higher_epoch_is_unknown_leader_epoch(era):
    """Kafka: KafkaRaftClientTest.testInvalidFetchRequest at 3.9.0 / 4.1.0, its UNKNOWN_LEADER_EPOCH
    case (validateLeaderOnlyRequest: a Fetch in epoch + 1 is answered UNKNOWN_LEADER_EPOCH with
    the leader's own epoch and id, and the leader stays leader in its epoch; its INVALID_REQUEST
    cases are request validation, not modelled). A Fetch in an older epoch is FENCED_LEADER_EPOCH
    naming the leader."""
    sim, leader, epoch, _ = started(era, 3000)
    answers = _messages(sim, "FetchResponse")
    _fetch(sim, 0, leader, epoch + 1)
    _fetch(sim, 1, leader, epoch - 1)
    sim.advance_to(3010)
    got = {dst: (body["error"], body["epoch"], body["leader"]) for t, src, dst, body in answers
           if src == leader and dst in (0, 1) and body.get("error")}
    assert got == {0: ("UNKNOWN_LEADER_EPOCH", epoch, leader), 1: ("FENCED_LEADER_EPOCH", epoch, leader)}
    assert voter(sim, leader).role == "leader" and voter(sim, leader).epoch == epoch
