"""``GET /api/walkthroughs``: the library stories told step by step (app/guides), every title and
narration in the request's language (``?lang=`` / cookie / Accept-Language, app/i18n)."""
from flask import current_app, jsonify

from ..guides import WALKTHROUGHS, localized
from .blueprint import bp


@bp.get("/api/walkthroughs")
def api_walkthroughs():
    library = current_app.extensions["isrlab"]["runner"].library
    return jsonify(walkthroughs=[localized(w, library) for w in WALKTHROUGHS])
