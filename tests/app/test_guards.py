"""What every request passes first: the Host allow-list (DNS rebinding), same-site rules for
state-changing requests (CSRF), bounded JSON, trusted proxy headers only when configured."""
import json

import pytest

from app import create_app, runner_of
from app.config import load_settings
from app.replay import links
from app.web.guards import socket_origins
from engine.scenario.library import library


@pytest.fixture
def app(tmp_path):
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp_path),
                              "DATABASE_URL": f"sqlite:///{tmp_path}/runs.db"})
    yield application
    runner_of(application).stop()
    application.extensions["isrlab_runs"].close()


@pytest.fixture
def http(app):
    return app.test_client()


def refused(reply, status, field):
    assert reply.status_code == status, reply.data[:300]
    assert reply.json["ok"] is False and reply.json["error"]["field"] == field, reply.json
    return reply.json["error"]


def test_a_foreign_host_header_is_refused_before_any_route(http, app):
    err = refused(http.get("/api/library", headers={"Host": "evil.example:5000"}), 400, "Host")
    assert "ISRLAB_ALLOWED_HOSTS" in err["allowed"]
    assert http.get("/api/library", headers={"Host": "127.0.0.1:5000"}).status_code == 200
    assert http.get("/api/library", headers={"Host": "[::1]:5000"}).status_code == 200


def test_allowed_hosts_come_from_the_environment():
    settings = load_settings({"ISRLAB_ALLOWED_HOSTS": "isrlab.example.org, lab.example.net"})
    assert {"localhost", "127.0.0.1", "::1", "isrlab.example.org", "lab.example.net"} <= set(settings["ALLOWED_HOSTS"])
    assert "evil.example" not in settings["ALLOWED_HOSTS"]


def test_a_cross_site_form_post_starts_no_spark_job(http, app):
    jobs = app.extensions["isrlab_analytics"].jobs
    started = []
    jobs._start = lambda *a, **k: started.append(a)          # noqa: SLF001 - would launch Spark
    for headers, data in ((({"Origin": "http://evil.example"}), None),
                          ({"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, "a=1"),
                          ({}, None)):
        reply = http.post("/analytics/api/sweeps/any/analyze", headers=headers, data=data)
        assert reply.status_code == 403 and reply.json["error"]["field"] == "Content-Type"
    assert started == []


def test_a_cross_site_json_post_is_refused_and_a_same_origin_one_is_not(http):
    doc = {"scenario": library()["isr-expansion"], "title": "x"}
    refused(http.post("/api/runs", json=doc, headers={"Origin": "http://evil.example"}), 403, "Origin")
    refused(http.post("/api/runs", json=doc, headers={"Referer": "http://evil.example/page"}), 403, "Origin")
    refused(http.delete("/api/runs/1", headers={"Origin": "http://localhost.evil.example"}), 403, "Origin")
    ok = http.post("/api/runs", json=doc, headers={"Origin": "http://localhost"})
    assert ok.status_code in (200, 201, 202), ok.json


def test_socket_origins_are_this_servers_names_only():
    allowed = socket_origins({"ALLOWED_HOSTS": ["127.0.0.1", "localhost", "::1"], "ALLOWED_ORIGINS": None})
    assert allowed("http://127.0.0.1:5000") and allowed("http://localhost:8080") and allowed("http://[::1]:5000")
    assert not allowed("http://evil.example") and not allowed("null") and not allowed("http://127.0.0.1.evil.example")


def test_json_nested_too_deep_is_a_400_naming_the_body(http):
    deep = "[" * 5000 + "]" * 5000
    err = refused(http.post("/api/runs", data=deep, content_type="application/json"), 400, "body")
    assert "levels" in err["message"]
    err = refused(http.post("/api/rooms", data=deep, content_type="application/json"), 400, "body")


def test_a_lone_surrogate_is_refused_where_it_stands(http):
    body = '{"scenario": {"name": "x"}, "title": "bad \\ud800 title"}'
    err = refused(http.post("/api/runs", data=body, content_type="application/json"), 400, "body.title")
    assert "surrogate" in err["message"]


def test_an_out_of_range_run_id_is_a_json_404_not_a_crash(http):
    for path in ("/api/runs/" + "9" * 30, "/api/runs/99999999999999999999/events", "/runs/" + "1" * 25):
        reply = http.get(path)
        assert reply.status_code == 404, path


def test_a_link_code_with_a_valid_checksum_but_deep_json_is_refused():
    import base64
    import zlib
    payload = zlib.compress(('{"e": "x", "s": ' + "[" * 2000 + "]" * 2000 + "}").encode(), 9)[2:-4]
    code = links.VERSION + base64.urlsafe_b64encode(links._checksum(payload) + payload).decode().rstrip("=")  # noqa: SLF001
    with pytest.raises(links.LinkError) as caught:
        links.decode_scenario(code)
    assert caught.value.field == "link" and "levels" in caught.value.message


def test_proxy_headers_are_read_only_when_proxies_are_configured(tmp_path):
    seen = {}

    def remote(app):
        @app.get("/_whoami")
        def whoami():
            from flask import request
            seen["addr"] = request.remote_addr
            return "ok"
        app.test_client().get("/_whoami", headers={"X-Forwarded-For": "203.0.113.7"})
        runner_of(app).stop()
        return seen["addr"]

    assert remote(create_app({"RUNNER_AUTOSTART": False, "INSTANCE_PATH": str(tmp_path)})) == "127.0.0.1"
    assert remote(create_app({"RUNNER_AUTOSTART": False, "INSTANCE_PATH": str(tmp_path), "PROXY_HOPS": 1})) == "203.0.113.7"


def test_an_unexpected_exception_is_a_json_500_with_nothing_leaked(app):
    @app.get("/api/_boom")
    def boom():
        raise RuntimeError("secret detail")
    reply = app.test_client().get("/api/_boom")
    assert reply.status_code == 500 and reply.json["ok"] is False
    assert "secret" not in json.dumps(reply.json)


def test_a_socket_packet_with_unreadable_json_gets_a_reply_naming_it(app):
    from app import socketio_of
    client = socketio_of(app).test_client(app)
    reply = client.emit("command", {"title": "bad \ud800"}, callback=True)
    assert reply["ok"] is False and reply["error"]["field"].startswith("event") and "surrogate" in reply["error"]["message"]
    deep = client.emit("command", [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]], callback=True)
    assert deep["ok"] is False and "levels" in deep["error"]["message"]
    client.disconnect()
