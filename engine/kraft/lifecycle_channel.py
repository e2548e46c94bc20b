"""The KRaft broker's channel to the active controller for its registration and heartbeats, and
what ``BrokerLifecycleManager`` does after a failure (engine 1.5.0, docs/model.md §20.4).

``NodeToControllerRequestThread`` @ 3.9.0 / 4.1.0 (the "heartbeat" channel ``BrokerServer``
builds) keeps a request queued until it is answered or ``retryTimeoutMs`` has passed since it
was queued: with no controller cached it asks ``RaftControllerNodeProvider`` for the Raft
client's leader (at a restart the leader its quorum-state file names), and with none known it
looks again every 100 ms; an answer that says
NOT_CONTROLLER, or a broken connection, forgets the controller and puts the request back at the
head of the queue, to go to whichever controller the broker's Raft client names next (after the
connection's reconnect backoff); only an expired request reaches the lifecycle manager as a
failure. ``retryTimeoutMs`` is broker.session.timeout.ms / 2 in 3.9 (KAFKA-14392) and
broker.heartbeat.interval.ms in 4.1 (KAFKA-19294).

After a failure 3.9 waits ``ExponentialBackoff(100, 2, broker.session.timeout.ms, 0.02)``:
100 ms x 2^failures, at most the session, times a uniform jitter factor in [0.98, 1.02)
(``scheduleNextCommunicationAfterFailure``; a success resets the count); 4.1 waits the
heartbeat interval (KAFKA-19294 removed the exponential backoff). The jitter is drawn from the
broker's own seeded stream, so no other component's draws move.
"""
import math

#: NodeToControllerRequestThread.doWork: no controller known -> pollOnce(100)
NO_CONTROLLER_POLL_MS = 100
#: reconnect.backoff.ms: a forgotten controller's connection is made again after it
RECONNECT_BACKOFF_MS = 50
#: BrokerLifecycleManager.resendExponentialBackoff @ 3.9.0
FAILURE_BACKOFF_INITIAL_MS = 100
FAILURE_BACKOFF_MULTIPLIER = 2
FAILURE_BACKOFF_JITTER = 0.02
#: Double.MIN_NORMAL: ExponentialBackoff draws no jitter below it
_MIN_NORMAL = 2.2250738585072014e-308


def exponential_backoff(attempts, initial_ms, multiplier, max_ms, jitter, rng):
    """``org.apache.kafka.common.utils.ExponentialBackoff.backoff``: the exponent is capped at
    log_multiplier(max / initial) (a real number, so the last step lands on ``max_ms`` before the
    jitter), the jittered value truncated to whole ms and capped at ``max_ms``."""
    initial_ms = min(max_ms, initial_ms)
    exp_max = math.log(max_ms / max(initial_ms, 1)) / math.log(multiplier) \
        if max_ms > initial_ms else 0
    if exp_max == 0:
        return initial_ms
    term = initial_ms * math.pow(multiplier, min(attempts, exp_max))
    factor = rng.uniform(1 - jitter, 1 + jitter) if jitter >= _MIN_NORMAL else 1.0
    return min(int(factor * term), max_ms)


class LifecycleChannel:
    """Mixin of ``KraftBroker`` (engine 1.5.0 rules). Class defaults keep old snapshots loading."""
    #: BrokerLifecycleManager.failedAttempts (3.9): failures since the last success
    lifecycle_failures = 0

    def channel_retry_timeout_ms(self):
        if self.era.heartbeat_timeout_is_interval:
            return self.config["broker.heartbeat.interval.ms"]
        return self.config["broker.session.timeout.ms"] // 2

    def send_to_controller(self, type_, body, callback, ctx):
        """``NodeToControllerChannelManager.sendRequest``: ``callback(ctx, body, error)`` runs once,
        with the answer or with REQUEST_TIMED_OUT when the request expired in the queue."""
        item = (type_, body, callback, ctx, self.scheduler.now_ms)
        self._channel_send(item)

    def _channel_open(self):
        return self.state in ("starting", "running", "shutting_down")

    def _channel_send(self, item):
        if not self._channel_open():
            return
        type_, body, callback, ctx, queued_at = item
        timeout = self.channel_retry_timeout_ms()
        if self.scheduler.now_ms - queued_at >= timeout:
            callback(ctx, None, "REQUEST_TIMED_OUT")  # generateRequests: onTimeout
            return
        if self.controller_id < 0 and self.raft_leader is not None:
            # doWork: nothing cached, the RaftControllerNodeProvider names the Raft client's leader
            # (after a restart, the one its quorum-state file names: QuorumState.initialize)
            self.controller_id = self.raft_leader
        if self.controller_id < 0:
            self.set_timer(NO_CONTROLLER_POLL_MS, self._channel_send, item)
            return
        # in flight, the NetworkClient's own timeout is the same retryTimeoutMs, from the send
        self.request(self.controller_id, type_, body, timeout, self._channel_answer, item)

    def _channel_answer(self, item, body, error):
        if not self._channel_open():
            return
        if error == "REQUEST_TIMED_OUT":
            self._channel_send(item)  # disconnected by the timeout: re-queued, found expired
        elif error or (body or {}).get("error") == "NOT_CONTROLLER":
            # handleResponse: a broken connection or NOT_CONTROLLER forgets the controller and
            # re-queues the request at the head (maybeDisconnectAndUpdateController, putFirst)
            self.set_timer(RECONNECT_BACKOFF_MS, self._channel_send, item)
        else:
            item[2](item[3], body, None)

    def failure_backoff_ms(self):
        """``scheduleNextCommunicationAfterFailure``: 3.9's exponential backoff (counting this
        failure), 4.1's heartbeat interval."""
        if self.era.heartbeat_timeout_is_interval:
            return self.config["broker.heartbeat.interval.ms"]
        rng = self.sim.streams.fork(f"broker-lifecycle/{self.node_id}")
        delay = exponential_backoff(self.lifecycle_failures, FAILURE_BACKOFF_INITIAL_MS,
                                    FAILURE_BACKOFF_MULTIPLIER, self.config["broker.session.timeout.ms"],
                                    FAILURE_BACKOFF_JITTER, rng)
        self.lifecycle_failures += 1
        return delay
