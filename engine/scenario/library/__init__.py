"""The scenario library: named stories of Kafka replication, each with what to watch.

Every file here is a scenario document (docs/scenario-format.md §1). ``library()`` returns them in the
order of ``ORDER`` (a teaching order: ISR basics first, then failures, then the famous bugs).
"""
import json
import os

ORDER = (
    "isr-shrink-slow-follower",
    "isr-expansion",
    "isr-change-propagation",
    "hw-follower-one-fetch-behind",
    "broker-failure-clean-election",
    "not-enough-replicas",
    "acks1-loss-on-failover",
    "unclean-election-loss",
    "kip101-scenario-1-v0.10",
    "kip101-scenario-1-v2.6",
    "kip101-scenario-2-v0.10",
    "kip101-scenario-2-v2.6",
    "kip279-fast-leader-changes-v1.1",
    "kip279-fast-leader-changes-v2.0",
    "controller-failover-session-expiry",
    "zombie-leader-after-pause",
    "jepsen-partition-v0.10",
    "controlled-shutdown",
    "preferred-leader-election",
    "isr-shrink-zookeeper-vs-controller",
    "pending-expand-controller-away",
    "ineligible-replica-refused",
    "controller-failover-kraft",
    "broker-cut-off-from-controllers",
    "last-isr-member-elr",
    "rolling-restart",
    "lose-one-zone",
    "two-replicas-in-one-zone",
    "two-replicas-in-one-zone-unclean",
    "follower-fetch-zone",
)

_HERE = os.path.dirname(__file__)


def library():
    out = {}
    for name in ORDER:
        if not os.path.exists(os.path.join(_HERE, name + ".json")):
            continue
        with open(os.path.join(_HERE, name + ".json"), encoding="utf-8") as handle:
            out[name] = json.load(handle)
    return out


def get(name):
    return library()[name]
