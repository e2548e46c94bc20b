"""The broker of the KRaft eras (docs/model.md §20.3, §20.4, §20.7): no ZooKeeper session; it
registers with the active controller (``BrokerLifecycleManager``), heartbeats to it, learns
metadata by fetching the log (``metadata_fetcher``) and shuts down through heartbeats.

Everything a partition does (produce, fetch, ISR proposals over AlterPartition, high watermark)
is the ``Broker`` of the ZooKeeper eras, unchanged. Heartbeats are sent one at a time, the next
one ``broker.heartbeat.interval.ms`` after an answer (10 ms while starting, 50 ms while shutting
down; engine 1.5.0 by ``BrokerState``, ``_after_success_ms``); the request times out after
session/2 (3.9, KAFKA-14392) or the interval (4.1, KAFKA-19294). From engine 1.5.0 registrations
and heartbeats go through ``lifecycle_channel`` (re-sent after NOT_CONTROLLER, the failure backoff).
A broker that cannot reach the controllers does not fence itself: it keeps serving (§20.7).

Its listeners open only once the controller has unfenced it (``BrokerServer.startup`` @ 3.9.0 /
4.1.0: the initial catch-up, the first metadata publish, ``setReadyToUnfence``, and only then
``SocketServer.enableRequestProcessing``, whose ``Acceptor.start`` opens the port): until then
clients and peers find the connection refused, while the broker itself already fetches metadata,
heartbeats and replicates.
"""
from engine.server.broker import Broker
from engine.core.messages import ALTER_PARTITION, BROKER_HEARTBEAT, BROKER_REGISTRATION, DISCONNECTED
from engine.kraft.combined import start_voter, stop_voter
from engine.kraft.lifecycle_channel import LifecycleChannel
from engine.kraft.metadata_fetcher import MetadataFetcher
from engine.kraft.metadata_image import MetadataImage

NO_CONTROLLER_BACKOFF_MS = 100
STARTING_HEARTBEAT_MS = 10
SHUTDOWN_HEARTBEAT_MS = 50
#: BrokerServer.shutdown waits this long for the controller to grant the controlled shutdown.
CONTROLLED_SHUTDOWN_WAIT_MS = 300000


class KraftBroker(LifecycleChannel, MetadataFetcher, Broker):
    #: engine 1.5.0: the token of the one scheduled "communication" (a newer one replaces it)
    hb_token = 0
    #: nextSchedulingShouldBeImmediate: asked to communicate while a heartbeat was in flight
    hb_immediate = False
    #: gotControlledShutdownResponse (engine 1.5.0)
    cs_answered = False
    #: combined mode (§20.11): the QuorumVoter that lives in this broker's process
    colocated_voter = None
    #: the observer's quorum-state file (engine 1.4.0): the Raft epoch and leader it knew last
    disk_raft_epoch = 0
    disk_raft_leader = None

    def __init__(self, sim, broker_id):
        self.disk_broker_epoch = -1  # the clean-shutdown file: the epoch of a clean stop
        Broker.__init__(self, sim, broker_id)
        self.open_handlers = self.handlers
        #: every request a listener would take, refused while the listeners are closed
        self.closed_handlers = {kind: self._refuse for kind in self.handlers}

    def _reset_memory(self):
        Broker._reset_memory(self)
        self.md_image = MetadataImage()
        self.md_touched = {}
        self.md_brokers_touched = False
        self.metadata_offset = 0
        self.md_in_flight = False
        self.published_offset = -1
        self.md_caught_up = False
        self.eligible_brokers = None
        self.md_voter_index = 0
        self.raft_leader = None
        self.raft_epoch = -1
        self.quorum_hw = 0
        self.fenced = True
        self.hb_in_flight = False
        self.hb_immediate = False
        self.cs_answered = False
        self.lifecycle_failures = 0     # a new BrokerLifecycleManager (engine 1.5.0)
        self.ever_unfenced = False
        self.ready_to_unfence = False   # BrokerLifecycleManager.readyToUnfence (engine 1.4.0)

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, _=None):
        start_voter(self)  # combined mode: the ControllerServer starts before the BrokerServer
        previous = self.disk_broker_epoch if self.clean_shutdown else -1
        recovered = self._boot_process()
        if self.sim.rules_1_3:
            self.handlers = self.closed_handlers  # engine 1.2.0: served once registered
        if self.sim.rules_1_4 and self.colocated_voter is None:
            # QuorumState.initialize: an observer starts in the epoch of its quorum-state file
            # (0 on a new disk), following the leader it names; engine 1.3.0 started at -1.
            # (Combined mode: the broker reads the local voter's log and leader, §20.11.)
            self.raft_epoch, self.raft_leader = self.disk_raft_epoch, self.disk_raft_leader
        self.disk_broker_epoch = -1
        self.sim.emit("broker_starting", broker=self.node_id, reason=f"process start: {recovered}")
        self.fetch_metadata()
        self._register(previous)

    def _register(self, previous):
        if self.state != "starting":
            return
        body = {"broker": self.node_id, "incarnation": f"{self.node_id}.{self.incarnation}",
                "previous_broker_epoch": previous}
        if self.rack is not None:   # BrokerRegistrationRequest.Rack (§21.1)
            body["rack"] = self.rack
        if self.sim.rules_1_5:  # the lifecycle channel re-sends it to a new controller itself
            self.send_to_controller(BROKER_REGISTRATION, body, self._on_registered_kraft, previous)
            return
        if self.controller_id < 0:
            self.set_timer(NO_CONTROLLER_BACKOFF_MS, self._register, previous)
            return
        self.request(self.controller_id, BROKER_REGISTRATION, body,
                     self.config["controller.quorum.request.timeout.ms"], self._on_registered_kraft,
                     previous)

    def _on_registered_kraft(self, previous, body, error):
        if self.state != "starting":
            return
        error = error or (body or {}).get("error")
        if error and self.sim.rules_1_5:
            self.set_timer(self.failure_backoff_ms(), self._register, previous)
            return
        if error:  # engine 1.4.0: NOT_CONTROLLER and timeouts after 100 ms, others the interval
            if error == "NOT_CONTROLLER":
                self.controller_id = -1
            delay = NO_CONTROLLER_BACKOFF_MS if error in ("NOT_CONTROLLER", "REQUEST_TIMED_OUT") \
                else self.config["broker.heartbeat.interval.ms"]
            self.set_timer(delay, self._register, previous)
            return
        self.broker_epoch = body["broker_epoch"]
        self.lifecycle_failures = 0
        self.state = "running"
        self.sim.emit("broker_started", broker=self.node_id, broker_epoch=self.broker_epoch,
                      reason=f"registered with controller {self.controller_id}: broker epoch "
                             f"{self.broker_epoch} (the offset of its RegisterBrokerRecord); fenced "
                             f"until it has applied that record")
        self._start_tasks()
        if self.md_caught_up or not self.sim.rules_1_5:
            # engine 1.5.0: the first publish waits for the initial catch-up (stillNeedToCatchUp);
            # 1.4.0 published here whether or not the broker had caught up
            self.publish()
        self._heartbeat()

    def _refuse(self, env):
        """The port is not open yet (Acceptor.start has not run): connection refused."""
        self.reply(env, {"error": DISCONNECTED})

    # -- heartbeats (BrokerLifecycleManager) ---------------------------------------------------------
    def _heartbeat(self, _=None):
        if not self.running or self.hb_in_flight:
            return
        if self.controller_id < 0 and not self.sim.rules_1_5:
            self.set_timer(NO_CONTROLLER_BACKOFF_MS, self._heartbeat)
            return
        interval = self.config["broker.heartbeat.interval.ms"]
        timeout = interval if self.era.heartbeat_timeout_is_interval \
            else self.config["broker.session.timeout.ms"] // 2
        if self.sim.rules_1_4:
            want_fence = not self.ready_to_unfence  # sendBrokerHeartbeat: setWantFence(!readyToUnfence)
        else:  # engine 1.3.0: as soon as the broker had applied its own registration record
            want_fence = self.metadata_offset <= self.broker_epoch
        # engine 1.5.0: lastAppliedOffset, the last published image's offset
        # (BrokerServer passes loader.lastAppliedOffset @ 3.9.0 / 4.1.0); 1.4.0 the last record applied
        offset = self.published_offset if self.sim.rules_1_5 else self.metadata_offset - 1
        body = {"broker": self.node_id, "broker_epoch": self.broker_epoch,
                "current_metadata_offset": offset,
                "want_fence": want_fence, "want_shut_down": self.state == "shutting_down"}
        self.hb_in_flight = True
        if self.sim.rules_1_5:
            self.send_to_controller(BROKER_HEARTBEAT, body, self._on_heartbeat, None)
            return
        self.request(self.controller_id, BROKER_HEARTBEAT, body, timeout, self._on_heartbeat, None)

    def _on_heartbeat(self, _ctx, body, error):
        self.hb_in_flight = False
        if not self.running:
            return
        error = error or (body or {}).get("error")
        if self.sim.rules_1_5:
            self._on_heartbeat_answer(body, error)
            return
        if error == "NOT_CONTROLLER":
            self.controller_id = (body or {}).get("leader") if (body or {}).get("leader") is not None else -1
        elif error is None:
            self.fenced = body["is_fenced"]
            if self.sim.rules_1_3 and not self.fenced and not self.ever_unfenced:
                self.handlers = self.open_handlers  # initialUnfenceFuture: enableRequestProcessing
            self.ever_unfenced = self.ever_unfenced or not self.fenced
            if body["should_shut_down"] and self.state == "shutting_down":
                self._finish_shutdown("the controller granted the controlled shutdown")
                return
            if self._becomes_ready_to_unfence(body):
                self.set_timer(0, self._heartbeat)  # SetReadyToUnfenceEvent: the next one at once
                return
        if self.state == "shutting_down":
            delay = SHUTDOWN_HEARTBEAT_MS
        elif not self.ever_unfenced:
            delay = STARTING_HEARTBEAT_MS
        else:
            delay = self.config["broker.heartbeat.interval.ms"]
        self.set_timer(delay, self._heartbeat)

    def _on_heartbeat_answer(self, body, error):
        """Engine 1.5.0, ``BrokerHeartbeatResponseEvent`` @ 3.9.0 / 4.1.0: an error (NOT_CONTROLLER
        never gets here, the channel re-sent it) waits the failure backoff; an answer resets it."""
        if error:
            self._schedule_communication(self.failure_backoff_ms(), failure=True)
            return
        self.lifecycle_failures = 0
        self._take_answer(body)
        if body["should_shut_down"] and self.state == "shutting_down":
            self._finish_shutdown("the controller granted the controlled shutdown")
            return
        if self._becomes_ready_to_unfence(body):
            self._schedule_communication(0)  # SetReadyToUnfenceEvent: the next one at once
            return
        self._schedule_communication(self._after_success_ms())

    def _after_success_ms(self):
        """The delay after an answer, by ``BrokerState``: STARTING (not yet caught up) 10 ms;
        RECOVERY (caught up, still fenced) and RUNNING the interval; PENDING_CONTROLLED_SHUTDOWN
        50 ms after its first answer, the interval after later ones (``gotControlledShutdownResponse``).
        Engine 1.4.0 kept 10 ms until the first unfencing and 50 ms through the whole shutdown."""
        interval = self.config["broker.heartbeat.interval.ms"]
        if self.state == "shutting_down":
            first, self.cs_answered = not self.cs_answered, True
            return SHUTDOWN_HEARTBEAT_MS if first else interval
        return interval if self.ready_to_unfence else STARTING_HEARTBEAT_MS

    def _take_answer(self, body):
        self.fenced = body["is_fenced"]
        if self.sim.rules_1_3 and not self.fenced and not self.ever_unfenced:
            self.handlers = self.open_handlers  # initialUnfenceFuture: enableRequestProcessing
        self.ever_unfenced = self.ever_unfenced or not self.fenced

    def _schedule_communication(self, delay, failure=False):
        """``scheduleNextCommunication``: one deferred "communication" event, a new one replacing
        it; at once if asked while the last heartbeat was in flight, never at once after a failure."""
        if self.hb_immediate and not failure:
            delay = 0
        self.hb_immediate = False
        self.hb_token += 1
        self.set_timer(delay, self._communicate, self.hb_token)

    def _communicate(self, token):
        if token == self.hb_token:
            self._heartbeat()

    def _communicate_now(self):
        """``scheduleNextCommunicationImmediately`` from an event; ``CommunicationEvent`` finds a
        heartbeat in flight and sends the next one as soon as it is answered."""
        if self.hb_in_flight:
            self.hb_immediate = True
        else:
            self._schedule_communication(0)

    def _becomes_ready_to_unfence(self, body):
        """Engine 1.4.0, ``BrokerServer.startup`` @ 3.9.0 / 4.1.0: the first heartbeat answer with
        ``isCaughtUp`` completes ``initialCatchUpFuture``; with the first metadata publish done
        (engine 1.4.0: the broker published at its registration; 1.5.0: the caught-up answer needs a
        published offset, so the publish came first) the server calls ``setReadyToUnfence``, whose
        event sends the next heartbeat at once, now asking to be unfenced. So the broker asks one
        heartbeat after the controller saw it caught up; engine 1.3.0 asked in the first heartbeat
        sent after it had applied its registration record."""
        if not self.sim.rules_1_4 or self.ready_to_unfence or not body["is_caught_up"]:
            return False
        self.ready_to_unfence = True
        return True

    # -- controlled shutdown (through heartbeats) ------------------------------------------------------
    def shutdown(self):
        self.state = "shutting_down"
        self.sim.emit("controlled_shutdown_requested", broker=self.node_id,
                      reason=f"broker {self.node_id} begins a controlled shutdown: its next heartbeat "
                             f"says WantShutDown")
        self.set_timer(CONTROLLED_SHUTDOWN_WAIT_MS, self._shutdown_wait_over)
        if self.sim.rules_1_5:
            self._communicate_now()  # BeginControlledShutdownEvent
            return
        self._heartbeat()

    def _shutdown_wait_over(self, _=None):
        if self.state == "shutting_down":
            self._finish_shutdown("the controller did not grant the controlled shutdown in time")

    def _finish_shutdown(self, reason):
        for log in self.logs.values():
            log.flush()
        self.checkpoint_hw()
        self.clean_shutdown = True
        epoch = self.broker_epoch
        self.sim.emit("broker_stopped", broker=self.node_id, state="stopped",
                      reason=f"{reason}; logs flushed, HW checkpointed, broker epoch {epoch} written "
                             f"to the clean-shutdown file")
        self._fail_parked_requests()
        self._stop("stopped", close_session=False)
        self.disk_broker_epoch = epoch

    def _stop(self, state, close_session, net_state="refusing"):
        # every transition of the observer's QuorumState is durable: the file holds the last one
        self.disk_raft_epoch, self.disk_raft_leader = max(self.raft_epoch, 0), self.raft_leader
        self.state = state
        self.new_incarnation()
        self._reset_memory()
        self.net_state = net_state
        stop_voter(self, "power" if net_state == "silent" else "process")

    # -- one JVM: a pause stops the colocated controller too (combined mode) ------------------------
    def pause(self):
        Broker.pause(self)
        if self.colocated_voter is not None and self.colocated_voter.running:
            self.colocated_voter.pause()

    def resume(self):
        voter = self.colocated_voter
        if voter is not None and voter.paused:
            voter.resume()
        Broker.resume(self)

    # -- AlterPartition goes to the active controller ------------------------------------------------
    def _send_alter_isr(self, req):
        if not self.running:
            return
        if self.controller_id < 0:
            self.set_timer(NO_CONTROLLER_BACKOFF_MS, self._send_alter_isr, req)
            return
        self.request(self.controller_id, ALTER_PARTITION, req[0],
                     self.config["controller.quorum.request.timeout.ms"], self._on_alter_isr_response, req)

    # -- view ----------------------------------------------------------------------------------------
    def view(self):
        return {"state": self.state, "paused": self.paused, "net_state": self.net_state,
                "broker_epoch": self.broker_epoch, "metadata_offset": self.metadata_offset,
                "raft_leader": self.raft_leader, "fenced_locally": self.fenced,
                "fetchers": {str(k[0]): sorted(f.partitions) for k, f in self.fetchers.items()}}
