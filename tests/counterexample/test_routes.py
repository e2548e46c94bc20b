"""POST /api/search and polling: validated input, honest results (issue 6, web side)."""
import time

import pytest

from app import create_app

SAFE = {"kafka_version": "2.6", "brokers": 3,
        "config": {"min.insync.replicas": 2, "unclean.leader.election.enable": False},
        "topics": [{"name": "t", "partitions": 1, "replication_factor": 3}],
        "clients": [{"name": "p1", "type": "producer", "topic": "t", "acks": "all", "rate_per_s": 20}],
        "duration_ms": 30000}
OLD = dict(SAFE, kafka_version="0.10", config={},
           topics=[{"name": "t", "partitions": 1, "replication_factor": 2}], duration_ms=60000)


@pytest.fixture
def client(tmp_path):
    app = create_app({"TESTING": True, "SEARCH_USE_SPARK": False,
                      "DATABASE_URL": f"sqlite:///{tmp_path / 'runs.db'}",
                      "INSTANCE_PATH": str(tmp_path)})
    return app.test_client()


def wait(client, job_id, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        view = client.get(f"/api/search/{job_id}").get_json()
        if view["state"] in ("done", "error"):
            return view
        time.sleep(0.2)
    raise AssertionError("search did not finish")


def test_old_kafka_counterexample_through_the_api(client):
    started = client.post("/api/search", json={"scenario": OLD, "runs": 80})
    assert started.status_code == 202
    view = wait(client, started.get_json()["id"])
    assert view["state"] == "done", view["error"]
    report = view["report"]
    assert report["found"] and report["operations"] <= 6
    assert report["run"]["link"].startswith("/s/")
    assert client.get(report["run"]["link"]).status_code == 200


@pytest.mark.parametrize("version", ["2.6", "2.7", "3.3"])   # ZooKeeper ISR writes, AlterIsr, AlterPartition
def test_safe_settings_report_not_found(client, version):
    profile = {"crash_process": [4, 1000, 20000], "crash_power": [0, 0, 0], "pause": [0, 0, 0],
               "partition": [0, 0, 0], "cut": [0, 0, 0], "isolate_zk": [0, 0, 0],
               "expire_session": [0, 0, 0], "slow": [0, 0, 0]}
    started = client.post("/api/search", json={"scenario": dict(SAFE, kafka_version=version), "runs": 8,
                                                "profile": profile})
    view = wait(client, started.get_json()["id"])
    assert view["report"]["found"] is False and "not found in 8 runs" in view["report"]["message"]


@pytest.mark.parametrize("body, field", [
    ({"scenario": {"brokers": 0}}, "brokers"),
    ({"scenario": SAFE, "runs": 0}, "runs"),
    ({"scenario": SAFE, "budget_s": 10 ** 6}, "budget_s"),
    ({"scenario": SAFE, "property": {"name": "invariant", "param": "nope"}}, "property.param"),
    ({"scenario": SAFE, "profile": {"meteor": [1, 1, 2]}}, "profile"),
    ({"scenario": SAFE, "extra": 1}, "extra"),
    ("not an object", "body"),
])
def test_bad_input_names_the_field(client, body, field):
    response = client.post("/api/search", json=body)
    assert response.status_code == 400 and response.get_json()["error"]["field"] == field


def test_unknown_and_malformed_job_ids(client):
    assert client.get("/api/search/AAAAAAAAAAAA").status_code == 404
    assert client.get("/api/search/bad!id").status_code == 400


def test_properties_endpoint(client):
    body = client.get("/api/search/properties").get_json()
    assert "no_acked_loss" in body["properties"] and "replica_divergence" in body["invariants"]


def test_a_search_is_cancelled_through_the_api(client):
    started = client.post("/api/search", json={"scenario": SAFE, "runs": 5000, "budget_s": 600})
    job_id = started.get_json()["id"]
    cancelled = client.delete(f"/api/search/{job_id}")
    assert cancelled.status_code == 200
    deadline = time.time() + 60
    while client.get(f"/api/search/{job_id}").get_json()["state"] != "cancelled":
        assert time.time() < deadline, "the search was not cancelled"
        time.sleep(0.2)
    assert client.delete("/api/search/AAAAAAAAAAAA").status_code == 404
    assert client.delete("/api/search/bad!").status_code in (400, 404)
