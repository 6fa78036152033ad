"""In-memory LRU tile cache with a per-entry TTL."""
import collections
import re
import time

_TILE = re.compile(r"^/tiles/(\d{1,2})/(\d+)/(\d+)\.png$")


def parse_tile_path(path: str) -> tuple[int, int, int]:
    m = _TILE.match(path)
    if not m:
        raise ValueError(f"not a tile path: {path!r}")
    z, x, y = (int(g) for g in m.groups())
    if z > 22 or x >= 2 ** z or y >= 2 ** z:
        raise ValueError(f"tile out of range: {z}/{x}/{y}")
    return z, x, y


class TileCache:
    def __init__(self, max_tiles: int, ttl_seconds: float, clock=time.monotonic):
        self.max_tiles = max_tiles
        self.ttl = ttl_seconds
        self.clock = clock
        self._data: collections.OrderedDict = collections.OrderedDict()
        self.hits = self.misses = 0

    def get(self, key):
        item = self._data.get(key)
        if item is None or self.clock() - item[0] > self.ttl:
            self._data.pop(key, None)
            self.misses += 1
            return None
        self._data.move_to_end(key)
        self.hits += 1
        return item[1]

    def put(self, key, value) -> None:
        self._data[key] = (self.clock(), value)
        self._data.move_to_end(key)
        while len(self._data) > self.max_tiles:
            self._data.popitem(last=False)

    def __len__(self):
        return len(self._data)
