"""Response headers every page gets: a strict Content-Security-Policy and its companions."""

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")


def security_headers(response):
    """``after_request`` hook: defaults only, so a route may relax one (an embeddable replay)."""
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("X-Frame-Options", "DENY")
    return response


# -- same site only ------------------------------------------------------------------------------------
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _hostname(host_header):
    """``name:port``, ``[v6]:port`` or ``name`` -> the lower-case host name."""
    host = (host_header or "").strip().lower()
    if host.startswith("["):
        return host[1:host.index("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _origin_host(value):
    """The ``host[:port]`` part of an Origin or Referer header (``None`` when unusable)."""
    if not value or "://" not in value or value == "null":
        return None
    return value.split("://", 1)[1].split("/", 1)[0].lower()


def host_refusal(request, allowed_hosts):
    """A reason to refuse the request's Host header, or None (a DNS-rebinding guard: a page of
    another site that resolves its name to this machine still sends its own name here)."""
    if _hostname(request.host) in allowed_hosts:
        return None
    return ("Host", f"{_hostname(request.host)[:80]!r} is not a name this server answers to",
            "localhost, 127.0.0.1, or a name in ISRLAB_ALLOWED_HOSTS")


def same_site_refusal(request, allowed_origins):
    """A reason to refuse a state-changing request from another site, or None.

    A browser sends ``Origin`` (or at least ``Referer``) with every cross-site POST; it must name
    this server (or an origin in ISRLAB_ALLOWED_ORIGINS). A POST must carry a JSON body: an HTML
    form cannot send ``application/json`` without a CORS preflight, so a bodiless or form-encoded
    cross-site POST starts nothing. Clients that are not browsers send neither header."""
    if request.method not in STATE_CHANGING:
        return None
    if request.method == "POST" and request.mimetype != "application/json":
        return ("Content-Type", f"{request.mimetype or 'no body'} is not accepted for {request.method}",
                "a JSON body (Content-Type: application/json); send {} when there is nothing to say")
    source = _origin_host(request.headers.get("Origin")) or _origin_host(request.headers.get("Referer"))
    if source is None or source == request.host.lower():
        return None
    if allowed_origins == "*" or source in {_origin_host(o) for o in (allowed_origins or ())}:
        return None
    return ("Origin", f"a request from {source[:80]!r} may not change this server's state",
            "pages of this server (same origin), or origins in ISRLAB_ALLOWED_ORIGINS")
