"""Settings of the web simulator. Environment variables are read here and nowhere else.

``load_settings(environ)`` returns a plain dict (Flask config keys); ``create_app(config)`` merges
an explicit mapping over it, so tests pass what they need without touching the environment.

| variable                       | meaning                                                   | default |
|--------------------------------|-----------------------------------------------------------|---------|
| ISRLAB_HOST / ISRLAB_PORT      | where ``python -m app`` listens                           | 127.0.0.1 / 5000 |
| ISRLAB_SECRET_KEY              | Flask secret key (generated per process when unset)       | random |
| ISRLAB_ALLOWED_HOSTS           | extra host names this server answers to (its public name behind a proxy), comma separated; requests with another Host header are refused (DNS rebinding) | the bound address, localhost, 127.0.0.1, ::1 |
| ISRLAB_ALLOWED_ORIGINS         | extra origins allowed to open Socket.IO connections and send state-changing requests, comma separated | same origin only |
| ISRLAB_PROXY_HOPS              | trusted reverse proxies in front (X-Forwarded-For/-Proto/-Host are read only then) | 0 |
| ISRLAB_THREADS                 | gunicorn threads of the one worker process (each open WebSocket holds one) | 160 |
| ISRLAB_GRACEFUL_TIMEOUT_S      | on SIGTERM, seconds requests in flight get to finish | 20 |
| ISRLAB_ACCESS_LOG              | 0 = no access log on standard output | 1 |
| ISRLAB_BUDGET_EVENTS_*         | work budgets in simulated events: LIVE, SAVE, LINK, FORK, SEARCH_RUN, SWEEP_RUN | see BUDGETS |
| ISRLAB_JOB_WORKERS / ISRLAB_JOB_QUEUE | background job workers / queued jobs at most (saves, imports, links, forks) | 2 / 8 |
| ISRLAB_JOB_PROCESSES           | worker processes that run background jobs' simulations off the server's GIL (0 = in the job's thread) | 2 |
| ISRLAB_JOB_WORKER_MEMORY_MB    | a job's worker process is killed (the job fails with an error saying so) past this resident memory | 700 |
| ISRLAB_JOB_MEMORY_LIMIT_MB     | a background job computing in the server stops (with an error saying so) when the server's resident memory passes this | 1200 |
| ISRLAB_JOB_YIELD               | a background job sleeps this many times what each slice of simulation cost, leaving the interpreter to live rooms | 2.0 |
| ISRLAB_JOB_ANSWER_WITHIN_S     | seconds a request waits for its job before answering 202 with the job's URL | 0.8 |
| ISRLAB_REPLAY_CACHE_MB         | seek indexes kept in memory (least recently used go first) | 400 |
| ISRLAB_QUOTA_PER_CLIENT / ISRLAB_QUOTA_WINDOW_S | costly actions (rooms, forks, saves, imports, links, searches) one client may start per window | 30 / 600 |
| ISRLAB_FPS                     | frames per second pushed to each room                     | 30 |
| ISRLAB_MAX_ROOMS               | live simulations at once                                  | `isrlab serve`: 100 with room workers, 50 without; 50 in an app alone |
| ISRLAB_MAX_ROOMS_PER_ADDRESS   | live simulations created from one client address          | 10 |
| ISRLAB_MAX_VIEWERS             | viewers of one room                                       | 200 |
| ISRLAB_ROOM_WORKERS            | processes that simulate the live rooms (0 = in the web process's runner thread) | `isrlab serve`: one per core; 0 in an app alone (tests) |
| ISRLAB_ROOM_WORKER_PYTHON      | the interpreter of room workers (e.g. pypy3: faster for a few large rooms, slower for many small ones) | this Python |
| ISRLAB_ROOM_WORKER_SPARE       | 1 = keep one extra room worker started and warm, to take over a dead worker's rooms without pausing the others | 1 |
| ISRLAB_ROOM_WORKER_NICE        | CPU priority of room workers below the web process (0-19): requests and relayed frames first, then the simulations, then background jobs (10) | 3 |
| ISRLAB_ROOM_WORKER_MEMORY_MB   | a room worker's address-space limit (RLIMIT_AS; its rooms move to another worker if it dies) | 3072 |
| ISRLAB_ROOM_SNAPSHOT_MB        | room snapshots the web process keeps to recover a dead worker's rooms, all rooms together | 256 |
| ISRLAB_MESSAGE_QUEUE           | a Redis URL (redis://host:port/db) shared by several web processes and one room host (`isrlab rooms`): every web process sees the same rooms (docs/deploy.md, "Many web processes") | unset: rooms live in this process |
| ISRLAB_ROOM_IDLE_S             | a room nobody watches is removed after this many seconds  | 600 |
| ISRLAB_COMMANDS_PER_S          | sustained commands per connection (burst = 3x)            | 15 |
| ISRLAB_MAX_BROKERS             | brokers of a live cluster                                 | 16 |
| ISRLAB_MAX_PARTITIONS          | partitions of a live cluster (all topics)                 | 256 |
| ISRLAB_DATABASE_URL            | saved runs: any SQLAlchemy URL (e.g. postgresql://...)    | SQLite in the instance folder |
| ISRLAB_INSTANCE_PATH           | the instance folder (SQLite database, snapshot key)       | <repo>/instance |
| ISRLAB_SNAPSHOT_KEY            | key signing stored replay snapshots (share it between servers using one database) | a random key kept in the instance folder |
| ISRLAB_SPARK_MASTER            | Spark master for searches started from the page           | local[*] |
| ISRLAB_SEARCH_SPARK            | 0 = run "Can this lose data?" searches in the server process instead of on Spark | 1 |
"""
import os
import secrets

DEFAULTS = {
    "HOST": "127.0.0.1",
    "PORT": 5000,
    "ALLOWED_ORIGINS": None,          # None = same origin only (python-engineio's default)
    "ALLOWED_HOSTS": None,            # None = the bound address, localhost, 127.0.0.1, ::1
    "PROXY_HOPS": 0,
    "THREADS": 160,
    "GRACEFUL_TIMEOUT_S": 20,
    "ACCESS_LOG": True,
    "MAX_JSON_DEPTH": 32,             # nesting of any JSON a client sends (bodies, links, socket events)
    "FRAME_RATE": 30,
    "MAX_ROOMS": 50,
    "MAX_ROOMS_PER_ADDRESS": 10,
    "MAX_VIEWERS": 200,
    "ROOM_IDLE_S": 600.0,
    "COMMANDS_PER_S": 15.0,
    "COMMAND_BURST": 45,
    # size limits of what a browser may ask for (checked before the engine sees it)
    "MAX_BROKERS": 16,
    "MAX_PARTITIONS": 256,
    "MAX_CLIENTS": 24,
    "MAX_TIMELINE": 2000,
    "MAX_DURATION_MS": 3_600_000,
    "MAX_RATE_PER_S": 5000,           # sum of the producers' rate_per_s
    "MAX_PRODUCE_COUNT": 5000,        # records in one produce command
    "MAX_RECORDS": 1_000_000,         # a room pauses for good once its producers have sent this many
    "MAX_SCENARIO_BYTES": 262_144,    # a scenario document as JSON
    "MAX_MESSAGE_BYTES": 300_000,     # one Socket.IO message (Engine.IO max_http_buffer_size)
    "MAX_CONTENT_LENGTH": 300_000,    # one HTTP request body
    # the runner
    "RUNNER_AUTOSTART": True,         # start the background task on first use (tests drive it by hand)
    # room worker processes (0: rooms in the web process, as are hand-driven runners); `isrlab
    # serve` starts one per core (serving_defaults)
    "ROOM_WORKERS": 0,
    "ROOM_WORKER_PYTHON": None,       # None = this interpreter (app/rooms/process.py says why not PyPy)
    "ROOM_WORKER_SPARE": 1,           # a warm spare worker takes over a dead worker's rooms
    "ROOM_WORKER_NICE": 3,            # below the web process, above background jobs (app/workers.py)
    "ROOM_WORKER_MEMORY_BYTES": 3072 * 2 ** 20,  # RLIMIT_AS of a room worker (PyPy reserves generously)
    "ROOM_SNAPSHOT_BYTES": 256 * 2 ** 20,       # recovery snapshots kept in the web process, in total
    "MESSAGE_QUEUE": None,            # a Redis URL: rooms live in the room host (app/rooms/host.py)
    "TICK_BUDGET": 0.45,              # share of a frame period spent advancing simulations
    "FRAME_BUDGET": 0.25,             # share of a frame period spent building frames (fairly split)
    # in a room worker no web request waits behind a frame: frames may take as much of the
    # period as the simulations (the pace still shrinks both when ticks run late)
    "ROOM_WORKER_FRAME_BUDGET": 0.45,
    "DEFAULT_SCENARIO": "broker-failure-clean-election",
    # saved runs and replay (app/store, app/replay*.py)
    "DATABASE_URL": None,             # None = SQLite in INSTANCE_PATH
    "INSTANCE_PATH": None,            # None = <repo>/instance
    "SNAPSHOT_KEY": None,             # None = a key file in the instance folder
    "REPLAY_WORKER_PROCESSES": False,  # build seek indexes in a worker process (serve turns it on)
    "REPLAY_CACHE_BYTES": 400 * 2 ** 20,  # loaded seek indexes kept in memory, LRU by measured size
    # work budgets, in simulated scheduler events (engine.core.budget estimates them before a run and
    # caps the run while it goes); each surface has its own
    "BUDGETS": {"live": 20_000_000, "save": 5_000_000, "import": 5_000_000, "link": 5_000_000,
                "fork": 5_000_000, "search_run": 1_000_000, "sweep_run": 2_000_000},
    "JOB_TIME_LIMIT_S": 120.0,        # a background job (save, import, link, fork) is stopped past this
    "JOB_WORKERS": 2,
    "JOB_QUEUE": 8,
    "JOB_ANSWER_WITHIN_S": 0.8,
    "JOB_YIELD": 2.0,                 # a job sleeps this many times what each slice computed (GIL for rooms)
    "JOB_MEMORY_LIMIT_BYTES": 1200 * 2 ** 20,  # a job (in the server) finding the server's RSS past this stops
    "JOB_PROCESSES": 2,               # jobs' simulations run in this many worker processes (0: in threads)
    "JOB_WORKER_MEMORY_BYTES": 700 * 2 ** 20,  # a job's worker process past this resident memory is killed
    "QUOTA_PER_CLIENT": 30,           # costly actions one address may start per window
    "QUOTA_WINDOW_S": 600.0,
    "QUOTA_GLOBAL": 400,              # the same, all addresses together
    # counterexample search (app/counterexample)
    "SEARCH_USE_SPARK": True,
    "SPARK_MASTER": None,             # None = local[*]
}


def _int(environ, name, default):
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"error: {name}={raw!r} is not an integer") from None


def _float(environ, name, default):
    raw = environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"error: {name}={raw!r} is not a number") from None


def _message_queue(raw):
    """ISRLAB_MESSAGE_QUEUE: unset, or a Redis URL (the only queue the room host speaks)."""
    if raw is None or raw.strip() == "":
        return None
    if not raw.strip().startswith(("redis://", "rediss://", "unix://")):
        raise SystemExit(f"error: ISRLAB_MESSAGE_QUEUE={raw!r} is not a Redis URL "
                         "(allowed: redis://host:port/db, rediss://host:port/db, unix:///path/redis.sock)")
    return raw.strip()


def _list(raw):
    return [x.strip() for x in (raw or "").split(",") if x.strip()]


def _hostname_of(value):
    """``http://name:port`` or ``name:port`` or ``[::1]:port`` -> the host name alone, lower case."""
    value = value.split("://", 1)[-1].split("/", 1)[0]
    if value.startswith("["):
        return value[1:value.index("]")].lower() if "]" in value else value.lower()
    return value.rsplit(":", 1)[0].lower() if value.count(":") == 1 else value.lower()


def default_hosts(bound):
    """Names a local server answers to: loopback, and the address it is bound to."""
    hosts = ["127.0.0.1", "localhost", "::1"]
    if bound and bound not in ("0.0.0.0", "::") and _hostname_of(bound) not in hosts:
        hosts.append(_hostname_of(bound))
    return hosts


#: the live rooms `isrlab serve` admits by default with room workers, and without:
#: scripts/bench_ws.py --only B on 2 cores held 100 rooms of isr-expansion at 29.8 frames/s each
#: (minimum over viewers, p99 42 ms) in two room workers, 7 frames/s in the web process
SERVE_MAX_ROOMS = {True: 100, False: 50}


def serving_defaults(settings, environ=None):
    """What `isrlab serve` changes in the settings an app alone gets (tests build apps without
    it): one room worker per core unless ISRLAB_ROOM_WORKERS says, and the room quota they hold
    unless ISRLAB_MAX_ROOMS says."""
    environ = os.environ if environ is None else environ
    out = dict(settings)
    if not environ.get("ISRLAB_ROOM_WORKERS"):
        out["ROOM_WORKERS"] = os.cpu_count() or 1
    if not environ.get("ISRLAB_MAX_ROOMS"):
        out["MAX_ROOMS"] = SERVE_MAX_ROOMS[out["ROOM_WORKERS"] > 0]
    return out


def load_settings(environ=None):
    """The settings for this process: defaults, overridden by ISRLAB_* environment variables."""
    environ = os.environ if environ is None else environ
    cfg = dict(DEFAULTS)
    cfg["HOST"] = environ.get("ISRLAB_HOST") or DEFAULTS["HOST"]
    cfg["PORT"] = _int(environ, "ISRLAB_PORT", DEFAULTS["PORT"])
    cfg["SECRET_KEY"] = environ.get("ISRLAB_SECRET_KEY") or secrets.token_hex(32)
    origins = environ.get("ISRLAB_ALLOWED_ORIGINS")
    if origins:
        cfg["ALLOWED_ORIGINS"] = "*" if origins.strip() == "*" else \
            [o.strip() for o in origins.split(",") if o.strip()]
    cfg["FRAME_RATE"] = _int(environ, "ISRLAB_FPS", DEFAULTS["FRAME_RATE"])
    cfg["MAX_ROOMS"] = _int(environ, "ISRLAB_MAX_ROOMS", DEFAULTS["MAX_ROOMS"])
    cfg["MAX_ROOMS_PER_ADDRESS"] = _int(environ, "ISRLAB_MAX_ROOMS_PER_ADDRESS", DEFAULTS["MAX_ROOMS_PER_ADDRESS"])
    cfg["MAX_VIEWERS"] = _int(environ, "ISRLAB_MAX_VIEWERS", DEFAULTS["MAX_VIEWERS"])
    cfg["ROOM_IDLE_S"] = _float(environ, "ISRLAB_ROOM_IDLE_S", DEFAULTS["ROOM_IDLE_S"])
    cfg["COMMANDS_PER_S"] = _float(environ, "ISRLAB_COMMANDS_PER_S", DEFAULTS["COMMANDS_PER_S"])
    cfg["COMMAND_BURST"] = max(1, int(cfg["COMMANDS_PER_S"] * 3))
    cfg["MAX_BROKERS"] = _int(environ, "ISRLAB_MAX_BROKERS", DEFAULTS["MAX_BROKERS"])
    cfg["MAX_PARTITIONS"] = _int(environ, "ISRLAB_MAX_PARTITIONS", DEFAULTS["MAX_PARTITIONS"])
    hosts = environ.get("ISRLAB_ALLOWED_HOSTS")
    cfg["ALLOWED_HOSTS"] = default_hosts(cfg["HOST"]) + _list(hosts)
    if origins and origins.strip() != "*":
        cfg["ALLOWED_HOSTS"] += [_hostname_of(o) for o in cfg["ALLOWED_ORIGINS"]]
    cfg["PROXY_HOPS"] = _int(environ, "ISRLAB_PROXY_HOPS", DEFAULTS["PROXY_HOPS"])
    cfg["THREADS"] = _int(environ, "ISRLAB_THREADS", DEFAULTS["THREADS"])
    cfg["GRACEFUL_TIMEOUT_S"] = _int(environ, "ISRLAB_GRACEFUL_TIMEOUT_S", DEFAULTS["GRACEFUL_TIMEOUT_S"])
    cfg["ACCESS_LOG"] = environ.get("ISRLAB_ACCESS_LOG", "1") != "0"
    cfg["BUDGETS"] = {k: _int(environ, f"ISRLAB_BUDGET_EVENTS_{k.upper()}", v) for k, v in DEFAULTS["BUDGETS"].items()}
    cfg["ROOM_WORKERS"] = max(0, _int(environ, "ISRLAB_ROOM_WORKERS", DEFAULTS["ROOM_WORKERS"]))
    cfg["ROOM_WORKER_PYTHON"] = environ.get("ISRLAB_ROOM_WORKER_PYTHON") or None
    cfg["ROOM_WORKER_SPARE"] = _int(environ, "ISRLAB_ROOM_WORKER_SPARE", DEFAULTS["ROOM_WORKER_SPARE"])
    cfg["ROOM_WORKER_NICE"] = min(19, max(0, _int(environ, "ISRLAB_ROOM_WORKER_NICE", DEFAULTS["ROOM_WORKER_NICE"])))
    cfg["ROOM_WORKER_MEMORY_BYTES"] = _int(environ, "ISRLAB_ROOM_WORKER_MEMORY_MB", 3072) * 2 ** 20
    cfg["ROOM_SNAPSHOT_BYTES"] = _int(environ, "ISRLAB_ROOM_SNAPSHOT_MB", 256) * 2 ** 20
    cfg["MESSAGE_QUEUE"] = _message_queue(environ.get("ISRLAB_MESSAGE_QUEUE"))
    cfg["JOB_WORKERS"] = _int(environ, "ISRLAB_JOB_WORKERS", DEFAULTS["JOB_WORKERS"])
    cfg["JOB_QUEUE"] = _int(environ, "ISRLAB_JOB_QUEUE", DEFAULTS["JOB_QUEUE"])
    cfg["JOB_MEMORY_LIMIT_BYTES"] = _int(environ, "ISRLAB_JOB_MEMORY_LIMIT_MB", 1200) * 2 ** 20
    cfg["JOB_PROCESSES"] = _int(environ, "ISRLAB_JOB_PROCESSES", DEFAULTS["JOB_PROCESSES"])
    cfg["JOB_WORKER_MEMORY_BYTES"] = _int(environ, "ISRLAB_JOB_WORKER_MEMORY_MB", 700) * 2 ** 20
    cfg["JOB_YIELD"] = _float(environ, "ISRLAB_JOB_YIELD", DEFAULTS["JOB_YIELD"])
    cfg["JOB_ANSWER_WITHIN_S"] = _float(environ, "ISRLAB_JOB_ANSWER_WITHIN_S", DEFAULTS["JOB_ANSWER_WITHIN_S"])
    cfg["QUOTA_PER_CLIENT"] = _int(environ, "ISRLAB_QUOTA_PER_CLIENT", DEFAULTS["QUOTA_PER_CLIENT"])
    cfg["QUOTA_WINDOW_S"] = _float(environ, "ISRLAB_QUOTA_WINDOW_S", DEFAULTS["QUOTA_WINDOW_S"])
    cfg["REPLAY_CACHE_BYTES"] = _int(environ, "ISRLAB_REPLAY_CACHE_MB", 400) * 2 ** 20
    cfg["DATABASE_URL"] = environ.get("ISRLAB_DATABASE_URL") or None
    cfg["INSTANCE_PATH"] = environ.get("ISRLAB_INSTANCE_PATH") or None
    cfg["SNAPSHOT_KEY"] = environ.get("ISRLAB_SNAPSHOT_KEY") or None
    cfg["SPARK_MASTER"] = environ.get("ISRLAB_SPARK_MASTER") or None
    cfg["SEARCH_USE_SPARK"] = environ.get("ISRLAB_SEARCH_SPARK", "1") != "0"
    return cfg
