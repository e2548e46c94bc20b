"""The broker actor: lifecycle, ZooKeeper registration, control requests and periodic tasks.

Serving produce/fetch as a leader lives in ``leader.py``; fetching as a follower in
``fetcher.py``; the controller duties of the broker holding ``/controller`` in ``controller.py``;
control requests in ``control_requests.py``; the periodic tasks in ``replica_manager.py``.
``Broker`` stays defined here: snapshots pickle it by this module path.

Lifecycle (docs/scenario-format.md §2): ``start`` (boot or restart: recover the log, read the HW
checkpoint, open a ZooKeeper session, register ``/brokers/ids/<id>``), ``crash`` (``process``:
the page cache survives; ``power``: everything not yet written back to disk is lost), ``pause``
(a GC pause: nothing runs, the ZooKeeper session may expire), controlled ``shutdown``.
"""
from engine.server.control_requests import ControlRequests
from engine.controller.kafka_controller import Controller
from engine.server.fetcher import ReplicaFollower
from engine.server.leader import SERVING_STATES, ReplicaLeader
from engine.core.messages import (ALTER_ISR, CONTROLLED_SHUTDOWN, DISCONNECTED, FETCH, LEADER_AND_ISR, LIST_OFFSETS,
                       INIT_PRODUCER_ID, METADATA, OFFSETS_FOR_LEADER_EPOCH, PRODUCE, STOP_REPLICA,
                       UPDATE_METADATA, ZK_RESPONSE, ZK_WATCH)
from engine.core.node import Node
from engine.server.replica_manager import (ISR_CHANGE_BLACKOUT_MS, ISR_CHANGE_CHECK_MS,  # noqa: F401
                              ISR_CHANGE_MAX_DELAY_MS, ReplicaManagerTasks)
from engine.zookeeper.zookeeper_client import ZkClient


class Broker(ControlRequests, ReplicaManagerTasks, ReplicaLeader, ReplicaFollower, Node):
    def __init__(self, sim, broker_id):
        Node.__init__(self, broker_id, sim)
        self.era = sim.era
        self.config = sim.config
        self.state = "stopped"   # starting | running | shutting_down | stopped | halted | registration_failed
        self.net_state = "refusing"
        self.logs = {}           # key -> ReplicaLog: the disk, survives crashes
        self.hw_checkpoint = {}  # key -> hw: replication-offset-checkpoint, survives crashes
        self.clean_shutdown = True
        self.handlers = {
            ZK_RESPONSE: self._on_zk_response, ZK_WATCH: self._on_zk_watch,
            LEADER_AND_ISR: self.on_leader_and_isr, UPDATE_METADATA: self.on_update_metadata,
            STOP_REPLICA: self.on_stop_replica, CONTROLLED_SHUTDOWN: self._on_controlled_shutdown,
            FETCH: self.on_fetch, OFFSETS_FOR_LEADER_EPOCH: self.on_offsets_for_leader_epoch,
            PRODUCE: self.on_produce, METADATA: self.on_metadata, LIST_OFFSETS: self.on_list_offsets,
            INIT_PRODUCER_ID: self.on_init_producer_id,
        }
        if self.era.alter_isr:
            self.handlers[ALTER_ISR] = self.on_alter_isr
        self.lag_max_ms = self.config["replica.lag.time.max.ms"]
        self._reset_memory()

    def _reset_memory(self):
        """Everything a process holds in memory (lost on a crash)."""
        self.partitions = {}
        self.live_brokers = {}   # metadata cache: broker id -> broker epoch
        self.metadata = {}       # metadata cache: key -> partition state from UpdateMetadata
        self.fetchers = {}
        self.fetch_purgatory = {}
        self.produce_purgatory = {}
        self.controller_id = -1
        self.known_controller_epoch = 0
        self.isr_change_set = {}
        self.last_isr_change_ms = 0
        self.last_isr_propagation_ms = self.scheduler.now_ms
        self.hw_checkpoint_started = False
        self.broker_epoch = -1
        self.producer_state = {}
        self.zk = ZkClient(self, self.config.get("zookeeper.session.timeout.ms", 0))  # none in KRaft eras
        self.zk.on_connected = self._on_zk_session
        self.controller = Controller(self)
        self.shutdown_attempts = 0
        if self.era.alter_isr:  # the AlterIsr manager (docs/model.md §17.3)
            self.alter_isr_unsent = {}     # key -> the partition's queued (or in-flight) item
            self.alter_isr_in_flight = False
            self.alter_isr_tick_at = None
            self.alter_isr_started_ms = self.scheduler.now_ms

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, _=None):
        recovered = self._boot_process()
        self.sim.emit("broker_starting", broker=self.node_id,
                      reason=f"process start: {recovered}")
        self.zk.connect()

    def _boot_process(self):
        """What every broker process start does, ZooKeeper or KRaft: a new incarnation with empty
        memory, the machine back on the network, the logs recovered (returns what recovery said)."""
        self.new_incarnation()
        self._reset_memory()
        self.state = "starting"
        if self.net_state == "silent":
            self.network.machine_booted(self.node_id)
        self.net_state = "up"
        return self._recover_logs()

    def _recover_logs(self):
        """Log recovery: drop epoch-cache entries past the log end; HW = min(checkpoint, LEO)."""
        notes = []
        for key, log in self.logs.items():
            log.truncate_epochs_from_end(log.leo)
            log.hw = min(self.hw_checkpoint.get(key, 0), log.leo)
            notes.append(f"{key} LEO {log.leo} HW {log.hw}")
            self.sim.on_log_recovered(self, key, log)
        kind = "clean shutdown" if self.clean_shutdown else "unclean shutdown, logs recovered"
        self.clean_shutdown = False
        if not notes:
            return "no logs on disk"
        return f"{kind}; HW from replication-offset-checkpoint: " + ", ".join(notes)

    def _on_zk_session(self):
        """A new ZooKeeper session is up: register (again) in /brokers/ids."""
        self.register()

    @property
    def rack(self):
        """broker.rack: the rack the scenario's ``racks`` puts this broker in, or None (§21.1)."""
        return (self.sim.scenario.get("racks") or {}).get(str(self.node_id))

    def register(self):
        path = f"/brokers/ids/{self.node_id}"
        value = {"version": 4, "host": f"broker-{self.node_id}", "port": 9092,
                 "endpoints": [f"PLAINTEXT://broker-{self.node_id}:9092"], "jmx_port": -1,
                 "timestamp": str(self.scheduler.now_ms)}
        if self.rack is not None:   # BrokerIdZNode v4 carries "rack" when broker.rack is set
            value["rack"] = self.rack
        if self.era.broker_epoch:
            # Kafka 2.2+ (KIP-380) KafkaZkClient.CheckedEphemeral: one multi, create(path, null,
            # EPHEMERAL) + setData(path, data, 0): version 1, epoch = the txn's zxid (§9.10c)
            self.zk.call("multi", {"ops": [["create", path, None, True], ["set", path, value, 0]]},
                         self._on_registered, path)
            return
        self.zk.call("create", {"path": path, "value": value, "ephemeral": True},
                     self._on_registered, path)

    def _on_registered(self, path, result, error):
        if error == "NODEEXISTS":
            # A re-sent create may have succeeded: it is ours if our session owns it.
            self.zk.call("get", {"path": path}, self._on_registration_owner, path)
            return
        if error:
            return  # session expired meanwhile: the new session registers again
        self._registered((result["results"][1] if "results" in result else result["stat"])["czxid"])

    def _on_registration_owner(self, path, result, error):
        if not error and result["stat"]["ephemeral_owner"] == self.zk.session_id:
            self._registered(result["stat"]["czxid"])
            return
        owner = result["stat"]["ephemeral_owner"] if not error else None
        if error == "NONODE":
            self.register()
            return
        self.sim.emit("broker_stopped", broker=self.node_id, state="registration_failed",
                      reason=f"{path} is still held by session 0x{owner or 0:x} of the previous "
                             f"process (NodeExistsException); it goes when that session expires "
                             f"after zookeeper.session.timeout.ms "
                             f"{self.config['zookeeper.session.timeout.ms']}")
        self._stop("registration_failed", close_session=True)

    def _registered(self, czxid):
        first = self.state == "starting"
        self.broker_epoch = czxid
        if first:
            self.state = "running"
            self.sim.emit("broker_started", broker=self.node_id, broker_epoch=czxid,
                          reason=f"registered /brokers/ids/{self.node_id} (broker epoch = czxid {czxid})")
            self._start_tasks()
        else:
            self.sim.emit("broker_registered", broker=self.node_id, broker_epoch=czxid,
                          reason=f"re-registered /brokers/ids/{self.node_id} in a new ZooKeeper "
                                 f"session (broker epoch {czxid})")
        self.controller.elect()

    def _start_tasks(self):
        # KafkaScheduler tasks start with delay 0 at broker start (§2.1): phase is start-relative.
        period = self.lag_max_ms // self.era.isr_expiration_divisor
        self.set_timer(0, self._isr_expiration_task, period)
        if self.era.alter_isr:
            self.alter_isr_started_ms = self.scheduler.now_ms  # "send-alter-isr" phase (2.7)
        else:
            self.set_timer(0, self._isr_change_propagation_task)
        self.set_timer(self.config["sim.os.dirty.writeback.interval.ms"], self._writeback_task)
        if self.config["log.flush.interval.ms"]:
            self.set_timer(self.config["log.flush.interval.ms"], self._flush_task)

    def crash(self, mode):
        lost = {}
        if mode == "power":
            for key, log in self.logs.items():
                before = log.leo
                if log.truncate_to(log.flushed_offset):
                    lost[key] = (log.flushed_offset, before)
        if mode == "power":
            self.power_cycles += 1
        else:
            self._fail_parked_requests()  # a powered-off machine closes no sockets
        self.clean_shutdown = False
        self._stop("stopped", close_session=False, net_state="silent" if mode == "power" else "refusing")
        for key, (to, before) in lost.items():
            topic, part = self.sim.split_key(key)
            self.sim.emit("truncation", topic=topic, partition=part, broker=self.node_id,
                          from_offset=before, to_offset=to, cause="power_failure",
                          reason=f"power failure: offsets {to}..{before - 1} were never written "
                                 f"back from the page cache (flushed up to {to})")
            self.sim.on_truncated(self, key)

    def _fail_parked_requests(self):
        """A dying process closes its sockets: clients with parked requests see a disconnect."""
        seen = set()
        for table in (self.produce_purgatory, self.fetch_purgatory):
            for ops in table.values():
                for op in ops:
                    if not op.done and id(op) not in seen:
                        seen.add(id(op))
                        op.done = True
                        if self.net_state == "up":
                            self.reply(op.env, {"error": DISCONNECTED})

    def _stop(self, state, close_session, net_state="refusing"):
        if close_session:
            self.zk.close()
        self.state = state
        self.new_incarnation()
        self._reset_memory()
        self.net_state = net_state

    def shutdown(self):
        """Controlled shutdown (§9.8): ask the controller to move leadership away, then stop."""
        if not self.config["controlled.shutdown.enable"]:
            self._finish_shutdown("controlled.shutdown.enable=false")
            return
        self.state = "shutting_down"
        self.shutdown_attempts = 0
        self._attempt_controlled_shutdown()

    def _attempt_controlled_shutdown(self, _=None):
        if self.state != "shutting_down":
            return
        self.shutdown_attempts += 1
        target = self.controller_id
        if target < 0:
            self._controlled_shutdown_failed("no controller known")
            return
        self.request(target, CONTROLLED_SHUTDOWN,
                     {"broker": self.node_id, "broker_epoch": self.broker_epoch},
                     self.config["controller.socket.timeout.ms"], self._on_controlled_shutdown_response)

    def _on_controlled_shutdown_response(self, _ctx, body, error):
        if self.state != "shutting_down":
            return
        error = error or (body or {}).get("error")
        remaining = (body or {}).get("partitions_remaining", [])
        if not error and not remaining:
            self._finish_shutdown(f"controlled shutdown succeeded after {self.shutdown_attempts} attempt(s)")
            return
        self._controlled_shutdown_failed(error or f"still leads {', '.join(remaining)}")

    def _controlled_shutdown_failed(self, why):
        retries = self.config["controlled.shutdown.max.retries"]
        if self.shutdown_attempts >= retries:
            self._finish_shutdown(f"controlled shutdown failed {self.shutdown_attempts} times "
                                  f"({why}); proceeding to unclean shutdown of the process")
            return
        self.set_timer(self.config["controlled.shutdown.retry.backoff.ms"],
                       self._attempt_controlled_shutdown)

    def _finish_shutdown(self, reason):
        for log in self.logs.values():
            log.flush()
        self.checkpoint_hw()
        self.clean_shutdown = True
        self.sim.emit("broker_stopped", broker=self.node_id, state="stopped",
                      reason=f"{reason}; logs flushed, HW checkpointed, ZooKeeper session closed")
        self._fail_parked_requests()
        self._stop("stopped", close_session=True)

    def halt(self, reason):
        """Runtime.halt(1): the process dies on the spot (§7, <= 2.0 truncation guard)."""
        self.sim.emit("broker_stopped", broker=self.node_id, state="halted", reason=reason)
        self._fail_parked_requests()
        self.clean_shutdown = False
        self._stop("halted", close_session=False)

    @property
    def running(self):
        return self.state in SERVING_STATES

    # -- ZooKeeper --------------------------------------------------------------------------------
    def _on_zk_response(self, env):
        self.zk.on_response(env)

    def _on_zk_watch(self, env):
        body = env.body
        if body["session"] != self.zk.session_id:
            return
        self.controller.on_watch(body["type"], body["path"])

    def on_zk_disconnected(self, silent_ms):
        self.sim.emit("zk_disconnected", broker=self.node_id,
                      reason=f"nothing heard from ZooKeeper for {silent_ms} ms > 2/3 of "
                             f"zookeeper.session.timeout.ms {self.config['zookeeper.session.timeout.ms']}")

    def on_zk_reconnected(self):
        self.sim.emit("zk_reconnected", broker=self.node_id,
                      reason=f"ZooKeeper answered again; session 0x{self.zk.session_id:x} still valid")

    def on_zk_session_expired(self):
        """Learnt on reconnection. The controller resigns; the broker opens a new session and
        registers again. Partition leadership is *not* touched: until a LeaderAndIsr says
        otherwise, a leader keeps acting as leader (a zombie)."""
        self.sim.emit("zk_session_lost", broker=self.node_id,
                      reason="ZooKeeper says SESSIONEXPIRED: open a new session, re-register, re-elect")
        self.controller.resign("own ZooKeeper session expired")
        self.zk.connect()

    # -- view ----------------------------------------------------------------------------------------
    def view(self):
        return {"state": self.state, "paused": self.paused, "net_state": self.net_state,
                "zk": self.zk.view(), "broker_epoch": self.broker_epoch,
                "controller": self.controller.active, "controller_epoch": self.controller.epoch,
                "known_controller_epoch": self.known_controller_epoch,
                "isr_change_set": list(self.isr_change_set),
                "fetchers": {str(k[0]): sorted(f.partitions) for k, f in self.fetchers.items()}}
