"""The follower side: becoming follower, truncation per era, and the replica fetcher loop (§7, §8).

One fetcher per (leader broker, fetcher id) — ``num.replica.fetchers`` threads per source broker
— sends one Fetch for all its partitions, processes the answer and immediately sends the next;
a leader with nothing new parks the fetch for up to ``replica.fetch.wait.max.ms``. Partitions in
the *truncating* state first reconcile their log with the leader (OffsetsForLeaderEpoch).
"""
from engine.server.leader import SERVING_STATES
from engine.core.messages import FETCH, LIST_OFFSETS, OFFSETS_FOR_LEADER_EPOCH
from engine.server.partition import (hw_truncation_offset, kip101_truncation_offset, kip279_truncation)

FLUSH_INTERVAL = "log.flush.interval.messages"
FETCH_ERRORS_THAT_WAIT = ("NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH",
                          "UNKNOWN_TOPIC_OR_PARTITION")


class FetchState:
    #: ``lag``: the partition's FetcherLagMetrics (AbstractFetcherThread.processFetchRequest):
    #: the leader HW in the last fetch response minus the follower's next fetch offset, read only
    #: by the ReplicaFetcherManager MaxLag gauge (engine/metrics, docs/model.md §22.3). A state
    #: pickled before it existed has no value: the gauge reads 0.
    __slots__ = ("offset", "truncating", "delayed_until_ms", "leader_epoch", "lag")

    def __init__(self, offset, truncating, leader_epoch):
        self.offset = offset
        self.truncating = truncating
        self.delayed_until_ms = 0
        self.leader_epoch = leader_epoch
        self.lag = 0


class Fetcher:
    __slots__ = ("key", "leader", "partitions", "in_flight", "wake_scheduled")

    def __init__(self, key, leader):
        self.key = key
        self.leader = leader
        self.partitions = {}     # partition key -> FetchState
        self.in_flight = False
        self.wake_scheduled = False


def java_string_hash(text):
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def fetcher_id(topic, partition, num_fetchers):
    """AbstractFetcherManager.getFetcherId: abs(31 * topic.hashCode + partition) % n."""
    value = (31 * java_string_hash(topic) + partition) & 0xFFFFFFFF
    value = value - (1 << 32) if value & 0x80000000 else value
    return abs(value) % num_fetchers


class ReplicaFollower:
    def leadership_source(self):
        """What told this broker its new role, for the narration: a LeaderAndIsr request in
        ZooKeeper mode, the metadata log in KRaft mode (docs/model.md §20)."""
        if self.era.kraft:
            return "PartitionChangeRecord from the metadata log"
        return f"LeaderAndIsr from controller {self.controller_id}"

    def follows_without_leader(self):
        """KRaft (engine 1.3.0): ``ReplicaManager.applyLocalFollowersDelta`` always applies the
        follower state, even with no live leader ("a replica with no leader can step down",
        3.9.0 and 4.1.0), and starts no fetcher until a leader is alive. Engine 1.2.0 skipped the
        partition as ZooKeeper mode's ``makeFollowers`` does (docs/model.md §20.4)."""
        return self.era.kraft and self.sim.rules_1_3

    # -- becoming follower (§8.1) --------------------------------------------------------------
    def make_follower(self, part, st):
        leader = st["leader"]
        leader_alive = leader in self.live_brokers
        if not leader_alive and not self.follows_without_leader():
            # ReplicaManager.makeFollowers skips a partition whose leader is not alive in the
            # metadata cache (leader -1 included): no state change, the old fetcher keeps going.
            self.sim.emit("become_follower_skipped", topic=part.topic, partition=part.index,
                          broker=self.node_id, leader=leader, leader_epoch=st["leader_epoch"],
                          reason=f"LeaderAndIsr names leader {leader}, which is not alive in this "
                                 f"broker's metadata cache: partition left as it was")
            return
        was_leader = part.is_leader
        old_leader = part.leader_id
        part.is_leader = False
        part.leader_id = leader
        part.leader_epoch = st["leader_epoch"]
        part.controller_epoch = st["controller_epoch"]
        part.zk_version = st["zk_version"]
        part.replicas = list(st["replicas"])
        part.isr = []
        part.remotes = {}
        part.isr_write_in_flight = False
        if self.era.alter_isr:
            self.alter_isr_reset(part, st.get("leader_recovery_state", 0))  # docs/model.md §17.4
        if was_leader:
            self.complete_all_delayed(part.key)
        elif part.key in self.fetch_purgatory:
            # consumer fetches parked on this follower (KIP-392, §21.8): a new leader epoch
            # fences them (makeFollowers completes delayed fetches of the partition)
            self.complete_all_delayed(part.key)
        restart = old_leader != leader or self.era.refetch_on_epoch_bump
        if not restart:
            part.reconciled = part.reconciled or was_leader
            return
        part.reconciled = False
        self.remove_fetcher_partition(part.key)
        log = part.log
        if not leader_alive:
            self.sim.emit("become_follower", topic=part.topic, partition=part.index, broker=self.node_id,
                          leader=leader, leader_epoch=part.leader_epoch, leo=log.leo, hw=log.hw,
                          reason=f"{self.leadership_source()}: no live leader in epoch "
                                 f"{part.leader_epoch} (leader {leader}); a follower with no "
                                 f"fetcher until a leader is elected")
            return
        if self.era.truncation == "hw":
            to = hw_truncation_offset(log.hw, log.leo)
            self.truncate(part, to, f"becoming follower of {leader} in epoch {part.leader_epoch}: "
                                    f"truncate to the local high watermark {log.hw} (pre-KIP-101)")
            self.add_fetcher_partition(part, truncating=False)
            part.reconciled = True
            self.sim.on_log_reconciled(self, part.key, log)
        else:
            self.add_fetcher_partition(part, truncating=True)
        self.sim.emit("become_follower", topic=part.topic, partition=part.index, broker=self.node_id,
                      leader=leader, leader_epoch=part.leader_epoch, leo=log.leo, hw=log.hw,
                      reason=f"{self.leadership_source()}: follow {leader} in "
                             f"epoch {part.leader_epoch}" +
                             ("" if self.era.truncation == "hw" else
                              "; reconcile the log with OffsetsForLeaderEpoch first"))

    def truncate(self, part, offset, reason):
        """Truncate the local log; only a truncation that removes records is part of the story."""
        log = part.log
        before = log.leo
        removed = log.truncate_to(offset)
        if not removed:
            return
        self.sim.emit("truncation", topic=part.topic, partition=part.index, broker=self.node_id,
                      from_offset=before, to_offset=log.leo, removed=removed, reason=reason)
        self.sim.on_truncated(self, part.key)

    # -- fetcher management ------------------------------------------------------------------------
    def add_fetcher_partition(self, part, truncating):
        fid = fetcher_id(part.topic, part.index, self.config["num.replica.fetchers"])
        key = (part.leader_id, fid)
        fetcher = self.fetchers.get(key)
        if fetcher is None:
            fetcher = self.fetchers[key] = Fetcher(key, part.leader_id)
        fetcher.partitions[part.key] = FetchState(part.log.leo, truncating, part.leader_epoch)
        self._pump(fetcher)

    def remove_fetcher_partition(self, key):
        for fkey, fetcher in list(self.fetchers.items()):
            if fetcher.partitions.pop(key, None) is not None and not fetcher.partitions:
                del self.fetchers[fkey]

    def _alive(self, fetcher):
        return self.fetchers.get(fetcher.key) is fetcher

    def _pump(self, fetcher):
        """One turn of AbstractFetcherThread.doWork: truncate if needed, else fetch."""
        if fetcher.in_flight or self.fetchers.get(fetcher.key) is not fetcher \
                or self.state not in SERVING_STATES:
            return  # (self._alive(fetcher) and self.running, inlined: once per fetch round)
        now = self.scheduler.now_ms
        # One pass over the fetcher's partitions: the ready ones go into the Fetch until a ready
        # truncating one shows up; from then on only truncating ones are collected (a fetcher
        # with a partition to truncate sends OffsetsForLeaderEpoch and no Fetch).
        truncating = None
        reqs = {}
        offsets = {}
        partitions = self.partitions
        current = self.era.kip320_fencing
        for key, fs in fetcher.partitions.items():
            if fs.delayed_until_ms > now:
                continue
            if fs.truncating:
                if truncating is None:
                    truncating = {}
                truncating[key] = fs
            elif truncating is None:
                offset = fs.offset
                reqs[key] = {"fetch_offset": offset,
                             "log_start_offset": partitions[key].log.log_start_offset,
                             "current_leader_epoch": fs.leader_epoch if current else -1}
                offsets[key] = offset
        timeout = self.config["replica.socket.timeout.ms"]
        if truncating is not None:
            for key, fs in list(truncating.items()):
                part = partitions[key]
                if part.log.latest_epoch() == -1:
                    # No cached epoch: nothing to ask, fall back to the high watermark (§8.1b).
                    self.truncate(part, part.log.hw, f"follower of {part.leader_id} in epoch "
                                                     f"{part.leader_epoch}: no leader epoch cached, "
                                                     f"truncate to the high watermark {part.log.hw}")
                    fs.truncating = False
                    fs.offset = part.log.leo
                    del truncating[key]
                    part.reconciled = True
                    self.sim.on_log_reconciled(self, key, part.log)
            if truncating:
                reqs = {}
                for key, fs in truncating.items():
                    reqs[key] = {"leader_epoch": partitions[key].log.latest_epoch(),
                                 "current_leader_epoch": fs.leader_epoch if current else -1}
                fetcher.in_flight = True
                self.request(fetcher.leader, OFFSETS_FOR_LEADER_EPOCH,
                             {"replica_id": self.node_id, "partitions": reqs}, timeout,
                             self._on_epoch_end_offsets,
                             (fetcher, {k: fs.leader_epoch for k, fs in truncating.items()}))
                return
            # every truncating partition fell back to its HW: the Fetch takes all ready ones
            reqs = {}
            offsets = {}
            for key, fs in fetcher.partitions.items():
                if fs.delayed_until_ms <= now and not fs.truncating:
                    reqs[key] = {"fetch_offset": fs.offset,
                                 "log_start_offset": partitions[key].log.log_start_offset,
                                 "current_leader_epoch": fs.leader_epoch if current else -1}
                    offsets[key] = fs.offset
        if reqs:
            fetcher.in_flight = True
            config = self.config
            self.request(fetcher.leader, FETCH,
                         {"replica_id": self.node_id,
                          "max_wait_ms": config["replica.fetch.wait.max.ms"],
                          "min_bytes": config["replica.fetch.min.bytes"], "partitions": reqs},
                         timeout, self._on_fetch_response, (fetcher, offsets))
            return
        if fetcher.partitions and not fetcher.wake_scheduled:
            wake = min(fs.delayed_until_ms for fs in fetcher.partitions.values())
            fetcher.wake_scheduled = True
            self.set_timer(max(wake - now, 0), self._wake_fetcher, fetcher)

    def _wake_fetcher(self, fetcher):
        fetcher.wake_scheduled = False
        self._pump(fetcher)

    def _back_off(self, fetcher, keys):
        until = self.scheduler.now_ms + self.config["replica.fetch.backoff.ms"]
        for key in keys:
            fs = fetcher.partitions.get(key)
            if fs is not None:
                fs.delayed_until_ms = until

    # -- truncation by leader epoch (§8.1b, §8.1c) --------------------------------------------------------
    def _on_epoch_end_offsets(self, ctx, body, error):
        fetcher, sent_epochs = ctx
        if not self._alive(fetcher):
            return
        fetcher.in_flight = False
        if error:
            self._back_off(fetcher, sent_epochs)
        else:
            for key, answer in body["partitions"].items():
                fs = fetcher.partitions.get(key)
                if fs is None or not fs.truncating or fs.leader_epoch != sent_epochs[key]:
                    continue  # state changed while the request was in flight (KIP-320: discard)
                if answer["error"]:
                    self._back_off(fetcher, [key])
                    continue
                self._truncate_by_epoch(self.partitions[key], fs, answer)
        self._pump(fetcher)

    def _truncate_by_epoch(self, part, fs, answer):
        log = part.log
        leader_epoch, end = answer["leader_epoch"], answer["end_offset"]
        asked = log.latest_epoch()
        if self.era.truncation == "kip101":
            to = kip101_truncation_offset(end, log.leo, log.hw)
            done = True
            why = (f"OffsetsForLeaderEpoch(epoch {asked}) -> end offset {end}" +
                   (" UNDEFINED: fall back to the high watermark" if end == -1 else ""))
        else:
            to, done = kip279_truncation(leader_epoch, end, log.leo, log.hw,
                                         lambda e: log.end_offset_for(e, self.era))
            why = (f"OffsetsForLeaderEpoch(epoch {asked}) -> (epoch {leader_epoch}, end offset {end})"
                   + ("" if done else "; this replica never saw that epoch: ask again"))
        self.truncate(part, to, f"follower of {part.leader_id} in epoch {part.leader_epoch}: {why}; "
                                f"truncate to {to}")
        if done:
            fs.truncating = False
            fs.offset = log.leo
            part.reconciled = True
            self.sim.on_log_reconciled(self, part.key, log)

    # -- fetch responses (§7 follower processing) ------------------------------------------------------
    def _on_fetch_response(self, ctx, body, error):
        fetcher, offsets = ctx
        if self.fetchers.get(fetcher.key) is not fetcher:
            return  # no longer _alive
        fetcher.in_flight = False
        if error:
            self._back_off(fetcher, offsets)
            self._pump(fetcher)
            return
        out_of_range = []
        states = fetcher.partitions
        partitions = self.partitions
        parked = self.fetch_purgatory   # consumer fetches parked on this follower (§21.8)
        hw_moved = None
        for key, resp in body["partitions"].items():
            if key not in states:
                continue
            fs = states[key]
            if fs.truncating or fs.offset != offsets[key]:
                continue
            err = resp["error"]
            if err is None:
                # processPartitionData, inlined: it runs for every partition of every response
                part = partitions[key]
                log = part.log
                records = resp["records"]
                if records:
                    log.append_replicated(records, self.era.epoch_cache)
                    # the topic's LogConfig read directly: once per replicated append
                    if log.unflushed_since >= self.sim.log_configs[part.topic][FLUSH_INTERVAL]:
                        log.flush()
                leo = log.leo
                fs.offset = leo
                hw = resp["hw"]
                fs.lag = hw - leo if hw > leo else 0   # max(0, HW - nextOffset): MaxLag's input
                new_hw = leo if leo < hw else hw  # min(): assigned, not max'ed: it can go down (§5.2)
                if new_hw != log.hw:
                    log.hw = new_hw
                    self.sim.invariants.on_hw(self, key, log)  # a follower HW move: compare replicas
                    if key in parked:
                        hw_moved = hw_moved or []
                        hw_moved.append(key)
            elif err == "OFFSET_OUT_OF_RANGE":
                out_of_range.append(key)
            else:
                self._back_off(fetcher, [key])
        if hw_moved is not None and self.era.follower_hw_completes_fetch:
            self.complete_follower_fetches(hw_moved)   # KAFKA-14334 (3.3.2): before the next fetch
        if out_of_range:
            fetcher.in_flight = True
            self.request(fetcher.leader, LIST_OFFSETS,
                         {"replica_id": self.node_id, "partitions": {k: "latest" for k in out_of_range}},
                         self.config["replica.socket.timeout.ms"], self._on_leader_end_offsets,
                         (fetcher, {k: fetcher.partitions[k].offset for k in out_of_range}))
            return
        self._pump(fetcher)

    def _on_leader_end_offsets(self, ctx, body, error):
        """handleOffsetOutOfRange (§7): the leader's log is shorter than ours."""
        fetcher, offsets = ctx
        if not self._alive(fetcher):
            return
        fetcher.in_flight = False
        if error:
            self._back_off(fetcher, offsets)
            self._pump(fetcher)
            return
        for key, answer in body["partitions"].items():
            fs = fetcher.partitions.get(key)
            if fs is None or fs.offset != offsets[key] or answer["error"]:
                if fs is not None:
                    self._back_off(fetcher, [key])
                continue
            part = self.partitions[key]
            leader_leo = answer["offset"]
            if leader_leo < part.log.leo:
                if self.era.halt_on_unclean_truncation and \
                        not self.sim.topic_config(part.topic, "unclean.leader.election.enable"):
                    self.halt(f"FATAL: Exiting because log truncation is not allowed for partition "
                              f"{key}, current leader {part.leader_id}'s latest offset {leader_leo} "
                              f"is less than replica {self.node_id}'s latest offset {part.log.leo} "
                              f"(unclean.leader.election.enable=false)")
                    return
                self.truncate(part, leader_leo,
                              f"OFFSET_OUT_OF_RANGE: leader {part.leader_id}'s LEO {leader_leo} < "
                              f"our LEO {part.log.leo}: truncate to the leader's LEO")
            else:
                start = max(answer["log_start_offset"], part.log.leo)
                if start > part.log.leo:
                    self.truncate(part, 0, f"OFFSET_OUT_OF_RANGE below the leader's log start "
                                           f"{answer['log_start_offset']}: wipe the log")
                    part.log.log_start_offset = start
            fs.offset = part.log.leo
        self._pump(fetcher)
