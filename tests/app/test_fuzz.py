"""Property: no input makes the server answer 500, and every refusal names a field.

Hypothesis drives every HTTP route of the app (read from its URL map, so a new route is fuzzed
without touching this file) with odd path values and odd bodies — deep nesting, lone surrogates,
huge integers, wrong types, non-JSON — and every Socket.IO event (and unknown ones) with odd
payloads. After all of it the server still answers ``/healthz``."""
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import create_app, runner_of, socketio_of
from app.web.events import EVENTS

CONVERTER = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
           | st.floats(allow_nan=False) | st.text(max_size=12)
           | st.sampled_from(["\ud800", "x\udfff", "", "0", "-1", "9" * 40, "sc:" + "0" * 24, "all", "2.6"]))
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(["scenario", "room", "title", "run", "a", "b", "t_ms",
                                                            "library", "grid", "seeds", "name", "x", "\ud800"]),
                                           inner, max_size=4), max_leaves=12)
raw_bodies = (st.builds(lambda d: json.dumps(d), documents)
              | st.sampled_from(["[" * 3000 + "]" * 3000, '{"title": "\\ud800"}', "{", "null", "\x00", "a=1"])
              | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
path_values = st.sampled_from(["1", "0", "9" * 30, "abc", "sc:" + "a" * 24, "%00", "..", "x" * 300, "-1", "web"])


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    application = create_app({"RUNNER_AUTOSTART": False, "SECRET_KEY": "t", "INSTANCE_PATH": str(tmp),
                              "DATABASE_URL": f"sqlite:///{tmp}/runs.db", "SEARCH_USE_SPARK": False})
    application.extensions["isrlab_analytics"].jobs._start = _busy    # noqa: SLF001 - a valid sweep starts no JVM here
    yield application
    runner_of(application).stop()
    application.extensions["isrlab_runs"].close()


def _busy(*_args, **_kwargs):
    from app.reports.jobs import Busy
    raise Busy("a Spark job is already running")


def routes(app):
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            out.append((method, rule.rule))
    return out


def check_reply(reply, method, path):
    assert reply.status_code != 500, (method, path, reply.data[:300])
    assert reply.status_code < 500 or reply.status_code == 503, (method, path, reply.status_code)
    if 400 <= reply.status_code < 500 and reply.status_code not in (404, 405) and reply.is_json:
        error = reply.json.get("error") or {}
        assert error.get("field") or reply.status_code == 413, (method, path, reply.json)


def test_the_fuzzer_sees_every_kind_of_route(app):
    paths = {p for _m, p in routes(app)}
    assert {"/api/runs", "/api/links", "/api/compare", "/api/search", "/analytics/api/sweeps"} <= paths
    assert len(routes(app)) >= 30


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_http_input_is_a_server_error(app, data):
    client = app.test_client()
    method, rule = data.draw(st.sampled_from(routes(app)))
    path = CONVERTER.sub(lambda _m: data.draw(path_values), rule)
    query = data.draw(st.sampled_from(["", "?t=5", "?t=" + "9" * 30, "?limit=-1", "?cursor=%00", "?p=x&b=1",
                                       "?event=99999999999", "?step=sideways", "?q=%ED%A0%80"]))
    body = data.draw(raw_bodies) if method in ("POST", "PUT", "PATCH") else None
    content_type = data.draw(st.sampled_from(["application/json", "text/plain", None]))
    reply = client.open(path + query, method=method, data=body,
                        headers={"Content-Type": content_type} if content_type else {})
    check_reply(reply, method, path + query)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(event=st.sampled_from(sorted(EVENTS) + ["bogus", "", "connect", "x" * 100]), payload=documents)
def test_no_socket_event_is_a_server_error(app, event, payload):
    client = socketio_of(app).test_client(app, namespace="/")
    try:
        reply = client.emit(event, payload, namespace="/", callback=True)
    finally:
        client.disconnect(namespace="/")
    if reply is not None:
        assert isinstance(reply, dict) and "ok" in reply, reply
        if reply["ok"] is False:
            assert reply["error"]["field"], (event, payload, reply)
            assert reply["error"]["message"] != "internal error", (event, payload, reply)


def test_the_server_still_answers_after_the_fuzzing(app):
    assert app.test_client().get("/healthz").status_code == 200
