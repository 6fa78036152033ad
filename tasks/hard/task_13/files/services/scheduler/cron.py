"""A tiny cron subset: minute and hour fields with `*`, `*/n`, `a,b` and numbers."""
from datetime import timedelta


def _field(spec, lo, hi):
    values = set()
    for part in spec.split(","):
        if part == "*":
            values.update(range(lo, hi + 1))
        elif part.startswith("*/"):
            step = int(part[2:])
            if step <= 0:
                raise ValueError(f"bad step in {spec!r}")
            values.update(range(lo, hi + 1, step))
        else:
            n = int(part)
            if not lo <= n <= hi:
                raise ValueError(f"{n} out of range {lo}-{hi}")
            values.add(n)
    return values


def parse(expr):
    minute, hour = expr.split()
    return _field(minute, 0, 59), _field(hour, 0, 23)


def next_run(expr, after):
    """First whole minute strictly after `after` that matches `expr`."""
    minutes, hours = parse(expr)
    t = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(24 * 60):
        if t.minute in minutes and t.hour in hours:
            return t
        t += timedelta(minutes=1)
    raise ValueError(f"{expr!r} never fires")
