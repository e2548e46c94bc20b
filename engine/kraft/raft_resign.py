"""A leader that resigns, and a voter's graceful shutdown (docs/model.md §20.1, engine 1.3.0).

``KafkaRaftClient.shutdown(5000)`` (``KafkaRaftClientDriver`` / ``RaftManager.shutdown``) keeps the
Raft client running until a remote leader is known or 5 s have passed (``maybeCompleteShutdown``).
A leader resigns first (``pollLeader`` -> ``transitionToResigned``): it answers its parked
Fetches with NOT_LEADER_OR_FOLLOWER and sends EndQuorumEpoch to every other voter until each
acknowledges, naming its preferred successors by descending fetched offset
(``LeaderState.nonLeaderVotersByDescendingFetchOffset``). A follower of that leader cuts its fetch
timeout to ``strictExponentialElectionBackoffMs``: 0 for the first successor, so it starts the
election at once (``handleEndQuorumEpochRequest``). A check-quorum resignation sends the same
EndQuorumEpoch (``pollResigned``). While shutting down a voter starts no election of its own.
"""
from engine.core.messages import END_QUORUM_EPOCH

#: KafkaRaftClientDriver.shutdown: client.shutdown(5000)
SHUTDOWN_TIMEOUT_MS = 5000
RETRY_BACKOFF_MS = 20  # controller.quorum.retry.backoff.ms


def strict_exponential_backoff_ms(position, successors, backoff_max_ms):
    """``KafkaRaftClient.strictExponentialElectionBackoffMs`` @ 3.9.0 / 4.1.0."""
    if position == 0:
        return 0
    if position < 0 or position >= successors:
        return backoff_max_ms
    base = backoff_max_ms >> (successors - 1)
    return min(backoff_max_ms, base << (position - 1))


class RaftResign:
    """Mixin of ``QuorumVoter``: Resigned, EndQuorumEpoch and the graceful shutdown."""
    shutting_down = False  # class default for voters pickled by engine 1.2.0

    # -- the leader resigns (transitionToResigned, pollResigned) ------------------------------------
    def resign(self, reason):
        successors = self.preferred_successors()
        self.sim.emit("raft_leader_resigned", controller=self.node_id, epoch=self.epoch,
                      successors=successors,
                      reason=f"{reason}; EndQuorumEpoch to the other voters, preferred successors "
                             f"{successors} (by fetched offset)")
        parked, self.parked = list(self.parked.values()), {}
        # fetchPurgatory.completeAllExceptionally(NOT_LEADER_OR_FOLLOWER), answered while still the
        # leader (transitionToResigned): it names itself (engine 1.4.0; 1.3.0 named nobody)
        named = self.node_id if self.sim.rules_1_4 else None
        for env in parked:
            self.reply(env, {"error": "NOT_LEADER_OR_FOLLOWER", "epoch": self.epoch, "leader": named})
        self._transition("resigned", self.epoch)
        body = {"leader": self.node_id, "epoch": self.epoch, "preferred_successors": successors}
        for voter in self.voters:
            if voter != self.node_id:
                self._send_end_epoch(voter, body)

    def preferred_successors(self):
        """Descending fetched offset, voters that never fetched last, ties by id (ReplicaState.compareTo)."""
        def key(item):
            vid, state = item
            return (state["fetch_ms"] is None, -state["end"], vid)
        return [vid for vid, _ in sorted(self.voter_states.items(), key=key)]

    def _send_end_epoch(self, voter, body):
        self.request(voter, END_QUORUM_EPOCH, body, self.config["controller.quorum.request.timeout.ms"],
                     self._on_end_epoch_response, (voter, body))

    def _on_end_epoch_response(self, ctx, body, error):
        voter, request = ctx
        if self.role != "resigned" or self.epoch != request["epoch"]:
            return
        if error or body is None:
            self.set_timer(RETRY_BACKOFF_MS, self._resend_end_epoch, ctx)  # until acknowledged
            return
        self.observe_epoch(body["epoch"], body.get("leader"))

    def _resend_end_epoch(self, ctx):
        if self.role == "resigned" and self.epoch == ctx[1]["epoch"]:
            self._send_end_epoch(*ctx)

    # -- a voter receives EndQuorumEpoch (handleEndQuorumEpochRequest) ---------------------------------
    def on_end_quorum_epoch(self, env):
        if not self.running:
            return
        body = env.body
        if body["epoch"] < self.epoch:
            self.reply(env, {"error": "FENCED_LEADER_EPOCH", "epoch": self.epoch, "leader": self.leader_id})
            return
        self.observe_epoch(body["epoch"], body["leader"])
        if self.role == "follower" and self.leader_id == body["leader"]:
            successors = body["preferred_successors"]
            position = successors.index(self.node_id) if self.node_id in successors else len(successors)
            backoff = strict_exponential_backoff_ms(
                position, len(successors), self.config["controller.quorum.election.backoff.max.ms"])
            self.token += 1  # FollowerState.overrideFetchTimeout
            self.set_timer(backoff, self._after_end_epoch_backoff,
                           (self.token, position if successors else None, backoff))
        self.reply(env, {"error": None, "epoch": self.epoch, "leader": self.leader_id})

    def _after_end_epoch_backoff(self, ctx):
        token, position, backoff = ctx
        if token != self.token or self.role != "follower":
            return
        rank = (f"preferred successor #{position + 1}" if position is not None else
                "no preferred successors named (it restarted resigned)")
        self.sim.emit("raft_fetch_timeout", controller=self.node_id, epoch=self.epoch,
                      leader=self.leader_id,
                      reason=f"leader {self.leader_id} resigned (EndQuorumEpoch): {rank}, election "
                             f"after {backoff} ms")
        self._start_election()

    # -- graceful shutdown (KafkaRaftClient.shutdown, maybeCompleteShutdown) ---------------------------
    def begin_shutdown(self):
        self.shutting_down = True
        self.set_timer(SHUTDOWN_TIMEOUT_MS, self._stop_after_shutdown, "timed out after 5000 ms")
        if self.role == "leader":
            self.resign(f"controller {self.node_id} shuts down gracefully")
        self.maybe_complete_shutdown()

    def maybe_complete_shutdown(self):
        """Done when this voter is alone or knows a remote leader (``quorum.hasRemoteLeader()``);
        the stop comes in the client's next poll, after the answer to what brought the news."""
        if self.shutting_down and (len(self.voters) == 1 or self.leader_id not in (None, self.node_id)):
            self.set_timer(0, self._stop_after_shutdown, f"knows the new leader {self.leader_id}")

    def _stop_after_shutdown(self, why):
        if not (self.running and self.shutting_down):
            return
        self.crash("process")
        self.sim.emit("controller_stopped", controller=self.node_id, mode="shutdown",
                      reason=f"controller {self.node_id} ends its graceful shutdown ({why}); its "
                             f"metadata log and quorum-state file stay on disk")
