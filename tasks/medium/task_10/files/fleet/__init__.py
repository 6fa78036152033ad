"""fleet-telemetry: GPS ping ingestion and geofencing."""
