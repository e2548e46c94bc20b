"""Every refusal carries the right status and names its limit (issue 34, item 11): a room quota is
429 with Retry-After and the quota's name; a body over the size limit is 413 and says how many
bytes are allowed; a run id past the largest one is 404 for every method, not 405."""
import pytest

from app import create_app, runner_of


@pytest.fixture
def small_app():
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "test-secret", "MAX_ROOMS": 1})
    yield application
    runner_of(application).stop()


def test_a_full_server_refuses_a_room_with_429_retry_after_and_the_quota_named(small_app):
    http = small_app.test_client()
    assert http.post("/api/rooms", json={"library": "isr-expansion"}).status_code == 201
    r = http.post("/api/rooms", json={"library": "isr-expansion"})
    assert r.status_code == 429
    assert int(r.headers["Retry-After"]) > 0
    error = r.get_json()["error"]
    assert error["field"] == "room" and "ISRLAB_MAX_ROOMS = 1" in error["message"]


def test_an_address_watching_its_quota_of_rooms_is_refused_with_429(app, sio):
    runner = runner_of(app)
    runner.settings["MAX_ROOMS_PER_ADDRESS"] = 1
    room = runner.create(library_name="isr-expansion", owner="10.0.0.7")
    room.viewers["someone"] = object()           # watched: it cannot make way for a new one
    with pytest.raises(Exception) as refused:
        runner.create(library_name="isr-expansion", owner="10.0.0.7")
    assert refused.value.status == 429 and refused.value.retry_after > 0
    assert "ISRLAB_MAX_ROOMS_PER_ADDRESS = 1" in refused.value.message
    room.viewers.clear()


def test_a_body_over_the_size_limit_is_413_naming_the_limit(http):
    r = http.post("/api/rooms", json={"scenario": {"name": "x" * 400_000}})
    assert r.status_code == 413
    error = r.get_json()["error"]
    assert error["field"] == "body" and error["allowed"] == "at most 300,000 bytes in one request"


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
def test_a_run_id_past_the_largest_is_404_for_every_method(http, method):
    r = getattr(http, method)("/api/runs/99999999999999999999999", json={"title": "x"})
    assert r.status_code == 404
    assert r.get_json()["error"]["field"] == "run"
    assert getattr(http, method)("/api/runs/0", json={"title": "x"}).status_code == 404
