"""What every request passes before a route sees it: the Host allow-list, the same-site rule for
state-changing requests, JSON bodies read with their bounds, the proxy headers only when trusted,
and the security headers of every reply. A refusal is the usual JSON error naming the header."""
import logging
import re

from flask import current_app, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.middleware.proxy_fix import ProxyFix

from ..errors import error_reply
from . import cluster_import
from .inputs import UnsafeJSON
from .security import host_refusal, same_site_refusal, security_headers

log = logging.getLogger(__name__)


class Refused(UnsafeJSON):
    status = 403


def socket_origins(settings):
    """Origins allowed to open a Socket.IO connection: this server's own names (any port, as the
    page that opens the socket is served by this server), plus ISRLAB_ALLOWED_ORIGINS."""
    extra = settings.get("ALLOWED_ORIGINS")
    if extra == "*":
        return "*"
    hosts = settings.get("ALLOWED_HOSTS") or ["127.0.0.1", "localhost", "::1"]

    def allowed(origin):
        from .security import _hostname, _origin_host
        host = _origin_host(origin)
        return host is not None and (_hostname(host) in hosts or origin in (extra or ()))
    return allowed


#: a run file (POST /api/runs/import): a long run's events; it is re-simulated in a worker process
RUN_FILE_MAX_BYTES = 64 * 1024 * 1024
#: routes whose bodies may be larger than MAX_CONTENT_LENGTH: the bound must be raised here, as the
#: body is read below, before the route runs (a bound set in the route came too late)
BODY_LIMITS = {cluster_import.PATH: cluster_import.BODY_BYTES, "/api/runs/import": RUN_FILE_MAX_BYTES}

# the POSTs that start costly work and count against the client's quota (app/quotas.py)
COSTLY = re.compile(r"^/api/(runs|runs/import|replay/[^/]+/fork|search|links|rooms)$")


def check_request():
    refusal = host_refusal(request, current_app.config["ALLOWED_HOSTS"] or ["127.0.0.1", "localhost", "::1"])
    if refusal is None:
        refusal = same_site_refusal(request, current_app.config.get("ALLOWED_ORIGINS"))
    if refusal is not None:
        status = 400 if refusal[0] == "Host" else 403
        return jsonify(error_reply(Refused(*refusal, status=status))), status
    if request.method == "POST" and COSTLY.match(request.path):
        # a client already past its quota is refused before its body is read or validated
        current_app.extensions["isrlab"]["quotas"].check(request.remote_addr)
    if request.path in BODY_LIMITS:
        request.max_content_length = BODY_LIMITS[request.path]
    if request.is_json and request.content_length:
        request.get_json(cache=True)          # bounded parse now: a refusal names the field
    return None


def unexpected(exc):
    """Last resort: a bug is logged with its traceback and answered as JSON, never an HTML 500."""
    if isinstance(exc, HTTPException):
        return exc
    log.exception("unexpected error on %s %s", request.method, request.path)
    return jsonify(ok=False, error={"field": None, "message": "internal error (logged on the server)",
                                    "allowed": None}), 500


def install_guards(app):
    if app.config.get("PROXY_HOPS"):
        hops = app.config["PROXY_HOPS"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)
    app.before_request(check_request)
    app.after_request(security_headers)
    app.register_error_handler(Exception, unexpected)
