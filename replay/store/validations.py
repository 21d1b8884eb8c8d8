"""The `validations` table: the verdict on each instance on each backend (protocol step 2).

Every verdict is written here (`keep`), whoever made it: the judge, a sweep's worker, or the
driver ingesting a remote worker's export. A verdict is read back as the `Validation` it was.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from replay.core.vocab import ValidationStatus
from replay.records.stored import stamped, unstamped
from replay.records.validation import FORMAT, SCHEMA, Validation
from replay.store.database import Store

LOGS = "validate"  # the folder of the validations' test logs, under the artifacts


def keep(store: Store, backend: str, validation: Validation) -> None:
    """Write (or replace) the verdict on an instance on `backend`."""
    store.db.execute("INSERT OR REPLACE INTO validations VALUES (?, ?, ?, ?, ?, ?)",
                     (validation.instance_id, backend, validation.status,
                      json.dumps(validation.reasons),
                      json.dumps(stamped(FORMAT, SCHEMA, validation.checks)), time.time()))


def log_path(store: Store, instance_id: str, name: str) -> Path:
    """Where the validation of `instance_id` writes its test log `name`."""
    return store.artifact_path(LOGS, instance_id, name)


def files(store: Store, instance_id: str) -> dict[str, bytes]:
    """The logs of the validation of `instance_id`, for another store (`write_artifacts`)."""
    return store.artifact_files(LOGS, instance_id)


def find(store: Store, instance_id: str, backend: str) -> Validation | None:
    """The verdict on an instance on `backend`, if it was validated there."""
    row = store.db.execute("SELECT status, reasons, checks FROM validations "
                           "WHERE instance_id=? AND backend=?", (instance_id, backend)).fetchone()
    if row is None:
        return None
    return Validation(instance_id, ValidationStatus(row[0]), json.loads(row[1]),
                      unstamped(json.loads(row[2]))[1])
