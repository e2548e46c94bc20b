"""Golden digests: the full trace + result of every library scenario, in every era it validates
for, is pinned by sha256. A refactoring that must not change behaviour (e.g. splitting engine
modules) keeps every digest identical.

The expected digests live in ``golden_digests.json`` next to this file. After an *intended*
behaviour change, regenerate them (and say why in the commit):

    python -m tests.engine.test_golden --regenerate

The library has no notion of "eras a scenario can be switched to", so each scenario is pinned in
its own era plus each era of ``engine.eras.VERSIONS`` whose switched document still validates
(``kafka_version`` replaced, nothing else touched).
"""
import json
import os
import sys

from engine import eras
from engine.scenario.document import ScenarioError, load
from engine.scenario.library import library

from .test_determinism import trace_hash

GOLDEN = os.path.join(os.path.dirname(__file__), "golden_digests.json")




def cases():
    """(name, era, document) for each library scenario and each era it validates in."""
    for name, doc in library().items():
        own = doc.get("kafka_version")
        for version in [own] + [v for v in eras.VERSIONS if v != own]:
            switched = {**doc, "kafka_version": version}
            try:
                load(switched)
            except ScenarioError:
                continue
            yield name, version, switched


#: Runs pinned besides the library: combined mode (docs/model.md §20.11), where the broker that
#: hosts the active controller crashes and comes back.
EXTRA = {
    "combined-controller-failover": {
        "name": "combined", "seed": 3, "kafka_version": "4.1", "brokers": 3,
        "controllers": "combined", "duration_ms": 40000,
        "topics": [{"name": "orders", "partitions": 3, "replication_factor": 3}],
        "clients": [{"name": "p1", "type": "producer", "topic": "orders", "acks": "all",
                     "rate_per_s": 20}],
        "timeline": [{"at_ms": 10000, "op": "crash", "broker": 0},
                     {"at_ms": 25000, "op": "restart", "broker": 0}]},
}


def digests():
    out = {f"{name}@{version}": trace_hash(doc) for name, version, doc in cases()}
    for name, doc in EXTRA.items():
        out[f"{name}@{doc['kafka_version']}"] = trace_hash(doc)
    return out


def test_every_library_scenario_in_every_era_matches_its_golden_digest():
    with open(GOLDEN, encoding="utf-8") as handle:
        expected = json.load(handle)
    actual = digests()
    differ = sorted(k for k in expected.keys() & actual.keys() if expected[k] != actual[k])
    missing = sorted(expected.keys() - actual.keys())
    new = sorted(actual.keys() - expected.keys())
    report = (f"differ: {differ}\nno longer run: {missing}\nnot pinned: {new}\n"
              "(intended change? python -m tests.engine.test_golden --regenerate)")
    print(report)
    assert not differ and not missing and not new, report


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python -m tests.engine.test_golden --regenerate")
    with open(GOLDEN, "w", encoding="utf-8") as handle:
        json.dump(digests(), handle, indent=1, sort_keys=True)
        handle.write("\n")
    print(f"wrote {GOLDEN}")
