"""The room host: ``isrlab rooms`` — the one process that owns the live rooms of every web process
sharing ``ISRLAB_MESSAGE_QUEUE`` (a Redis URL).

It runs the same ``RemoteRunner`` a lone web process runs with ``ISRLAB_ROOM_WORKERS`` (room
workers, recovery of a dead worker's rooms, quotas of rooms counted over everyone), with two
differences:

* requests come from web processes through Redis (mq.py) and are served by a few threads;
* frames go out through Flask-SocketIO's message queue as an external emitter
  (``socketio_queue.redis_manager(url, write_only=True)``): each web process, created with the same
  ``message_queue``, delivers them to those of its sockets that are in the room's channel.

A web process reports its backed-up viewers (so a slow viewer skips frames as in process, never
stalling its room) and refreshes its "alive" key in Redis every few seconds; the viewers of one
whose key is gone leave their rooms (which then go idle and are removed as usual).
"""
import logging
import os
import pickle
import signal
import socket
import threading
import time
import traceback

from engine.scenario.document import ScenarioError

from ..runner.errors import AppError
from . import mq, protocol
from .remote import RemoteRunner

log = logging.getLogger(__name__)

#: what app.web.transport names the Socket.IO namespace and a room's channel (app.rooms may not
#: import app.web; tests/app/test_message_queue.py checks both agree)
NAMESPACE = "/"
CHANNEL_PREFIX = "room:"
REQUEST_THREADS = 16          # requests served at once (each holds a Redis connection)
#: requests still true when read late: the web process forgot the viewer whatever the host said
#: (a leave names the join it ends, so it cannot take the viewer out of one joined since)
LATE_BUT_TRUE = frozenset(("leave",))


class QueueTransport:
    """Frames to Socket.IO rooms through the message queue; backlogs as web processes report them."""

    def __init__(self, url):
        # time limits on every Redis call: a publish blocked on a dead connection would stop the
        # worker's reader thread, then the worker, then every call to it
        from .socketio_queue import redis_manager
        self.manager = redis_manager(url, write_only=True)
        self.queued = {}                  # sid -> frames waiting in its web process's socket queue

    def send(self, room_id, text, sids, everyone):
        emit, to = self.manager.emit, CHANNEL_PREFIX + room_id
        if len(sids) == len(everyone):
            emit("frame", text, namespace=NAMESPACE, room=to)
        elif len(sids) * 2 >= len(everyone):
            chosen = set(sids)
            emit("frame", text, namespace=NAMESPACE, room=to, skip_sid=[s for s in everyone if s not in chosen])
        else:
            for sid in sids:
                emit("frame", text, namespace=NAMESPACE, room=sid)

    def backlog(self, sid):
        return self.queued.get(sid, 0)


class RoomHost:
    def __init__(self, settings, url, request_threads=REQUEST_THREADS):
        self.url = url
        self.redis = mq.connect(url, block_s=1)
        self.transport = QueueTransport(url)
        self.runner = RemoteRunner(settings, self.transport)
        self.identity = f"{socket.gethostname()} pid {os.getpid()}, {len(self.runner.workers)} room workers"
        self.request_threads = request_threads
        self.lock = threading.Lock()
        self.webs = {}                    # web process id -> when it last asked something
        self.web_missing = {}             # web process id -> since when its "alive" key is gone
        self.sid_web = {}                 # viewer's sid -> the web process holding its socket
        self.backlog_seq = {}             # viewer's sid -> the number of its newest backlog note
        self.served = 0                   # requests and notes handled (tests wait on it)
        self.stopping = threading.Event()
        self.threads = []

    # -- life -------------------------------------------------------------------------------------------
    def start(self):
        """Start the room workers, then claim HOST_KEY (a second host refuses), then serve."""
        self._refuse_if_taken()                  # before starting workers: the usual case is quick
        self.runner.ensure_running()
        if not self.redis.set(mq.HOST_KEY, self.identity, nx=True, ex=mq.HOST_TTL_S):
            self.runner.stop()
            self._refuse_if_taken()
        for i in range(self.request_threads):
            thread = threading.Thread(target=self._serve, daemon=True, name=f"isrlab-room-host-{i}")
            thread.start()
            self.threads.append(thread)
        # a thread of its own: its leaves may wait for busy workers, and HOST_KEY must not wait
        thread = threading.Thread(target=self._watch_webs, daemon=True, name="isrlab-room-host-webs")
        thread.start()
        self.threads.append(thread)

    def _refuse_if_taken(self):
        other = self.redis.get(mq.HOST_KEY)
        if other is not None:
            raise SystemExit(f"error: another room host serves {mq.safe_url(self.url)}: {other.decode()} "
                             "(one room host per message queue)")

    def run_forever(self):
        """Refresh HOST_KEY every second (nothing else runs in this loop, so nothing delays it:
        a key left to expire tells every web process that the rooms are gone)."""
        while not self.stopping.wait(1.0):
            self._refresh()

    def _watch_webs(self):
        while not self.stopping.wait(1.0):
            try:
                self._forget_silent_webs()
            except Exception:  # noqa: BLE001 - the next round tries again
                log.exception("room host: sending away the viewers of silent web processes failed")

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=3)
        try:
            if (self.redis.get(mq.HOST_KEY) or b"").decode() == self.identity:
                self.redis.delete(mq.HOST_KEY)
        except Exception:  # noqa: BLE001 - Redis gone: the key expires by itself
            pass
        self.runner.stop()

    def _refresh(self):
        import redis
        try:
            if self.redis.set(mq.HOST_KEY, self.identity, xx=True, ex=mq.HOST_TTL_S):
                return
            if not self.redis.set(mq.HOST_KEY, self.identity, nx=True, ex=mq.HOST_TTL_S):
                log.error("another room host took %s; stopping", mq.safe_url(self.url))
                self.stopping.set()
        except redis.RedisError as exc:
            log.warning("cannot reach Redis at %s: %s", mq.safe_url(self.url), exc)

    def _forget_silent_webs(self):
        """The viewers of web processes whose "alive" key (mq.WEB_KEY) has been gone for
        WEB_GRACE_S leave their rooms; a Redis that cannot be asked judges no one."""
        import redis
        with self.lock:         # a web process a join just named counts even if a round dropped it
            webs = sorted(set(self.webs) | set(self.sid_web.values()))
        if not webs:
            return
        try:
            pipe = self.redis.pipeline(transaction=False)
            for web in webs:
                pipe.exists(mq.WEB_KEY + web)
            present = pipe.execute()
        except redis.RedisError:
            return
        now = time.monotonic()
        with self.lock:
            gone = set()
            for web, alive in zip(webs, present):
                if alive:
                    self.web_missing.pop(web, None)
                elif now - self.web_missing.setdefault(web, now) >= mq.WEB_GRACE_S:
                    gone.add(web)
            # each leave names the join it ends: one made since (the web process came back) stays
            leaving = [(sid, self.runner.join_of(sid)) for sid, w in self.sid_web.items() if w in gone]
            for web in gone:
                self.webs.pop(web, None)
                self.web_missing.pop(web, None)
        for sid, join_id in leaving:
            try:
                self._leave(sid, join_id)
            except Exception:  # noqa: BLE001 - one viewer's leave must not keep the others in
                log.exception("room host: viewer %s of a silent web process did not leave", sid)
        if leaving:
            log.warning("web processes %s went silent: %d viewers left their rooms", sorted(gone), len(leaving))

    # -- requests --------------------------------------------------------------------------------------
    def _serve(self):
        import redis
        conn = mq.connect(self.url, block_s=1)
        while not self.stopping.is_set():
            try:
                got = conn.blpop([mq.REQUESTS], timeout=1)
            except redis.RedisError as exc:
                log.warning("cannot reach Redis at %s: %s", mq.safe_url(self.url), exc)
                self.stopping.wait(1.0)
                continue
            if got is None:
                continue
            try:
                reply_key, deadline, web, method, args = pickle.loads(got[1])
            except Exception:  # noqa: BLE001 - not ours (another program on this Redis): skipped
                log.warning("skipped a request that is not a room host request (%d bytes)", len(got[1]))
                continue
            if time.time() > deadline and method not in LATE_BUT_TRUE:
                with self.lock:
                    self.served += 1
                continue                       # its caller was already told no one answered
            answer = self._answer(web, method, args)
            if time.time() > deadline and answer[0] == "ok" and self._undo(method, args, answer[1]):
                answer = ("late", None)        # a caller still waiting (clocks differ) is told so
            with self.lock:
                self.served += 1
            if reply_key is None:
                continue
            try:
                conn.pipeline().lpush(reply_key, pickle.dumps(answer, protocol=protocol.PROTOCOL)) \
                    .expire(reply_key, mq.REPLY_TTL_S).execute()
            except redis.RedisError as exc:
                log.warning("a reply to %s was lost: %s", web, exc)

    def _answer(self, web, method, args):
        with self.lock:
            self.webs[web] = time.monotonic()
        try:
            return ("ok", getattr(self, "do_" + method)(web, *args))
        except ScenarioError as exc:           # the user's: AppError, UserError, the engine's ScenarioError
            return ("user", protocol.user_error_fields(exc))
        except Exception:  # noqa: BLE001 - reported to the web process, which logs it
            log.exception("room host: %s failed", method)
            return ("error", traceback.format_exc(limit=5))

    def _undo(self, method, args, value):
        """A create or join answered after its caller gave up waiting: its web process told the
        user it failed, so the room it made or the viewer it joined must not stay (a room nobody
        knows, a viewer nobody shows frames to, keeping a room from going idle). A join that moved
        the viewer out of its previous room does not put it back: there the viewer counts no more
        until it joins again (the user was shown an error), which leaks nothing."""
        try:
            if method == "create":
                self.runner.remove(value)
            elif method == "join":
                self._leave(args[1], args[2] if len(args) > 2 else None)
            else:
                return False
            log.warning("room host: a %s answered after its caller's deadline was undone", method)
            return True
        except Exception:  # noqa: BLE001
            log.exception("room host: undoing a late %s failed", method)
            return False

    # -- what web processes ask -------------------------------------------------------------------------
    def do_create(self, _web, scenario, library_name, room_id, owner, prepared, engine_version, paused):
        prepare = None
        if prepared is not None:
            def prepare(_fresh):               # the fork's simulation, computed by the web process
                return pickle.loads(prepared)
        handle = self.runner.create(scenario=scenario, library_name=library_name, room_id=room_id, owner=owner,
                                    prepare=prepare, engine_version=engine_version, paused=paused)
        return handle.id

    def do_exists(self, _web, room_id):
        return self.runner.get(room_id) is not None

    def do_require(self, _web, room_id):
        return self.runner.require(room_id).id

    def do_join(self, web, room_id, sid, join_id=None):
        handle, left = self.runner.join(room_id, sid, join_id)
        with self.lock:
            self.sid_web[sid] = web
        return handle.id, left

    def do_leave(self, _web, sid, join_id=None):
        return self._leave(sid, join_id)

    def _leave(self, sid, join_id=None):
        """``sid`` leaves its room (only if its latest join is ``join_id``, when given); what
        this host keeps of the viewer goes once it watches no room (its room may be gone already)."""
        left = self.runner.leave(sid, join_id)
        with self.lock:             # checked and dropped together: a join sets sid_web under it
            if not self.runner.watching(sid):
                self.sid_web.pop(sid, None)
                self.transport.queued.pop(sid, None)
                self.backlog_seq.pop(sid, None)
        return left

    def do_resync(self, _web, sid):
        self.runner.resync(sid)

    def do_remove(self, _web, room_id):
        return self.runner.remove(room_id) is not None

    def do_room(self, _web, room_id, name, args):
        return self.runner.call_room(room_id, name, args)

    def do_room_ids(self, _web):
        with self.runner.lock:
            return list(self.runner.rooms)

    def do_stats(self, _web):
        stats = self.runner.stats
        with self.lock:
            stats["room_host"] = {"host": self.identity, "web_processes": len(self.webs), "viewers": len(self.sid_web)}
        return stats

    def do_backlog(self, _web, seq, changes):
        """A web process's backed-up viewers. Notes are served by several threads, so an older
        note may come last: each viewer keeps the newest (a stale "backed up" would starve it)."""
        with self.lock:
            for sid, queued in changes.items():
                if seq <= self.backlog_seq.get(sid, -1):
                    continue
                if sid not in self.sid_web:
                    continue
                self.backlog_seq[sid] = seq
                if queued:
                    self.transport.queued[sid] = queued
                else:
                    self.transport.queued.pop(sid, None)

    def do_alive(self, web):
        """What a web process of the previous version sends instead of refreshing its key."""
        self.redis.set(mq.WEB_KEY + web, 1, ex=mq.WEB_TTL_S)


def serve(settings, url, workers=None):
    """``isrlab rooms``: serve until SIGTERM or Ctrl+C."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = dict(settings, MESSAGE_QUEUE=url)
    settings["ROOM_WORKERS"] = workers or settings.get("ROOM_WORKERS") or os.cpu_count() or 1
    import redis
    host = RoomHost(settings, url)
    signal.signal(signal.SIGTERM, lambda *_: host.stopping.set())
    try:
        host.start()
    except redis.RedisError as exc:
        host.runner.stop()
        raise SystemExit(f"error: cannot reach Redis at {mq.safe_url(url)}: {exc}") from None
    except AppError as exc:
        raise SystemExit(f"error: {exc.message} ({exc.allowed})") from None
    print(f"ISR Lab room host on {mq.safe_url(url)}: {host.identity}  (Ctrl+C to stop)", flush=True)
    try:
        host.run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        host.stop()
    return 0
