"""Racks in sweep documents (docs/sweeps.md): the ``racks`` and ``inter_rack_latency_ms`` axes and
the ``zone`` fault kind, spelled out only in sweeps with racks. (No Spark.)"""
import pytest

from app.sweeps import spec
from engine.tools import sweep_run
from engine.tools.faults import DEFAULT_PROFILE

BASE = {"brokers": 6, "duration_ms": 60000,
        "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
        "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 10}]}


def test_a_racks_axis_deals_brokers_and_controllers_round_robin():
    sweep = spec.validate({"base": BASE, "grid": {"kafka_version": ["2.6", "4.1"], "racks": [0, 3],
                                                  "inter_rack_latency_ms": [0, 5]}, "seeds": 1})
    cells = spec.cells(sweep)
    assert len(cells) == 8
    by = {(c["settings"]["kafka_version"], c["settings"]["racks"], c["settings"]["inter_rack_latency_ms"]):
          c["scenario"] for c in cells}
    assert "racks" not in by[("2.6", 0, 0)]
    assert by[("2.6", 3, 5)]["racks"] == {"0": "az-a", "1": "az-b", "2": "az-c", "3": "az-a", "4": "az-b",
                                          "5": "az-c"}
    assert by[("2.6", 3, 5)]["inter_rack_latency_ms"] == 5
    assert by[("4.1", 3, 0)]["racks"]["3000"] == "az-a" and by[("4.1", 3, 0)]["racks"]["3002"] == "az-c"
    for replicas in by[("2.6", 3, 0)]["topics"][0]["assignment"].values():   # placed rack-aware
        assert len({by[("2.6", 3, 0)]["racks"][str(b)] for b in replicas}) == 3
    assert sweep["fault_profiles"]["default"]["zone"] == list(DEFAULT_PROFILE["zone"])


def test_the_zone_kind_is_spelled_out_only_with_racks():
    plain = spec.validate({"base": BASE, "seeds": 1})
    assert "zone" not in plain["fault_profiles"]["default"]
    with pytest.raises(spec.SweepError) as info:
        spec.validate({"base": BASE, "faults": {"zone": [1, 5000, 9000]}})
    assert info.value.field == "faults.zone" and "racks" in info.value.message
    racked = spec.validate({"base": {**BASE, "racks": {str(b): f"r{b % 2}" for b in range(6)}},
                            "faults": {"from": "none", "zone": [2, 5000, 9000]}, "seeds": 2})
    assert racked["fault_profiles"]["sweep"]["zone"] == [2.0, 5000, 9000]
    cell = spec.cells(racked)[0]
    runs = [sweep_run.run_scenario(cell, racked["fault_profiles"]["sweep"], seed) for seed in range(6)]
    assert any(op.get("rack") for run in runs for op in run["timeline"])


@pytest.mark.parametrize("grid, field, words", [
    ({"racks": [27]}, "grid.racks[0]", "integer from 0 to 26"),
    ({"racks": [-1]}, "grid.racks[0]", "integer from 0 to 26"),
    ({"inter_rack_latency_ms": [60001]}, "grid.inter_rack_latency_ms[0]", "integer from 0 to 60000"),
    ({"racks": [{"9": "a"}]}, "grid", "racks.9"),
])
def test_bad_rack_axes_name_the_field(grid, field, words):
    with pytest.raises(spec.SweepError) as info:
        spec.validate({"base": BASE, "grid": grid})
    assert info.value.field == field and words in str(info.value), str(info.value)
