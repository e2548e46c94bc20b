"""Era "2.0" is 2.0.0; "2.0.1" adds the three backports of 2.1 fixes (docs/model.md §0)."""
import dataclasses

from engine import eras
from engine.scenario.document import load
from engine.scenario.library import library
from engine.simulation import Simulation

from .conftest import events

BACKPORTS = ("expand_needs_epoch_start_offset",   # KAFKA-7128
             "refetch_on_epoch_bump",             # KAFKA-7164
             "epoch_entry_on_become_leader")      # KAFKA-7415


def test_2_0_1_is_2_0_0_plus_the_three_backports():
    assert eras.VERSIONS.index("2.0.1") == eras.VERSIONS.index("2.0") + 1
    old, new = eras.ERAS["2.0"], eras.ERAS["2.0.1"]
    assert all(not getattr(old, flag) and getattr(new, flag) for flag in BACKPORTS)
    assert dataclasses.replace(old, version="2.0.1", **{flag: True for flag in BACKPORTS}) == new
    assert eras.defaults("2.0.1") == eras.defaults("2.0")
    assert load({"kafka_version": "2.0.1"})["kafka_version"] == "2.0.1"


def run(version):
    return Simulation({**library()["jepsen-partition-v0.10"], "kafka_version": version}).run()


def test_the_library_shows_the_difference():
    # jepsen-partition-v0.10 under both: after the heal the old leader rejoins as follower. With
    # KAFKA-7164 its fetcher restarts on the LeaderAndIsr of the new epoch, so the followers
    # rejoin the ISR one fetch round earlier; loss and violations are the same.
    a, b = run("2.0"), run("2.0.1")
    assert [e["t_ms"] for e in events(a, "isr_expand")] == [42655, 42705]
    assert [e["t_ms"] for e in events(b, "isr_expand")] == [42618, 42655]
    assert "KAFKA-7128" in events(b, "isr_expand")[0]["reason"]
    assert "KAFKA-7128" not in events(a, "isr_expand")[0]["reason"]
    assert [x["id"] for x in a["records"] if x["lost"]] == [x["id"] for x in b["records"] if x["lost"]]
    assert [v["invariant"] for v in a["violations"]] == [v["invariant"] for v in b["violations"]]
