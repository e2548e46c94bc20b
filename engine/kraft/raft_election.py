"""Raft elections of a controller voter (docs/model.md §20.1): standing as a candidate (3.9) or
a prospective voter (4.1 pre-vote, KIP-996), sending and resending Vote requests, granting votes
(``KafkaRaftClient.handleVoteRequest``) and counting the answers. A mixin of ``QuorumVoter``
(``raft``), which keeps the roles, the timers and the transitions between them.
"""
from engine.core.messages import VOTE
from engine.kraft.raft_replication import RETRY_BACKOFF_MS


class RaftElection:
    """Mixin of ``QuorumVoter``: elections and votes."""

    def _start_election(self):
        """3.9: a new candidacy at epoch + 1; 4.1: pre-votes first (also after a lost election,
        with no backoff: KAFKA-18345)."""
        if self.era.pre_vote:
            self._become_prospective()
        else:
            self._become_candidate()

    def _become_prospective(self):
        """KIP-996: ask for pre-votes in the current epoch; nobody changes state for them."""
        lost = self._lost_election()
        self.role = "prospective"
        self.token += 1
        self.votes = {self.node_id}
        self.rejected = set()
        self.sim.emit("raft_prospective", controller=self.node_id, epoch=self.epoch,
                      reason=f"{lost}controller {self.node_id} asks for pre-votes for epoch "
                             f"{self.epoch + 1}")
        self._arm_election_timer()
        self._send_votes(self.epoch + 1, True)
        self._maybe_won()

    def _become_candidate(self):
        if self.role != "candidate" and self.sim.rules_1_3:
            self.retries = 0  # QuorumState.transitionToCandidate: retries count candidacies in a row
        lost = self._lost_election()
        self._transition("candidate", self.epoch + 1)
        self.voted_for = self.node_id
        self.votes = {self.node_id}
        self.sim.emit("raft_candidate", controller=self.node_id, epoch=self.epoch,
                      reason=f"{lost}controller {self.node_id} votes for itself in epoch {self.epoch} "
                             f"and asks the other voters")
        self._send_votes(self.epoch, False)
        self._maybe_won()

    def _lost_election(self):
        """What a candidate's epoch came to when it tries again: the history shows why the epoch
        moves on by more than one (two followers whose fetch timeouts expire together split the
        vote, as Kafka's do). Engine 1.2.0 said nothing."""
        if self.role != "candidate" or not self.sim.rules_1_3:
            return ""
        others = [v for v in self.voters if v not in self.votes and v not in self.rejected]
        return (f"epoch {self.epoch} had no winner (votes of {sorted(self.votes)}, refused by "
                f"{sorted(self.rejected)}, no answer from {sorted(others)}): ")

    def _vote_body(self, epoch, pre_vote):
        last_epoch = self.log[-1]["epoch"] if self.log else 0
        return {"candidate_id": self.node_id, "candidate_epoch": epoch, "pre_vote": pre_vote,
                "last_offset_epoch": last_epoch, "last_offset": len(self.log)}

    def _send_votes(self, epoch, pre_vote):
        body = self._vote_body(epoch, pre_vote)
        self.vote_round += 1
        for voter in self.voters:
            if voter != self.node_id:
                self._send_vote(voter, body)

    def _send_vote(self, voter, body):
        self.request(voter, VOTE, body, self.config["controller.quorum.request.timeout.ms"],
                     self._on_vote_response,
                     (body["candidate_epoch"], body["pre_vote"], voter, self.vote_round, body))

    def _still_asking(self, voter, round_, pre_vote):
        """``maybeSendVoteRequests`` @ 3.9.0 / 4.1.0: while its election is open (its vote not
        rejected, a 3.9 candidate not backing off) a nominee asks every voter it has no answer
        from again, ``controller.quorum.retry.backoff.ms`` after a failed request."""
        return (self.running and round_ == self.vote_round
                and self.role == ("prospective" if pre_vote else "candidate")
                and voter not in self.votes and voter not in self.rejected
                and not self._vote_rejected() and not self.backing_off)

    def _resend_vote(self, ctx):
        voter, round_, body = ctx
        if self._still_asking(voter, round_, body["pre_vote"]):
            self._send_vote(voter, body)

    # -- Vote (KafkaRaftClient.handleVoteRequest) ---------------------------------------------------
    def on_vote(self, env):
        if not self.running:
            return
        body = env.body
        cand_epoch = body["candidate_epoch"]
        answered = ()
        if body["pre_vote"]:
            if self.sim.rules_1_3 and cand_epoch - 1 > self.epoch:
                # 4.1.0 handleVoteRequest: the request's replica epoch (the prospective's own,
                # one below the epoch it asks for) above ours moves us to it, pre-vote or not
                self._transition("unattached", cand_epoch - 1)
            granted = cand_epoch > self.epoch and self._log_ok(body) and self._grants_pre_vote()
        else:
            if cand_epoch > self.epoch:
                self._transition("unattached", cand_epoch)
            granted = (cand_epoch == self.epoch and self._may_vote()
                       and self.voted_for in (None, body["candidate_id"]) and self._log_ok(body))
            if granted:
                if self.role == "prospective" and self.voted_for is None:
                    # 4.1.0 QuorumState.prospectiveAddVotedState: a new ProspectiveState with the
                    # vote, its own pre-vote count starting again
                    answered = sorted((self.votes | self.rejected) - {self.node_id})
                    self.votes = {self.node_id}
                    self.rejected = set()
                self.voted_for = body["candidate_id"]
                self._arm_election_timer()
        self.reply(env, {"error": None, "epoch": self.epoch, "leader": self._vote_response_leader(),
                         "voter": self.node_id, "vote_granted": granted})
        if answered and self.sim.rules_1_4:
            self._ask_again(answered)

    def _ask_again(self, answered):
        """4.1.0 ``pollProspective`` -> ``maybeSendVoteRequests`` after ``prospectiveAddVotedState``
        (engine 1.4.0): the new ProspectiveState's election has every other voter unrecorded, so
        the voter sends a pre-vote again to each one the RequestManager finds ready — those whose
        answer it had (an answer resets the connection); those still awaited or backing off are
        asked when their request completes, as before. Engine 1.3.0 asked nobody again, so the
        answers it had dropped were lost to the count."""
        body = self._vote_body(self.epoch + 1, True)
        for voter in answered:
            self._send_vote(voter, body)

    def _may_vote(self):
        """Who can grant a (real) vote in its epoch: an unattached voter; from 4.1 also a prospective
        one that knows no leader (``QuorumState.unattachedOrProspectiveCanGrantVote`` @ 4.1.0;
        engine 1.3.0 rule, engine 1.2.0 refused)."""
        if self.role == "unattached":
            return True
        return (self.role == "prospective" and self.leader_id is None and self.sim.rules_1_3
                and self.era.pre_vote)

    def _vote_response_leader(self):
        """The leader a Vote response names: ``quorum.leaderIdOrSentinel()`` (``buildVoteResponse``
        @ 3.9.0 / 4.1.0), whatever the role: a resigned voter names itself (``ResignedState``'s
        election is its own leadership), a 4.1 prospective voter the leader it still knows.
        Engine 1.2.0 named one only as follower or leader."""
        if self.role == "resigned" and self.sim.rules_1_3:
            return self.node_id
        if self.role in ("follower", "leader") or (self.role == "prospective" and self.sim.rules_1_3):
            return self.leader_id
        return None

    def _grants_pre_vote(self):
        """4.1 canGrantVote: a follower that fetched from its leader refuses; a leader refuses."""
        if self.role == "leader":
            return False
        return self.role != "follower" or not self.has_fetched

    def _log_ok(self, body):
        mine = (self.log[-1]["epoch"] if self.log else 0, len(self.log))
        return (body["last_offset_epoch"], body["last_offset"]) >= mine

    def _on_vote_response(self, ctx, body, error):
        epoch, pre_vote = ctx[0], ctx[1]  # (engine 1.2.0's in-flight requests carry only these)
        if error or body is None or not self.running:
            if len(ctx) == 5 and self.sim.rules_1_3 and self._still_asking(ctx[2], ctx[3], pre_vote):
                self.set_timer(RETRY_BACKOFF_MS, self._resend_vote, ctx[2:])
            return
        if self.observe_epoch(body["epoch"], body.get("leader")):
            return
        wanted = "prospective" if pre_vote else "candidate"
        if self.role != wanted or (not pre_vote and epoch != self.epoch):
            return
        if body["vote_granted"]:
            self.votes.add(body["voter"])
            self._maybe_won()
        elif self.sim.rules_1_3:  # engine 1.2.0: a refusal was not recorded
            self.rejected.add(body["voter"])
            if self._vote_rejected():
                self._on_vote_rejected()

    def _on_vote_rejected(self):
        """``EpochElection.isVoteRejected`` (granted + unrecorded < majority): a 4.1 prospective
        goes back to its leader, or unattached with a fresh timeout
        (``prospectiveTransitionAfterElectionLoss``); a 3.9 candidate backs off at once
        (``handleVoteResponse`` @ 3.9.0); a 4.1 candidate waits out its election timeout."""
        if self.role == "prospective":
            if self.leader_id is not None:
                self._transition("follower", self.epoch, self.leader_id)
            else:
                self._transition("unattached", self.epoch)
        elif self.era.election_backoff and not self.backing_off:
            self._back_off()

    def _maybe_won(self):
        if len(self.votes) < self.majority:
            return
        if self.role == "prospective":
            self._become_candidate()
        elif self.role == "candidate":
            self.become_leader()
