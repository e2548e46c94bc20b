"""Reading snapshots pickled before the engine's modules moved into packages (issue 34).

Pickle records each class by its module path. Until engine 1.2.0 every module sat directly in
``engine/`` (``engine.broker.Broker``); the modules now live in packages that mirror Kafka's
(``engine.server.broker.Broker``). Stored seek indexes and snapshots keep the old paths, so every
reader of a snapshot goes through ``SnapshotUnpickler``, which maps an old module path to its new
home before it looks the class up. New snapshots are written with the new paths.
"""
import io
import pickle

#: Where each module that moved now lives (old module path -> new module path).
MOVED_MODULES = {
    "engine.scheduler": "engine.core.scheduler", "engine.network": "engine.core.network",
    "engine.tcp": "engine.core.tcp", "engine.deadlines": "engine.core.deadlines",
    "engine.rng": "engine.core.rng", "engine.messages": "engine.core.messages",
    "engine.budget": "engine.core.budget",
    "engine.zookeeper": "engine.zookeeper.server", "engine.zk_sessions": "engine.zookeeper.sessions",
    "engine.zk_data": "engine.zookeeper.data", "engine.zk_errors": "engine.zookeeper.errors",
    "engine.zktrace": "engine.zookeeper.trace", "engine.zkclient": "engine.zookeeper.zookeeper_client",
    "engine.broker": "engine.server.broker", "engine.replica_manager": "engine.server.replica_manager",
    "engine.leader": "engine.server.leader", "engine.fetcher": "engine.server.fetcher",
    "engine.purgatory": "engine.server.purgatory", "engine.isr_maintenance": "engine.server.isr_maintenance",
    "engine.alter_isr": "engine.server.alter_isr_manager",
    "engine.control_requests": "engine.server.control_requests",
    "engine.partition": "engine.server.partition", "engine.log": "engine.server.log",
    "engine.controller": "engine.controller.kafka_controller",
    "engine.controller_events": "engine.controller.controller_events",
    "engine.channel_manager": "engine.controller.channel_manager",
    "engine.partition_state_machine": "engine.controller.partition_state_machine",
    "engine.election": "engine.controller.election", "engine.alter_isr_controller": "engine.controller.alter_isr",
    "engine.clients": "engine.clients.producer_consumer", "engine.sender": "engine.clients.sender",
    "engine.network_client": "engine.clients.network_client",
    "engine.consumer_fetcher": "engine.clients.consumer_fetcher",
    "engine.partitioner": "engine.clients.partitioner",
    "engine.scenario": "engine.scenario.document", "engine.scenario_fields": "engine.scenario.fields",
    "engine.scenario_timeline": "engine.scenario.timeline",
    "engine.scenario_validators": "engine.scenario.validators", "engine.scenarios": "engine.scenario.library",
    "engine.cli": "engine.tools.cli", "engine.bench": "engine.tools.bench", "engine.worker": "engine.tools.worker",
    "engine.sweep_run": "engine.tools.sweep_run", "engine.search": "engine.tools.search",
    "engine.search_examples": "engine.tools.search_examples", "engine.faults": "engine.tools.faults",
}


def current_module(module):
    """The module path a class pickled under ``module`` has today."""
    return MOVED_MODULES.get(module, module)


class SnapshotUnpickler(pickle.Unpickler):
    """An unpickler that finds classes pickled under their pre-package module paths."""

    def find_class(self, module, name):
        return super().find_class(current_module(module), name)


def loads(blob):
    """``pickle.loads`` for snapshots, old module paths included. Trusted input only."""
    return SnapshotUnpickler(io.BytesIO(blob)).load()
