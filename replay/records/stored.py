"""How a stored JSON names what it is: its format and that format's version.

Every JSON replay keeps (a file such as trace.json or history.json, or a record in a column of
the store) carries one key beside its fields, `"schema": "FORMAT/VERSION"` (`replay.trace/2`),
so a reader can tell a record of an older replay from one of this replay's. JSON written before
it carried one reads as version 1.
"""

from __future__ import annotations

from typing import Any

SCHEMA_KEY = "schema"


def stamped(name: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    """`data` headed by its format's `name` and `version`."""
    return {SCHEMA_KEY: f"{name}/{version}", **data}


def unstamped(data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The version a stored JSON names (1 when it names none) and its fields alone."""
    fields = {key: value for key, value in data.items() if key != SCHEMA_KEY}
    named = str(data.get(SCHEMA_KEY, "/1"))
    return int(named.rpartition("/")[2] or 1), fields
