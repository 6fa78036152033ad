"""Longest-prefix routing of public paths to internal upstreams."""

ROUTES = {
    "/v1/readings": "http://ingest:8000",
    "/v1/devices": "http://ingest:8000",
    "/v1/jobs": "http://scheduler:8100",
    "/v1/jobs/summaries": "http://scheduler:8100",
}


def resolve(path, routes=ROUTES):
    """Upstream base URL for `path`, or None; matches whole path segments only."""
    best = None
    for prefix, upstream in routes.items():
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, upstream)
    return best[1] if best else None
