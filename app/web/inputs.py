"""JSON from clients, read with the bounds of ``app.jsonbounds``: Flask's JSON provider for HTTP
bodies and the ``json`` module python-socketio decodes packets with."""
import json

from flask import Request
from flask.json.provider import DefaultJSONProvider

from ..jsonbounds import MAX_DEPTH, UnsafeJSON, loads_checked

__all__ = ["CheckedJSONProvider", "CheckedRequest", "SocketJSON", "UnsafeJSON"]


class CheckedRequest(Request):
    """A request whose unreadable JSON body is a user error naming the field (not a bare 400)."""

    def on_json_loading_failed(self, e):
        if isinstance(e, UnsafeJSON):
            raise e
        raise UnsafeJSON("body", f"is not valid JSON ({str(e)[:80]})", "a JSON document") from None


class CheckedJSONProvider(DefaultJSONProvider):
    """Flask's JSON, with the depth and text checks on every request body it reads."""

    def loads(self, s, **kwargs):
        return loads_checked(s, "body", self._app.config.get("MAX_JSON_DEPTH", MAX_DEPTH))


#: The event name a packet whose JSON was refused is delivered as (to ``events.on_unknown``), so the
#: client still gets an acknowledgement that says what was wrong instead of silence.
INVALID_EVENT = "$invalid-json"


class SocketJSON:
    """The ``json`` module python-socketio decodes packets with, with the same bounds."""

    max_depth = MAX_DEPTH

    @staticmethod
    def dumps(*args, **kwargs):
        return json.dumps(*args, **kwargs)

    @classmethod
    def loads(cls, s, *args, **kwargs):
        try:
            return loads_checked(s, "event", cls.max_depth)
        except UnsafeJSON as exc:
            return [INVALID_EVENT, exc.to_dict()]
