"""Broker registration, heartbeats, fencing and controlled shutdown on the active controller
(``ClusterControlManager``, ``BrokerHeartbeatManager``, docs/model.md §20.3, §20.4).

The broker epoch is the offset of the broker's RegisterBrokerRecord (``CCM.registerBroker``).
A broker is fenced when no heartbeat arrived for ``broker.session.timeout.ms``: in 3.9 exactly
then (a deferred event at the oldest contact + session, ``BHM.nextCheckTimeNs``), in 4.1 at the
next run of a periodic check every session/8 ms (KAFKA-17793, ``QC.maybeFenceStaleBrokerPeriodNs``).
Each heartbeat runs ``calculateNextBrokerState``: unfence once the broker has applied its own
registration record, begin a controlled shutdown (its leaderships move away) when it asks to,
and grant SHUTDOWN_NOW when it leads nothing and every active broker has caught up with the
records that began the shutdown.
"""
from engine.kraft.heartbeat_tracker import HeartbeatTracker
from engine.kraft.metadata_image import BROKER_CHANGE, REGISTER_BROKER

#: PeriodicTask.DEFAULT_IMMEDIATE_PERIOD_NS @ 4.1.0: a task that has more to do runs again this soon
IMMEDIATE_PERIOD_MS = 10


class BrokerControl:
    """Mixin of ``QuorumController``."""
    #: 4.1 from engine 1.4.0: the sessions of (broker, epoch) pairs (``BrokerHeartbeatTracker``)
    tracker = None

    def new_tracker(self):
        if self.tracked_sessions() and self.sim.rules_1_4:
            self.tracker = HeartbeatTracker(self.config["broker.session.timeout.ms"])

    # -- registration ----------------------------------------------------------------------------------
    def on_broker_registration(self, env):
        body = env.body
        broker = body["broker"]
        reg = self.image.brokers.get(broker)
        if reg is not None and reg.get("incarnation") != body["incarnation"] \
                and (not reg["fenced"] or self.tracked_sessions()) and self._session_valid(broker):
            self.sim.emit("registration_rejected", broker=broker, error="DUPLICATE_BROKER_REGISTRATION",
                          reason=f"broker {broker} registers a new incarnation while the previous "
                                 f"one still has a valid session (it expires "
                                 f"broker.session.timeout.ms after its last heartbeat)")
            self.voter.reply(env, {"error": "DUPLICATE_BROKER_REGISTRATION"})
            return
        clean = reg is None or body.get("previous_broker_epoch") == reg["broker_epoch"]
        if reg is not None and self.era.reregister_shutdown:
            # 4.x handleBrokerShutdown: out of every ISR; after an unclean shutdown with ELR on,
            # out of every ELR too (it may have lost committed records)
            unclean = self.elr_enabled() and not clean
            self.remove_from_isrs(broker, f"broker {broker} re-registered after a"
                                          f"{'n unclean' if not clean else ' clean'} shutdown",
                                  unclean_shutdown=unclean)
        epoch = self.voter.next_offset()   # the offset of its RegisterBrokerRecord
        record = {"broker": broker, "broker_epoch": epoch, "fenced": True,
                  "in_controlled_shutdown": False, "clean": clean, "incarnation": body["incarnation"]}
        if body.get("rack") is not None:   # RegisterBrokerRecord.Rack (docs/model.md §21.1)
            record["rack"] = body["rack"]
        self.write(REGISTER_BROKER, record)
        if self.tracked_sessions():
            self.contact.pop(broker, None)  # the new epoch has no session until its first heartbeat
        else:
            self.touch(broker)
        self.reschedule_fence_check()
        self.reply_after_commit(env, {"error": None, "broker_epoch": epoch})

    def tracked_sessions(self):
        """4.1 (KAFKA-17793): a session is the ``BrokerHeartbeatTracker`` entry of (id, epoch), its
        last heartbeat, fenced or not; the activation tracks only unfenced brokers, a registration
        nobody (``ClusterControlManager.activate`` / ``trackBrokerHeartbeat`` @ 4.1.0). 3.9's
        ``BrokerHeartbeatManager.hasValidSession`` is false for a fenced broker. Engine 1.2.0
        used 3.9's rule in both eras."""
        return bool(self.era.fence_check_period_divisor) and self.sim.rules_1_3

    def touch(self, broker):
        """``BrokerHeartbeatManager.touch``: a new last contact. The dict keeps the order of the
        last touches, which breaks ties between equal contact times as 3.9's unfenced list does
        (``BrokerHeartbeatStateList.add`` puts a broker after those with the same time)."""
        self.contact.pop(broker, None)
        self.contact[broker] = self.now_ms

    def _session_valid(self, broker):
        if self.tracker is not None:  # hasValidSession(id, epoch of the registration) @ 4.1.0
            epoch = self.image.brokers[broker]["broker_epoch"]
            return self.tracker.has_valid_session(broker, epoch, self.now_ms)
        last = self.contact.get(broker)
        return last is not None and last + self.config["broker.session.timeout.ms"] >= self.now_ms

    # -- heartbeats (BrokerHeartbeatManager.calculateNextBrokerState) ------------------------------------
    def on_broker_heartbeat(self, env):
        body = env.body
        broker = body["broker"]
        if self.tracker is not None:  # trackBrokerHeartbeat, before the epoch is looked at
            self.tracker.update(broker, body["broker_epoch"], self.now_ms)
        reg = self.image.brokers.get(broker)
        if reg is None or reg["broker_epoch"] != body["broker_epoch"]:
            self.voter.reply(env, {"error": "STALE_BROKER_EPOCH"})
            return
        self.touch(broker)
        self.reported[broker] = body["current_metadata_offset"]
        self.reschedule_fence_check()
        should_shut_down = False
        if body["want_shut_down"]:
            should_shut_down = self._controlled_shutdown(broker, reg)
        elif reg["fenced"] and not body["want_fence"] \
                and body["current_metadata_offset"] >= reg["offset"]:
            self._write_broker_change(broker, reg, fenced=-1,
                                      reason=f"heartbeat from broker {broker}: it has applied its "
                                             f"RegisterBrokerRecord (offset {reg['offset']}) and "
                                             f"wants to be unfenced")
            self.elect_leaderless(broker, f"broker {broker} unfenced")
            self.maybe_create_topics()
        self.reply_after_commit(env, {"error": None, "is_caught_up": body["current_metadata_offset"]
                                      >= reg["offset"], "is_fenced": self.image.brokers[broker]["fenced"],
                                      "should_shut_down": should_shut_down})

    def _controlled_shutdown(self, broker, reg):
        if reg["fenced"]:
            return True
        if not reg["in_controlled_shutdown"]:
            if not self.leads_anything(broker):
                self.fence(broker, f"broker {broker} asked to shut down and leads nothing", shutdown=True)
                return True
            self._write_broker_change(broker, reg, in_controlled_shutdown=1,
                                      reason=f"heartbeat from broker {broker} with WantShutDown: "
                                             f"its leaderships move away")
            self.remove_from_isrs(broker, f"controlled shutdown of broker {broker}")
            self.cs_offset[broker] = self.voter.next_offset() - 1
            return False
        lowest = min([off for b, off in self.reported.items()
                      if b != broker and self.image.is_active(b)], default=None)
        if self.leads_anything(broker) or (lowest is not None and lowest < self.cs_offset.get(broker, 0)):
            return False
        self.sim.emit("controlled_shutdown_granted", broker=broker,
                      reason=f"broker {broker} leads nothing and every active broker has applied "
                             f"offset {self.cs_offset.get(broker, 0)}: SHUTDOWN_NOW")
        self.fence(broker, f"controlled shutdown of broker {broker} granted", shutdown=True)
        return True

    def _write_broker_change(self, broker, reg, reason, fenced=0, in_controlled_shutdown=None):
        fields = {"broker": broker, "broker_epoch": reg["broker_epoch"], "fenced": fenced,
                  "reason": reason}
        if in_controlled_shutdown is not None:
            fields["in_controlled_shutdown"] = in_controlled_shutdown
        return self.write(BROKER_CHANGE, fields)

    # -- fencing (handleBrokerFenced) ------------------------------------------------------------------
    def fence(self, broker, reason, shutdown=False):
        reg = self.image.brokers[broker]
        # handleBrokerFenced; the ISR removals of a controlled shutdown say so (it is no lost
        # heartbeat); engine 1.2.0 said "broker N fenced" for both
        why = f"broker {broker} fenced"
        if shutdown and self.sim.rules_1_3:
            why = f"controlled shutdown of broker {broker}: fenced as it stops"
        self.remove_from_isrs(broker, why)
        self._write_broker_change(broker, reg, fenced=1, reason=reason)
        self.cs_offset.pop(broker, None)

    def start_fence_checks(self):
        divisor = self.era.fence_check_period_divisor
        if divisor:
            period = max(1, self.config["broker.session.timeout.ms"] // divisor)
            self.voter.set_timer(period, self._periodic_fence_check, period)
        else:
            self.fence_check_at = None
            self.reschedule_fence_check()

    def _periodic_fence_check(self, period):
        if not self._alive():
            return
        if not self.sim.rules_1_3:  # engine 1.2.0: every stale broker at once, the period kept
            self._fence_stale(strict=True)
            self.voter.set_timer(period, self._periodic_fence_check, period)
            return
        # maybeFenceOneStaleBroker fences one broker per run and answers "more to do": the task
        # runs again after PeriodicTask's immediate period, then every period from there
        if self.tracker is not None:
            fenced = self._remove_one_expired()
        else:
            fenced = self._fence_stale(strict=True, one=True)
        self.voter.set_timer(IMMEDIATE_PERIOD_MS if fenced else period, self._periodic_fence_check,
                             period)

    def reschedule_fence_check(self):
        """3.9: one deferred event at the oldest unfenced broker's last contact + session."""
        if self.era.fence_check_period_divisor:
            return
        session = self.config["broker.session.timeout.ms"]
        times = [t for b, t in self.contact.items()
                 if b in self.image.brokers and not self.image.brokers[b]["fenced"]]
        if not times:
            return
        at = min(times) + session
        if self.fence_check_at is not None and self.fence_check_at <= at:
            return
        self.fence_check_at = at
        self.voter.set_timer(max(0, at - self.now_ms), self._exact_fence_check, at)

    def _exact_fence_check(self, at):
        if not self._alive() or at != self.fence_check_at:
            return
        self.fence_check_at = None
        self._fence_stale(strict=False)
        self.reschedule_fence_check()

    def _remove_one_expired(self):
        """``ReplicationControlManager.maybeFenceOneStaleBroker`` @ 4.1.0 (engine 1.4.0): the first
        expired (broker, epoch) pair leaves the tracker; a pair of a previous epoch (or of an
        unknown broker) writes nothing, the current epoch's is fenced — already fenced or not, so
        a broker fenced by its controlled shutdown gets a second fence record once its last
        heartbeat is a session old (``handleBrokerFenced`` does not look). Either way the task
        has more to do. Engine 1.3.0 skipped fenced brokers and iterated by id."""
        key = self.tracker.remove_expired(self.now_ms)
        if key is None:
            return False
        broker, epoch = key
        reg = self.image.brokers.get(broker)
        if reg is not None and reg["broker_epoch"] == epoch:
            last = self.contact.get(broker)
            already = (f" (broker epoch {epoch} is already fenced: 4.1 writes the fence record "
                       f"again)") if reg["fenced"] else ""
            self.operation(self.fence, broker, f"no heartbeat from broker {broker} since {last} ms: "
                                               f"broker.session.timeout.ms "
                                               f"{self.tracker.session_ms} expired{already}")
        return True

    def _stale_order(self):
        """3.9 (engine 1.4.0): oldest contact first, ties in the order of the last touches
        (``findOneStaleBroker`` takes the head of the unfenced list, sorted by last contact
        time, one broker per event, the next event at once). Engine 1.3.0: by broker id."""
        if not self.sim.rules_1_4:
            return sorted(self.contact)
        return sorted(self.contact, key=self.contact.__getitem__)

    def _fence_stale(self, strict, one=False):
        """Fence the stale brokers (only the first with ``one``); True if any was fenced."""
        session = self.config["broker.session.timeout.ms"]
        fenced = False
        for broker in self._stale_order():
            reg = self.image.brokers.get(broker)
            last = self.contact[broker]
            expired = last + session < self.now_ms if strict else last + session <= self.now_ms
            if reg is not None and not reg["fenced"] and expired:
                # maybeFenceOneStaleBroker: one operation, one batch, per stale broker
                self.operation(self.fence, broker, f"no heartbeat from broker {broker} since "
                                                   f"{last} ms: broker.session.timeout.ms {session} expired")
                fenced = True
                if one:
                    break
        return fenced
