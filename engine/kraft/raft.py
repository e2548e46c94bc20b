"""A controller of the quorum: KIP-595 Raft roles, elections and timers (docs/model.md §20.1).

``QuorumVoter`` is a network node. Its roles follow ``KafkaRaftClient`` / ``QuorumState``:
unattached, prospective (4.1 pre-vote, KIP-996), candidate, leader, follower and resigned. The
election timeout is drawn per state from the voter's own seeded stream, uniform in
[T, 2T) with T = ``controller.quorum.election.timeout.ms`` (``QuorumState.randomElectionTimeoutMs``);
a follower becomes a candidate (3.9) or prospective (4.1) when no Fetch succeeded for
``controller.quorum.fetch.timeout.ms``. The log, the epoch and the vote survive a crash (the
quorum-state file and the log on disk). Replication of the log is in ``raft_replication``; the
controller that runs on the leader once it has committed its epoch's first record is
``QuorumController``.
"""
from engine.core.messages import (ALTER_PARTITION, BEGIN_QUORUM_EPOCH, BROKER_HEARTBEAT, BROKER_REGISTRATION,
                        END_QUORUM_EPOCH, METADATA_FETCH, VOTE)
from engine.core.node import Node
from engine.kraft.combined import wake_listener
from engine.kraft.raft_election import RaftElection
from engine.kraft.raft_replication import RaftReplication
from engine.kraft.raft_resign import RaftResign


class QuorumVoter(RaftElection, RaftReplication, RaftResign, Node):
    # engine 1.3.0's election bookkeeping; class defaults for voters pickled by engine 1.2.0
    rejected = frozenset()
    backing_off = False
    election_deadline_ms = 0
    stored_leader = None       # the quorum-state file's leader (engine 1.3.0)
    vote_round = 0             # which round of Vote requests is current (engine 1.3.0 resends)

    def __init__(self, sim, node_id, voters, quorum):
        Node.__init__(self, node_id, sim)
        self.quorum = quorum
        self.voters = list(voters)
        self.config = sim.config
        self.era = sim.era
        self.rng = sim.streams.fork(f"raft-{node_id}")
        self.log = []              # the metadata log on disk: record dicts, offset = index
        self.epoch = 0             # quorum-state file: epoch and vote
        self.voted_for = None
        self.state = "stopped"     # running | stopped (the process)
        self.net_state = "refusing"
        self.handlers = {VOTE: self.on_vote, BEGIN_QUORUM_EPOCH: self.on_begin_quorum_epoch,
                         END_QUORUM_EPOCH: self.on_end_quorum_epoch,
                         METADATA_FETCH: self.on_fetch, BROKER_REGISTRATION: self.on_controller_request,
                         BROKER_HEARTBEAT: self.on_controller_request,
                         ALTER_PARTITION: self.on_controller_request}
        self.controller = None     # the QuorumController while this voter is the active controller
        self._reset_memory()

    def _reset_memory(self):
        self.role = "unattached"
        self.leader_id = None
        self.hw = 0
        self.token = 0             # invalidates the timer of the previous state
        self.votes = set()
        self.rejected = set()      # nominee: voters that refused this epoch's (pre-)vote
        self.backing_off = False
        self.retries = 0
        self.has_fetched = False
        self.voter_states = {}     # leader: voter id -> {"end": offset, "fetch_ms": t}
        self.parked = {}           # leader: envelope id -> parked Fetch envelope
        self.epoch_start_offset = 0
        self.cq_fetched = set()
        self.cq_token = 0
        self.fetch_in_flight = False
        self.accumulator = []        # leader: records lingering before the next drain (1.4.0)
        self.shutting_down = False   # KafkaRaftClient.shutdown under way (raft_resign)
        self.commit_listener = None  # combined mode: the broker of this process, waiting for news

    @property
    def majority(self):
        return len(self.voters) // 2 + 1

    @property
    def running(self):
        return self.state == "running"

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, _=None):
        self.new_incarnation()
        self._reset_memory()
        if self.net_state == "silent":
            self.network.machine_booted(self.node_id)
        self.state = "running"
        self.net_state = "up"
        role = self._initial_role()
        how = {"follower": f"as follower of {self.stored_leader}",
               "candidate": "as candidate"}.get(role, role)
        self.sim.emit("controller_started", controller=self.node_id, epoch=self.epoch,
                      reason=f"controller {self.node_id} starts {how} in epoch {self.epoch} "
                             f"with {len(self.log)} metadata records on disk")
        if role == "resigned":
            self.resign(f"controller {self.node_id} was leader of epoch {self.epoch} before it "
                        f"stopped: it starts resigned")
        elif role == "candidate":
            self._transition("candidate", self.epoch)
            self.votes = {self.node_id}
            self.sim.emit("raft_candidate", controller=self.node_id, epoch=self.epoch,
                          reason=f"controller {self.node_id} had voted for itself in epoch "
                                 f"{self.epoch} before it stopped: it asks the other voters again")
            self._send_votes(self.epoch, False)
            self._maybe_won()
        elif role == "follower":
            self._transition("follower", self.epoch, self.stored_leader)
        elif len(self.voters) == 1 and self.sim.rules_1_3:
            # KafkaRaftClient.initialize @ 3.9.0 ("When there is only a single voter, become
            # candidate immediately") / 4.1.0 (transitionToProspective, which goes on to candidate
            # and leader at once): no election timeout to wait for
            self._start_election()
        else:
            self._arm_election_timer()

    def _initial_role(self):
        """``QuorumState.initialize`` @ 3.9.0 / 4.1.0: the role a (re)started voter takes from its
        quorum-state file: resigned if it was the leader of its epoch, candidate if it voted for
        itself (3.9: and knew no leader), follower if it knew a leader, else unattached. A single
        voter (which then stands at once) and engine 1.2.0 start unattached."""
        if not self.sim.rules_1_3 or len(self.voters) == 1:
            return "unattached"
        if self.stored_leader == self.node_id:
            return "resigned"
        if self.voted_for == self.node_id and (self.era.pre_vote or self.stored_leader is None):
            return "candidate"
        return "follower" if self.stored_leader is not None else "unattached"

    def crash(self, mode):
        if mode == "power":
            self.power_cycles += 1
        self._deactivate("the process stopped")
        self.state = "stopped"
        self.new_incarnation()
        self._reset_memory()
        self.net_state = "silent" if mode == "power" else "refusing"

    def shutdown(self):
        """Engine 1.2.0's controller shutdown: a crash of the process (1.3.0: ``begin_shutdown``)."""
        self.crash("process")

    # -- transitions -------------------------------------------------------------------------------
    def _transition(self, role, epoch, leader=None):
        if self.role == "leader" and role != "leader":
            self._deactivate(f"left the leader role for {role} in epoch {epoch}")
        keep_timer = role == "unattached" and self._keeps_election_timer()
        if epoch > self.epoch:
            self.voted_for = None
        if role != "resigned":  # Resigned is a memory-only state (QuorumState.transitionToResigned)
            self.stored_leader = leader if role in ("follower", "leader") else None
        self.epoch = epoch
        self.role = role
        self.leader_id = leader
        self.token += 1
        self.votes = set()
        self.rejected = set()
        self.backing_off = False
        self.has_fetched = False
        if self.commit_listener is not None:
            wake_listener(self)
        self.maybe_complete_shutdown()
        if role == "follower":
            self._arm_fetch_timer()
            self._fetch_from_leader()
        elif keep_timer:
            self.set_timer(max(0, self.election_deadline_ms - self.scheduler.now_ms),
                           self._on_election_timeout, self.token)
        elif role != "leader":
            self._arm_election_timer()

    def _keeps_election_timer(self):
        """QuorumState.transitionToUnattached: leaving candidate or unattached (4.1 also resigned,
        and prospective unless its vote was rejected) keeps what is left of the election timeout,
        so a voter that keeps bumping the epoch cannot hold the others' elections off."""
        if not self.sim.rules_1_3:
            return False  # engine 1.2.0: every transition drew a new timeout
        if self.role in ("candidate", "unattached"):
            return True
        if not self.era.pre_vote:
            return False
        return self.role == "resigned" or (self.role == "prospective" and not self._vote_rejected())

    def _vote_rejected(self):
        """``EpochElection.isVoteRejected``: granted + unrecorded < majority."""
        return len(self.voters) - len(self.rejected) < self.majority

    def observe_epoch(self, epoch, leader):
        """Any message naming a higher epoch (or this epoch's leader, when this voter knows none)
        moves this voter along (``KafkaRaftClient.maybeHandleCommonResponse``)."""
        if epoch > self.epoch or (epoch == self.epoch and leader is not None
                                  and self.role in ("unattached", "prospective", "candidate")
                                  and leader != self.node_id and self._knows_no_leader()):
            if leader is not None and leader != self.node_id:
                self._transition("follower", epoch, leader)
            else:
                self._transition("unattached", epoch)
            return True
        return False

    def _knows_no_leader(self):
        """``!quorum.hasLeader()``: a prospective voter keeps the leader it followed (4.1.0
        ``ProspectiveState``), so a Vote response naming that leader is a vote to count, not news."""
        if not self.sim.rules_1_3:
            return True  # engine 1.2.0: any same-epoch leader sent a prospective back to following
        return self.leader_id is None

    def _election_timeout_ms(self):
        base = self.config["controller.quorum.election.timeout.ms"]
        return base + self.rng.randrange(base)

    def _arm_election_timer(self, extra_ms=0):
        self.token += 1
        timeout = self._election_timeout_ms() + extra_ms
        self.election_deadline_ms = self.scheduler.now_ms + timeout
        self.set_timer(timeout, self._on_election_timeout, self.token)

    def _arm_fetch_timer(self):
        self.token += 1
        self.set_timer(self.config["controller.quorum.fetch.timeout.ms"], self._on_fetch_timeout,
                       self.token)

    def _on_fetch_timeout(self, token):
        if token != self.token or self.role != "follower":
            return
        self.sim.emit("raft_fetch_timeout", controller=self.node_id, epoch=self.epoch,
                      leader=self.leader_id,
                      reason=f"no Fetch answered by leader {self.leader_id} for "
                             f"controller.quorum.fetch.timeout.ms "
                             f"{self.config['controller.quorum.fetch.timeout.ms']}")
        self._start_election()

    def _on_election_timeout(self, token):
        if token != self.token or self.role in ("leader", "follower") or self.shutting_down:
            return  # shutting down: no election of its own (pollUnattachedAsVoter, pollCandidate...)
        if self.role == "resigned" and self.era.pre_vote and self.sim.rules_1_3:
            # 4.1.0 pollResigned: Unattached in epoch + 1, so that no Fetch answer names this voter
            # leader again; it inherits the resigned state's expired timeout and goes prospective
            # at once. (3.9.0 pollResigned: transitionToCandidate, below.)
            self._transition("unattached", self.epoch + 1)
        if self.role == "candidate" and self.era.election_backoff:
            self._back_off()
            return
        if self.role == "prospective" and self.leader_id is not None and self.sim.rules_1_3:
            # 4.1.0 pollProspective -> prospectiveTransitionAfterElectionLoss: back to the leader
            # it knows (without one it is unattached with no time left: prospective again, below)
            self._transition("follower", self.epoch, self.leader_id)
            return
        self._start_election()

    def _back_off(self):
        """<= 4.0: binary exponential backoff after a lost election (KafkaRaftClient
        binaryExponentialElectionBackoffMs: 100 ms x U{0 .. 2^retries - 1}, at most 1000)."""
        self.retries += 1
        backoff = min(100 * self.rng.randrange(2 << min(20, self.retries - 1)),
                      self.config["controller.quorum.election.backoff.max.ms"])
        self.token += 1
        self.backing_off = True
        self.set_timer(backoff, self._after_backoff, self.token)

    def _after_backoff(self, token):
        if token == self.token and self.role == "candidate":
            if self.shutting_down and self.sim.rules_1_3:
                # 3.9.0 pollCandidate: with a shutdown pending the candidate only keeps asking for
                # votes; a finished backoff starts no new candidacy
                return
            self._start_election()

    # -- BeginQuorumEpoch ----------------------------------------------------------------------------
    def on_begin_quorum_epoch(self, env):
        if not self.running:
            return
        body = env.body
        if body["epoch"] > self.epoch or (body["epoch"] == self.epoch and self._follows_begin_epoch()):
            self._transition("follower", body["epoch"], body["leader"])
        self.reply(env, {"error": None, "epoch": self.epoch})

    def _follows_begin_epoch(self):
        """A BeginQuorumEpoch of this very epoch makes a voter follow only if it knows no leader
        (``handleBeginQuorumEpochRequest`` -> ``maybeTransition`` @ 3.9.0 / 4.1.0: a 4.1
        prospective voter that still knows this leader stays prospective). Engine 1.2.0: any
        voter not yet following."""
        if not self.sim.rules_1_3:
            return self.role != "follower"
        return self.leader_id is None and self.role != "resigned"

    # -- requests for the active controller (ControllerApis) -----------------------------------------
    def on_controller_request(self, env):
        if not self.running:
            return
        if self.controller is None:
            self.reply(env, {"error": "NOT_CONTROLLER", "leader": self.leader_id, "partitions": {}})
            return
        self.controller.handle(env)

    # -- view --------------------------------------------------------------------------------------
    def view(self):
        state = "paused" if self.paused else ("running" if self.running else "stopped")
        return {"id": self.node_id, "role": self.role if self.running else "stopped",
                "epoch": self.epoch, "log_end_offset": len(self.log), "high_watermark": self.hw,
                "state": state, "voted_for": self.voted_for, "leader": self.leader_id}
