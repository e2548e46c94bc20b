"""The analytics report over HTTP (no Spark): the pages, the report's JSON from the result
tables, validation of sweep documents posted by the page, the replay link of a sweep run, and
one Spark job at a time."""
import json

import pytest
from sqlalchemy import insert

from app import create_app, runner_of
from app.replay.links import decode_scenario
from app.store import db
from app.sweeps import plan, repo, spec
from engine.tools import sweep_run
from app.sweeps.tables import analytics_cells, analytics_distributions, analytics_invariants, analytics_runs, sweep_runs
from engine.simulation import ENGINE_VERSION

DOC = {"id": "web", "name": "web sweep", "grid": {"kafka_version": ["0.10", "2.6"], "acks": ["1", "all"]}, "seeds": 2,
       "base": {"topics": [{"name": "t", "partitions": 2, "replication_factor": 3}],
                "clients": [{"name": "p1", "type": "producer", "topic": "t", "rate_per_s": 20}],
                "duration_ms": 30000},
       "fault_phase": {"start_ms": 1000, "end_ms": 10000}}


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/store.db"})
    yield application
    runner_of(application).stop()


@pytest.fixture
def stored(app):
    """The sweep registered, one run simulated and stored for real, and hand-made results."""
    engine = app.extensions["isrlab_analytics"].engine
    sweep = spec.validate(DOC)
    cells = spec.cells(sweep)
    repo.register(engine, sweep, cells, ENGINE_VERSION)
    run_no, key, cell_id, seed = plan.plan(sweep, cells)[0]
    row, _events, _hist = sweep_run.simulate((run_no, key, cell_id, seed), cells[0], sweep["fault_profiles"]["default"], "web")
    with db.writing(engine) as conn:
        conn.execute(insert(sweep_runs), [dict(zip(sweep_run.RUN_FIELDS, row))])
        conn.execute(insert(analytics_cells), [
            {"sweep_id": "web", "cell_id": c["cell_id"], "runs": 2, "runs_invalid": 0, "runs_error": 0,
             "runs_lost": c["cell_id"] % 2, "p_loss": (c["cell_id"] % 2) / 2, "p_loss_lo": 0.0, "p_loss_hi": 0.9,
             "runs_lost_acks_all": 0, "runs_violation": 0, "detect_samples": 1, "failover_samples": 1,
             "nonconverged": 0, "worst_run_no": run_no if c["cell_id"] == 0 else None,
             "worst_run_key": key if c["cell_id"] == 0 else None} for c in cells])
        conn.execute(insert(analytics_invariants), [{"sweep_id": "web", "cell_id": 1, "invariant": "replica_divergence",
                                                      "runs": 1, "occurrences": 2}])
        conn.execute(insert(analytics_distributions), [{"sweep_id": "web", "cell_id": 0, "metric": "detect_ms",
                                                         "bucket_ms": b, "count": 3} for b in (4800, 9000)])
        conn.execute(insert(analytics_runs), [{"sweep_id": "web", "run_no": run_no, "run_key": key, "cell_id": 0,
                                                "seed": seed, "lost": 0, "violations": 0, "offline_ms": 10, "under_min_isr_ms": 0,
                                                "isr_churn": 2, "ner_records": 0, "unclean_elections": 0, "converged": True,
                                                "worst_rank": 1}])
    return key, json.loads(dict(zip(sweep_run.RUN_FIELDS, row))["scenario_json"])


def test_pages(app, stored):
    client = app.test_client()
    index = client.get("/analytics")
    assert index.status_code == 200 and b'data-sweep-id=""' in index.data
    page = client.get("/analytics/web?m1=p_loss&cell=1")
    assert page.status_code == 200 and b'data-sweep-id="web"' in page.data and b"js/analytics/main.js" in page.data
    assert client.get("/analytics/nope").status_code == 404
    assert client.get("/analytics/Bad%20Id").status_code == 404


def test_the_report_json(app, stored):
    body = app.test_client().get("/analytics/api/sweeps/web").get_json()
    assert body["ok"] and body["analysed"] and body["sweep"]["id"] == "web" and body["sweep"]["runs_total"] == 8
    assert body["axes"] == [["kafka_version", ["0.10", "2.6"]], ["acks", ["1", "all"]]]
    cells = {c["cell_id"]: c for c in body["cells"]}
    assert cells[1]["settings"] == {"kafka_version": "0.10", "acks": "all"} and cells[1]["metrics"]["p_loss"] == 0.5
    assert cells[1]["invariants"][0]["invariant"] == "replica_divergence"
    assert cells[0]["distributions"] == {"detect_ms": [[4800, 3], [9000, 3]]} and cells[0]["runs_stored"] == 1
    with app.extensions["isrlab_analytics"].engine.connect() as conn:
        faults = conn.execute(sweep_runs.select()).mappings().first()["faults"]
    assert cells[0]["faults"] == faults and cells[1]["faults"] == 0 and body["sweep"]["faults_drawn"] == faults
    assert "doc_json" not in body["sweep"] and body["doc"]["id"] == "web"
    listing = app.test_client().get("/analytics/api/sweeps").get_json()
    assert [s["id"] for s in listing["sweeps"]] == ["web"] and listing["job"] is None
    progress = app.test_client().get("/analytics/api/sweeps/web/progress").get_json()
    assert progress["runs_done"] == 1 and progress["runs_total"] == 8


def test_a_cells_worst_runs_link_to_the_replay(app, stored):
    key, scenario = stored
    client = app.test_client()
    runs = client.get("/analytics/api/sweeps/web/cells/0/runs?limit=5").get_json()["runs"]
    assert [r["run_key"] for r in runs] == [key] and runs[0]["replay"] == f"/analytics/runs/{key}/replay"
    replay = client.get(runs[0]["replay"])
    assert replay.status_code == 302 and replay.headers["Location"].startswith("/l/")
    decoded = decode_scenario(replay.headers["Location"][3:])
    assert decoded["scenario"]["timeline"] == scenario["timeline"] and decoded["scenario"]["seed"] == scenario["seed"]
    # the replay is named after the run, not the sweep base's "untitled"
    assert decoded["scenario"]["name"] == f"Sweep web, cell kafka_version=0.10, acks=1, seed {scenario['seed']}"
    assert decoded["scenario"]["description"].startswith("Run 0 of the sweep “web sweep” (web)")
    assert client.get("/analytics/runs/" + "0" * 20 + "/replay").status_code == 404
    assert client.get("/analytics/runs/notakey/replay").status_code == 404
    assert client.get("/analytics/api/sweeps/web/cells/0/runs?limit=9999").status_code == 400


@pytest.mark.parametrize("doc, field", [
    ({"grid": {"acks": ["2"]}}, "grid.acks[0]"),
    ({"grid": {"acks": ["1", "all"]}, "seeds": 100000}, "seeds"),
    ({"base": {"duration_ms": 3600000}}, "base.duration_ms"),
    ([1, 2], "body"),
])
def test_posted_sweeps_are_validated(app, doc, field):
    reply = app.test_client().post("/analytics/api/sweeps", json=doc)
    assert reply.status_code == 400 and reply.get_json()["error"]["field"] == field


def test_one_spark_job_at_a_time(app, stored, monkeypatch):
    from app.reports import jobs
    started = []

    def fake_start(self, kind, sweep_id, args, stdin_text=None):
        if started:
            raise jobs.Busy("a Spark job is already running")
        job = jobs.Job(kind, sweep_id, args)
        job.state = "running"
        started.append(job)
        self._jobs.append(job)
        return job
    monkeypatch.setattr(jobs.Jobs, "_start", fake_start)
    client = app.test_client()
    first = client.post("/analytics/api/sweeps", json={**DOC, "id": "web2"})
    assert first.status_code == 202 and first.get_json()["sweep_id"] == "web2"
    assert started[0].args[:1] == ["sweep"] and "--analyze" in started[0].args
    busy = client.post("/analytics/api/sweeps/web/analyze", json={})
    assert busy.status_code == 409 and busy.get_json()["error"]["field"] == "job"
    clash = client.post("/analytics/api/sweeps", json={**DOC, "seeds": 3})
    assert clash.status_code == 400 and clash.get_json()["error"]["field"] == "id"
