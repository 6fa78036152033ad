"""Tiny helpers for reading service configuration from the environment."""
import os


def env_str(name, default=""):
    """Return environment variable `name`, or `default` when it is unset."""
    return os.environ.get(name, default)


def env_int(name, default):
    """Return environment variable `name` as an int; blank or unset gives `default`."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return int(raw)
