"""The controller's gauges (docs/model.md §22.4): ``ActiveControllerCount``,
``OfflinePartitionsCount`` and, in the ZooKeeper eras from 3.1 (KIP-748), ``ActiveBrokerCount`` and
``FencedBrokerCount``; in the KRaft eras the same names from ``QuorumControllerMetrics`` and
``ControllerMetadataMetrics``.

ZooKeeper eras (``KafkaController`` @ 0.10.2.2 - 3.7.1): every broker registers the gauges; a
broker that is not the active controller reports 1/0 for ActiveControllerCount and 0 for the
others. ``OfflinePartitionsCount`` counts the partitions whose leader is not a live or
shutting-down broker. 0.10.2 computes it when read; from 1.1 ``updateMetrics`` stores it at the
end of every controller event, so while an event is being processed the gauge still shows the
value of the end of the previous one (``held`` keeps it per controller process).

KRaft eras: ``ActiveControllerCount`` is 1 on the controller that has claimed leadership
(``QuorumController`` after replaying its epoch's first record); the broker and partition counts
come from ``ControllerMetadataMetricsPublisher``, which every controller runs on the committed
metadata image: the same numbers on each, so the cluster value is the image's.
"""
from engine.metrics.replica_manager import answering


def zk_active(broker):
    return 1 if broker.controller.active else 0


def zk_counts(broker):
    """(OfflinePartitionsCount, ActiveBrokerCount) as the broker's controller computes them now."""
    controller = broker.controller
    if not controller.active:
        return 0, 0
    alive = set(controller.live) | set(controller.shutting_down)
    offline = sum(1 for st in controller.states.values() if st["leader"] not in alive)
    return offline, len(alive)


def zk_counts_shown(sim, broker, held):
    """What the gauges show: computed on read in 0.10; from 1.1 the value stored at the end of
    the last event (``held``: (broker id, incarnation) -> counts, updated while idle)."""
    now = zk_counts(broker)
    if sim.era.version == "0.10":
        return now
    key = (broker.node_id, broker.incarnation)
    if broker.controller.busy:
        return held.get(key, (0, 0))
    held[key] = now
    return now


def kraft_active(sim):
    """Per answering voter: 1 if it is the active controller (its QuorumController is claimed)."""
    return {vid: (1 if voter.controller is not None else 0)
            for vid, voter in sim.quorum.voters.items() if voter.running and not voter.paused}


def kraft_image_counts(sim):
    """(OfflinePartitionsCount, ActiveBrokerCount, FencedBrokerCount) of the committed image:
    ``PartitionRegistration.hasLeader`` and ``BrokerRegistration.fenced``."""
    image = sim.quorum.image
    offline = sum(1 for reg in image.partitions.values() if reg["leader"] == -1)
    fenced = sum(1 for reg in image.brokers.values() if reg["fenced"])
    return offline, len(image.brokers) - fenced, fenced


def any_controller_answers(sim):
    return any(v.running and not v.paused for v in sim.quorum.voters.values())


def zk_answering(sim):
    return [b for b in sim.brokers.values() if answering(b)]
