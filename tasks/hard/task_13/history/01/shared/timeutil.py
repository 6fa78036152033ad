"""UTC helpers; every service stores and compares aware UTC datetimes."""
from datetime import datetime, timezone


def from_epoch_ms(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def hour_bucket(dt):
    """Truncate to the hour: the partition unit for telemetry objects."""
    return dt.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
