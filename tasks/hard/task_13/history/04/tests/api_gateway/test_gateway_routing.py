from services.api_gateway import routes, upstreams
from services.api_gateway.ratelimit import Limiter, TokenBucket


def test_longest_prefix_wins():
    assert routes.resolve("/v1/jobs/summaries/7") == "http://scheduler:8100"
    assert routes.resolve("/v1/readings") == "http://ingest:8000"


def test_prefix_must_match_whole_segment():
    assert routes.resolve("/v1/readingsXYZ") is None
    assert routes.resolve("/admin") is None


def test_bucket_refills_over_time():
    b = TokenBucket(rate_per_s=1, burst=2)
    assert b.allow(0) and b.allow(0) and not b.allow(0)
    assert b.allow(1.0) and not b.allow(1.0)


def test_limiter_is_per_client():
    lim = Limiter(rate_per_s=0, burst=1)
    assert lim.allow("a", 0) and not lim.allow("a", 5)
    assert lim.allow("b", 5)


def test_forward_headers_strip_hop_by_hop_and_add_service_auth():
    out = upstreams.forward_headers({"Connection": "close", "Authorization": "Bearer client",
                                     "Accept": "application/json"}, "client-42")
    assert out == {"Accept": "application/json", "X-Atlas-Client": "client-42",
                   "Authorization": f"Bearer {upstreams.UPSTREAM_SERVICE_TOKEN}"}
