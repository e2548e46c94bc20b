"""The quotas of costly actions counted in Redis, once for every web process sharing
``ISRLAB_MESSAGE_QUEUE`` (app/quotas.py counts them in one process).

Each address's actions, and everyone's, are sorted sets scored by wall time; one Lua script drops
what left the window, refuses past a limit and otherwise counts the action, atomically (two web
processes cannot both take the last one). When Redis cannot be reached the count falls back on
this process's own ``Quotas``: saves, links and imports do not need Redis and keep working, still
bounded per process.
"""
import logging
import secrets
import time

from .quotas import Quotas, client_refusal, global_refusal

log = logging.getLogger(__name__)

PREFIX = "isrlab:quota:"

# KEYS: the address's set, everyone's set. ARGV: now, window, per_client, global_cap, member (""
# = only check). Returns {0} (counted), or {1, oldest score} / {2, count, oldest score} refused.
_SCRIPT = """
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return {1, redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]}
end
local all = redis.call('ZCARD', KEYS[2])
if all >= tonumber(ARGV[4]) then
  return {2, all, redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')[2]}
end
if ARGV[5] ~= '' then
  redis.call('ZADD', KEYS[1], now, ARGV[5])
  redis.call('ZADD', KEYS[2], now, ARGV[5])
  local ttl = math.ceil(window) + 1
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
end
return {0}
"""


class SharedQuotas:
    """``check`` and ``charge`` as ``Quotas``, counted in Redis."""

    def __init__(self, url, per_client, window_s, global_cap, wall=time.time):
        from .rooms.mq import connect
        self.per_client, self.window_s, self.global_cap = per_client, window_s, global_cap
        self.wall = wall
        self.redis = connect(url, block_s=2)
        self.script = self.redis.register_script(_SCRIPT)
        self.local = Quotas(per_client, window_s, global_cap)

    def check(self, address):
        self._run(address, None)

    def charge(self, address, kind):
        self._run(address, kind)

    def _run(self, address, kind):
        import redis
        now = self.wall()
        mine = PREFIX + "client:" + (address or "?")
        member = f"{kind}:{now:.6f}:{secrets.token_hex(4)}" if kind else ""
        try:
            answer = self.script(keys=[mine, PREFIX + "all"],
                                 args=[now, self.window_s, self.per_client, self.global_cap, member])
        except redis.RedisError as exc:
            log.warning("quotas counted in this process only: Redis unreachable (%s)", exc)
            return self.local.charge(address, kind) if kind else self.local.check(address)
        if answer[0] == 1:
            try:
                kinds = [m.decode().split(":", 1)[0] for m in self.redis.zrange(mine, 0, -1)]
            except redis.RedisError:
                kinds = []                     # the refusal stands; only its detail is missing
            raise client_refusal(kinds, self.window_s, self.per_client, self.window_s - (now - float(answer[1])))
        if answer[0] == 2:
            raise global_refusal(int(answer[1]), self.window_s, self.global_cap,
                                 self.window_s - (now - float(answer[2])))
        return None
