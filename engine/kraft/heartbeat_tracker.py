"""The 4.1 controller's broker sessions: ``BrokerHeartbeatTracker`` @ 4.1.0 (KAFKA-17793, 4.0),
modelled from engine 1.4.0 (docs/model.md §20.4).

A session is the last contact time of one (broker id, broker epoch), fenced or not: every
heartbeat updates its own pair before the controller looks at the epoch
(``QuorumController.processBrokerHeartbeat`` -> ``ClusterControlManager.trackBrokerHeartbeat``),
the activation adds the unfenced brokers, and ``maybeRemoveExpired`` takes out one expired pair
per run of the fencing task: the first in the iteration order of Kafka's ``ConcurrentHashMap``
of ``BrokerIdAndEpoch`` (``Objects.hash(id, epoch)``; ``java_order``).
"""
from engine.kraft.java_order import chm_order, chm_table_size, objects_hash_int_long


def _hash(key):
    return objects_hash_int_long(*key)


class HeartbeatTracker:
    """(broker, epoch) -> last contact (ms); the dict keeps the order pairs came in."""
    #: engine 1.5.0: pairs whose contact the activation set, before the fencing task's first run
    #: was scheduled (class default for older snapshots)
    at_activation = frozenset()

    def __init__(self, session_ms):
        self.session_ms = session_ms
        self.contact = {}
        self.most_held = 0

    def update(self, broker, epoch, now_ms, activation=False):
        """``updateContactTime``: a new pair comes last in its bin, a known one keeps its place.
        ``activation``: the contact ``ClusterControlManager.activate`` sets (engine 1.5.0)."""
        key = (broker, epoch)
        self.contact[key] = now_ms
        self.most_held = max(self.most_held, len(self.contact))
        if activation:
            self.at_activation = set(self.at_activation) | {key}
        elif key in self.at_activation:
            self.at_activation = set(self.at_activation) - {key}

    def has_valid_session(self, broker, epoch, now_ms):
        key = (broker, epoch)
        return key in self.contact and not self._expired(key, now_ms)

    def _expired(self, key, now_ms):
        """``isExpired``: strictly past the session timeout, in nanoseconds. A contact the
        activation set is a few microseconds older than the fencing task's schedule
        (``QuorumController.claim`` runs ``ClusterControlManager.activate`` before
        ``CompleteActivationEvent.processBatchEndOffset`` runs ``periodicControl.activate``,
        @ 4.1.0), so the check that lands exactly one session after it finds it expired
        (engine 1.5.0; 1.4.0 waited one more period, 1125 ms)."""
        last = self.contact[key]
        if key in self.at_activation and last + self.session_ms == now_ms:
            return True
        return now_ms > last and last + self.session_ms < now_ms

    def order(self):
        """The pairs in the map's iteration order."""
        return chm_order(list(self.contact), _hash, chm_table_size(self.most_held))

    def remove_expired(self, now_ms):
        """``maybeRemoveExpired``: the first expired pair, removed; None if there is none."""
        for key in self.order():
            if self._expired(key, now_ms):
                del self.contact[key]
                return key
        return None
