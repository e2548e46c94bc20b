"""Flask-SocketIO's message queue on Redis, with explicit limits on every call that can block.

Under ``ISRLAB_MESSAGE_QUEUE`` every emit of a web process, and every frame of the room host, is a
PUBLISH to Redis (python-socketio's ``RedisManager``); each web process also holds a subscription
that delivers the messages to its own sockets. The manager Flask-SocketIO builds from
``message_queue=`` takes redis-py's defaults, which changed across releases (no read limit at all
before redis-py 6): a publish to a Redis that stopped answering (a host gone from the network, not
a refused connection) would hold the emitting thread, a request thread or the room host's reader
of a worker, for as long as TCP retransmits, many minutes. So the limits are set here:

* a publish's read limit (PUBLISH_TIMEOUT_S) and a connect limit;
* TCP keepalives, for the subscription: redis-py's blocking read of a subscription waits through
  read limits (it is idle whenever no room is live), so without them a dead Redis left the web
  process's subscription waiting silently for good, its viewers getting no frames; with them it
  fails within KEEPALIVE_S and python-socketio reconnects.
"""
import socketio

from .mq import CONNECT_TIMEOUT_S, keepalive_options

#: Flask-SocketIO's default channel on Redis (what ``SocketIO(message_queue=url)`` uses)
CHANNEL = "flask-socketio"
PUBLISH_TIMEOUT_S = 5
KEEPALIVE_S = 25                    # mq.keepalive_options: 10 s idle, then 3 probes 5 s apart
REDIS_OPTIONS = {"socket_timeout": PUBLISH_TIMEOUT_S, "socket_connect_timeout": CONNECT_TIMEOUT_S}


def redis_manager(url, write_only=False):
    """The message queue's client manager (``SocketIO(client_manager=…)``, or an emitter)."""
    return socketio.RedisManager(url, channel=CHANNEL, write_only=write_only,
                                 redis_options={**REDIS_OPTIONS, **keepalive_options(url)})
