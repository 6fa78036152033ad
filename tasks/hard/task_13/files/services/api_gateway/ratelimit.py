"""Per-client token buckets. Time is passed in so the logic stays testable."""


class TokenBucket:
    def __init__(self, rate_per_s, burst):
        self.rate = float(rate_per_s)
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.updated = None

    def allow(self, now, cost=1.0):
        if self.updated is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False


class Limiter:
    def __init__(self, rate_per_s=5, burst=10):
        self.rate, self.burst = rate_per_s, burst
        self.buckets = {}

    def allow(self, client_id, now):
        bucket = self.buckets.setdefault(client_id, TokenBucket(self.rate, self.burst))
        return bucket.allow(now)
