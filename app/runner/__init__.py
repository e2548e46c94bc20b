"""Live simulations: rooms, their frames and the background task that runs them (see core.py)."""
from .core import NullTransport, Runner
from .errors import USER_ERRORS, AppError, error_reply
from .room import Room

__all__ = ["Runner", "Room", "NullTransport", "AppError", "USER_ERRORS", "error_reply"]
