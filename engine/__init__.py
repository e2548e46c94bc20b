"""ISR Lab's simulation engine: a deterministic discrete-event model of Kafka replication in the
ZooKeeper era. Standard library only; no I/O, no wall clock, no threads (see README)."""
from engine.scenario.document import ScenarioError, load
from engine.simulation import ENGINE_VERSION, Simulation

__all__ = ["ENGINE_VERSION", "ScenarioError", "Simulation", "load"]
