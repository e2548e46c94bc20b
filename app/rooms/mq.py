"""The room host's request and reply over Redis (``ISRLAB_MESSAGE_QUEUE=redis://…``).

Web processes ask the one room host (``isrlab rooms``, host.py) to create rooms, join viewers and
run room calls; frames do not come back this way but through Flask-SocketIO's message queue.

* A request is an RPUSH of a pickle ``(reply_key, deadline, web_id, method, args)`` on
  ``REQUESTS``; the host's threads BLPOP it, run it, and LPUSH ``(kind, value)`` on the reply key
  (which expires). A request the host reads after its deadline is dropped: the caller has already
  been told the host did not answer, so a late create never makes a room nobody knows. Leaves are
  the exception: late, they are still true. A create or join that was in time
  when it was read but is late once answered is undone, and answered ("late", None).
* ``HOST_KEY`` names the running room host and expires a few seconds after it stops refreshing
  it: a web process refuses at once ("rooms are unavailable: no room host is running") instead of
  waiting for a reply nobody will send; a second host refuses to start.
* Fire-and-forget notes (a web process's backed-up viewers, leaves Redis did not take at first)
  are requests without a reply key.
* A web process says it is alive by refreshing ``WEB_KEY + its id`` (expiring WEB_TTL_S), not by a
  request: requests wait for a free host thread, and a host whose threads all wait on a stuck
  worker would have taken every web process for dead and sent all their viewers away.

Redis and both ends are this deployment's own: pickle is trusted here as it is for the room
workers' pipes (protocol.py) and for Flask-SocketIO's own Redis messages. Keep Redis private.
"""
import os
import pickle
import secrets
import socket
import time
from urllib.parse import urlsplit, urlunsplit

from ..runner.errors import AppError
from . import protocol

PREFIX = "isrlab:rooms:"
REQUESTS = PREFIX + "requests"
HOST_KEY = PREFIX + "host"
HOST_TTL_S = 5                 # the host refreshes HOST_KEY every second; gone 5 s after it stops
WEB_TTL_S = 15                 # a web process's "alive" key lives this long unless refreshed (every 5 s)
WEB_GRACE_S = 12               # ... and once it is gone this long (a Redis restart loses every key,
                               # each web process sets its own again within 5 s), its viewers leave
WEB_KEY = PREFIX + "web:"      # + the web process's id
REPLY_TTL_S = 60               # an unread reply expires
CALL_TIMEOUT_S = 15.0          # a request the host has not answered by then is refused (503)
CONNECT_TIMEOUT_S = 2.0        # a Redis that does not accept a connection by then is down


def safe_url(url):
    """The URL without its password (it goes into error messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def keepalive_options(url):
    """TCP keepalives that find a dead Redis under an idle connection within about 25 s; none for
    a ``unix://`` socket (redis-py refuses them there)."""
    if not url.startswith(("redis://", "rediss://")):
        return {}
    probes = {getattr(socket, name): value for name, value in
              (("TCP_KEEPIDLE", 10), ("TCP_KEEPINTVL", 5), ("TCP_KEEPCNT", 3)) if hasattr(socket, name)}
    return {"socket_keepalive": True, "socket_keepalive_options": probes}


def connect(url, block_s=CALL_TIMEOUT_S):
    """A Redis client whose every call ends: connecting within CONNECT_TIMEOUT_S, reading within
    ``block_s`` plus a margin (a BLPOP of ``block_s`` must not time out first)."""
    import redis
    return redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=block_s + 5,
                                health_check_interval=30, **keepalive_options(url))


def unavailable(why):
    return AppError("room", f"rooms are unavailable: {why}",
                    "try again in a moment; the operator starts the room host with "
                    "`isrlab rooms` (ISRLAB_MESSAGE_QUEUE names the same Redis)", status=503).with_retry_after(5)


def web_id():
    """This web process's name on the queue (host and pid, plus a random part)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class RoomHostClient:
    """The web side: ``call(method, *args)`` on the room host, answered or refused within a bound."""

    def __init__(self, url, web_name=None, timeout=CALL_TIMEOUT_S):
        self.url = url
        self.web_id = web_name or web_id()
        self.timeout = timeout
        self.redis = connect(url, timeout)

    def _redis_error(self, exc):
        return unavailable(f"cannot reach Redis at {safe_url(self.url)} ({type(exc).__name__}: {exc})")

    def call(self, method, *args, timeout=None):
        import redis
        timeout = self.timeout if timeout is None else timeout
        reply_key = PREFIX + "reply:" + secrets.token_hex(12)
        request = pickle.dumps((reply_key, time.time() + timeout, self.web_id, method, args),
                               protocol=protocol.PROTOCOL)
        try:
            if not self.redis.exists(HOST_KEY):
                raise unavailable("no room host is running")
            self.redis.rpush(REQUESTS, request)
            got = self._wait(reply_key, time.monotonic() + timeout)
        except redis.RedisError as exc:
            raise self._redis_error(exc) from exc
        if got is None:
            raise unavailable(f"the room host did not answer within {timeout:g} s")
        kind, value = pickle.loads(got[1])
        if kind == "ok":
            return value
        if kind == "user":
            protocol.raise_user_error(value)
        if kind == "late":
            raise unavailable("the room host answered after this request's deadline, and undid it")
        raise RuntimeError(f"room host: {value}")

    def _wait(self, reply_key, deadline):
        """The reply, waited for a second at a time: a host that died meanwhile (its HOST_KEY
        expired) is told within HOST_TTL_S, not at the end of the whole timeout."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            got = self.redis.blpop([reply_key], timeout=min(1.0, max(left, 0.01)))
            if got is not None:
                return got
            if not self.redis.exists(HOST_KEY):
                raise unavailable("the room host stopped while answering (its rooms are gone)")

    def note(self, method, *args):
        """A request without a reply; False when it was not queued: Redis is down, or no room
        host runs (queued anyway, notes would pile up in Redis for as long as none does, and a
        host started later would read them all)."""
        import redis
        try:
            if not self.redis.exists(HOST_KEY):
                return False
            self.redis.rpush(REQUESTS, pickle.dumps((None, time.time() + self.timeout, self.web_id, method, args),
                                                    protocol=protocol.PROTOCOL))
            return True
        except redis.RedisError:
            return False

    def alive(self, alive=True):
        """Refresh this web process's "alive" key (``alive`` False: drop it, at its end); False
        when Redis cannot be told."""
        import redis
        try:
            if not alive:
                return bool(self.redis.delete(WEB_KEY + self.web_id))
            return bool(self.redis.set(WEB_KEY + self.web_id, 1, ex=WEB_TTL_S))
        except redis.RedisError:
            return False

    def host(self):
        """What the running host wrote of itself, or None."""
        import redis
        try:
            raw = self.redis.get(HOST_KEY)
        except redis.RedisError as exc:
            raise self._redis_error(exc) from exc
        return raw.decode() if raw else None

    def close(self):
        self.redis.close()
