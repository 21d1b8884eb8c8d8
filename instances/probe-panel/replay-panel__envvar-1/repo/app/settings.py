"""Settings from the environment."""

import os


def database_url() -> str:
    return os.environ.get("DATABSE_URL", "sqlite:///local.db")


def cache_url() -> str:
    return os.environ.get("CACHE_URL", "redis://localhost:6379/0")
