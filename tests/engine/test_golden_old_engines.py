"""Old engines' records: saved runs and links replay byte-identically under the engine that made them.

Each ``golden_digests_<version>.json`` is the record of what that engine version did, copied
unchanged when the next version changed behaviour: 1.1.0's from commit 332d476 (164 runs), 1.2.0's
from the last commit of 1.2.0 (271 runs: every library scenario in every era it validates for, and
combined mode), 1.3.0's from the last commit of 1.3.0 (6d56800, the same 271 runs), 1.4.0's from
the last commit of 1.4.0 (bd95597, 315 runs: the zone stories and follower fetching added). Every one of
them must come out identical when today's engine runs with
``engine_version=<version>`` (docs/model.md §19). Keys that no longer run (a scenario or era
removed) fail; scenarios and eras added since are not pinned there. Never regenerate these files.
"""
import json
import os

import pytest

from engine import Simulation
from engine.version import ENGINE_VERSION, supported

from .test_determinism import trace_hash
from .test_golden import EXTRA, cases

HERE = os.path.dirname(__file__)
RECORDS = {"1.1.0": "golden_digests_1_1_0.json", "1.2.0": "golden_digests_1_2_0.json",
           "1.3.0": "golden_digests_1_3_0.json", "1.4.0": "golden_digests_1_4_0.json"}


def _record(version):
    with open(os.path.join(HERE, RECORDS[version]), encoding="utf-8") as handle:
        return json.load(handle)


EXPECTED = {version: _record(version) for version in RECORDS}
OLD_ERAS = ("0.10", "1.1", "2.0", "2.4", "2.6")


def _cases():
    docs = {f"{name}@{version}": doc for name, version, doc in cases()}
    docs.update({f"{name}@{doc['kafka_version']}": doc for name, doc in EXTRA.items()})
    return docs


def test_the_records_cover_every_era_they_knew():
    assert set(OLD_ERAS) <= {key.rsplit("@", 1)[1] for key in EXPECTED["1.1.0"]}
    assert len(EXPECTED["1.1.0"]) >= 160
    assert {"3.3", "3.7", "3.9-kraft", "4.1"} <= {key.rsplit("@", 1)[1] for key in EXPECTED["1.2.0"]}
    assert len(EXPECTED["1.2.0"]) >= 270
    assert {"3.3", "3.7", "3.9-kraft", "4.1"} <= {key.rsplit("@", 1)[1] for key in EXPECTED["1.3.0"]}
    assert len(EXPECTED["1.3.0"]) >= 270
    assert {"3.7", "3.9-kraft", "4.1"} <= {key.rsplit("@", 1)[1] for key in EXPECTED["1.4.0"]}
    assert len(EXPECTED["1.4.0"]) >= 310


@pytest.mark.parametrize("version,key", [(v, k) for v in sorted(EXPECTED) for k in sorted(EXPECTED[v])])
def test_an_old_engine_reproduces_its_golden_digest(version, key):
    docs = _cases()
    assert key in docs, f"{key} no longer runs"
    assert trace_hash(docs[key], engine_version=version) == EXPECTED[version][key]


def test_versions_resolve_to_what_the_engine_can_run():
    assert ENGINE_VERSION == "1.5.0"
    assert supported(None) == supported("1.5.0") == "1.5.0"
    assert supported("1.4.0") == "1.4.0" and supported("1.3.0") == "1.3.0"
    assert supported("1.2.0") == "1.2.0" and supported("1.1.0") == "1.1.0"
    assert supported("1.0.0") == supported("0.9") == "1.1.0"      # older: the nearest, 1.1.0
    assert supported("1.2.5") == "1.2.0" and supported("1.3.9") == "1.3.0"
    assert supported("1.4.2") == "1.4.0"
    assert supported("9.0.0") == supported("garbage") == "1.5.0"


def test_the_result_reports_the_version_it_ran_as():
    doc = {**_cases()["broker-failure-clean-election@2.6"], "duration_ms": 3000, "timeline": []}
    assert Simulation(doc, engine_version="1.1.0").run()["scenario"]["engine_version"] == "1.1.0"
    assert Simulation(doc, engine_version="1.0.0").run()["scenario"]["engine_version"] == "1.1.0"
    assert Simulation(doc, engine_version="1.2.0").run()["scenario"]["engine_version"] == "1.2.0"
    assert Simulation(doc, engine_version="1.3.0").run()["scenario"]["engine_version"] == "1.3.0"
    assert Simulation(doc, engine_version="1.4.0").run()["scenario"]["engine_version"] == "1.4.0"
    assert Simulation(doc).run()["scenario"]["engine_version"] == "1.5.0"


def test_only_the_current_engine_follows_the_1_3_rules():
    doc = _cases()["broker-failure-clean-election@2.6"]
    assert [Simulation(doc, engine_version=v).rules_1_3 for v in ("1.1.0", "1.2.0", None)] == [False, False, True]


def test_only_the_current_engine_follows_the_1_4_rules():
    doc = _cases()["broker-failure-clean-election@2.6"]
    versions = ("1.1.0", "1.2.0", "1.3.0", "1.4.0", None)
    assert [Simulation(doc, engine_version=v).rules_1_4 for v in versions] == [False, False, False, True, True]
    assert Simulation(doc, engine_version="1.3.0").rules_1_3


def test_only_the_current_engine_follows_the_1_5_rules():
    doc = _cases()["broker-failure-clean-election@2.6"]
    versions = ("1.1.0", "1.2.0", "1.3.0", "1.4.0", None)
    assert [Simulation(doc, engine_version=v).rules_1_5 for v in versions] == [False, False, False, False, True]
    assert Simulation(doc, engine_version="1.4.0").rules_1_4
