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
            raise client_refusal([k for _t, k in mine], self.window_s, self.per_client,
                                 self.window_s - (now - mine[0][0]))
        if len(self._all) >= self.global_cap:
            raise global_refusal(len(self._all), self.window_s, self.global_cap,
                                 self.window_s - (now - self._all[0][0]))
        return mine


def client_refusal(kinds, window_s, per_client, wait):
    """429 for an address at its limit (``kinds``: what it started in the window)."""
    counted = collections.Counter(kinds)
    return UserError("quota", f"this address started {len(kinds)} costly actions in the last "
                     f"{window_s:g} s ({', '.join(f'{n} {k}' for k, n in counted.most_common())})",
                     f"{per_client} per {window_s:g} s per address; try again in "
                     f"{int(wait) + 1} s", status=429).with_retry_after(wait + 1)


def global_refusal(count, window_s, global_cap, wait):
    """429 for everyone together at the global cap."""
    return UserError("quota", f"this server started {count} costly actions in the last "
                     f"{window_s:g} s", f"{global_cap} per {window_s:g} s in all; try "
                     f"again in {int(wait) + 1} s", status=429).with_retry_after(wait + 1)
