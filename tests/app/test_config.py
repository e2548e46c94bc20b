"""Settings come from ISRLAB_* environment variables (only in app/config.py); no debug mode; the
secret key is the environment's or freshly generated."""
import ast
import pathlib

import pytest

from app import create_app
from app.config import load_settings

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_defaults_listen_on_localhost_5000():
    s = load_settings({})
    assert s["HOST"] == "127.0.0.1" and s["PORT"] == 5000 and s["ALLOWED_ORIGINS"] is None


def test_environment_overrides():
    s = load_settings({"ISRLAB_PORT": "8123", "ISRLAB_HOST": "0.0.0.0", "ISRLAB_SECRET_KEY": "k",
                       "ISRLAB_ALLOWED_ORIGINS": "http://a, http://b", "ISRLAB_MAX_ROOMS": "3",
                       "ISRLAB_COMMANDS_PER_S": "2"})
    assert (s["PORT"], s["HOST"], s["SECRET_KEY"], s["MAX_ROOMS"]) == (8123, "0.0.0.0", "k", 3)
    assert s["ALLOWED_ORIGINS"] == ["http://a", "http://b"] and s["COMMAND_BURST"] == 6


def test_secret_key_is_generated_when_not_given():
    a, b = load_settings({})["SECRET_KEY"], load_settings({})["SECRET_KEY"]
    assert a != b and len(a) >= 32


def test_bad_numbers_stop_with_a_message():
    with pytest.raises(SystemExit) as err:
        load_settings({"ISRLAB_PORT": "eighty"})
    assert "ISRLAB_PORT" in str(err.value)


def test_never_debug():
    app = create_app({"RUNNER_AUTOSTART": False})
    assert app.debug is False


def test_each_app_has_its_own_socketio_and_runner():
    a, b = create_app({"RUNNER_AUTOSTART": False}), create_app({"RUNNER_AUTOSTART": False})
    assert a.extensions["socketio"] is not b.extensions["socketio"]
    assert a.extensions["isrlab"]["runner"] is not b.extensions["isrlab"]["runner"]


def _imports(path):
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names, tree


def _web_simulator_modules():
    app = ROOT / "app"
    yield from (app / "__init__.py", app / "__main__.py")
    yield from (app / "runner").rglob("*.py")
    yield from (app / "web").rglob("*.py")


def test_environment_is_read_only_in_app_config():
    for path in _web_simulator_modules():
        text = path.read_text()
        assert "os.environ" not in text and "getenv" not in text, path


def test_the_runner_does_not_depend_on_flask_and_the_engine_not_on_the_app():
    for path in (ROOT / "app" / "runner").rglob("*.py"):
        names, _ = _imports(path)
        assert not any(n.split(".")[0] in ("flask", "flask_socketio", "socketio") for n in names), path
    for path in (ROOT / "engine").rglob("*.py"):
        names, _ = _imports(path)
        assert not any(n.split(".")[0] == "app" for n in names), path


def test_the_page_never_uses_innerhtml():
    for path in (ROOT / "static" / "js").rglob("*.js"):
        text = path.read_text()
        for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert bad not in text, f"{path.name} uses {bad}"


def test_serve_runs_one_room_worker_per_core_and_admits_the_rooms_they_hold():
    import os
    from app.config import serving_defaults
    served = serving_defaults(load_settings({}), environ={})
    assert served["ROOM_WORKERS"] == os.cpu_count() and served["MAX_ROOMS"] == 100
    assert load_settings({})["ROOM_WORKERS"] == 0 and load_settings({})["MAX_ROOMS"] == 50   # an app alone
    env = {"ISRLAB_ROOM_WORKERS": "0"}
    in_process = serving_defaults(load_settings(env), environ=env)
    assert in_process["ROOM_WORKERS"] == 0 and in_process["MAX_ROOMS"] == 50
    env = {"ISRLAB_MAX_ROOMS": "7", "ISRLAB_ROOM_WORKERS": "3"}
    chosen = serving_defaults(load_settings(env), environ=env)
    assert chosen["MAX_ROOMS"] == 7 and chosen["ROOM_WORKERS"] == 3
