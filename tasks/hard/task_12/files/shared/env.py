"""Environment helpers: every credential is read here, never hard-coded."""
import os


def get(name, default=""):
    """Value of environment variable `name`, `default` when unset."""
    return os.environ.get(name, default)


def get_bool(name, default=False):
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}
