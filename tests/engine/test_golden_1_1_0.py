"""Engine 1.1.0 compatibility: old saved runs and links replay byte-identically.

``golden_digests_1_1_0.json`` holds the golden digests engine 1.1.0 recorded (commit 332d476's
``golden_digests.json``, copied unchanged). Every one of them — each library scenario that existed
then, in every era it validated for — must come out identical when today's engine runs with
``engine_version="1.1.0"`` (docs/model.md §19). Keys that no longer run (a scenario or era removed)
would fail; scenarios and eras added since (2.0.1, three library scenarios) are not pinned here.
Never regenerate this file: it is the record of what 1.1.0 did.
"""
import json
import os

import pytest

from engine import Simulation
from engine.version import supported

from .test_determinism import trace_hash
from .test_golden import cases

GOLDEN_1_1_0 = os.path.join(os.path.dirname(__file__), "golden_digests_1_1_0.json")

with open(GOLDEN_1_1_0, encoding="utf-8") as _handle:
    EXPECTED = json.load(_handle)

OLD_ERAS = ("0.10", "1.1", "2.0", "2.4", "2.6")


def _cases():
    return {f"{name}@{version}": doc for name, version, doc in cases()}


def test_the_1_1_0_record_covers_every_old_era():
    eras = {key.rsplit("@", 1)[1] for key in EXPECTED}
    assert set(OLD_ERAS) <= eras
    assert len(EXPECTED) >= 160


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_engine_1_1_0_reproduces_its_golden_digest(key):
    docs = _cases()
    assert key in docs, f"{key} no longer runs"
    assert trace_hash(docs[key], engine_version="1.1.0") == EXPECTED[key]


def test_versions_resolve_to_what_the_engine_can_run():
    assert supported(None) == supported("1.2.0") == "1.2.0"
    assert supported("1.1.0") == "1.1.0"
    assert supported("1.0.0") == supported("0.9") == "1.1.0"      # older: the nearest, 1.1.0
    assert supported("9.0.0") == supported("garbage") == "1.2.0"


def test_the_result_reports_the_version_it_ran_as():
    doc = {**_cases()["broker-failure-clean-election@2.6"], "duration_ms": 3000, "timeline": []}
    assert Simulation(doc, engine_version="1.1.0").run()["scenario"]["engine_version"] == "1.1.0"
    assert Simulation(doc, engine_version="1.0.0").run()["scenario"]["engine_version"] == "1.1.0"
    assert Simulation(doc).run()["scenario"]["engine_version"] == "1.2.0"
