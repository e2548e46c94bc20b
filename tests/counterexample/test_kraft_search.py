"""Counterexample search in the KRaft eras (docs/model.md §20): the fault schedules it draws are
valid there (no ZooKeeper faults; controller voters crash, pause and are isolated), a safe 4.1
configuration survives every draw, and an unsafe one yields a counterexample that replays."""
from engine.tools.faults import DEFAULT_PROFILE
from engine.tools.search import candidate, check, shrink
from engine.simulation import Simulation
from tests.counterexample.test_routes import SAFE, client, wait  # noqa: F401 (fixture)

NONE = {k: [0, 0, 0] for k in DEFAULT_PROFILE}
# process crashes (a clean log on disk: every acknowledged record was on min ISR replicas),
# cuts between a broker and another node, and controller voter faults
CRASH_AND_CUT = dict(NONE, crash_process=[4, 1000, 15000], cut=[4, 2000, 10000], controller=[6, 1000, 8000])
LOSS = {"type": "no_acked_loss"}


def test_the_schedules_drawn_in_kraft_are_valid_and_do_hit_the_cluster():
    base = dict(SAFE, kafka_version="4.1")
    ops = [op for seed in range(8) for op in candidate(base, CRASH_AND_CUT, seed)["timeline"]]
    assert sum(1 for op in ops if op["op"] == "crash" and "broker" in op) >= 8
    assert any(op["op"] == "cut" for op in ops) and any("controller" in op for op in ops)
    assert not any(op["op"] == "expire_session" or "zk" in (op.get("from"), op.get("to")) for op in ops)
    # stopped brokers come back after the controller's broker session (9 s), not ZooKeeper's 18 s
    fault_end = int(base["duration_ms"] * 0.6)
    restarts = [op["at_ms"] for seed in range(8) for op in candidate(base, CRASH_AND_CUT, seed)["timeline"]
                if op["op"] == "restart" and "broker" in op]
    assert restarts and min(restarts) == fault_end + 9000 + 500


def test_safe_settings_in_4_1_lose_nothing_acknowledged_through_the_api(client):  # noqa: F811
    """RF 3, acks=all, min.insync.replicas 2, unclean election off: an acknowledged record is on
    two replicas' disks, a process crash loses no flushed-to-page-cache data, and the controller
    elects only from the ISR (or the ELR): no draw can lose an acknowledged record."""
    started = client.post("/api/search", json={"scenario": dict(SAFE, kafka_version="4.1"), "runs": 8,
                                                "profile": CRASH_AND_CUT})
    assert started.status_code == 202, started.get_json()
    view = wait(client, started.get_json()["id"], timeout=300)
    assert view["state"] == "done", view.get("error")
    assert view["report"]["found"] is False and "not found in 8 runs" in view["report"]["message"]


def test_an_unsafe_kraft_setting_gives_a_counterexample_that_replays():
    """acks=1 in 3.9-kraft: the leader acknowledges before any follower has the record, so a crash
    of the leader right after elects a follower without it (KIP-101's loss, unchanged by KRaft)."""
    base = dict(SAFE, kafka_version="3.9-kraft",
                clients=[dict(SAFE["clients"][0], acks="1", rate_per_s=50)])
    found = next(((seed, scenario) for seed in range(12)
                  for scenario in [candidate(base, dict(NONE, crash_process=[6, 1000, 15000]), seed)]
                  if check(scenario, LOSS)[0]), None)
    assert found is not None, "acks=1 with leader crashes lost nothing in 12 draws"
    small, evaluations = shrink(found[1], LOSS, budget=60)
    assert 0 < evaluations <= 60
    assert small["kafka_version"] == "3.9-kraft" and len(small["timeline"]) <= len(found[1]["timeline"])
    result = Simulation(small).run()
    assert any(r["status"] == "acked" and r["lost"] and r["acks"] == "1" for r in result["records"])
