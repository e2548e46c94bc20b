"""The one blueprint every HTTP resource module attaches its routes to (``app.web.__init__``
imports them all, so importing the package registers every route)."""
from flask import Blueprint

bp = Blueprint("web", __name__)
