"""Hypothesis drives random live operations into the engine.

1. Any operation, any era: the engine never raises (bad commands are rejected with
   ScenarioError, modelled failures become Kafka errors and violations — never exceptions).
2. "2.6", acks=all, min.insync.replicas=2, unclean election off, only process crashes and
   restarts: no acknowledged record is ever lost (docs/model.md §15.3).
A failure prints the seed and the scenario with the commands that reproduce it.
"""
import json

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine.eras import ZK_VERSIONS as VERSIONS  # ZooKeeper-mode operations
from engine.scenario.document import ScenarioError
from engine.simulation import Simulation

SETTINGS = settings(max_examples=25, stateful_step_count=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
NODES = [0, 1, 2, 3, "zk", "p1"]


class AnyOperation(RuleBasedStateMachine):
    @initialize(version=st.sampled_from(VERSIONS), seed=st.integers(0, 1000),
                min_isr=st.integers(1, 3), unclean=st.booleans())
    def build(self, version, seed, min_isr, unclean):
        self.sim = Simulation({
            "seed": seed, "kafka_version": version, "brokers": 4,
            "config": {"min.insync.replicas": min_isr, "unclean.leader.election.enable": unclean},
            "network": {"latency_ms": 1, "jitter_ms": 1},
            "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
            "duration_ms": 600000})

    def apply(self, op):
        try:
            self.sim.apply(op)
        except ScenarioError:
            pass  # rejected with a clear error: allowed

    @rule(ms=st.integers(1, 20000))
    def advance(self, ms):
        self.sim.advance_to(self.sim.now_ms + ms)

    @rule(broker=st.integers(0, 3), mode=st.sampled_from(["process", "power"]))
    def crash(self, broker, mode):
        self.apply({"op": "crash", "broker": broker, "mode": mode})

    @rule(broker=st.integers(0, 3),
          name=st.sampled_from(["restart", "shutdown", "resume", "flush", "expire_session"]))
    def broker_op(self, broker, name):
        self.apply({"op": name, "broker": broker})

    @rule(broker=st.integers(0, 3), for_ms=st.integers(1, 30000))
    def pause(self, broker, for_ms):
        self.apply({"op": "pause", "broker": broker, "for_ms": for_ms})

    @rule(broker=st.integers(0, 3), side=st.sampled_from(["all", "zk", "brokers", "clients"]))
    def isolate(self, broker, side):
        self.apply({"op": "isolate", "broker": broker, "from": side})

    @rule(a=st.sampled_from(NODES), b=st.sampled_from(NODES))
    def cut(self, a, b):
        self.apply({"op": "cut", "from": a, "to": b})

    @rule(split=st.integers(1, 3))
    def partition(self, split):
        self.apply({"op": "partition", "groups": [[0, 1, 2, 3][:split], [0, 1, 2, 3][split:] + ["zk"]]})

    @rule()
    def heal(self):
        self.apply({"op": "heal"})

    @rule(count=st.integers(1, 20), acks=st.sampled_from(["0", "1", "all"]))
    def produce(self, count, acks):
        self.apply({"op": "produce", "topic": "t", "count": count, "acks": acks})

    @rule()
    def elect_preferred(self):
        self.apply({"op": "elect_preferred"})

    @invariant()
    def views_are_json(self):
        from engine.view import cluster_view
        json.dumps(cluster_view(self.sim))

    def teardown(self):
        if hasattr(self, "sim"):
            self.sim.advance_to(self.sim.now_ms + 30000)


class SafeSettings(RuleBasedStateMachine):
    """Process crashes and restarts only: Kafka 2.6's guarantees must hold."""

    @initialize(seed=st.integers(0, 10000), brokers=st.integers(3, 4))
    def build(self, seed, brokers):
        self.sim = Simulation({
            "seed": seed, "kafka_version": "2.6", "brokers": brokers,
            "config": {"min.insync.replicas": 2, "unclean.leader.election.enable": False,
                       "replica.lag.time.max.ms": 10000, "zookeeper.session.timeout.ms": 6000},
            "network": {"latency_ms": 1, "jitter_ms": 2},
            "topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 30}],
            "duration_ms": 3600000})
        self.brokers = brokers

    @rule(ms=st.integers(1, 15000))
    def advance(self, ms):
        self.sim.advance_to(self.sim.now_ms + ms)

    @rule(data=st.data())
    def crash(self, data):
        broker = data.draw(st.integers(0, self.brokers - 1))
        try:
            self.sim.apply({"op": "crash", "broker": broker, "mode": "process"})
        except ScenarioError:
            pass

    @rule(data=st.data())
    def restart(self, data):
        broker = data.draw(st.integers(0, self.brokers - 1))
        try:
            self.sim.apply({"op": "restart", "broker": broker})
        except ScenarioError:
            pass

    @rule(count=st.integers(1, 10))
    def produce(self, count):
        self.sim.apply({"op": "produce", "topic": "t", "count": count, "acks": "all"})

    @invariant()
    def no_acknowledged_record_lost(self):
        lost = [v for v in self.sim.violations if v["invariant"] == "acked_record_lost"]
        assert lost == [], json.dumps({"violations": lost, "scenario": self.sim.replay_scenario()})[:4000]

    def teardown(self):
        if not hasattr(self, "sim"):
            return
        for broker in self.sim.brokers.values():
            if broker.state in ("stopped", "halted", "registration_failed"):
                self.sim.apply({"op": "restart", "broker": broker.node_id})
        self.sim.advance_to(self.sim.now_ms + 40000)
        self.sim.scenario["duration_ms"] = self.sim.now_ms
        result = self.sim.result()
        lost = [r["id"] for r in result["records"] if r["lost"] and r["acks"] == "all"]
        assert lost == [], json.dumps({"lost": lost[:20], "scenario": self.sim.replay_scenario()})[:4000]


TestAnyOperation = AnyOperation.TestCase
TestAnyOperation.settings = SETTINGS
TestSafeSettings = SafeSettings.TestCase
TestSafeSettings.settings = SETTINGS
