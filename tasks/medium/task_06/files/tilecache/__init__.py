"""tilecache: raster tile caching proxy."""
