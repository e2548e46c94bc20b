"""Engine 1.5.0: the KRaft broker-lifecycle deviations the second reading of engine 1.4.0 found
(docs/reviews/engine-1.4.0-second-reading.md §5, §8; docs/model.md §19 "What 1.5.0 changed").
Each test pins a number read in Kafka's code at 3.9.0 (confluentinc cc53a632ed) / 4.1.0
(13f70256db) and re-simulates the run as engine 1.4.0, which followed the old rule."""
from engine.core.messages import BROKER_HEARTBEAT
from engine.kraft.kraft_broker import KraftBroker
from engine.scenario.library import library
from engine.simulation import Simulation

SESSION_MS = 9000
INTERVAL_MS = 2000


def _heartbeat_sends(monkeypatch, doc, broker, version=None):
    """The times ``broker`` queues a new heartbeat (``sendBrokerHeartbeat``), and the run."""
    seen = []
    original = KraftBroker._heartbeat

    def spy(self, *args):
        if self.node_id == broker and self.running and not self.hb_in_flight:
            seen.append(self.sim.now_ms)
        return original(self, *args)
    monkeypatch.setattr(KraftBroker, "_heartbeat", spy)
    result = Simulation(doc, engine_version=version).run()
    monkeypatch.undo()
    return seen, result


def _cut_off(era):
    return {**library()["broker-cut-off-from-controllers"], "kafka_version": era}


def test_3_9_backs_off_exponentially_after_failed_heartbeats(monkeypatch):
    """BrokerLifecycleManager @ 3.9.0: the heartbeat channel expires a request after
    session / 2 = 4500 ms (KAFKA-14392), and scheduleNextCommunicationAfterFailure waits
    ExponentialBackoff(100, 2, session, 0.02).backoff(failures): 100, 200, 400, 800 ms, each
    within 2 % jitter. Broker 0 is cut off from the controllers from 10 s to 30 s. Engine 1.4.0
    waited the heartbeat interval (2000 ms) after each failure."""
    sends, _ = _heartbeat_sends(monkeypatch, _cut_off("3.9-kraft"), 0)
    after = [t for t in sends if t > 10000]
    gaps = [b - a - SESSION_MS // 2 for a, b in zip(after, after[1:])][:4]
    for k, gap in enumerate(gaps):
        backoff = 100 * 2 ** k
        assert int(backoff * 0.98) <= gap <= int(backoff * 1.02), (k, gaps)
    old, _ = _heartbeat_sends(monkeypatch, _cut_off("3.9-kraft"), 0, "1.4.0")
    old_after = [t for t in old if t > 10000]
    assert [b - a for a, b in zip(old_after, old_after[1:])][:3] == [SESSION_MS // 2 + INTERVAL_MS] * 3


def test_4_1_waits_the_interval_after_a_failed_heartbeat(monkeypatch):
    """KAFKA-19294 (4.1.0) removed the exponential backoff: a failure waits
    broker.heartbeat.interval.ms, after a request that expires after the interval."""
    sends, _ = _heartbeat_sends(monkeypatch, _cut_off("4.1"), 0)
    after = [t for t in sends if 10000 < t < 30000]
    assert [b - a for a, b in zip(after, after[1:])] == [2 * INTERVAL_MS] * (len(after) - 1)
    assert len(after) >= 4


def test_the_backoff_numbers_and_the_brokers_own_jitter_stream():
    """The jitter draws come from a stream named for the broker: the seeded streams of other
    components (network, producers, Raft timers) draw what they drew before."""
    from engine.kraft.lifecycle_channel import exponential_backoff

    class Fixed:
        def __init__(self, value):
            self.value = value

        def uniform(self, a, b):
            return a + (b - a) * self.value
    # ExponentialBackoff(100, 2, 9000, 0.02): the exponent stops at log2(90) = 6.49, so 9000
    assert [exponential_backoff(k, 100, 2, SESSION_MS, 0.02, Fixed(0.5)) for k in range(9)] == \
        [100, 200, 400, 800, 1600, 3200, 6400, 9000, 9000]
    assert exponential_backoff(7, 100, 2, SESSION_MS, 0.02, Fixed(0.99)) == SESSION_MS  # capped
    assert exponential_backoff(0, 100, 2, SESSION_MS, 0.02, Fixed(0.0)) == 98
    sim = Simulation(_cut_off("3.9-kraft"))
    sim.run()
    assert "broker-lifecycle/0" in sim.streams._streams


def test_not_controller_is_sent_again_by_the_channel(monkeypatch):
    """NodeToControllerRequestThread.handleResponse @ 3.9.0 / 4.1.0: NOT_CONTROLLER or a broken
    connection puts the request back at the head of the queue, for the controller the broker
    knows next; the lifecycle manager never sees it. After a controller failover no heartbeat
    answer the broker handles is NOT_CONTROLLER or a disconnect, while engine 1.4.0 handled them
    as failures."""
    for era in ("3.9-kraft", "4.1"):
        doc = {**library()["controller-failover-kraft"], "kafka_version": era}
        for version, expect_seen in ((None, False), ("1.4.0", True)):
            errors = []
            original = KraftBroker._on_heartbeat

            def spy(self, ctx, body, error):
                errors.append(error or (body or {}).get("error"))
                return original(self, ctx, body, error)
            monkeypatch.setattr(KraftBroker, "_on_heartbeat", spy)
            Simulation(doc, engine_version=version).run()
            monkeypatch.undo()
            handled = [e for e in errors if e in ("NOT_CONTROLLER", "NETWORK_EXCEPTION")]
            assert bool(handled) == expect_seen, (era, version, errors)


def _delays(monkeypatch, broker):
    """The delays ``broker`` schedules its next heartbeat with (both engines' timers)."""
    seen = []
    original = broker.set_timer

    def spy(delay, fn, arg=None):
        if getattr(fn, "__name__", "") in ("_communicate", "_heartbeat"):
            seen.append(delay)
        return original(delay, fn, arg)
    monkeypatch.setattr(broker, "set_timer", spy)
    return seen


def test_a_fenced_answer_in_recovery_waits_the_interval(monkeypatch):
    """BrokerHeartbeatResponseEvent @ 3.9.0 / 4.1.0: in RECOVERY (the controller said the broker
    is caught up) an answer that still says fenced schedules the next heartbeat after
    broker.heartbeat.interval.ms (scheduleNextCommunicationAfterSuccess); only STARTING uses
    10 ms. Engine 1.4.0 kept 10 ms until the broker was first unfenced."""
    answer = {"error": None, "is_caught_up": True, "is_fenced": True, "should_shut_down": False}
    for version, expected in ((None, INTERVAL_MS), ("1.4.0", 10)):
        sim = Simulation(_cut_off("3.9-kraft"), engine_version=version)
        sim.advance_to(5000)
        broker = sim.brokers[2]
        broker.ready_to_unfence, broker.ever_unfenced, broker.hb_in_flight = True, False, True
        delays = _delays(monkeypatch, broker)
        broker._on_heartbeat(None, answer, None)
        monkeypatch.undo()
        assert delays == [expected], version
        # STARTING: not caught up yet, 10 ms in both engines
        broker.ready_to_unfence, broker.hb_in_flight = False, True
        delays = _delays(monkeypatch, broker)
        broker._on_heartbeat(None, {**answer, "is_caught_up": False}, None)
        monkeypatch.undo()
        assert delays == [10], version


def test_controlled_shutdown_heartbeats_50_ms_once_then_the_interval():
    """PENDING_CONTROLLED_SHUTDOWN @ 3.9.0 / 4.1.0: the first answer that does not grant the
    shutdown schedules the next heartbeat 50 ms later, every later one after the interval
    (gotControlledShutdownResponse). rolling-restart: broker 0's shutdown starts at 10028 ms (the
    in-controlled-shutdown record), the 50 ms heartbeat finds the others not yet caught up, and the
    grant comes with the heartbeat 2000 ms after it. Engine 1.4.0 heartbeated every 50 ms."""
    doc = {**library()["rolling-restart"], "kafka_version": "4.1"}

    def grant_after_start(version):
        history = Simulation(doc, engine_version=version).run()["history"]
        start = next(e["t_ms"] for e in history if e["type"] == "controlled_shutdown_started")
        grant = next(e["t_ms"] for e in history if e["type"] == "controlled_shutdown_granted")
        return grant - start
    assert 50 + INTERVAL_MS <= grant_after_start(None) <= 50 + INTERVAL_MS + 10
    assert grant_after_start("1.4.0") < 50 + INTERVAL_MS


def _next_heartbeat_body(monkeypatch, sim, broker):
    bodies = []
    original = KraftBroker.request

    def spy(self, target, type_, body, *args, **kw):
        if type_ == BROKER_HEARTBEAT and self is broker:
            bodies.append(body)
        return original(self, target, type_, body, *args, **kw)
    monkeypatch.setattr(KraftBroker, "request", spy)
    sim.advance_to(sim.now_ms + 2 * INTERVAL_MS + 100)
    monkeypatch.undo()
    return bodies[0]


def test_a_heartbeat_reports_the_last_published_offset(monkeypatch):
    """BrokerServer @ 3.9.0 / 4.1.0 starts the lifecycle manager with
    ``() => sharedServer.loader.lastAppliedOffset()``, the offset of the last image
    MetadataLoader *published* (metrics.updateLastAppliedImageProvenance in maybePublishMetadata;
    -1 before the first publish). A broker that replayed records it has not published yet (a
    catch-up in progress) reports the published offset. Engine 1.4.0 reported the last record it
    had applied."""
    for version in (None, "1.4.0"):
        sim = Simulation(_cut_off("3.9-kraft"), engine_version=version)
        sim.advance_to(5000)
        broker = sim.brokers[2]
        assert broker.published_offset == broker.metadata_offset - 1  # caught up and published
        published = broker.published_offset
        broker.metadata_offset += 3  # three records replayed, the image not yet published
        monkeypatch.setattr(broker, "publish", lambda: None)  # the catch-up is not over
        body = _next_heartbeat_body(monkeypatch, sim, broker)
        expected = published if version is None else published + 3
        assert body["current_metadata_offset"] == expected, version


def test_a_new_broker_reports_minus_one_before_its_first_publish():
    from engine.kraft.metadata_fetcher import MetadataFetcher
    assert MetadataFetcher.published_offset == -1


def test_the_first_publish_waits_for_the_high_watermark(monkeypatch):
    """MetadataLoader.maybePublishMetadata @ 3.9.0 / 4.1.0 publishes nothing while
    stillNeedToCatchUp: until the loader has reached the high watermark (and seen a record), the
    first image is held back, whatever the broker's registration does. Broker 2 restarts at 6 s
    and registers while its replay of the log is still behind (a long log over slow links: here
    20 ms links and one batch per Fetch answer). Engine 1.4.0 published at the registration
    answer, caught up or not."""
    import engine.kraft.raft_replication as raft_replication
    monkeypatch.setattr(raft_replication, "MAX_RECORDS_PER_FETCH", 1)  # one batch per answer
    doc = {"name": "long-replay", "kafka_version": "3.9-kraft", "brokers": 3, "duration_ms": 8000,
           "network": {"latency_ms": 20}, "config": {},
           "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}], "clients": [],
           "timeline": [{"at_ms": 3000, "op": "shutdown", "broker": 2},
                        {"at_ms": 6000, "op": "restart", "broker": 2}]}
    for version in (None, "1.4.0"):
        publishes, registered = [], []
        publish, on_registered = KraftBroker.publish, KraftBroker._on_registered_kraft

        def spy_publish(self):
            if self.node_id == 2 and self.sim.now_ms >= 6000:
                publishes.append((self.sim.now_ms, self.metadata_offset, self.quorum_hw))
            return publish(self)

        def spy_registered(self, previous, body, error):
            if self.node_id == 2 and self.sim.now_ms >= 6000:
                registered.append((self.sim.now_ms, self.metadata_offset, self.quorum_hw))
            return on_registered(self, previous, body, error)
        monkeypatch.setattr(KraftBroker, "publish", spy_publish)
        monkeypatch.setattr(KraftBroker, "_on_registered_kraft", spy_registered)
        Simulation(doc, engine_version=version).run()
        monkeypatch.setattr(KraftBroker, "publish", publish)
        monkeypatch.setattr(KraftBroker, "_on_registered_kraft", on_registered)
        at, offset, hw = registered[0]
        assert offset < hw  # registered before its replay reached the high watermark
        first = publishes[0]
        if version is None:
            assert first[0] > at and first[1] >= first[2], (registered, publishes[:3])
        else:
            assert first == (at, offset, hw)


def test_clients_still_see_a_broker_in_controlled_shutdown():
    """KRaftMetadataCache.getAliveBrokerNodes / getPartitionReplicaEndpoints / getAliveBrokerNode
    @ 3.9.0 / 4.1.0 leave out fenced brokers only: while broker 0's controlled shutdown is pending
    (rolling-restart, 10028 ms to its grant) the other brokers' Metadata answers still name it,
    while KIP-841 eligibility (isBrokerShuttingDown) already refuses it. After the grant it is
    fenced and gone from both. Engine 1.4.0 dropped it from the clients' list at once."""
    doc = {**library()["rolling-restart"], "kafka_version": "4.1"}
    for version in (None, "1.4.0"):
        sim = Simulation(doc, engine_version=version)
        sim.advance_to(11000)
        other = sim.brokers[1]
        assert other.md_image.brokers[0]["in_controlled_shutdown"]
        assert 0 not in other.cache_eligible()
        assert (0 in other.live_brokers) == (version is None), version
        sim.advance_to(13000)  # granted and fenced
        assert 0 not in other.live_brokers and 0 not in other.cache_eligible()


def test_a_voter_fetches_again_at_once_after_a_refusal_it_handled(monkeypatch):
    """KafkaRaftClient.handleFetchResponse @ 3.9.0 / 4.1.0: a refusal that names an epoch
    (NOT_LEADER_OR_FOLLOWER from a resigned leader naming itself, FENCED_LEADER_EPOCH) goes
    through maybeHandleCommonResponse, which reports it handled; the RequestManager then counts a
    success, the leader is ready at once and pollFollowerAsVoter fetches again without
    controller.quorum.retry.backoff.ms (20 ms). A transport failure still backs off. Engine
    1.4.0 waited 20 ms after every refusal."""
    from engine.kraft.raft_replication import RaftReplication
    for version, expected in ((None, 0), ("1.4.0", 20)):
        sim = Simulation(_cut_off("4.1"), engine_version=version)
        sim.advance_to(5000)
        follower = next(v for v in sim.quorum.voters.values() if v.role == "follower")
        sends, timers = [], []
        original = RaftReplication._fetch_from_leader
        monkeypatch.setattr(RaftReplication, "_fetch_from_leader",
                            lambda self, _=None: sends.append(sim.now_ms) if self is follower
                            else original(self, _))
        set_timer = follower.set_timer
        monkeypatch.setattr(follower, "set_timer",
                            lambda delay, fn, arg=None: (timers.append(delay), set_timer(delay, fn, arg)))
        refusal = {"error": "NOT_LEADER_OR_FOLLOWER", "epoch": follower.epoch,
                   "leader": follower.leader_id}
        follower.fetch_in_flight = True
        follower._on_fetch_response((follower.epoch, follower.leader_id, sim.now_ms - 4), refusal, None)
        assert (sends, timers) == (([5000], []) if expected == 0 else ([], [20])), version
        # a transport failure (no answer) waits the retry backoff in both engines
        sends.clear(), timers.clear()
        follower.fetch_in_flight = True
        follower._on_fetch_response((follower.epoch, follower.leader_id, sim.now_ms - 4), None,
                                    "NETWORK_EXCEPTION")
        assert (sends, timers) == ([], [20]), version
        if version is None:  # an answer in the request's own millisecond (a 0 ms link): 1 ms
            sends.clear(), timers.clear()
            follower.fetch_in_flight = True
            follower._on_fetch_response((follower.epoch, follower.leader_id, sim.now_ms), refusal,
                                        None)
            assert (sends, timers) == ([], [1])
        monkeypatch.undo()


# -- the second reading of items 10 - 15 (docs/reviews/engine-1.5.0-kraft-second-reading.md) ------

def _running_broker(era="3.9-kraft"):
    sim = Simulation(_cut_off(era))
    sim.advance_to(5000)
    return sim, sim.brokers[2]


def test_a_success_resets_the_failure_count(monkeypatch):
    """BrokerLifecycleManager @ 3.9.0: ``failedAttempts`` counts failures since the last answer
    without error (BrokerHeartbeatResponseEvent sets it to 0), so the backoff after two failures
    is ~200 ms, and after an answer the next failure waits ~100 ms again."""
    sim, broker = _running_broker()
    ok = {"error": None, "is_caught_up": True, "is_fenced": False, "should_shut_down": False}
    delays = _delays(monkeypatch, broker)
    for body, error in ((None, "REQUEST_TIMED_OUT"), (None, "REQUEST_TIMED_OUT"), (ok, None),
                        (None, "REQUEST_TIMED_OUT")):
        broker.hb_in_flight = True
        broker._on_heartbeat(None, body, error)
    monkeypatch.undo()
    assert 98 <= delays[0] <= 102 and 196 <= delays[1] <= 204 and delays[2] == INTERVAL_MS
    assert 98 <= delays[3] <= 102, delays


def test_never_at_once_after_a_failure(monkeypatch):
    """scheduleNextCommunicationAfterFailure @ 3.9.0 / 4.1.0 clears
    ``nextSchedulingShouldBeImmediate``: a communication asked for while the heartbeat was in
    flight (a controlled shutdown beginning) does not skip the failure's wait; after an answer it
    does (the next heartbeat at once)."""
    for era, wait in (("3.9-kraft", (98, 102)), ("4.1", (INTERVAL_MS, INTERVAL_MS))):
        sim, broker = _running_broker(era)
        broker.hb_in_flight, broker.hb_immediate = True, True
        delays = _delays(monkeypatch, broker)
        broker._on_heartbeat(None, None, "REQUEST_TIMED_OUT")
        monkeypatch.undo()
        assert wait[0] <= delays[0] <= wait[1] and broker.hb_immediate is False, (era, delays)
        broker.hb_in_flight, broker.hb_immediate = True, True
        delays = _delays(monkeypatch, broker)
        broker._on_heartbeat(None, {"error": None, "is_caught_up": True, "is_fenced": False,
                                    "should_shut_down": False}, None)
        monkeypatch.undo()
        assert delays == [0], era


def test_the_channel_expires_a_request_counted_from_its_queueing():
    """NodeToControllerRequestThread.generateRequests @ 3.9.0 / 4.1.0: a queued request expires
    (``onTimeout``) once ``retryTimeoutMs`` has passed since it was *queued* (createdTimeMs) —
    3.9 session / 2 = 4500 ms, 4.1 the interval — and with no controller known the thread looks
    again every 100 ms (``pollOnce(100)``)."""
    for era, timeout in (("3.9-kraft", SESSION_MS // 2), ("4.1", INTERVAL_MS)):
        sim, broker = _running_broker(era)
        assert broker.channel_retry_timeout_ms() == timeout
        answers, timers = [], []
        broker.set_timer = lambda delay, fn, arg=None: timers.append(delay)
        callback = lambda ctx, body, error: answers.append(error)  # noqa: E731
        broker.controller_id, broker.raft_leader = -1, None
        now = sim.now_ms
        broker._channel_send((BROKER_HEARTBEAT, {}, callback, None, now - timeout + 1))
        assert (answers, timers) == ([], [100]), era
        broker._channel_send((BROKER_HEARTBEAT, {}, callback, None, now - timeout))
        assert answers == ["REQUEST_TIMED_OUT"], era
