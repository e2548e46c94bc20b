"""Follower fetching, KIP-392 (docs/model.md §21.8), the broker's side: the leader's choice of a
preferred read replica for a consumer (``ReplicaManager.findPreferredReadReplica`` with the
configured ``replica.selector.class``) and a follower's reads for consumers, bounded by its own
high watermark (``readFromLocalLog`` with ``fetchOnlyFromLeader`` false).

Only fetches that carry the consumer's rack (``rack_id``, FetchRequest v11's) take these paths; a
consumer without ``client.rack`` sends none, and every other fetch is served as before.
"""
from engine.eras import RACK_AWARE_SELECTOR


def rack_aware_select(client_rack, leader, replicas):
    """``RackAwareReplicaSelector.select`` (the same at 2.4.0 and 4.1.0). ``leader`` and each of
    ``replicas`` is a view ``(broker id, rack or None, LEO, ms since last caught up)``; the leader's
    own view counts as one of the replicas. Returns the view chosen: the leader when the client has
    no rack, when no replica is in its rack, or when the leader is; else the most caught-up replica
    of the rack (``ReplicaView.comparator``: highest LEO, then least time since caught up, then
    highest id)."""
    if not client_rack:
        return leader
    same_rack = [view for view in replicas if view[1] == client_rack]
    if leader[1] == client_rack:
        same_rack.append(leader)
    if not same_rack or leader in same_rack:
        return leader
    return max(same_rack, key=lambda view: (view[2], -view[3], view[0]))


class ReadReplicaSelection:
    """Mixin of ``Broker`` (through ``ReplicaLeader``)."""

    def preferred_read_replica(self, part, client_rack, fetch_offset, now):
        """``findPreferredReadReplica`` on the leader: the follower the consumer should read
        from, or None for the leader itself. No selector (the default, null) and ``LeaderSelector``
        always give the leader. Candidates are the followers whose last fetch reached
        ``fetch_offset`` (the leader's record of their LEO) and whose log starts at or below it;
        from 3.3.2 (KAFKA-14372) only ISR members. A replica's rack is what this broker's metadata
        cache knows of a live broker (``getPartitionReplicaEndpoints``): a broker it holds dead has
        no endpoint, hence no rack, and is never chosen."""
        if self.config["replica.selector.class"] != RACK_AWARE_SELECTOR:
            return None
        racks = self.sim.scenario.get("racks") or {}
        live = self.live_brokers
        in_isr_only = self.era.preferred_replica_in_isr
        views = []
        for rid, remote in part.remotes.items():
            if in_isr_only and rid not in part.isr:
                continue
            if remote.leo >= fetch_offset and remote.log_start_offset <= fetch_offset:
                rack = racks.get(str(rid)) if rid in live else None
                views.append((rid, rack, remote.leo, now - remote.last_caught_up_ms))
        leader = (self.node_id, self.rack if self.node_id in live else None, part.log.leo, 0)
        chosen = rack_aware_select(client_rack, leader, views)
        return None if chosen is leader else chosen[0]

    def redirect_answer(self, part, replica):
        """The leader's answer naming a preferred read replica: no records, the leader's offsets
        (``fetchOffsetSnapshot``)."""
        log = part.log
        return {"error": None, "hw": log.hw, "leo": log.leo, "log_start_offset": log.log_start_offset,
                "records": (), "leader_epoch": part.leader_epoch, "preferred_read_replica": replica}

    def follower_read(self, part, req):
        """A consumer's fetch served by a follower (``Partition.readRecords`` with
        ``fetchOnlyFromLeader`` false, ``FetchHighWatermark`` isolation): the leader-epoch check
        against the epoch this follower knows, OFFSET_OUT_OF_RANGE outside its log, and records
        only below its own high watermark — which trails the leader's by a fetch round (§5.2)."""
        if self.era.kip320_fencing:
            current = req["current_leader_epoch"]
            if current != -1 and current != part.leader_epoch:
                return {"error": "FENCED_LEADER_EPOCH" if current < part.leader_epoch
                        else "UNKNOWN_LEADER_EPOCH"}
        log = part.log
        offset = req["fetch_offset"]
        leo, hw, start = log.leo, log.hw, log.log_start_offset
        if offset > leo or offset < start:
            return {"error": "OFFSET_OUT_OF_RANGE", "leo": leo}
        records = ()
        if offset < hw:
            i = offset - start
            records = log.records[i:i + min(self.sim.max_fetch_records, hw - offset)]
        return {"error": None, "hw": hw, "leo": leo, "log_start_offset": start, "records": records,
                "leader_epoch": part.leader_epoch, "from_follower": True}

    def complete_follower_fetches(self, keys):
        """KAFKA-14334 (3.3.2, 3.4.0): after a fetch response moved this follower's high watermark
        for ``keys``, the consumer fetches parked here complete (``completeDelayedFetchRequests``);
        before, they waited out ``fetch.max.wait.ms``."""
        for key in keys:
            if key in self.fetch_purgatory:
                self._complete_fetches(key, False)
