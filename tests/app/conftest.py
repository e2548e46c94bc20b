"""Fixtures for the web app: an app whose runner is driven by hand with a fake clock (no
background thread), its Socket.IO test clients and its Flask test client."""
import json

import pytest

from app import create_app, runner_of, socketio_of


class FakeClock:
    def __init__(self, start=1000.0):
        self.now = start

    def __call__(self):
        return self.now


@pytest.fixture
def settings():
    return {"RUNNER_AUTOSTART": False, "SECRET_KEY": "test-secret"}


@pytest.fixture
def app(settings):
    application = create_app(settings)
    clock = FakeClock()
    runner = runner_of(application)
    runner.clock = clock
    runner.wall = lambda: clock.now
    application.fake_clock = clock
    yield application
    runner.stop()


@pytest.fixture
def runner(app):
    return runner_of(app)


@pytest.fixture
def sio(app):
    return socketio_of(app)


@pytest.fixture
def http(app):
    return app.test_client()


@pytest.fixture
def client(app, sio):
    c = sio.test_client(app)
    yield c
    if c.is_connected():
        c.disconnect()


def run_for(app, seconds, step=1 / 30):
    """Advance the fake wall clock by ``seconds`` in frame-sized steps, ticking the runner."""
    runner = runner_of(app)
    clock = app.fake_clock
    n = max(1, int(round(seconds / step)))
    for _ in range(n):
        clock.now += step
        runner.tick(clock.now)


def frames(test_client):
    """The frames a Socket.IO test client received since the last call, parsed."""
    return [json.loads(m["args"][0]) for m in test_client.get_received() if m["name"] == "frame"]


class Mirror:
    """A viewer's copy of the room, built only from frames the way the page does it."""

    def __init__(self):
        self.seq = 0
        self.run = None
        self.entities = {}
        self.events = []
        self.violations = []

    def apply(self, frame):
        if not frame["full"]:
            assert frame["base"] == self.seq, f"delta from {frame['base']} applied on {self.seq}"
        else:
            self.entities = {}
            if frame["run"] != self.run:
                self.events, self.violations = [], []
        self.entities.update(frame["set"])
        for key in frame["del"]:
            self.entities.pop(key, None)
        last = self.events[-1]["i"] if self.events else -1
        self.events.extend(e for e in frame["events"] if e["i"] > last)
        self.violations = frame["violations"] if frame["full"] else self.violations + frame["violations"]
        self.seq, self.run = frame["seq"], frame["run"]
        self.clock = frame["clock"]
        return self


def mirror_of(test_client, mirror=None):
    mirror = mirror or Mirror()
    for frame in frames(test_client):
        mirror.apply(frame)
    return mirror


def create(test_client, **payload):
    reply = test_client.emit("create", payload or {"library": "broker-failure-clean-election"}, callback=True)
    assert reply["ok"], reply
    return reply["room"]["room"]
