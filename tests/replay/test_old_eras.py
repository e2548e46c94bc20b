"""Old runs keep replaying as they were saved (the public contract; docs/model.md §19).

``fixtures/engine-1.1.0-era-*.json`` are runs as engine 1.1.0 saved and exported them (made by
commit 332d476's own engine and store: ``fixtures/make_old_runs.py``), one per era that existed
then before 2.7. Each cuts and heals links, so engine 1.2.0's TCP retransmission and
request-timeout rules would re-simulate it differently. Loaded into the store as a saved run of
engine 1.1.0, each must replay byte for byte: the replay service re-simulates it under 1.1.0
(``history_matches``), its seek states are a 1.1.0 re-simulation's at every moment, a link made
by 1.1.0 replays its 1.1.0 history, a fork continues as 1.1.0, and an import re-simulates as 1.1.0.
"""
import glob
import json
import os

import pytest

from app.jobwork import saved_run_rows, simulation_at
from app.replay import links as linkcodec
from app.replay.save import save_prepared
from app.replay.service import ReplayService
from app.store import runs
from engine.result import history_digest
from engine.simulation import Simulation
from engine.view import cluster_view

KEY = b"k" * 32
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
OLD_ERAS = ("0.10", "1.1", "2.0", "2.4", "2.6")   # the eras of engine 1.1.0 before 2.7


def fixture(era):
    with open(os.path.join(FIXTURES, f"engine-1.1.0-era-{era}.json"), encoding="utf-8") as handle:
        return json.load(handle)


def load_saved(store, doc, engine_version=None):
    """The exported run, in the store as the 1.1.0 server saved it (no re-simulation)."""
    s = doc["summary"]
    return runs.save_run(store, scenario=doc["scenario"], engine_version=engine_version or doc["engine_version"],
                         end_ms=doc["end_ms"], finished=doc["finished"],
                         summary={"records_total": s["records_total"], "acked": s["acked_count"],
                                  "failed": s["failed_count"], "lost": s["lost_count"],
                                  "violations": s["violations_count"]},
                         events=doc["events"], violations=doc["violations"], title=doc["title"],
                         source=doc["source"], created_ms=doc["created_ms"])["id"]


def moments(doc):
    end = doc["end_ms"]
    return sorted({0, 11_500, 12_100, 12_800, end // 2, end - 1, end} & set(range(end + 1)))


def test_the_fixtures_cover_every_old_era_and_stay_small():
    files = glob.glob(os.path.join(FIXTURES, "*.json"))
    assert sorted(fixture(era)["scenario"]["kafka_version"] for era in OLD_ERAS) == sorted(OLD_ERAS)
    assert sum(os.path.getsize(f) for f in files) < 200_000
    for era in OLD_ERAS:
        assert fixture(era)["engine_version"] == "1.1.0"


@pytest.mark.parametrize("era", OLD_ERAS)
def test_the_current_engine_alone_would_not_reproduce_them(era):
    """What makes the test meaningful: engine 1.2.0's own behaviour differs on each fixture."""
    doc = fixture(era)
    sim = Simulation(doc["scenario"])
    sim.advance_to(doc["end_ms"])
    assert history_digest(sim.history[:len(doc["events"])]) != history_digest(doc["events"])


@pytest.mark.parametrize("era", OLD_ERAS)
def test_a_run_saved_by_engine_1_1_0_replays_byte_identically(store, era):
    doc = fixture(era)
    run_id = load_saved(store, doc)
    service = ReplayService(store, KEY)               # a fresh server process: re-simulated
    seeker = service.seeker(run_id)
    assert seeker.info["history_matches"] is True
    assert seeker.info["engine_version"] == "1.1.0" and seeker.info["engine_note"] is None
    reference = Simulation(doc["scenario"], engine_version="1.1.0")
    for t in moments(doc):
        reference.advance_to(t)
        seen = service.view(run_id, t_ms=t)
        assert seen["t_ms"] == t
        assert seen["history_len"] == len(reference.history)
        assert seen["view"] == cluster_view(reference), f"the view at {t} ms differs"
    at_end = seeker.at_time(doc["end_ms"])
    assert at_end.history == doc["events"]
    assert at_end.engine_version == "1.1.0"
    # and the index saved for it is found again by the next server process
    again = ReplayService(store, KEY).seeker(run_id)
    assert again.info["loaded"] is True and again.info["history_matches"] is True
    assert again.at_time(doc["end_ms"]).history == doc["events"]


@pytest.mark.parametrize("era", OLD_ERAS)
def test_a_link_made_by_engine_1_1_0_replays_its_history(store, era):
    doc = fixture(era)
    decoded = linkcodec.decode_scenario(linkcodec.encode_scenario(doc["scenario"], "1.1.0"))
    assert decoded["engine_version"] == "1.1.0"
    service = ReplayService(store, KEY)
    key = service.register_scenario(decoded["scenario"], engine_version=decoded["engine_version"])
    assert key != service.register_scenario(decoded["scenario"])   # a 1.2.0 link is another replay
    run = service.run(key)
    assert run["engine_version"] == "1.1.0" and run["replay_engine_version"] == "1.1.0"
    sim = service.seeker(key).at_time(doc["end_ms"])
    assert sim.history[:len(doc["events"])] == doc["events"]


@pytest.mark.parametrize("era", ("1.1", "2.6"))
def test_a_fork_of_an_old_run_continues_as_engine_1_1_0(store, era):
    doc = fixture(era)
    run_id = load_saved(store, doc)
    service = ReplayService(store, KEY)
    fork = service.fork_simulation(run_id, 11_000)
    assert fork.engine_version == "1.1.0"
    fork.advance_to(doc["end_ms"])
    assert fork.history == doc["events"]
    # the fork job's worker function, given the run's version
    at = simulation_at(doc["scenario"], 11_000, {}, "fork", service.run(run_id)["replay_engine_version"])
    at.advance_to(doc["end_ms"])
    assert at.history == doc["events"]


@pytest.mark.parametrize("era", ("0.10", "2.6"))
def test_importing_a_1_1_0_file_re_simulates_as_1_1_0(store, era):
    doc = fixture(era)
    prepared = saved_run_rows(doc["scenario"], doc["end_ms"], {}, "import", doc["title"], "import",
                              doc["events"], doc["engine_version"])
    assert prepared["history_matches"] is True
    run_id = save_prepared(store, prepared)["id"]
    assert runs.get_run(store, run_id)["engine_version"] == "1.1.0"
    assert ReplayService(store, KEY).seeker(run_id).info["history_matches"] is True
    # without the version the file is re-simulated by today's engine, which differs
    assert saved_run_rows(doc["scenario"], doc["end_ms"], {}, "import", doc["title"], "import",
                          doc["events"])["history_matches"] is False


def test_a_run_of_an_unknown_older_engine_replays_as_the_nearest_and_says_so(store):
    doc = fixture("1.1")
    run_id = load_saved(store, doc, engine_version="1.0.0")
    service = ReplayService(store, KEY)
    run = service.run(run_id)
    assert run["replay_engine_version"] == "1.1.0"
    assert "cannot reproduce exactly" in run["engine_note"]
    seeker = service.seeker(run_id)
    assert seeker.info["engine_version"] == "1.1.0" and seeker.info["engine_note"]
    assert seeker.at_time(doc["end_ms"]).history == doc["events"]


# -- over HTTP: import, fork (the room keeps the version), save the fork, a link page ---------------
@pytest.fixture
def http_app(tmp_path):
    from app import create_app, runner_of
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db"})
    yield application
    runner_of(application).stop()
    application.extensions["isrlab_runs"].close()


def test_over_http_an_imported_1_1_0_run_forks_and_saves_as_1_1_0(http_app):
    from app import runner_of
    http = http_app.test_client()
    doc = fixture("1.1")
    reply = http.post("/api/runs/import", json=doc)
    assert reply.status_code == 201, reply.json
    assert reply.json["history_matches"] is True
    rid = reply.json["id"]
    assert http.get(f"/api/runs/{rid}").json["run"]["engine_version"] == "1.1.0"
    fork = http.post(f"/api/replay/{rid}/fork", json={"t_ms": 11_000})
    assert fork.status_code == 201, fork.json
    room = runner_of(http_app).get(fork.json["room"])
    assert room.sim.engine_version == "1.1.0"
    with room.lock:
        room.sim.advance_to(doc["end_ms"])
        assert room.sim.history == doc["events"]
    child = http.post("/api/runs", json={"room": room.id}).json
    assert http.get(f"/api/runs/{child['id']}").json["run"]["engine_version"] == "1.1.0"
    with room.lock:
        room.control("restart", 0.0)
        assert room.sim.engine_version == "1.1.0"       # a restart of the fork keeps its engine
    page = http.get("/l/" + linkcodec.encode_scenario(doc["scenario"], "1.1.0")).get_data(as_text=True)
    assert '"replay_engine_version": "1.1.0"' in page and '"engine_note": null' in page


def test_worker_processes_re_simulate_as_1_1_0(tmp_path):
    """The seek-index builder's process pool and the job workers get the run's version too."""
    from app.store import db
    from app.workers import WorkerProcesses
    doc = fixture("2.0")
    store = db.open_store(f"sqlite:///{tmp_path}/store.db")
    service = ReplayService(store, KEY, worker_processes=True)
    workers = WorkerProcesses(1)
    try:
        run_id = load_saved(store, doc)
        seeker = service.seeker(run_id)                 # built by _build_worker in another process
        assert seeker.info["history_matches"] is True and seeker.info["engine_version"] == "1.1.0"
        there = workers.call(saved_run_rows, doc["scenario"], doc["end_ms"], {}, "import", "t", "import",
                             doc["events"], "1.1.0")
        assert there["history_matches"] is True and there["row"]["engine_version"] == "1.1.0"
        at = workers.call(simulation_at, doc["scenario"], 11_000, {}, "fork", "1.1.0")
        assert at.engine_version == "1.1.0" and at.network.compat_1_1_0 is True
    finally:
        workers.close()
        service.close()
        store.dispose()
