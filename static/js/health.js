// A partition's health as Kafka counts it, one definition for every panel (cards, the partition
// summary, kafka-topics.sh --unavailable-partitions):
// * offline (OfflinePartitionsCount, the controller's metric): no leader, or a leader the
//   controller does not hold as a live broker. In ZooKeeper eras the controller learns that a
//   broker died when its ephemeral /brokers/ids/<id> goes (session expiry), in KRaft eras when it
//   fences the broker; until then a crashed leader is not counted offline anywhere.
// * under-replicated (UnderReplicatedPartitions, reported by the leader): the ISR the leader holds
//   is smaller than the replica list; a partition whose leader is down has no one to report it.

/** The controller's view of broker `id`: registered and live. */
export function liveInController(store, id) {
  const b = store.brokers.get(id);
  if (store.quorum) return Boolean(b) && b.fenced === false;
  return store.znodes.has(`/brokers/ids/${id}`);
}

export function isOffline(store, p) {
  return p.leader === -1 || !liveInController(store, p.leader);
}

/** The leader's own replica entry, when the leader broker holds the partition as leader. */
function leaderReplica(p) {
  return (p.replica_state || []).find(r => r.broker === p.leader && r.is_leader) || null;
}

export function isUnderReplicated(store, p) {
  const r = !isOffline(store, p) && leaderReplica(p);
  if (!r) return false;
  return (r.local_isr || p.isr).length < p.replicas.length;
}

/** A leader the controller still counts live but whose broker does not lead it (crashed, not yet
 *  noticed): the partition cannot be written, yet no metric counts it. */
export function leaderGone(store, p) {
  return !isOffline(store, p) && !leaderReplica(p);
}
