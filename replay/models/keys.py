"""API keys, read from the environment variable a spec names. The only place keys are read."""

from __future__ import annotations

import os

from replay.core.errors import InputError
from replay.models.types import ModelSpec


def key_is_set(key_env: str) -> bool:
    """Whether the variable `key_env` holds a non-empty value (the value is never returned)."""
    return bool(key_env) and bool(os.environ.get(key_env, "").strip())


def api_key(spec: ModelSpec) -> str | None:
    """The key for `spec`, or None when it names no variable (a local server).

    Raises `InputError` naming the variable when it is unset or empty.
    """
    if not spec.key_env:
        return None
    if not key_is_set(spec.key_env):
        raise InputError(f"model {spec.alias!r} needs an API key: set {spec.key_env}")
    return os.environ[spec.key_env].strip()
