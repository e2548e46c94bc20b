"""Replication of the metadata log by Fetch (KIP-595), the high watermark and check-quorum
(docs/model.md §20.1).

Followers (voters) and observers (brokers) pull with Fetch. The leader parks a Fetch that finds
nothing new for up to 500 ms (``KafkaRaftClient.MAX_FETCH_WAIT_MS``) and completes it when its log
grows; from 4.1 also when its high watermark moves (KAFKA-14145 / KIP-1166). A fetch whose last
epoch does not match the leader's log is answered with the diverging end offset and the follower
truncates (``handleFetchResponse``). The high watermark is the offset a majority of voters has
reached (``LeaderState.maybeUpdateHighWatermark``), and only once it passes the leader's epoch
start (its LeaderChange record). A leader resigns when fewer than a majority fetched within
1.5 x ``controller.quorum.fetch.timeout.ms`` (check-quorum, KAFKA-15489, 3.7+).
"""
from engine.core.messages import BEGIN_QUORUM_EPOCH, METADATA_FETCH
from engine.kraft.combined import wake_listener
from engine.kraft.metadata_image import LEADER_CHANGE

MAX_FETCH_WAIT_MS = 500
MAX_RECORDS_PER_FETCH = 200
RETRY_BACKOFF_MS = 20  # controller.quorum.retry.backoff.ms


class RaftReplication:
    """Mixin of ``QuorumVoter``: the leader's and the followers' side of log replication."""

    #: base offset of the batch the active controller is appending (None: no batch open)
    batch_base = None

    # -- becoming leader (KafkaRaftClient.onBecomeLeader) --------------------------------------------
    def become_leader(self):
        votes = sorted(self.votes)
        self._transition("leader", self.epoch, self.node_id)
        self.votes = set(votes)
        self.voter_states = {v: {"end": 0, "fetch_ms": None} for v in self.voters if v != self.node_id}
        self.epoch_start_offset = len(self.log)
        self.sim.emit("raft_leader_elected", controller=self.node_id, epoch=self.epoch,
                      votes=sorted(self.votes),
                      reason=f"controller {self.node_id} won epoch {self.epoch} with the votes of "
                             f"{sorted(self.votes)} (a majority of {len(self.voters)} voters)")
        self.append(LEADER_CHANGE, {"leader": self.node_id, "voters": list(self.voters),
                                    "granting_voters": sorted(self.votes)})
        if self.sim.rules_1_4:
            self.begin_epoch_requests = {}
            self._begin_epoch_round(self.epoch)
        else:  # engine 1.3.0: once, and again after each failure until acknowledged
            for voter in self.voters:
                if voter != self.node_id:
                    self._send_begin_epoch(voter)
        self._reset_check_quorum()
        self.maybe_advance_hw()

    def _send_begin_epoch(self, voter):
        return self.request(voter, BEGIN_QUORUM_EPOCH, {"leader": self.node_id, "epoch": self.epoch},
                            self.config["controller.quorum.request.timeout.ms"],
                            self._on_begin_epoch_ack, (voter, self.epoch))

    def _on_begin_epoch_ack(self, ctx, body, error):
        voter, epoch = ctx
        if self.role != "leader" or epoch != self.epoch:
            return
        if self.sim.rules_1_4:
            self._begin_epoch_answered(voter, body, error)
        elif error or body is None:
            self.set_timer(RETRY_BACKOFF_MS, self._resend_begin_epoch, ctx)  # until acknowledged
            return
        if body is not None and not error:
            self.observe_epoch(body["epoch"], None)

    # engine 1.4.0: KafkaRaftClient.maybeSendBeginQuorumEpochRequests @ 3.9.0 / 4.1.0 -------------
    #: leader: voter -> (corr, sent_ms) of its BeginQuorumEpoch in flight, or (None, failed_ms)
    #: while backing off (RequestManager's ConnectionState)
    begin_epoch_requests = None

    def _begin_epoch_round(self, epoch):
        """Every ``fetch.timeout.ms / 2`` (``LeaderState.beginQuorumEpochTimer``, first at once) the
        leader sends BeginQuorumEpoch to every other voter, acknowledged or not, that has no request
        in flight and is not backing off (``RequestManager.isReady``); one that failed is tried
        again only at the next round."""
        if not self.running or self.role != "leader" or epoch != self.epoch:
            return
        now = self.scheduler.now_ms
        for voter in self.voters:
            if voter != self.node_id and self._begin_epoch_ready(voter, now):
                self.begin_epoch_requests[voter] = (self._send_begin_epoch(voter), now)
        self.set_timer(self.config["controller.quorum.fetch.timeout.ms"] // 2,
                       self._begin_epoch_round, epoch)

    def _begin_epoch_ready(self, voter, now):
        corr, since = self.begin_epoch_requests.get(voter, (None, None))
        if since is None:
            return True
        if corr is not None:  # in flight until its request timeout (hasRequestTimedOut: >=)
            timeout = self.config["controller.quorum.request.timeout.ms"]
            return corr not in self.pending or now >= since + timeout
        return now >= since + RETRY_BACKOFF_MS  # isBackoffComplete

    def _begin_epoch_answered(self, voter, body, error):
        """``RequestManager.onResponseResult``: an answer makes the voter ready, a failure backs it
        off ``controller.quorum.retry.backoff.ms``. A request timeout needs no backoff: the
        RequestManager counts a request as timed out (ready) from its deadline on, before the
        channel fails it."""
        corr = self.begin_epoch_requests.get(voter, (None, None))[0]
        if corr is not None and corr in self.pending:
            return  # the answer to an older request (isResponseExpected: not the one in flight)
        if error or body is None:
            failed = error != "REQUEST_TIMED_OUT"
            self.begin_epoch_requests[voter] = (None, self.scheduler.now_ms if failed else None)
        else:
            self.begin_epoch_requests.pop(voter, None)

    def _resend_begin_epoch(self, ctx):
        if self.role == "leader" and ctx[1] == self.epoch:
            self._send_begin_epoch(ctx[0])

    def next_offset(self):
        """The offset the leader's next record gets: its log end plus what lingers."""
        return len(self.log) + len(self.accumulator)

    def append(self, kind, fields):
        """The leader appends one record in its epoch. From engine 1.4.0 a controller's record
        lingers in the accumulator first (``linger``); the LeaderChange record is a control
        message, drained at once (``appendControlMessages`` -> ``forceDrain``). Engine 1.3.0:
        inside a batch (``begin_batch``) nothing is sent or committed before the batch ends."""
        # log_time_ms: the record's append timestamp, which a broker's last-applied-record-lag-ms
        # measures from (docs/model.md §22.6); left out of the run result, like "text"
        record = {"offset": self.next_offset(), "epoch": self.epoch, "type": kind,
                  "log_time_ms": self.scheduler.now_ms}
        record.update(fields)
        if self.sim.rules_1_4 and kind != LEADER_CHANGE:
            self.linger(record)
            return record
        self.log.append(record)
        if self.batch_base is not None:
            record["batch"] = self.batch_base
            return record
        self._batch_appended()
        return record

    # engine 1.4.0: BatchAccumulator @ 3.9.0 / 4.1.0 -----------------------------------------------
    #: records appended since the last drain, not yet in the log (class default for old snapshots)
    accumulator = ()

    def linger(self, record):
        """``BatchAccumulator.append``: the record joins the current batch; the first record after a
        drain starts the linger timer (``maybeResetLinger``), and the leader drains the batch
        ``controller.quorum.append.linger.ms`` later (``KafkaRaftClient.maybeAppendBatches``:
        ``timeUntilDrain``). So every controller operation of those 25 ms shares one batch, which
        is appended, sent to the fetchers and committed whole. (The 8 MiB batch size, which
        would complete a batch sooner, is never reached here.)"""
        if not self.accumulator:
            self.accumulator = []
            self.set_timer(self.config["controller.quorum.append.linger.ms"], self._drain, self.epoch)
        self.accumulator.append(record)

    def _drain(self, epoch):
        if not self.running or self.role != "leader" or epoch != self.epoch or not self.accumulator:
            return  # the leadership ended: LeaderState.close released what lingered
        records, self.accumulator = self.accumulator, []
        base = records[0]["offset"]
        for record in records:
            record["batch"] = base
            self.log.append(record)
        self._batch_appended()

    def begin_batch(self):
        """KafkaRaftClient.prepareAppend/schedulePreparedAppend: the records of one controller
        operation are one batch, sent, committed and replayed whole (§20.1)."""
        self.batch_base = len(self.log)

    def end_batch(self):
        base, self.batch_base = self.batch_base, None
        if len(self.log) > base:
            self._batch_appended()

    def _batch_appended(self):
        self._complete_parked()
        if len(self.voters) == 1:
            self.maybe_advance_hw()

    # -- the high watermark --------------------------------------------------------------------------
    def maybe_advance_hw(self):
        ends = sorted([len(self.log)] + [s["end"] for s in self.voter_states.values()], reverse=True)
        candidate = ends[len(self.voters) // 2]
        if candidate > self.hw and candidate > self.epoch_start_offset:
            self.hw = candidate
            self.quorum.on_commit(self)
            if self.commit_listener is not None:
                wake_listener(self)
            if self.era.hw_completes_fetch:
                self._complete_parked()

    # -- serving Fetch (leader) ------------------------------------------------------------------------
    def on_fetch(self, env):
        if not self.running:
            return
        body = env.body
        voter = body["replica_id"] in self.voter_states
        if self.sim.rules_1_4:
            error = self._fetch_error(body["epoch"])
            if error is not None:
                self.reply(env, {"error": error, "epoch": self.epoch,
                                 "leader": self.leader_or_sentinel()})
                return
        else:  # engine 1.3.0: a voter's higher epoch moved this one; observers were not checked
            if voter and body["epoch"] > self.epoch:
                self.observe_epoch(body["epoch"], None)
            if self.role != "leader":
                self.reply(env, {"error": "NOT_LEADER_OR_FOLLOWER", "epoch": self.epoch,
                                 "leader": self.leader_id})
                return
            if voter and body["epoch"] < self.epoch:
                self.reply(env, {"error": "FENCED_LEADER_EPOCH", "epoch": self.epoch,
                                 "leader": self.node_id})
                return
        offset = body["fetch_offset"]
        if voter:
            diverging = self._diverging_end(offset, body["last_fetched_epoch"])
            if diverging is not None:
                self._answer(env, diverging=diverging)
                return
            state = self.voter_states[body["replica_id"]]
            state["end"] = offset
            state["fetch_ms"] = self.scheduler.now_ms
            self._on_voter_fetch(body["replica_id"])
            self.maybe_advance_hw()
        if offset < self._readable_end(voter):
            self._answer(env)
            return
        self.parked[env.id] = env
        self.set_timer(MAX_FETCH_WAIT_MS, self._expire_parked, env.id)

    def _fetch_error(self, epoch):
        """``KafkaRaftClient.validateLeaderOnlyRequest`` @ 3.9.0 / 4.1.0, for voters and observers
        alike (engine 1.4.0): an older epoch is FENCED_LEADER_EPOCH, a newer one
        UNKNOWN_LEADER_EPOCH — the receiver does not move to it (``handleFetchRequest`` never
        transitions) — and the right epoch at a voter that does not lead NOT_LEADER_OR_FOLLOWER.
        The answer names this voter's epoch and ``quorum.leaderIdOrSentinel()``."""
        if epoch < self.epoch:
            return "FENCED_LEADER_EPOCH"
        if epoch > self.epoch:
            return "UNKNOWN_LEADER_EPOCH"
        return None if self.role == "leader" else "NOT_LEADER_OR_FOLLOWER"

    def leader_or_sentinel(self):
        """``QuorumState.leaderIdOrSentinel``: a resigned voter's election names itself
        (``ResignedState.election`` @ 3.9.0 / 4.1.0); engine 1.3.0 named nobody."""
        if self.role == "resigned" and self.sim.rules_1_4:
            return self.node_id
        return self.leader_id

    def _readable_end(self, voter):
        """Voters read the whole log; observers only what is committed (simplification, §20.1)."""
        return len(self.log) if voter else self.hw

    def _diverging_end(self, offset, last_epoch):
        if offset == 0:
            return None
        if offset <= len(self.log) and self.log[offset - 1]["epoch"] == last_epoch:
            return None
        end = 0
        for record in self.log:
            if record["epoch"] > last_epoch:
                break
            end = record["offset"] + 1
        return min(end, offset)

    def _answer(self, env, diverging=None):
        self.parked.pop(env.id, None)
        body = env.body
        voter = body["replica_id"] in self.voter_states
        if diverging is not None:
            records = []
        else:
            readable = self._readable_end(voter)
            end = self._batch_end(min(readable, body["fetch_offset"] + MAX_RECORDS_PER_FETCH),
                                  readable)
            records = [dict(r) for r in self.log[body["fetch_offset"]:end]]
        self.reply(env, {"error": None, "epoch": self.epoch, "leader": self.node_id, "hw": self.hw,
                         "records": records, "diverging_end_offset": diverging})

    def _batch_end(self, end, readable):
        """A Fetch returns whole batches: the size cap never splits one (engine 1.2.0: it could).
        Batches commit whole, so the readable end (the HW for observers) is never inside one."""
        if not self.sim.rules_1_3:
            return end
        while 0 < end < readable and "batch" in self.log[end] \
                and self.log[end]["batch"] == self.log[end - 1].get("batch"):
            end += 1
        return end

    def _expire_parked(self, env_id):
        env = self.parked.get(env_id)
        if env is not None and self.role == "leader":
            self._answer(env)

    def _complete_parked(self):
        for env in list(self.parked.values()):
            voter = env.body["replica_id"] in self.voter_states
            if env.body["fetch_offset"] < self._readable_end(voter):
                self._answer(env)

    # -- check-quorum (LeaderState.timeUntilCheckQuorumExpires, 3.7+) ---------------------------------
    def _on_voter_fetch(self, voter):
        self.cq_fetched.add(voter)
        if len(self.cq_fetched) >= self.majority - 1:
            self._reset_check_quorum()

    def _reset_check_quorum(self):
        self.cq_fetched = set()
        if len(self.voters) > 1:  # KAFKA-16144: no check with a single voter
            self.cq_token += 1
            timeout = self.config["controller.quorum.fetch.timeout.ms"] * 3 // 2
            self.set_timer(timeout, self._check_quorum_expired, (self.epoch, self.cq_token))

    def _check_quorum_expired(self, ctx):
        if self.role != "leader" or ctx != (self.epoch, self.cq_token):
            return
        self.sim.emit("raft_leader_resigned", controller=self.node_id, epoch=self.epoch,
                      reason=f"check-quorum: fewer than a majority of voters fetched within 1.5 x "
                             f"controller.quorum.fetch.timeout.ms = "
                             f"{self.config['controller.quorum.fetch.timeout.ms'] * 3 // 2} ms")
        self._transition("resigned", self.epoch)

    # -- fetching (follower) ---------------------------------------------------------------------------
    def _fetch_from_leader(self, _=None):
        if self.role != "follower" or self.fetch_in_flight or not self.running:
            return
        self.fetch_in_flight = True
        body = {"replica_id": self.node_id, "epoch": self.epoch, "fetch_offset": len(self.log),
                "last_fetched_epoch": self.log[-1]["epoch"] if self.log else 0}
        self.request(self.leader_id, METADATA_FETCH, body,
                     self.config["controller.quorum.request.timeout.ms"], self._on_fetch_response,
                     (self.epoch, self.leader_id, self.scheduler.now_ms))

    def _on_fetch_response(self, ctx, body, error):
        self.fetch_in_flight = False
        if self.role != "follower" or ctx[:2] != (self.epoch, self.leader_id):
            self._fetch_from_leader()
            return
        if error or body is None or body.get("error"):
            handled = not error and body is not None and body.get("epoch") is not None
            if handled:
                self.observe_epoch(body["epoch"], body.get("leader"))
            if handled and self.sim.rules_1_5:
                self._refetch_after_refusal(ctx)
                return
            self.set_timer(RETRY_BACKOFF_MS, self._fetch_from_leader)
            return
        self.has_fetched = True
        self._arm_fetch_timer()
        if body["diverging_end_offset"] is not None:
            del self.log[body["diverging_end_offset"]:]
        else:
            for record in body["records"]:
                if record["offset"] == len(self.log):
                    self.log.append(record)
        hw = max(self.hw, min(body["hw"], len(self.log)))
        moved, self.hw = hw != self.hw, hw
        if moved and self.commit_listener is not None:
            wake_listener(self)
        self._fetch_from_leader()

    def _refetch_after_refusal(self, ctx):
        """Engine 1.5.0: a refusal that names an epoch (FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER,
        an older epoch) is handled by ``maybeHandleCommonResponse`` @ 3.9.0 / 4.1.0, which counts
        as a successful response for the ``RequestManager``: the voter is ready at once and fetches
        again (from the leader it follows now), with no retry backoff — also when the refusal
        brought no news (a resigned leader naming itself). Engine 1.4.0 waited
        ``controller.quorum.retry.backoff.ms``. On a zero-latency link the answer comes in the
        millisecond of the request, and the engine waits 1 ms so its clock moves."""
        sent = ctx[2] if len(ctx) > 2 else None
        if sent == self.scheduler.now_ms:
            self.set_timer(1, self._fetch_from_leader)
        else:
            self._fetch_from_leader()

    def _deactivate(self, reason):
        self.parked = {}
        self.accumulator = []
        if self.controller is not None:
            self.quorum.deactivate(self, reason)
