"""The production server as ``./run.sh`` starts it: gunicorn (one process, gthread workers) with
real websockets, the Host and Origin guards at the socket level, access logs, and a graceful
stop on SIGTERM."""
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from urllib.error import HTTPError

import pytest
import socketio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    env = {**os.environ, "ISRLAB_INSTANCE_PATH": str(tmp_path_factory.mktemp("server")), "ISRLAB_THREADS": "40"}
    log_path = tmp_path_factory.mktemp("log") / "server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=2)
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("the server did not start: " + log_path.read_text()[-2000:])
    yield proc, base, log_path
    if proc.poll() is None:
        proc.kill()
    log.close()


def test_it_serves_through_gunicorn_with_real_websockets(server):
    proc, base, log_path = server
    client = socketio.Client()
    frames = []
    client.on("frame", lambda data: frames.append(data))
    client.connect(base, transports=["websocket"])
    try:
        reply = client.call("create", {"library": "isr-expansion"}, timeout=10)
        assert reply["ok"] is True
        time.sleep(1.5)
    finally:
        client.disconnect()
    assert len(frames) >= 15                      # ~30 frames/s pushed over the websocket
    text = log_path.read_text()
    assert "GET /healthz" in text                 # the access log
    assert "Werkzeug" not in text and "development server" not in text
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert children, "gunicorn runs its worker as a child process"


def test_the_guards_hold_on_the_real_server(server):
    _proc, base, _log = server
    request = urllib.request.Request(base + "/api/library", headers={"Host": "rebound.example"})
    with pytest.raises(HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 400
    foreign = socketio.Client()
    with pytest.raises(socketio.exceptions.ConnectionError):
        foreign.connect(base, transports=["websocket"], headers={"Origin": "http://evil.example"})


def test_sigterm_stops_it_gracefully(server):
    proc, base, log_path = server
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0, log_path.read_text()[-2000:]
