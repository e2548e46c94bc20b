"""Kafka's own metrics over a run (engine/metrics, docs/model.md §22): the numbers Kafka's gauges,
Yammer meters and client sensors give, in the runs where they move, and that reading them never
changes a run."""
import hashlib
import json
import math

import pytest

from engine import eras
from engine.metrics import catalog, sensors
from engine.metrics.sampler import MetricsSampler
from engine.metrics.yammer import M1_ALPHA, Meter, Timer
from engine.simulation import Simulation
from engine.scenario.library import library

from .test_determinism import trace_hash


def cluster(era, timeline, duration_ms=60000, **extra):
    doc = {"name": "metrics", "seed": 1, "kafka_version": era, "brokers": 3, "duration_ms": duration_ms,
           "config": {"min.insync.replicas": 2},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
           "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
           "timeline": timeline}
    doc.update(extra)
    return doc


def at(sim, sampler, t_ms):
    sim.advance_to(t_ms)
    assert sim.now_ms == t_ms
    return sampler.values(sim)


# -- Yammer 2.2.0 meters and Kafka's client sensors ----------------------------------------------------
def test_meter_ticks_every_5_s_from_its_creation_and_averages_over_a_minute():
    meter = Meter(1000)
    meter.mark(2000)
    meter.mark(5999)
    assert meter.read(5999) == (2, 0.0)            # no tick yet: the rate is the last tick's
    count, rate = meter.read(6000)                 # first tick: rate = 2 marks / 5 s
    assert (count, rate) == (2, 0.4)
    meter.mark(6000)                               # at the tick's millisecond: the next interval
    assert meter.read(11000)[1] == pytest.approx(0.4 + M1_ALPHA * (0.2 - 0.4))
    assert meter.read(16000)[1] == pytest.approx((0.4 + M1_ALPHA * (0.2 - 0.4)) * (1 - M1_ALPHA))
    assert M1_ALPHA == pytest.approx(1 - math.exp(-1 / 12))


def test_timer_keeps_count_rate_mean_and_max_of_every_event():
    timer = Timer(0)
    timer.update(1000, 8)
    timer.update(2000, 10)
    assert timer.read(4999) == (2, 0.0, 9.0, 10)
    assert timer.read(5000) == (2, 0.4, 9.0, 10)


def test_client_rate_counts_at_least_one_whole_window_and_forgets_after_two():
    stat = sensors.new_stat()
    sensors.record(stat, 3, 1000)
    assert sensors.rate(stat, 1000) == pytest.approx(3 / 30.0)          # 0 s elapsed + 1 window
    assert sensors.rate(stat, 31000) == pytest.approx(3 / 30.0)         # 30 s: one full window
    assert sensors.rate(stat, 41000) == pytest.approx(3 / 40.0)
    sensors.record(stat, 2, 41000)                                      # rolls to sample 2
    assert sensors.rate(stat, 41000) == pytest.approx(5 / 40.0)
    assert sensors.rate(stat, 61000) == pytest.approx(2 / 50.0)         # sample 1 is 60 s old: reset;
    # the oldest kept sample is then the second (41 s): 20 s elapsed + one window
    assert sensors.avg(sensors.new_stat(), 0) is None                   # NaN from 2.2 (KAFKA-7528)
    assert sensors.avg(sensors.new_stat(), 0, nan_when_empty=False) == 0.0


# -- eras: a metric Kafka did not have is not shown --------------------------------------------------
def test_each_era_lists_only_the_metrics_its_kafka_has():
    ids = {v: catalog.ids_of(v) for v in eras.VERSIONS}
    assert "under_min_isr" not in ids["0.10"] and "under_min_isr" in ids["1.1"]       # KIP-164, 1.0
    for v in ("0.10", "1.1", "2.0", "2.0.1"):
        assert "at_min_isr" not in ids[v]                                            # KIP-427, 2.3
    assert "at_min_isr" in ids["2.4"]
    for v in ("0.10", "2.7", "3.0"):
        assert "fenced_brokers" not in ids[v] and "active_brokers" not in ids[v]      # KIP-748, 3.1
    assert {"fenced_brokers", "active_brokers"} <= set(ids["3.3"]) & set(ids["3.7"])
    for v in eras.KRAFT_VERSIONS:
        assert "leader_election" not in ids[v] and "metadata_lag" in ids[v]
        assert {"fenced_brokers", "active_brokers", "unclean_elections"} <= set(ids[v])
    for v in eras.ZK_VERSIONS:
        assert "metadata_lag" not in ids[v] and "leader_election" in ids[v]


@pytest.mark.parametrize("era", ["0.10", "2.0.1", "3.3", "4.1"])
def test_a_sample_has_one_value_per_metric_of_its_era(era):
    sim = Simulation(cluster(era, [], duration_ms=3000))
    sampler = MetricsSampler(sim)
    sim.advance_to(3000)
    sample = sampler.sample(sim)
    assert sample[0] == 3000 and len(sample) == 1 + len(catalog.ids_of(era))
    assert set(sampler.values(sim)) == set(catalog.ids_of(era))


# -- the ReplicaManager gauges and meters -------------------------------------------------------------
@pytest.mark.parametrize("era", ["2.6", "3.7", "3.9-kraft"])
def test_under_replicated_becomes_1_on_the_leader_when_its_isr_shrink_is_applied(era):
    """A follower cut off from the brokers (still alive): the leader drops it after
    replica.lag.time.max.ms (30000 from 2.5), at an isr-expiration run; the gauges move at the
    commit of that shrink, not before."""
    doc = cluster(era, [{"at_ms": 5000, "op": "isolate", "broker": 2, "from": "brokers"}])
    shrink = next(e for e in Simulation(doc).run()["history"] if e["type"] == "isr_shrink")
    assert "by" not in shrink and shrink["isr"] == [0, 1]
    t = shrink["t_ms"]
    assert 5000 + 30000 < t < 5000 + 30000 + 15000 + 2000    # lag, then the next expiration run
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    before = at(sim, sampler, t - 1)
    assert before["under_replicated"] == (0, {0: 0, 1: 0, 2: 0})
    assert before["isr_shrinks"][0] == [0, 0.0]
    now = at(sim, sampler, t)
    assert now["under_replicated"] == (1, {0: 1, 1: 0, 2: 0})
    assert now["at_min_isr"][0] == 1 and now["under_min_isr"][0] == 0    # ISR 2 = min.insync 2
    assert now["isr_shrinks"][1][0] == (1, 0.0)                          # marked on the leader
    start = sampler.started[0]                                           # the leader's process start
    tick = start + 5000 * ((t - start) // 5000 + 1)
    count, rate = at(sim, sampler, tick)["isr_shrinks"][0]
    assert count == 1 and rate == pytest.approx(M1_ALPHA * 1 / 5.0)


def test_under_min_isr_counts_a_single_member_isr_below_min_insync():
    doc = cluster("2.6", [{"at_ms": 5000, "op": "isolate", "broker": 1, "from": "brokers"},
                          {"at_ms": 5000, "op": "isolate", "broker": 2, "from": "brokers"}])
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    shrinks = []
    while not sim.finished:
        sim.step_event()
        shrinks = [e for e in sim.history if e["type"] == "isr_shrink"]
        if shrinks:
            break
    values = sampler.values(sim)
    assert shrinks[0]["isr"] == [0]
    assert values["under_min_isr"] == (1, {0: 1, 1: 0, 2: 0})
    assert values["at_min_isr"][0] == 0 and values["under_replicated"][0] == 1


def test_max_lag_is_the_leader_hw_minus_the_follower_leo_after_each_fetch():
    """Out of the ISR for 20 s, the follower catches up 10 records a fetch
    (replica.fetch.max.bytes 1000 / 100-byte records): MaxLag on the follower is HW - LEO."""
    doc = {"name": "lag", "seed": 1, "kafka_version": "2.4", "brokers": 2, "duration_ms": 40000,
           "config": {"replica.fetch.max.bytes": 1000},
           "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [0, 1]}}],
           "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 200}],
           "timeline": [{"at_ms": 5000, "op": "isolate", "broker": 1, "from": "brokers"},
                        {"at_ms": 25000, "op": "heal"}]}
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    seen = []
    while sim.now_ms < 40000:
        sim.advance_to(sim.now_ms + 1)
        lag, per = sampler.values(sim)["max_lag"]
        if lag or seen:
            leader, follower = sim.brokers[0].logs["t-0"], sim.brokers[1].logs["t-0"]
            seen.append((lag, per[0], leader.hw - follower.leo))
        if seen and not lag:
            break
    first = seen[0]
    assert first[0] > 4000 and first[1] == 0            # the follower's gauge, not the leader's
    assert 0 <= first[2] - first[0] <= 1                 # the answer's HW, one record behind at most
    drops = [a[0] - b[0] for a, b in zip(seen, seen[1:])]
    assert max(drops) <= 10 and seen[-1][0] == 0


# -- the controller ---------------------------------------------------------------------------------
def offline_story(era="2.6"):
    return {"name": "offline", "seed": 1, "kafka_version": era, "brokers": 3, "duration_ms": 90000,
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [1, 2]},
                        "config": {"unclean.leader.election.enable": True}}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 10}],
            "timeline": [{"at_ms": 5000, "op": "crash", "broker": 2}, {"at_ms": 30000, "op": "crash", "broker": 1},
                         {"at_ms": 60000, "op": "restart", "broker": 2}]}


def test_offline_partitions_and_unclean_elections_on_the_controller():
    """Both replicas die one after the other: the partition is offline from the end of the
    BrokerChange event that loses its leader (updateMetrics) until the restarted follower, out
    of the ISR, is elected uncleanly; the controller's meter counts that election."""
    probe = Simulation(offline_story())
    probe.advance_to(50000)
    controller = probe.brokers[0].controller
    assert controller.active
    (_first, _), (lost_end, lost_ms) = controller.broker_change_times[:2]
    assert lost_ms > 0
    sim = Simulation(offline_story())
    sampler = MetricsSampler(sim)
    assert at(sim, sampler, lost_end - 1)["offline_partitions"][0] == 0    # held while the event runs
    assert at(sim, sampler, lost_end)["offline_partitions"] == (1, {0: 1})  # broker 1 and 2 are down
    election = next(e for e in Simulation(offline_story()).run()["history"]
                    if e["type"] == "leader_elected" and e["kind"] == "unclean")
    values = at(sim, sampler, election["t_ms"])
    assert values["unclean_elections"][0] == [1, 0.0]
    assert values["unclean_elections"][1][0] == (1, 0.0)                 # the controller's ControllerStats
    assert at(sim, sampler, 65000)["unclean_elections"][0] == [1, pytest.approx(0.2 * M1_ALPHA)]
    final = at(sim, sampler, 90000)
    assert final["offline_partitions"][0] == 0
    count, _rate, mean, longest = final["leader_election"][0]
    assert count == len(sim.brokers[0].controller.broker_change_times) == 3
    assert longest == max(d for _, d in sim.brokers[0].controller.broker_change_times)
    assert mean == pytest.approx(sum(d for _, d in sim.brokers[0].controller.broker_change_times) / 3)


def test_offline_partitions_is_read_live_in_0_10():
    """0.10.2's gauge computes the count when read, during the event too."""
    doc = offline_story("0.10")
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    sim.advance_to(30000)
    lost = None
    while sim.now_ms < 60000:
        sim.step_event()
        if sim.brokers[0].controller.busy and 1 not in sim.brokers[0].controller.live \
                and any(st["leader"] == 1 for st in sim.brokers[0].controller.states.values()):
            lost = sampler.values(sim)["offline_partitions"][0]
            break
    assert lost == 1


def test_active_controller_count_is_0_during_a_controller_gap_and_1_otherwise():
    """The controller's broker crashes: nobody is controller until its ZooKeeper session expires
    (zookeeper.session.timeout.ms 18000 in 2.6) and another broker wins /controller."""
    doc = cluster("2.6", [{"at_ms": 10000, "op": "crash", "broker": 0}], duration_ms=40000)
    history = Simulation(doc).run()["history"]
    elected = [e["t_ms"] for e in history if e["type"] == "controller_elected"]
    assert len(elected) == 2 and 10000 + 6000 < elected[1] < 10000 + 18000 + 2000
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    assert at(sim, sampler, 9999)["active_controller"][0] == 1
    assert at(sim, sampler, 10000)["active_controller"] == (0, {1: 0, 2: 0})
    assert at(sim, sampler, elected[1] - 1)["active_controller"][0] == 0
    assert at(sim, sampler, elected[1])["active_controller"][0] == 1


def test_zk_controller_broker_counts_from_3_3():
    sim = Simulation(cluster("3.3", [{"at_ms": 5000, "op": "crash", "broker": 2}], duration_ms=40000))
    sampler = MetricsSampler(sim)
    values = at(sim, sampler, 4000)
    assert values["active_brokers"][0] == 3 and values["fenced_brokers"][0] == 0
    assert at(sim, sampler, 40000)["active_brokers"][0] == 2


# -- KRaft -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("era", eras.KRAFT_VERSIONS)
def test_kraft_fenced_brokers_controller_gap_and_metadata_lag(era):
    probe = Simulation(cluster(era, [], duration_ms=3000))
    probe.advance_to(3000)
    active = probe.quorum.active
    doc = cluster(era, [{"at_ms": 10000, "op": "crash", "broker": 2},
                        {"at_ms": 25000, "op": "crash", "controller": active},
                        {"at_ms": 40000, "op": "isolate", "broker": 1, "from": "controllers"}])
    history = Simulation(doc).run()["history"]
    fenced = next(e["t_ms"] for e in history if e["type"] == "broker_fenced" and e["broker"] == 2)
    back = next(e["t_ms"] for e in history if e["type"] == "controller_activated" and e["t_ms"] > 25000)
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    values = at(sim, sampler, 9000)
    assert (values["fenced_brokers"][0], values["active_brokers"][0], values["active_controller"][0]) == (0, 3, 1)
    # a NoOpRecord every metadata.max.idle.interval.ms (500) keeps it small; before 4.1 a parked
    # metadata fetch waits up to 500 ms more for its answer (KAFKA-14145 fixed in 4.1)
    assert values["metadata_lag"][0] < (600 if era == "4.1" else 1100)
    assert at(sim, sampler, fenced - 1)["fenced_brokers"][0] == 0
    values = at(sim, sampler, fenced)
    assert (values["fenced_brokers"][0], values["active_brokers"][0]) == (1, 2)
    # broker.session.timeout.ms 9000 after its last heartbeat (broker.heartbeat.interval.ms 2000)
    assert 10000 - 2000 + 9000 <= fenced <= 10000 + 9000 + 1000
    assert at(sim, sampler, 25000)["active_controller"][0] == 0
    assert at(sim, sampler, back - 1)["active_controller"][0] == 0
    assert at(sim, sampler, back)["active_controller"][0] == 1
    sim.advance_to(39000)
    last = sim.quorum.committed_log[sim.brokers[1].metadata_offset - 1]["log_time_ms"]
    values = at(sim, sampler, 50000)
    assert values["metadata_lag"][1][1] >= 50000 - 40000   # cut off: the lag grows with the clock
    assert values["metadata_lag"][1][1] == 50000 - next(r["log_time_ms"] for r in sim.quorum.committed_log
                                                         if r["offset"] == sim.brokers[1].metadata_offset - 1)
    assert last <= 40000 and values["metadata_lag"][0] == values["metadata_lag"][1][1]


def test_kraft_unclean_election_is_counted_from_the_committed_log():
    doc = offline_story("3.9-kraft")
    doc["timeline"] = [{"at_ms": 5000, "op": "crash", "broker": 2}, {"at_ms": 30000, "op": "crash", "broker": 1},
                       {"at_ms": 60000, "op": "restart", "broker": 2}]
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    history = Simulation(doc).run()["history"]
    unclean = [e for e in history if e["type"] == "leader_elected" and e.get("kind") == "unclean"]
    offline = [e for e in history if e["type"] == "partition_change" and e.get("leader") == -1]
    assert len(unclean) == 1 and offline
    assert at(sim, sampler, offline[0]["t_ms"])["offline_partitions"][0] == 1
    values = at(sim, sampler, unclean[0]["t_ms"])
    assert values["unclean_elections"][0] == [1, 0.0] and values["offline_partitions"][0] == 0


# -- the producer's sensors ---------------------------------------------------------------------------------
def producer_story(era):
    return {"name": "producers", "seed": 1, "kafka_version": era, "brokers": 3, "duration_ms": 40000,
            "network": {"latency_ms": 5}, "config": {"min.insync.replicas": 2},
            "topics": [{"name": "t", "partitions": 1, "replication_factor": 2, "assignment": {"0": [0, 1]}}],
            "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "1", "rate_per_s": 10},
                        {"name": "p2", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 10,
                         "start_ms": 20000}],
            "timeline": [{"at_ms": 5000, "op": "crash", "broker": 1}]}


def test_record_error_rate_and_request_latency_avg_of_each_producer():
    """0.10 producers do not retry: every acks=all batch answered NOT_ENOUGH_REPLICAS fails; the
    errors sensor's rate is records over max(elapsed, one window). A produce request takes the
    link's 5 ms each way."""
    sim = Simulation(producer_story("0.10"))
    sampler = MetricsSampler(sim)
    values = at(sim, sampler, 19999)
    assert values["record_error_rate"][0] == {"p1": 0.0}          # p2 not started: no metrics
    assert values["request_latency_avg"][0] == {"p1": 10.0}
    assert at(sim, sampler, 20000)["request_latency_avg"][0]["p2"] == 0.0   # Avg of nothing: 0 up to 2.1
    failed = [e for e in Simulation(producer_story("0.10")).run()["history"] if e["type"] == "produce_failed"]
    first = failed[0]["t_ms"]
    errors = sum(len(e["records"]) for e in failed if e["t_ms"] <= 25000)
    rate = at(sim, sampler, 25000)["record_error_rate"][0]["p2"]
    assert rate == pytest.approx(errors / ((25000 - first + 30000) / 1000.0))


def test_request_latency_avg_of_no_response_is_nan_from_2_2():
    sim = Simulation(producer_story("2.6"))
    sampler = MetricsSampler(sim)
    assert at(sim, sampler, 20000)["request_latency_avg"][0] == {"p1": 10.0, "p2": None}


# -- reading never changes the run ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["unclean-election-loss", "controller-failover-kraft"])
def test_sampling_every_100_ms_leaves_the_run_byte_for_byte_the_same(name):
    doc = library()[name]
    plain = trace_hash(doc)
    digest = hashlib.sha256()
    sim = Simulation(doc, trace=lambda e: digest.update(json.dumps(e, sort_keys=True).encode()))
    sampler = MetricsSampler(sim)
    samples = []
    t = 0
    while not sim.finished:
        t += 100
        sim.advance_to(t)
        samples.append(sampler.sample(sim))
    digest.update(json.dumps(sim.result(), sort_keys=True, default=str).encode())
    assert digest.hexdigest() == plain
    again = Simulation(doc)
    resampled = MetricsSampler(again)
    for sample in samples:
        again.advance_to(sample[0])
        assert resampled.sample(again) == sample


def test_two_active_controllers_while_the_old_one_has_not_learnt_its_session_expired():
    """controller-failover-session-expiry: broker 0, cut off from ZooKeeper, keeps believing it is
    the controller after broker 1 won /controller, until it hears of its expired session: the sum
    of ActiveControllerCount is 2 in between, as on a real cluster's dashboard."""
    from engine.metrics.run_summary import run_with_metrics
    doc = library()["controller-failover-session-expiry"]
    history = Simulation(doc).run()["history"]
    second = next(e["t_ms"] for e in history if e["type"] == "controller_elected" and e["broker"] == 1)
    resigned = next(e["t_ms"] for e in history if e["type"] == "controller_resigned" and e["broker"] == 0)
    assert second < resigned
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    assert at(sim, sampler, second - 1)["active_controller"] == (1, {0: 1, 1: 0, 2: 0})
    assert at(sim, sampler, second)["active_controller"] == (2, {0: 1, 1: 1, 2: 0})
    assert at(sim, sampler, resigned - 1)["active_controller"][0] == 2
    assert at(sim, sampler, resigned)["active_controller"] == (1, {0: 0, 1: 1, 2: 0})
    summary = run_with_metrics(Simulation(doc))
    assert summary["active_controller_max"] == 2 and summary["no_active_controller_ms"] == 0


@pytest.mark.parametrize("era,marked", [("0.10", 1), ("1.1", 1), ("2.0", 1), ("2.4", 0)])
def test_isr_shrinks_per_sec_counts_a_refused_zookeeper_write_up_to_2_3(era, marked):
    """The zombie leader (library ``zombie-leader-after-pause``): broker 1 wakes from a 25 s pause
    after the controller moved leadership, and its ISR shrink meets a newer zkVersion ("Cached
    zkVersion ... skip updating ISR"). Partition.maybeShrinkIsr @ 0.10.2.2 - 2.3.1 marks
    IsrShrinksPerSec after updateIsr whatever the write answered; from 2.4.0 (KAFKA-8371) only a
    successful write marks it (the refusal marks FailedIsrUpdatesPerSec instead)."""
    doc = dict(library()["zombie-leader-after-pause"], kafka_version=era)
    failed = [e for e in Simulation(doc).run()["history"]
              if e["type"] == "isr_update_failed" and e["broker"] == 1]
    assert [(e["t_ms"], e["wanted"]) for e in failed] == [(30002, "isr_shrink")]
    sim = Simulation(doc)
    sampler = MetricsSampler(sim)
    assert at(sim, sampler, 30001)["isr_shrinks"][1][1] == (0, 0.0)
    assert at(sim, sampler, 30002)["isr_shrinks"][1][1] == (marked, 0.0)
    assert sampler.totals["isr_shrinks"] >= marked
