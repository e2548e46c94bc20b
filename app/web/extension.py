"""The store and the replay service of one app (``app.extensions["isrlab_runs"]``), opened on
first use: the schema is upgraded then, or at server start with ``app.web.warm_up``."""
import threading

from ..replay.service import ReplayService, snapshot_key
from ..store import db as store_db


class RunsExtension:
    """Opened lazily, once, under a lock: requests of a fresh server race for it."""

    def __init__(self, config):
        self.config = config
        self._lock = threading.Lock()
        self._engine = None
        self._service = None
        self.forks = {}          # live room id -> (parent run id, t_ms): a save records its origin

    @property
    def engine(self):
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = store_db.open_store(store_db.configured_url(self.config))
        return self._engine

    @property
    def service(self):
        if self._service is None:
            engine = self.engine
            with self._lock:
                if self._service is None:
                    key = snapshot_key(store_db.configured_instance_path(self.config), self.config.get("SNAPSHOT_KEY"))
                    self._service = ReplayService(
                        engine, key, max_seekers=self.config.get("REPLAY_MAX_RUNS", 3),
                        max_bytes=self.config.get("REPLAY_CACHE_BYTES", 400 * 2 ** 20),
                        worker_processes=self.config.get("REPLAY_WORKER_PROCESSES", False))
        return self._service

    def close(self):
        if self._service is not None:
            self._service.close()
        if self._engine is not None:
            self._engine.dispose()
