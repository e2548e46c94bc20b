"""Random scenarios for the randomized tests (their own RNG; the engine only sees the result)."""
import random

from engine.eras import ZK_VERSIONS, default
from engine.tools.faults import fault_timeline
from engine.scenario.document import load


def random_scenario(seed, duration_ms=None, era=None):
    rng = random.Random(seed)
    brokers = rng.randint(1, 5)
    rf = rng.randint(1, min(3, brokers))
    version = era or rng.choice(ZK_VERSIONS)  # the random fault mix is ZooKeeper-shaped
    duration = duration_ms or rng.randint(8000, 40000)
    config = {}
    if rng.random() < 0.5:
        config["min.insync.replicas"] = rng.randint(1, rf)
    if rng.random() < 0.3:
        config["unclean.leader.election.enable"] = rng.random() < 0.5
    if rng.random() < 0.3:
        config["replica.lag.time.max.ms"] = rng.choice([2000, 5000, 10000])
        config["zookeeper.session.timeout.ms"] = rng.choice([3000, 6000])
    doc = {
        "name": f"random-{seed}", "seed": seed, "kafka_version": version, "brokers": brokers,
        "config": config,
        "network": {"latency_ms": rng.randint(0, 3), "jitter_ms": rng.choice([0, 0, 2])},
        "topics": [{"name": "t", "partitions": rng.randint(1, 3), "replication_factor": rf}],
        "clients": [{"name": "p1", "type": "producer", "topic": "t",
                     "acks": rng.choice(["0", "1", "all"]), "rate_per_s": rng.choice([5, 20, 50])},
                    {"name": "c1", "type": "consumer", "topic": "t", "auto.offset.reset": "earliest"}],
        "duration_ms": duration,
    }
    scenario = load(doc)
    profile = {k: (rng.choice([0.0, 1.0, 3.0]), 500, rng.randint(1000, 12000))
               for k in ("crash_process", "crash_power", "pause", "partition", "cut", "isolate_zk",
                         "expire_session", "slow")}
    session = scenario["config"].get("zookeeper.session.timeout.ms",
                                     default(version, "zookeeper.session.timeout.ms"))
    scenario["timeline"] = fault_timeline(scenario, profile, seed, start_ms=500,
                                          fault_end_ms=duration // 2, session_timeout_ms=session)
    return load(scenario)
