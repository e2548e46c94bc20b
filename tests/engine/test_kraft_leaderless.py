"""A KRaft follower with no live leader (engine 1.3.0, docs/model.md §20.4).

``ReplicaManager.applyLocalFollowersDelta`` (Kafka 3.9.0 and 4.1.0) applies the follower state for
every partition the metadata delta changes, even when the new leader is -1 or not alive ("a replica
with no leader can step down"), and starts a fetcher only for a leader it can reach. ZooKeeper
mode's ``makeFollowers`` instead skips such a partition. The library story "last ISR member, ELR"
ends with leader -1 while broker 1 is up again: it must step down, not keep its old state.
"""
import pytest

from engine.scenario.library import library
from engine.simulation import Simulation

from .conftest import events


def _run(era, engine_version=None):
    doc = {**library()["last-isr-member-elr"], "kafka_version": era}
    return Simulation(doc, engine_version=engine_version).run()


@pytest.mark.parametrize("era", ["3.9-kraft", "4.1"])
def test_a_follower_applies_a_leaderless_partition_change(era):
    result = _run(era)
    assert events(result, "become_follower_skipped") == []
    [stepped] = [e for e in events(result, "become_follower", broker=1) if e["leader"] == -1]
    assert stepped["leader_epoch"] == 1 and "no live leader" in stepped["reason"]


def test_engine_1_2_0_skipped_it_as_zookeeper_mode_does():
    [skipped] = events(_run("4.1", "1.2.0"), "become_follower_skipped", broker=1)
    assert skipped["leader"] == -1 and skipped["reason"].startswith("LeaderAndIsr names leader -1")


def test_the_isr_removal_of_a_controlled_shutdown_says_so():
    changes = events(_run("4.1"), "partition_change")
    reasons = {e["reason"] for e in changes if e.get("reason", "").endswith("fenced as it stops")}
    assert reasons == {"controlled shutdown of broker 2: fenced as it stops",
                       "controlled shutdown of broker 1: fenced as it stops"}
