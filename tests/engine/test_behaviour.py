"""Single rules of Kafka's replication, each pinned with a small scenario and the numbers of docs/model.md."""
import json
import subprocess
import sys

from engine.simulation import Simulation

from .conftest import events


def cluster(**overrides):
    doc = {"seed": 1, "kafka_version": "2.6", "brokers": 3,
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}], "duration_ms": 20000}
    doc.update(overrides)
    return doc


def replica(sim, broker, key="t-0"):
    return sim.brokers[broker].logs[key]


def test_follower_hw_lags_the_leader_by_one_fetch_round_trip():
    # §5.2: the fetch that advances the leader's HW carries the old HW; with no new data the next
    # response is parked for up to replica.fetch.wait.max.ms (500 ms).
    sim = Simulation(cluster(timeline=[{"at_ms": 1000, "op": "produce", "topic": "t", "acks": "all"}]))
    sim.advance_to(1010)
    record = sim.records["producer-0"]
    assert record.status == "acked"
    assert replica(sim, 0).hw == 1
    assert replica(sim, 1).hw == 0 and replica(sim, 2).hw == 0 and replica(sim, 1).leo == 1
    sim.advance_to(1400)
    assert replica(sim, 1).hw == 0
    sim.advance_to(1600)
    assert replica(sim, 1).hw == 1 and replica(sim, 2).hw == 1


def test_restart_before_the_old_session_expires_fails_to_register():
    r = Simulation(cluster(timeline=[{"at_ms": 1000, "op": "crash", "broker": 2},
                                     {"at_ms": 2000, "op": "restart", "broker": 2}])).run()
    [failed] = [e for e in events(r, "broker_stopped", broker=2) if e["state"] == "registration_failed"]
    assert "NodeExistsException" in failed["reason"]
    assert r["brokers"]["2"]["state"] == "registration_failed"
    ok = Simulation(cluster(timeline=[{"at_ms": 1000, "op": "crash", "broker": 2},
                                      {"at_ms": 19500, "op": "restart", "broker": 2}])).run()
    assert ok["brokers"]["2"]["state"] == "running"


def test_not_enough_replicas_after_append_when_the_isr_shrinks_under_the_request():
    # §6 step 6: the data is appended and committed, the client is told durability fell short.
    r = Simulation(cluster(
        brokers=2, config={"min.insync.replicas": 2, "replica.lag.time.max.ms": 2000},
        topics=[{"name": "t", "partitions": 1, "replication_factor": 2}],
        clients=[{"name": "once", "type": "producer", "topic": "t", "acks": "all", "retries": 0}],
        timeline=[{"at_ms": 1000, "op": "isolate", "broker": 1, "from": "brokers"},
                  {"at_ms": 1100, "op": "produce", "topic": "t", "producer": "once"}])).run()
    record = r["records"][0]
    assert (record["status"], record["error"]) == ("failed", "NOT_ENOUGH_REPLICAS_AFTER_APPEND")
    assert r["partitions"]["t-0"]["replica_state"]["0"]["log"][0]["id"] == record["id"]
    [shrink] = events(r, "isr_shrink")
    assert 3000 < shrink["t_ms"] <= 4100          # lag 2 s, task every 1 s


def test_acks_0_records_are_unacknowledged():
    r = Simulation(cluster(timeline=[{"at_ms": 1000, "op": "produce", "topic": "t", "acks": "0",
                                      "count": 3}])).run()
    assert {x["status"] for x in r["records"]} == {"unacknowledged"}
    assert r["partitions"]["t-0"]["replica_state"]["0"]["leo"] == 3


def test_power_failure_keeps_only_what_reached_the_disk():
    sim = Simulation(cluster(
        timeline=[{"at_ms": 1000, "op": "produce", "topic": "t", "acks": "all", "count": 2},
                  {"at_ms": 2000, "op": "flush", "broker": 2},
                  {"at_ms": 3000, "op": "produce", "topic": "t", "acks": "all", "count": 3},
                  {"at_ms": 4000, "op": "crash", "broker": 2, "mode": "power"}], duration_ms=5000))
    sim.run()
    assert replica(sim, 2).leo == 2 and replica(sim, 0).leo == 5
    [lost_tail] = [e for e in sim.history if e["type"] == "truncation" and e.get("cause") == "power_failure"]
    assert (lost_tail["from_offset"], lost_tail["to_offset"]) == (5, 2)


def power_failed_leader(restart_ms):
    return Simulation(cluster(
        duration_ms=40000,
        clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 50}],
        timeline=[{"at_ms": 5000, "op": "crash", "broker": 0, "mode": "power"},
                  {"at_ms": restart_ms, "op": "restart", "broker": 0}])).run()


def first_ack_after(result, sent_from_ms):
    return min(x["acked_ms"] for x in result["records"]
               if x["sent_ms"] >= sent_from_ms and x["status"] == "acked")


def test_a_powered_off_leader_stalls_the_producer_until_its_requests_time_out_or_it_boots():
    # A powered-off machine sends no reset: the producer's in-flight requests (max.in.flight 5)
    # hang for request.timeout.ms 30000 (2.6 has no connection setup timeout, KIP-601 is 2.7),
    # even though the controller elects broker 1 at session expiry (~18 s). Once the machine
    # boots, the producer's retransmissions meet a TCP reset: the requests fail and are retried
    # on the new leader one metadata round later.
    late = power_failed_leader(restart_ms=38000)
    [elected] = [e for e in late["history"] if e["type"] == "leader_elected" and e["t_ms"] > 5000]
    assert elected["leader"] == 1 and 18000 <= elected["t_ms"] < 19000
    assert 35000 <= first_ack_after(late, 5000) < 35500     # 5 s + 30 s request timeout
    booted = power_failed_leader(restart_ms=25000)
    assert 25000 <= first_ack_after(booted, 5000) < 25500   # the reset at boot, not the timeout


def test_a_zookeeper_request_held_by_a_short_cut_arrives_after_the_heal():
    # Broker 1 dies at 1 s; its session expires at ~19 s while the controller (broker 0) cannot
    # reach ZooKeeper (cut 15-21 s, shorter than the 12 s read timeout: the connection lives).
    # The watch fires; the controller's read of /brokers/ids cannot cross the cut, TCP delivers
    # it after the heal, and the failover happens then (once, a lost read stalled it for good).
    r = Simulation(cluster(
        duration_ms=40000, topics=[{"name": "t", "partitions": 3, "replication_factor": 3}],
        timeline=[{"at_ms": 1000, "op": "crash", "broker": 1},
                  {"at_ms": 15000, "op": "cut", "from": 0, "to": "zk"},
                  {"at_ms": 21000, "op": "heal"}])).run()
    [expired] = events(r, "session_expired", broker=1)
    assert 15000 < expired["t_ms"] < 21000
    [elected] = [e for e in events(r, "leader_elected") if e["partition"] == 1]
    assert elected["leader"] == 2 and 21000 < elected["t_ms"] < 21100
    assert not events(r, "zk_disconnected")
    assert all(1 not in p["isr"] for p in r["partitions"].values())


def test_os_writeback_makes_data_durable_after_30_seconds():
    sim = Simulation(cluster(
        timeline=[{"at_ms": 1000, "op": "produce", "topic": "t", "acks": "all", "count": 4},
                  {"at_ms": 40000, "op": "crash", "broker": 2, "mode": "power"}], duration_ms=41000))
    sim.run()
    assert replica(sim, 2).leo == 4    # dirty for > sim.os.dirty.expire.ms 30000: written back


def test_restart_reads_the_hw_from_the_checkpoint_which_is_stale():
    sim = Simulation(cluster(
        clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 50}],
        timeline=[{"at_ms": 7000, "op": "crash", "broker": 2},
                  {"at_ms": 30000, "op": "restart", "broker": 2}], duration_ms=30001))
    sim.run()
    [start] = [e for e in sim.history if e["type"] == "broker_starting" and e["broker"] == 2 and e["t_ms"] == 30000]
    # the checkpoint task ran at ~5 s (every 5 s from the first LeaderAndIsr): HW ~ 5 s * 50/s
    checkpointed = int(start["reason"].split("HW ")[-1])
    assert 230 <= checkpointed <= 255 and replica(sim, 2).leo >= 340


def test_before_0_11_an_empty_isr_is_possible_with_unclean_election():
    r = Simulation({"kafka_version": "0.10", "brokers": 3,
                    "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [1, 2]}}],
                    "timeline": [{"at_ms": 1000, "op": "crash", "broker": 1},
                                 {"at_ms": 1000, "op": "crash", "broker": 2}], "duration_ms": 10000}).run()
    assert r["partitions"]["t-0"]["isr"] == [] and r["partitions"]["t-0"]["leader"] == -1


def test_from_1_1_the_last_isr_member_is_kept():
    r = Simulation({"kafka_version": "1.1", "brokers": 3,
                    "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [1, 2]}}],
                    "timeline": [{"at_ms": 1000, "op": "crash", "broker": 1},
                                 {"at_ms": 1000, "op": "crash", "broker": 2}], "duration_ms": 10000}).run()
    assert r["partitions"]["t-0"]["isr"] == [2] and r["partitions"]["t-0"]["leader"] == -1


def test_before_2_1_truncation_below_the_follower_with_unclean_disabled_halts_the_broker():
    # §7: "Exiting because log truncation is not allowed" (<= 2.0, unclean disabled).
    r = Simulation({"kafka_version": "0.10", "brokers": 3, "config": {"unclean.leader.election.enable": False},
                    "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [1, 2]}}],
                    "timeline": [{"at_ms": 1000, "op": "produce", "topic": "t", "acks": "all"},
                                 {"at_ms": 2000, "op": "flush", "broker": 1},
                                 {"at_ms": 2000, "op": "flush", "broker": 2},
                                 {"at_ms": 3000, "op": "produce", "topic": "t", "acks": "all"},
                                 {"at_ms": 4000, "op": "flush", "broker": 1},
                                 {"at_ms": 11000, "op": "crash", "broker": 1, "mode": "power"},
                                 {"at_ms": 11000, "op": "crash", "broker": 2, "mode": "power"},
                                 {"at_ms": 20000, "op": "restart", "broker": 2},
                                 {"at_ms": 30000, "op": "restart", "broker": 1}], "duration_ms": 40000}).run()
    [halted] = [e for e in events(r, "broker_stopped", broker=1) if e["state"] == "halted"]
    assert "log truncation is not allowed" in halted["reason"]


def test_the_isr_change_notification_waits_at_most_60_s_under_churn():
    # §4.2: never more than 60 s since the last propagation, even if changes never stop.
    sim = Simulation(cluster(duration_ms=1))
    broker = sim.brokers[0]
    broker.state = "running"
    broker.last_isr_propagation_ms = 0
    broker.isr_change_set = {"t-0": None}
    sim.scheduler.now_ms = 60001
    broker.last_isr_change_ms = 60000            # a change 1 ms ago: the blackout is not over
    calls = []
    broker.zk.call = lambda op, args, cb, ctx=None: calls.append(args["path"])
    broker.set_timer = lambda *a: None
    broker._isr_change_propagation_task()
    assert calls == ["/isr_change_notification/isr_change_"]


def test_cli_prints_the_result_document_and_rejects_bad_scenarios(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(cluster(duration_ms=3000)))
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(good), "--trace", str(tmp_path / "t.jsonl")],
                         capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    for key in ("scenario", "end_ms", "controller", "brokers", "partitions", "zk", "records", "consumed",
                "history", "violations", "stats"):
        assert key in result
    assert result["stats"]["wall_ms"] >= 0 and result["end_ms"] == 3000
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert len(lines) == len(result["history"]) and json.loads(lines[0])["type"] == "broker_starting"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"brokers": 3, "topics": [{"name": "t", "replication_factor": 5}]}))
    out = subprocess.run([sys.executable, "-m", "engine", "run", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2
    assert "topics[0].replication_factor" in out.stderr and "from 1 to 3" in out.stderr


def test_a_short_cut_delays_a_follower_without_costing_it_its_isr_membership():
    # TCP retransmits what a 3 s cut held back: the follower's fetch (and the leader's answer)
    # arrive after the heal, long before replica.lag.time.max.ms (30 s in 2.6) runs out.
    r = Simulation(cluster(
        duration_ms=60000,
        clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 50}],
        timeline=[{"at_ms": 10000, "op": "isolate", "broker": 2, "from": "brokers"},
                  {"at_ms": 13000, "op": "heal"}])).run()
    assert not events(r, "isr_shrink")
    during = [x for x in r["records"] if 10000 <= x["sent_ms"] < 13000]
    assert during and all(x["status"] == "acked" and 13000 <= x["acked_ms"] < 13200 for x in during)


def test_a_request_held_for_a_restarted_process_meets_a_reset():
    # The producer's requests to broker 0 are held by a cut; broker 0 restarts meanwhile. When
    # the link heals, the producer's kernel retransmits at its next backoff instant (first send +
    # 0.2 * (2**k - 1) s: 25.4 s after the first held send, docs/model.md §16); the new process
    # knows nothing of the old connection and resets it: the producer sees a NETWORK_EXCEPTION
    # then (not at its 30 s timeout, 35 s) and retries on the current leader.
    sim = Simulation(cluster(
        duration_ms=40000,
        clients=[{"name": "p1", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 50}],
        timeline=[{"at_ms": 5000, "op": "cut", "from": "p1", "to": 0},
                  {"at_ms": 5500, "op": "crash", "broker": 0},
                  {"at_ms": 25000, "op": "restart", "broker": 0},   # after its session expired
                  {"at_ms": 26000, "op": "heal"}]))
    answers, holds = [], []

    def observe(kind, env):
        if kind == "send" and env.source == 0 and env.target == "p1":
            answers.append((env.sent_at_ms, env.body.get("error")))
        if kind == "hold" and env.source == "p1" and env.target == 0:
            holds.append(env.sent_at_ms)
    sim.network.observer = observe
    r = sim.run()
    retransmitted = holds[0] + 25400
    assert 26000 <= retransmitted < 26000 + 12800
    after_heal = [a for a in answers if a[0] >= 26000]
    assert after_heal[0] == (retransmitted + 1, "NETWORK_EXCEPTION")  # meets the new process
    held = [x for x in r["records"] if 5000 <= x["sent_ms"] < 5400]
    assert held and all(x["status"] == "acked" and retransmitted <= x["acked_ms"] < retransmitted + 500
                        for x in held)
