"""Token buckets per connection: a browser may send bursts, not floods."""
import threading
import time


class RateLimiter:
    def __init__(self, rate_per_s, burst, clock=time.monotonic):
        self.rate = float(rate_per_s)
        self.burst = float(burst)
        self.clock = clock
        self.buckets = {}
        self.lock = threading.Lock()

    def allow(self, key, cost=1.0):
        now = self.clock()
        with self.lock:
            tokens, last = self.buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < cost:
                self.buckets[key] = (tokens, now)
                return False
            self.buckets[key] = (tokens - cost, now)
            return True

    def forget(self, key):
        with self.lock:
            self.buckets.pop(key, None)
