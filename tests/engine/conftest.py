import functools

import pytest

from engine.scenario.library import library
from engine.simulation import Simulation
from engine.zookeeper.server import ZooKeeper


@functools.lru_cache(maxsize=None)
def _run(name):
    return Simulation(library()[name]).run()


@pytest.fixture
def run_library():
    return _run


def events(result, type_, **match):
    return [e for e in result["history"]
            if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]


@pytest.fixture
def zk():
    """A fresh simulated ZooKeeper whose watch notifications collect in ``zk.events``."""
    events = []
    tree = ZooKeeper(now=lambda: 0, notify=lambda sid, kind, path: events.append((sid, kind, path)))
    tree.events = events
    return tree
