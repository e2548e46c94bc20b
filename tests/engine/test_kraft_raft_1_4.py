"""The controller quorum's Raft rules fixed in engine 1.4.0 (docs/model.md §20.1), read at Kafka
3.9.0 (cc53a632ed) and 4.1.0 (13f70256db). Each test also re-simulates the run as engine 1.3.0,
which must keep the old behaviour (and fails the new assertion)."""
import pytest

from engine.core.messages import BEGIN_QUORUM_EPOCH
from engine.simulation import Simulation

from .test_kraft_raft import quorum_doc, raft_events

LATENCY_MS = 1                   # the scenario's default link latency
BEGIN_EPOCH_PERIOD_MS = 1000     # controller.quorum.fetch.timeout.ms / 2


def _deliveries(sim, kind):
    """(t_ms, source, target) of every ``kind`` message the network delivers from now on."""
    seen = []

    def observe(what, env):
        if what == "deliver" and env.type == kind:
            seen.append((sim.scheduler.now_ms, env.source, env.target))
    sim.network.observer = observe
    return seen


def _voter_back_after_an_election(era, engine_version):
    """Follower F crashes; the active controller L shuts down gracefully, so G is elected without
    F; F restarts 1500 ms after G's election, following L in the old epoch (its quorum-state file)."""
    sim = Simulation(quorum_doc(era, 12000), engine_version=engine_version)
    sim.advance_to(3000)
    leader = sim.quorum.active
    follower, other = [v for v in sim.quorum.voter_ids if v != leader]
    sim.apply({"op": "crash", "controller": follower})
    sim.advance_to(4000)
    sim.apply({"op": "shutdown", "controller": leader})
    sim.advance_to(4100)
    elected = raft_events({"history": sim.history}, "raft_leader_elected", after_ms=4000)[0]
    assert elected["controller"] == other
    restart_ms = elected["t_ms"] + 1500
    sim.advance_to(restart_ms)
    sim.apply({"op": "restart", "controller": follower})
    voter = sim.quorum.voters[follower]
    for t in range(restart_ms + 1, restart_ms + 3000):
        sim.advance_to(t)
        if voter.leader_id == other:
            return sim, elected["t_ms"], restart_ms, t
    raise AssertionError("the restarted voter never learned the new leader")


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_voter_back_from_a_crash_learns_the_leader_at_the_next_begin_quorum_epoch_round(era):
    """KafkaRaftClient.maybeSendBeginQuorumEpochRequests @ 3.9.0 / 4.1.0: the leader's
    beginQuorumEpochTimer (fetch.timeout.ms / 2 = 1000 ms, expired at once when it becomes leader)
    sends BeginQuorumEpoch to the other voters every 1000 ms; a failed request (the voter was down)
    is not retried before the next round. So a voter restarted 1500 ms after the election learns
    the leader from the round at 2000 ms (+ the link's 1 ms). Engine 1.3.0 retried every 20 ms
    after each failure, so the voter learned it within ~20 ms of its restart."""
    sim, elected_ms, restart_ms, learned_ms = _voter_back_after_an_election(era, None)
    assert learned_ms == elected_ms + 2 * BEGIN_EPOCH_PERIOD_MS + LATENCY_MS
    # the leader commits nothing of its epoch before a second voter fetches: it activates later too
    activated = raft_events(sim.run(), "controller_activated", after_ms=elected_ms)
    assert activated[0]["t_ms"] > learned_ms
    _, _, restart_ms, learned_ms = _voter_back_after_an_election(era, "1.3.0")
    assert learned_ms <= restart_ms + 25


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_the_leader_sends_begin_quorum_epoch_every_second_to_every_voter(era):
    """The round goes to every voter but the leader, acknowledged or not (the set of voters, not
    LeaderState's unacknowledged ones, @ 3.9.0 and 4.1.0): a follower that has fetched for seconds
    still gets one every 1000 ms. Engine 1.3.0 sent it once per voter."""
    counts = {}
    for version in (None, "1.3.0"):
        sim = Simulation(quorum_doc(era, 8000), engine_version=version)
        sim.advance_to(3000)
        leader = sim.quorum.active
        elected = raft_events({"history": sim.history}, "raft_leader_elected")[-1]["t_ms"]
        seen = _deliveries(sim, BEGIN_QUORUM_EPOCH)
        sim.run()
        counts[version] = seen
        for voter in sim.quorum.voter_ids:
            if voter == leader:
                continue
            times = [t for t, src, dst in seen if src == leader and dst == voter]
            if version is None:
                # rounds at elected + k x 1000 (from 3000 ms on), each delivered 1 ms later
                assert times == [elected + k * BEGIN_EPOCH_PERIOD_MS + LATENCY_MS
                                 for k in range(1, 8) if 3000 <= elected + k * BEGIN_EPOCH_PERIOD_MS < 8000]
    assert counts["1.3.0"] == []


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_voters_fetch_in_a_higher_epoch_does_not_move_the_leader(era):
    """KafkaRaftClient.handleFetchRequest -> validateLeaderOnlyRequest @ 3.9.0 / 4.1.0: a Fetch in a
    higher epoch is answered UNKNOWN_LEADER_EPOCH and the receiver does not transition (only
    responses and Vote/BeginQuorumEpoch/EndQuorumEpoch requests move a voter). Engine 1.3.0 moved
    the leader to unattached in that epoch when a voter sent it."""
    for version, stays in ((None, True), ("1.3.0", False)):
        sim = Simulation(quorum_doc(era, 6000), engine_version=version)
        sim.advance_to(3000)
        leader = sim.quorum.active
        follower = [v for v in sim.quorum.voter_ids if v != leader][0]
        epoch = sim.quorum.voters[leader].epoch
        sim.network.send(follower, leader, "Fetch", {"replica_id": follower, "epoch": epoch + 1,
                                                      "fetch_offset": 0, "last_fetched_epoch": 0},
                         (0, 10 ** 9), True)
        sim.advance_to(3005)
        voter = sim.quorum.voters[leader]
        assert ((voter.role, voter.epoch) == ("leader", epoch)) is stays


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_restarted_broker_fetches_from_the_leader_its_quorum_state_file_names(era):
    """QuorumState.initialize @ 3.9.0 / 4.1.0 for an observer: a broker's Raft client starts in the
    epoch and with the leader of its quorum-state file (written at each durable transition), so
    its first metadata Fetch after a restart goes to that leader in that epoch and is served.
    Engine 1.3.0 started every broker at epoch -1, asking the first voter (and had no epoch check
    for observers to fail it)."""
    for version in (None, "1.3.0"):
        sim = Simulation(quorum_doc(era, 12000), engine_version=version)
        sim.advance_to(5000)
        leader = sim.quorum.active
        epoch = sim.quorum.voters[leader].epoch
        sim.apply({"op": "crash", "broker": 0})
        sim.advance_to(6000)
        fetches = _deliveries_with_body(sim, "Fetch", source=0)
        sim.apply({"op": "restart", "broker": 0})
        sim.advance_to(6100)
        first = fetches[0]
        if version is None:
            assert (first[1], first[2]["epoch"]) == (leader, epoch)
        else:
            assert (first[1], first[2]["epoch"]) == (sim.quorum.voter_ids[0], -1)


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_new_broker_learns_the_leader_from_a_fenced_leader_epoch_refusal(era):
    """A broker's first start: its observer is unattached in epoch 0 (no quorum-state file). Its
    Fetch in epoch 0 reaches voters in a higher epoch; the refusal (FENCED_LEADER_EPOCH, or
    NOT_LEADER_OR_FOLLOWER) names the epoch and the leader, and the observer follows it
    (maybeHandleCommonResponse -> maybeTransition @ 3.9.0 / 4.1.0) and fetches from it at once in
    that epoch. Engine 1.3.0 kept epoch -1, which no voter checked."""
    sim = Simulation(quorum_doc(era, 4000))
    fetches = _deliveries_with_body(sim, "Fetch", source=0)
    sim.advance_to(4000)
    elected = raft_events({"history": sim.history}, "raft_leader_elected")[0]
    epochs = [body["epoch"] for t, dst, body in fetches]
    assert epochs[0] == 0 and max(epochs) == elected["epoch"]
    served = [(t, dst) for t, dst, body in fetches if body["epoch"] == elected["epoch"]]
    assert served[0][1] == elected["controller"]


def _deliveries_with_body(sim, kind, source):
    seen = []

    def observe(what, env):
        if what == "deliver" and env.type == kind and env.source == source and "partitions" not in env.body:
            seen.append((sim.scheduler.now_ms, env.target, dict(env.body)))
    sim.network.observer = observe
    return seen


def _prospective_grants_a_vote(engine_version):
    """White-box set-up of the rare case (4.1): voters P and C are unattached in epoch E with no
    leader and no vote, P one record behind; P goes prospective. Its pre-vote to the leader A is
    held by a cut, C refuses it (P's log is behind). Then C asks P for a real vote in epoch E,
    which P grants (C's log is ahead). Returns the pre-votes P sends to C afterwards."""
    sim = Simulation(quorum_doc("4.1", 6000), engine_version=engine_version)
    sim.advance_to(3000)
    leader = sim.quorum.active
    p, c = [v for v in sim.quorum.voter_ids if v != leader]
    sim.network.cut(p, leader)
    sim.network.cut(leader, p)
    voter, other = sim.quorum.voters[p], sim.quorum.voters[c]
    for v in (voter, other):
        v._transition("unattached", v.epoch)
        v.voted_for = None
    del voter.log[-1]
    voter._become_prospective()
    sim.advance_to(3003)
    assert voter.role == "prospective" and voter.rejected == {c}
    sent = []

    def observe(what, env):
        if what == "send" and env.type == "Vote" and env.source == p and env.target == c:
            sent.append(dict(env.body))
    sim.network.observer = observe
    sim.network.send(c, p, "Vote", {"candidate_id": c, "candidate_epoch": voter.epoch, "pre_vote": False,
                                    "last_offset_epoch": other.log[-1]["epoch"],
                                    "last_offset": len(other.log)}, (0, 10 ** 9), True)
    sim.advance_to(3005)
    assert voter.voted_for == c and voter.role == "prospective"
    return sent, voter


def test_a_prospective_voter_that_grants_a_vote_asks_again_for_the_pre_votes_it_had():
    """4.1.0 QuorumState.prospectiveAddVotedState makes a new ProspectiveState whose EpochElection
    has every other voter unrecorded; pollProspective -> maybeSendVoteRequests then sends a pre-vote
    again to each ready voter, i.e. to C, whose refusal it had (the RequestManager reset its
    connection on that answer); C refuses again (P's log is still behind). Engine 1.3.0
    restarted the count but asked nobody again."""
    sent, voter = _prospective_grants_a_vote(None)
    assert [(b["pre_vote"], b["candidate_epoch"]) for b in sent] == [(True, voter.epoch + 1)]
    sent, _ = _prospective_grants_a_vote("1.3.0")
    assert sent == []
