"""metrics-etl: daily product-metrics rollups."""
