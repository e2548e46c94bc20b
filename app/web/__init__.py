"""The web layer: one blueprint with HTTP routes (routes.py) and Socket.IO events (events.py)
side by side. Handlers are thin: validate, call the runner, reply."""
from flask import Blueprint

bp = Blueprint("web", __name__)

from . import routes  # noqa: E402,F401  (attaches the routes to bp)
