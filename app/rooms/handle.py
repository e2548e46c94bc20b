"""A room living in a room worker, as the web layer sees it: the ``Room`` methods app/web calls,
each one a call to the room's worker answered with plain data (or the same AppError). ``now`` and
``limits`` arguments are accepted and left out: the worker has its own clock and the settings."""


class RoomHandle:
    """A room in a worker, as the web layer sees it."""

    def __init__(self, runner, room_id, owner, now):
        self._runner = runner
        self.id = room_id
        self.owner = owner
        self.viewers = set()
        self.last_active_s = now

    def _call(self, name, *args):
        return self._runner.call_room(self.id, name, args)

    def describe(self):
        return self._call("describe")

    def info(self):
        return self._call("info")

    def now_ms(self):
        return self._call("now_ms")

    def replay_document(self):
        return self._call("replay_document")

    def series_of(self, key):
        return tuple(self._call("series_of", key))

    def metrics_now(self):
        return tuple(self._call("metrics_now"))

    def capture(self):
        return self._call("capture")

    def inspect(self, key):
        return self._call("inspect", key)

    def ledger(self, filters, page):
        return self._call("ledger", filters, page)

    def load(self, scenario, _now=None, source=None):
        return self._call("load", scenario, source)

    def control(self, action, _now=None, value=None):
        return self._call("control", action, value)

    def apply(self, op, _limits=None):
        return self._call("apply", op)

    def reconfigure(self, version, config, _now=None, _limits=None):
        return self._call("reconfigure", version, config)
