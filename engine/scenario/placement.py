"""Where a topic without an explicit ``assignment`` puts its replicas (docs/scenario-format.md
§1.1 and §4.3, docs/model.md §21.2-§21.3).

* No broker has a rack: Kafka's rack-unaware admin assignment with a fixed start index of 0
  (``kafka_assignment``), in every era — what the engine always did.
* ZooKeeper eras with racks: ``AdminUtils.assignReplicasToBrokers`` → the rack-aware assignment
  over ``getRackAlternatedBrokerList`` (the same at 0.10.0 through 3.7, where it moved to
  server-common's Java ``AdminUtils``). As in Kafka (``RackAwareMode.Enforced``, the default of
  ``kafka-topics.sh``), it refuses when some brokers have a rack and others none.
* KRaft eras with racks: the controller's ``StripedReplicaPlacer``; brokers without a rack form
  one more rack.

The random draws (the start index and the replica shift; the placer's offsets and shuffles) come
from a ``java.util.Random`` sequence of the topic's own (``engine.core.rng.JavaRandom``), seeded
from the scenario's ``seed`` and the topic's name: Kafka draws from one unseeded ``Random`` per
process; one per topic keeps the run's other random streams untouched and makes a live
``create_topic`` place its topic as the replay of the session will. Given that seed, the layout
is the one Kafka computes.
"""
from engine.core.rng import java_random
from engine.kraft.striped_replica_placer import striped_placement
from engine.scenario.fields import ScenarioError
from engine.scenario.racks import rack_of


def kafka_assignment(brokers, partitions, replication_factor):
    """AdminUtils.assignReplicasToBrokersRackUnaware with a fixed start index of 0."""
    n = len(brokers)
    shift = 0
    out = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = p % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        out[str(p)] = replicas
    return out


def place_topic(scenario, name, partitions, replication_factor, field, kraft):
    """The assignment of a new topic ``name`` without an explicit one."""
    brokers = scenario["brokers"]
    racks = {b: r for b, r in rack_of(scenario).items() if b in brokers}
    if not racks:
        return kafka_assignment(brokers, partitions, replication_factor)
    rng = java_random(scenario["seed"], f"placement/{name}")   # a generator of the topic's own
    if kraft:
        return striped_placement(rng, [(b, racks.get(b)) for b in brokers], partitions,
                                 replication_factor)
    missing = [b for b in brokers if b not in racks]
    if missing:
        raise ScenarioError(f"{field}.assignment",
                            f"missing, and Kafka's admin assignment refuses to place the topic: "
                            f"\"Not all brokers have rack information for replica rack aware "
                            f"assignment\" (brokers without a rack: {missing})",
                            "an explicit assignment, or a rack in racks for every broker (or for none)")
    start = rng.randrange(len(brokers))
    shift = rng.randrange(len(brokers))
    return rack_aware_assignment(racks, partitions, replication_factor, start, shift)


def rack_alternated_brokers(racks):
    """AdminUtils.getRackAlternatedBrokerList: one broker of each rack in turn, racks sorted by
    name, each rack's brokers in id order. {0: a, 1: c, 2: c, 3: b, 4: b, 5: a} -> 0, 3, 1, 5, 4, 2."""
    by_rack = {}
    for broker in sorted(racks):
        by_rack.setdefault(racks[broker], []).append(broker)
    names = sorted(by_rack, key=lambda rack: rack.encode("utf-16-be"))   # Java's String order
    out = []
    depth = 0
    while len(out) < len(racks):
        for name in names:
            if depth < len(by_rack[name]):
                out.append(by_rack[name][depth])
        depth += 1
    return out


def rack_aware_assignment(racks, partitions, replication_factor, start, shift):
    """AdminUtils.assignReplicasToBrokersRackAware: {"<p>": replicas} for brokers ``racks``
    ({id: rack}, every broker of the cluster), from start index ``start`` and replica shift
    ``shift`` (Kafka's two random draws). The first replica walks the rack-alternated list round
    robin; each further one steps on from it with the shift, skipping a broker whose rack already
    has a replica while some rack has none, and a broker already chosen while some broker is not."""
    brokers = rack_alternated_brokers(racks)
    n = len(brokers)
    num_racks = len(set(racks.values()))
    out = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        leader = brokers[first]
        replicas = [leader]
        racks_used, brokers_used = {racks[leader]}, {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = brokers[_replica_index(first, shift * num_racks, k, n)]
                rack = racks[broker]
                k += 1
                if (rack not in racks_used or len(racks_used) == num_racks) \
                        and (broker not in brokers_used or len(brokers_used) == n):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        out[str(p)] = replicas
    return out


def _replica_index(first, second_replica_shift, replica_index, n):
    """AdminUtils.replicaIndex."""
    return (first + 1 + (second_replica_shift + replica_index) % (n - 1)) % n
