"""A live room's Kafka metrics (app/runner/metrics.py): sampled as time moves on at the time
chart's cadence, bounded, one sample per frame at most (entities ``mcat`` and ``msample``, sent
only when they change), and the history served to a page that joins (GET /api/rooms/<room>/metrics)."""
from app.runner import metrics as live_metrics
from app.runner.metrics import LiveMetrics
from engine.metrics import catalog
from engine.metrics.sampler import MetricsSampler
from engine.scenario.library import library
from engine.simulation import Simulation

from tests.app.conftest import create, frames, run_for


def test_samples_spread_over_the_whole_run_and_stay_bounded():
    doc = library()["broker-failure-clean-election"]
    sim = Simulation(doc)
    live = LiveMetrics(sim)
    for t in range(0, 60001, 20):
        sim.advance_to(t)
        live.observe(sim)
    points = live.points
    assert len(points) <= live_metrics.MAX_POINTS and points[0][0] == 0 and points[-1][0] >= 59000
    times = [p[0] for p in points]
    assert times == sorted(times) and len(set(times)) == len(times)
    ids = catalog.ids_of(doc["kafka_version"])
    assert all(len(p) == 1 + len(ids) for p in points)
    # each sample is what a sampler reading the same run at that moment says
    check = Simulation(doc)
    sampler = MetricsSampler(check)
    for point in points[::50]:
        check.advance_to(point[0])
        expected = sampler.sample(check)
        urp = ids.index("under_replicated") + 1
        assert point[urp] == expected[urp] and point[ids.index("isr_shrinks") + 1][0] == expected[ids.index("isr_shrinks") + 1][0]
    got = live.of(sim)
    assert got["kafka_version"] == "2.6" and [m["id"] for m in got["metrics"]] == ids
    assert got["points"][-1][0] == sim.now_ms


def test_frames_carry_the_catalog_once_and_only_new_samples(app, client):
    create(client)
    run_for(app, 0.5)
    first = frames(client)
    full = [f for f in first if f["full"]][-1]
    assert full["set"]["mcat"]["kafka_version"] == "2.6"
    mbeans = [m["mbean"] for m in full["set"]["mcat"]["metrics"]]
    assert "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions" in mbeans
    assert "kafka.controller:type=KafkaController,name=ActiveControllerCount" in mbeans
    run_for(app, 2.0)
    later = [f for f in frames(client) if not f["full"]]
    assert later and not any("mcat" in f["set"] for f in later)      # the catalog does not change
    samples = [f["set"]["msample"] for f in later if "msample" in f["set"]]
    assert samples and all(len(s) == len(mbeans) + 1 for s in samples)
    times = [s[0] for s in samples]
    assert times == sorted(times) and len(set(times)) == len(times)   # sent once each


def test_a_page_that_joins_gets_the_rooms_metrics_so_far(app, client, http):
    room = create(client)
    run_for(app, 3.0)
    reply = http.get(f"/api/rooms/{room}/metrics").get_json()
    assert reply["ok"] and reply["run"] >= 1 and reply["kafka_version"] == "2.6"
    assert reply["points"][0][0] == 0 and reply["points"][-1][0] >= 2500
    assert len(reply["points"][0]) == 1 + len(reply["metrics"])
    assert http.get("/api/rooms/zzzzzzzz/metrics").status_code == 404


def test_a_restart_starts_new_metrics(app, client):
    room_id = create(client)
    run_for(app, 2.0)
    room = app.extensions["isrlab"]["runner"].require(room_id)
    before = room.metrics
    reply = client.emit("control", {"action": "restart"}, callback=True)
    assert reply["ok"]
    assert room.metrics is not before and room.metrics.points[-1][0] == 0
