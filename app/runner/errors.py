"""Errors the runner reports to a user: ``AppError`` is the application's ``UserError`` (one
error type and one JSON shape everywhere: ``app.errors``)."""
from ..errors import USER_ERRORS, UserError, error_reply

__all__ = ["AppError", "USER_ERRORS", "error_reply"]


class AppError(UserError):
    """A command, room or request the runner refuses."""
