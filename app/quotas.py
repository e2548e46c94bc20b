"""Per-client quotas on costly actions, counted together: live rooms, forks, saved runs, imports,
link preparations and searches. One address may start ``per_client`` of them in any window of
``window_s`` seconds, all addresses together ``global_cap``; past that the action is refused with
``429``, ``Retry-After`` and a message that says which limit was reached. The address is the
request's (``ISRLAB_PROXY_HOPS`` decides whether a proxy's X-Forwarded-For is believed)."""
import collections
import threading
import time

from .errors import UserError


class Quotas:
    def __init__(self, per_client, window_s, global_cap, clock=time.monotonic):
        self.per_client, self.window_s, self.global_cap = per_client, window_s, global_cap
        self.clock = clock
        self._lock = threading.Lock()
        self._by_client = collections.defaultdict(collections.deque)     # address -> deque[(t, kind)]
        self._all = collections.deque()

    def _expire(self, queue, now):
        while queue and now - queue[0][0] >= self.window_s:
            queue.popleft()

    def check(self, address):
        """Refuse (429) an address already at its limit, without counting anything: called before a
        costly request's body is even read, so a client hammering past its quota costs little."""
        now = self.clock()
        with self._lock:
            self._refuse_if_over(address, now)

    def charge(self, address, kind):
        """Count one ``kind`` action of ``address`` or refuse it (429, naming the limit)."""
        now = self.clock()
        with self._lock:
            mine = self._refuse_if_over(address, now)
            mine.append((now, kind))
            self._all.append((now, kind))

    def _refuse_if_over(self, address, now):
        """The address's recent actions (the lock held), or UserError 429 past a limit."""
        mine = self._by_client[address or "?"]
        self._expire(mine, now)
        self._expire(self._all, now)
        if len(mine) >= self.per_client:
            kinds = collections.Counter(k for _t, k in mine)
            wait = self.window_s - (now - mine[0][0])
            raise UserError("quota", f"this address started {len(mine)} costly actions in the last "
                            f"{self.window_s:g} s ({', '.join(f'{n} {k}' for k, n in kinds.most_common())})",
                            f"{self.per_client} per {self.window_s:g} s per address; try again in "
                            f"{int(wait) + 1} s", status=429).with_retry_after(wait + 1)
        if len(self._all) >= self.global_cap:
            wait = self.window_s - (now - self._all[0][0])
            raise UserError("quota", f"this server started {len(self._all)} costly actions in the last "
                            f"{self.window_s:g} s", f"{self.global_cap} per {self.window_s:g} s in all; try "
                            f"again in {int(wait) + 1} s", status=429).with_retry_after(wait + 1)
        return mine
