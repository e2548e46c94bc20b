"""Follower fetching, KIP-392 (docs/model.md §21.8), the consumer's side: the preferred read
replica a leader names, kept per partition as ``SubscriptionState`` keeps it, and the choice of the
broker each fetch goes to (``Fetcher.selectReadReplica``; ``AbstractFetch`` from 3.5).

Only a consumer with a ``client.rack`` (2.4 and later) has any of this: it sends its rack with
every fetch, and a leader whose ``replica.selector.class`` is the rack-aware selector may answer
with a follower of that rack instead of records.
"""


class PreferredReadReplica:
    """Mixin of ``Consumer``."""

    #: ``client.rack`` (None: unset, or an era before 2.4); class defaults, so that consumers
    #: pickled before follower fetching existed still load
    rack = None
    read_replicas = None   # key -> [replica, expire_ms, (leader, epoch) it was named under]

    def init_read_replicas(self, config):
        rack = config.get("client.rack") if self.sim.era.follower_fetching else None
        if rack:
            self.rack = rack
            self.read_replicas = {}

    def read_target(self, key, leader, now):
        """``selectReadReplica``: the preferred read replica while it has not expired
        (``preferredReadReplica(tp, timeMs)``: kept while now <= its expiry) and the consumer's
        metadata still lists its broker (``Cluster.nodeIfOnline``); otherwise the leader. A replica
        gone from the metadata is forgotten (3.3.2+, KAFKA-14379: with a metadata refresh)."""
        entry = self.read_replicas.get(key)
        if entry is None:
            return leader
        if now > entry[1]:
            self.clear_read_replica(key, f"metadata.max.age.ms "
                                         f"{self.config['metadata.max.age.ms']} ms passed since "
                                         f"the leader named it")
            return leader
        brokers = self.metadata_brokers
        if brokers is not None and entry[0] not in brokers:
            self.clear_read_replica(key, f"broker {entry[0]} is not in the consumer's metadata")
            if self.sim.era.preferred_replica_cleared_on_error:
                self.refresh_metadata()
            return leader
        return entry[0]

    def update_read_replica(self, key, replica, leader):
        """``updatePreferredReadReplica``: a new replica (or none before) is kept until now +
        ``metadata.max.age.ms``; the same replica named again keeps its expiry."""
        entry = self.read_replicas.get(key)
        if entry is not None and entry[0] == replica:
            return
        expire = self.scheduler.now_ms + self.config["metadata.max.age.ms"]
        self.read_replicas[key] = [replica, expire, self.leaders.get(key, (-1, -1))]
        topic, part = self.sim.split_key(key)
        rack = (self.sim.scenario.get("racks") or {}).get(str(replica))
        self.sim.emit("consumer_read_replica", consumer=self.name, topic=topic, partition=part,
                      replica=replica, leader=leader,
                      reason=f"leader {leader} names broker {replica} (rack {rack}) as the preferred "
                             f"read replica for client.rack {self.rack}: fetch from it until "
                             f"{expire} ms (metadata.max.age.ms) or an error")
        self.by_node = None

    def clear_read_replica(self, key, why):
        """``clearPreferredReadReplica``: back to the leader. Returns the replica forgotten, or
        None when there was none."""
        entry = self.read_replicas.pop(key, None)
        if entry is None:
            return None
        topic, part = self.sim.split_key(key)
        self.sim.emit("consumer_read_replica", consumer=self.name, topic=topic, partition=part,
                      replica=None, leader=self.leaders.get(key, (-1, -1))[0],
                      reason=f"preferred read replica {entry[0]} forgotten: {why}; fetch from "
                             f"the leader")
        self.by_node = None
        return entry[0]

    def clear_read_replicas_on_new_leader(self):
        """``maybeValidatePositionForCurrentLeader``: a partition whose leader or leader epoch in
        the metadata changed since its replica was named forgets it."""
        for key in [k for k, entry in self.read_replicas.items()
                    if self.leaders.get(k, (-1, -1)) != entry[2]]:
            leader, epoch = self.leaders.get(key, (-1, -1))
            self.clear_read_replica(key, f"the metadata names leader {leader} in epoch {epoch}")

    def read_replicas_view(self):
        """{key: {"broker", "role", "rack"}}: where the consumer reads each partition now."""
        racks = self.sim.scenario.get("racks") or {}
        out = {}
        for key in self.assigned():
            leader = self.leaders.get(key, (-1, -1))[0]
            entry = self.read_replicas.get(key)
            broker = entry[0] if entry is not None else leader
            if broker < 0:
                continue
            out[key] = {"broker": broker, "role": "follower" if entry is not None else "leader",
                        "rack": racks.get(str(broker))}
        return out
