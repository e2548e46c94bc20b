"""The leader's two purgatories (§6, §7, §5.2): a produce with acks=all waits in DelayedProduce
until the ISR has the records or the request times out; a fetch with nothing to return waits in
DelayedFetch for data or for ``max_wait_ms``. (``DelayedOp`` itself stays in ``engine.server.leader``.)
"""
from engine.server.partition import maximal_isr


class Purgatory:
    """Mixin of ``Broker`` (through ``ReplicaLeader``): completing and expiring parked requests."""

    def _try_complete_produce(self, op):
        """checkEnoughReplicasReachOffset for every pending partition of a DelayedProduce."""
        pending = False
        for key, status in op.parts.items():
            if not status[2]:
                continue
            part = self.partitions.get(key)
            if part is None or not part.is_leader:
                status[1], status[2] = "NOT_LEADER_OR_FOLLOWER", False
                continue
            if part.log.hw >= status[0]:
                min_isr = self.effective_min_isr(part)
                isr = maximal_isr(part)  # AlterIsr eras: the maximal ISR (docs/model.md §17.2)
                if len(isr) < min_isr:
                    status[1] = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
                    self.sim.emit("produce_error", topic=part.topic, partition=part.index,
                                  broker=self.node_id, error="NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                                  producer=op.env.body["producer"],
                                  records=op.env.body["partitions"][key]["ids"],
                                  reason=f"HW {part.log.hw} reached the batch end {status[0]} but ISR "
                                         f"{isr} has {len(isr)} < min.insync.replicas "
                                         f"{min_isr}; the data is written and committed anyway")
                status[2] = False
            else:
                pending = True
        if pending:
            return False
        self._reply_produce(op)
        return True

    def _reply_produce(self, op):
        op.done = True
        results = op.results
        for key, status in op.parts.items():
            if status[1]:
                results[key] = {"error": status[1], "base_offset": results[key]["base_offset"]}
        self.reply(op.env, {"error": None, "partitions": results})

    def _complete_produces(self, key):
        ops = self.produce_purgatory.get(key)
        if not ops:
            return
        keep = []
        for op in ops:
            if not op.done and not self._try_complete_produce(op):
                keep.append(op)
        if keep:
            self.produce_purgatory[key] = keep
        else:
            del self.produce_purgatory[key]

    def _expire_produce(self, op):
        if op.done:
            return
        for key, status in op.parts.items():
            if status[2]:
                status[1], status[2] = "REQUEST_TIMED_OUT", False
                part = self.partitions.get(key)
                self.sim.emit("produce_error", topic=self.sim.split_key(key)[0],
                              partition=self.sim.split_key(key)[1], broker=self.node_id,
                              error="REQUEST_TIMED_OUT", producer=op.env.body["producer"],
                              records=op.env.body["partitions"][key]["ids"],
                              reason=f"acks=all: HW {part.log.hw if part else '?'} did not reach "
                                     f"{status[0]} within the request timeout "
                                     f"{op.env.body['timeout_ms']} ms")
        self._reply_produce(op)

    def _complete_fetches(self, key, follower):
        """Completes the partition's parked fetches of one kind: new data completes follower
        fetches (an HW change alone does not, §5.2), an HW move completes consumer fetches."""
        ops = self.fetch_purgatory.get(key)
        if not ops:
            return
        keep = []
        for op in ops:
            if op.done:
                continue
            if op.follower == follower:
                self._finish_fetch(op)
            else:
                keep.append(op)
        if keep:
            self.fetch_purgatory[key] = keep
        else:
            del self.fetch_purgatory[key]

    def complete_all_delayed(self, key):
        """Leadership moved: parked produces and fetches for the partition complete now."""
        ops = self.fetch_purgatory.pop(key, None)
        for op in ops or ():
            if not op.done:
                self._finish_fetch(op)
        self._complete_produces(key)

    def _expire_fetch(self, op):
        if not op.done:
            self._finish_fetch(op)

    def _finish_fetch(self, op):
        """DelayedFetch.onComplete: read again (no second follower-state update) and answer."""
        op.done = True
        reqs = op.env.body["partitions"]
        max_records = self.sim.max_fetch_records
        partitions = self.partitions
        fencing = self.era.kip320_fencing
        follower = op.follower
        # KIP-392 (§21.8): the read again picks a preferred replica, or reads as a follower
        rack = None if follower or not self.era.follower_fetching else op.env.body.get("rack_id")
        responses = {}
        for key, offset in op.parts.items():
            part = partitions[key] if key in partitions else None
            # _fetch_error, inlined: this runs for every parked partition on every append. A
            # parked request has current_leader_epoch wherever fencing applies (on_fetch read it).
            if part is None or not part.is_leader:
                if rack is not None and part is not None:
                    responses[key] = self.follower_read(part, reqs[key])
                    continue
                responses[key] = {"error": "NOT_LEADER_OR_FOLLOWER"}
                continue
            if fencing:
                current = reqs[key]["current_leader_epoch"]
                if current != -1 and current != part.leader_epoch:
                    responses[key] = {"error": "FENCED_LEADER_EPOCH" if current < part.leader_epoch
                                      else "UNKNOWN_LEADER_EPOCH"}
                    continue
            if rack is not None:
                preferred = self.preferred_read_replica(part, rack, offset, self.scheduler.now_ms)
                if preferred is not None:
                    responses[key] = self.redirect_answer(part, preferred)
                    continue
            log = part.log
            leo = log.leo
            if offset > leo:
                responses[key] = {"error": "OFFSET_OUT_OF_RANGE", "leo": leo}
                continue
            hw = log.hw
            bound = leo if follower else hw
            if offset < bound:
                i = offset - log.log_start_offset
                n = bound - offset
                records = log.records[i:i + (max_records if max_records < n else n)]
            else:
                records = []
            responses[key] = {"error": None, "hw": hw, "leo": leo,
                              "log_start_offset": log.log_start_offset, "records": records,
                              "leader_epoch": part.leader_epoch}
        self.reply(op.env, {"error": None, "partitions": responses})
