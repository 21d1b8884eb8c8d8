"""The store: every table, migration, key-to-path rule and artifact write of replay.

    database.py       `Store`: the SQLite file (opened to write, to read only, or peeked at)
    schema.py         every table, and the one `SCHEMA_VERSION`
    migrations.py     the steps that bring an older store to this schema
    checks.py         what a file must be to be used as a store
    artifacts.py      where a record's files are, the one atomic write of them, `Spool`, `Files`

One repository per stored concept, records in and records out (`replay.records`):

    runs.py           runs and their cells: `Plan`, `CellResult`
    summaries.py      summaries and refusals: `KeptSummary`
    continuations.py  graded continuations, their traces and logs: `KeptContinuation`, `Trace`
    validations.py    the verdict on each instance: `Validation`, written here alone
    histories.py      histories and trajectories: `History`, `Trajectory`, `StoredHistory`
    calls.py          model calls and refusals: `CallRequest`, `ChatResponse`, `Refusal`,
                      `CallUsage`
    scores.py         retention scores: `KeptScore`, `ScoreDetail`
    recipe_checks.py  recipe checks: `RowCheck`

Every stored JSON names its format and version (`replay.records.stored`). No SQL is written,
`sqlite3` is not imported, and no stored JSON is read outside this package. No path of the
store is seen above it either: a stage that writes as it runs holds a `Spool`
(`continuations.writer`, `histories.collection_writer`) or a log keeper
(`validations.test_log`), and a record's files travel to another store packed (`Files`). What
`Store` names with an underscore (its connection, its artifact folder) is private to this
package.
"""

from replay.store.database import Store

__all__ = ["Store"]
