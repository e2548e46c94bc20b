"""Errors the runner reports to a user: the same shape as the engine's ``ScenarioError``
(``field``, ``message``, ``allowed``) so the page shows both the same way."""
from engine.scenario import ScenarioError


class AppError(ValueError):
    def __init__(self, field, message, allowed=None):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.allowed = allowed

    def to_dict(self):
        return {"field": self.field, "message": self.message, "allowed": self.allowed}


USER_ERRORS = (AppError, ScenarioError)


def error_reply(exc):
    """The reply to a request that failed for a reason the user can fix."""
    return {"ok": False, "error": exc.to_dict()}
