"""The `validations` table: the verdict on each instance on each backend (protocol step 2).

Every verdict is written here (`keep`), whoever made it: the judge, a sweep's worker, or the
driver ingesting a remote worker's export. A verdict is read back as the `Validation` it was.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from replay.core.files import write_atomic
from replay.core.vocab import ValidationStatus
from replay.records.stored import stamped, unstamped
from replay.records.validation import FORMAT, SCHEMA, Validation
from replay.store.artifacts import Files
from replay.store.database import Store

LOGS = "validate"  # the folder of the validations' test logs, under the artifacts


def keep(store: Store, backend: str, validation: Validation) -> None:
    """Write (or replace) the verdict on an instance on `backend`."""
    store._db.execute("INSERT OR REPLACE INTO validations VALUES (?, ?, ?, ?, ?, ?)",
                      (validation.instance_id, backend, validation.status,
                       json.dumps(validation.reasons),
                       json.dumps(stamped(FORMAT, SCHEMA, validation.checks)), time.time()))


def test_log(store: Store, instance_id: str, name: str) -> Callable[[str], str]:
    """What keeps the validation of `instance_id`'s test log `name`: given the log's text, it
    writes it (atomically) and returns where it is kept (the grade's `log_path`)."""
    path = store._artifact_path(LOGS, instance_id, name)
    return lambda text: str(write_atomic(path, text))


def files(store: Store, instance_id: str) -> Files:
    """The logs of the validation of `instance_id`, packed for another store (`take`)."""
    return store._pack(LOGS, instance_id)


def take(store: Store, backend: str, validation: Validation, packed: Files) -> None:
    """Keep a verdict another store made on `backend`, with its logs (`files`)."""
    store._unpack(packed)
    keep(store, backend, validation)


def find(store: Store, instance_id: str, backend: str) -> Validation | None:
    """The verdict on an instance on `backend`, if it was validated there."""
    row = store._db.execute("SELECT status, reasons, checks FROM validations "
                            "WHERE instance_id=? AND backend=?", (instance_id, backend)).fetchone()
    if row is None:
        return None
    return Validation(instance_id, ValidationStatus(row[0]), json.loads(row[1]),
                      unstamped(json.loads(row[2]))[1])
