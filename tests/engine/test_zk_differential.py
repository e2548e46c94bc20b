"""The engine's ZooKeeper answers as a real ZooKeeper does (docs/model.md §9.10).

Every library scenario runs in every ZooKeeper era it validates in (``engine.eras.ZK_VERSIONS``;
only the KRaft stories with controller operations are left out); every call its ZooKeeper
receives is recorded (``engine.zookeeper.trace``) and replayed on a real ZooKeeper 3.8 (Debian's
``zookeeper`` package, installed by scripts/setup.sh) through kazoo, one kazoo session per engine
session, each (scenario, era) under its own chroot of one standalone server. Compared per call:
success or error code (and a failed multi's failing op), created paths (sequential names
included), data, version / cversion / numChildren, the ephemeral owner (mapped per session), the
order and equality of czxid and mzxid (not their values), and the watch events every session
receives, in order. Never skipped: without ZooKeeper or kazoo the test fails.
"""
import pytest

from engine.eras import ZK_VERSIONS as VERSIONS  # ZooKeeper-mode operations
from engine.scenario.document import ScenarioError, load
from engine.scenario.library import library
from engine.zookeeper.trace import record

from .zkreal import RealZooKeeper, Replayer

def _runs_in(doc, era):
    """The KRaft-only stories (controller operations) do not validate in ZooKeeper eras."""
    try:
        load({**doc, "kafka_version": era})
    except ScenarioError:
        return False
    return True


CASES = [(name, era) for name, doc in library().items() for era in VERSIONS if _runs_in(doc, era)]


@pytest.fixture(scope="module")
def real_zookeeper():
    with RealZooKeeper() as server:
        yield server


@pytest.mark.parametrize("name,era", CASES, ids=[f"{n}[{e}]" for n, e in CASES])
def test_engine_zookeeper_answers_like_a_real_one(real_zookeeper, name, era):
    doc = {**library()[name], "kafka_version": era}
    try:
        recorder, _result = record(doc)
    except ScenarioError as exc:  # pragma: no cover - every library scenario runs in every era today
        pytest.fail(f"{name} cannot run in era {era}: {exc}")
    replayer = Replayer(real_zookeeper.port, f"/{name}-{era}", f"{name} [era {era}]")
    try:
        replayed = replayer.replay(recorder.calls)
    finally:
        replayer.close()
    assert replayed == len(recorder.calls) > 20
