"""One error type for everything a user can fix, and one JSON shape for it.

Every user-facing error of ISR Lab is a ``ScenarioError`` (the engine's: ``field``, ``message``,
``allowed``): the engine raises it for a bad scenario, and ``UserError`` below extends it with the
HTTP ``status`` for the rest of the application (the store, links, replays, quotas, budgets).
``error_reply`` is the one shape HTTP replies and Socket.IO acknowledgements use::

    {"ok": false, "error": {"field": "duration_ms", "message": "...", "allowed": "..."}}

The web layer registers one Flask error handler for ``ScenarioError`` (``app.web``), so a route
raises and never builds an error response by hand.
"""
from engine.scenario.document import ScenarioError

#: What a handler catches as "the user's fault": one class, whatever raised it.
USER_ERRORS = (ScenarioError,)


class UserError(ScenarioError):
    """A request ISR Lab refuses; ``status`` is the HTTP status of the reply (400 by default;
    404 when what it names does not exist, 429 when a limit is reached)."""

    status = 400
    retry_after = None          # seconds, sent as Retry-After with a 429

    def __init__(self, field, message, allowed=None, status=None):
        super().__init__(field, message, allowed)
        if status is not None:
            self.status = status

    def with_retry_after(self, seconds):
        self.retry_after = int(seconds)
        return self


def status_of(exc):
    return getattr(exc, "status", 400)


def error_reply(exc):
    """The body of a refused request or socket event: its message in the request's language
    (app/i18n/errors.py; the field stays the English path)."""
    from .i18n.errors import localized      # here: worker processes import this module without Flask-Babel
    return {"ok": False, "error": localized(exc.to_dict())}
