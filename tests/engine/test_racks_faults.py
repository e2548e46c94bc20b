"""The ``zone`` fault kind of sweeps and searches (docs/model.md §21.5, engine/tools/faults.py):
drawn only where brokers have racks, a whole rack at once, every node of it free, the faulted
KRaft voters a minority; schedules without racks are unchanged."""
import pytest

from engine.scenario.document import load
from engine.simulation import Simulation
from engine.tools.faults import DEFAULT_PROFILE, fault_timeline

ONLY_ZONE = {**{k: (0.0, 0, 0) for k in DEFAULT_PROFILE}, "zone": (4.0, 5000, 20000)}
RACKS = {"0": "az-a", "1": "az-a", "2": "az-b", "3": "az-b", "4": "az-c", "5": "az-c"}


def scenario(version="2.6", racks=RACKS, **extra):
    doc = {"kafka_version": version, "brokers": 6, "duration_ms": 90000,
           "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}], **extra}
    if racks is not None:
        doc["racks"] = racks
    return load(doc)


def schedule(sc, seed, profile=ONLY_ZONE):
    return fault_timeline(sc, profile, seed, fault_end_ms=50000, session_timeout_ms=18000)


def test_schedules_without_racks_do_not_change():
    """The zone kind is not drawn without racks: the same draws as a profile without it."""
    plain = scenario(racks=None)
    named_only = scenario(racks={"0": "az-a", "1": "az-b", "2": "az-c", "3": "az-a", "4": "az-b",
                                 "5": "az-c"})
    without_zone = {k: v for k, v in DEFAULT_PROFILE.items() if k != "zone"}
    for seed in range(5):
        assert schedule(plain, seed, DEFAULT_PROFILE) == schedule(plain, seed, without_zone)
        # with racks and a zone rate of 0, the other kinds draw what they draw without racks
        zero = {**DEFAULT_PROFILE, "zone": (0.0, 5000, 20000)}
        assert schedule(named_only, seed, zero) == schedule(plain, seed, zero)


@pytest.mark.parametrize("version", ["2.6", "4.1"])
def test_a_zone_fault_takes_a_whole_free_rack_and_the_schedule_loads(version):
    racks = dict(RACKS)
    if version == "4.1":
        racks.update({"3000": "az-a", "3001": "az-b", "3002": "az-c"})
    sc = scenario(version, racks)
    kinds = set()
    for seed in range(25):
        ops = schedule(sc, seed)
        load({**sc, "timeline": ops})          # every operation makes sense at its time
        crashed = [op["rack"] for op in ops if op["op"] == "crash"]
        kinds.update(op["op"] for op in ops if "rack" in op)
        # at most one rack down at a time in KRaft (one voter of three); never the same rack twice
        assert len(crashed) == len(set(crashed))
        if version == "4.1":
            assert len(crashed) <= 1
        for op in ops:
            if op["op"] == "isolate":
                heal = [h for h in ops if h["op"] == "heal" and h.get("rack") == op["rack"]
                        and h["at_ms"] >= op["at_ms"]]
                assert heal, op
        restarted = sorted(op["broker"] for op in ops if op["op"] == "restart" and "broker" in op)
        assert restarted == sorted(int(b) for b, r in racks.items() if r in crashed and int(b) < 6)
        if version == "4.1":
            voters = sorted(op["controller"] for op in ops if op["op"] == "restart" and "controller" in op)
            assert voters == sorted(int(c) for c, r in racks.items() if r in crashed and int(c) >= 3000)
    assert kinds == {"crash", "isolate", "heal"}


def test_a_zone_crash_converges_after_the_healing_phase():
    sc = scenario(clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}])
    seed = next(s for s in range(50) if any(op["op"] == "crash" for op in schedule(sc, s)))
    result = Simulation({**sc, "seed": seed, "timeline": schedule(sc, seed)}).run()
    assert result["violations"] == []
    assert all(b["state"] == "running" for b in result["brokers"].values())
    assert all(set(p["isr"]) == set(p["replicas"]) for p in result["partitions"].values())
