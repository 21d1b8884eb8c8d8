"""The store: every table, migration, key-to-path rule and artifact write of replay.

    database.py    `Store`: the SQLite file (opened to write, to read only, or peeked at) and
                   the validation and continuation records
    schema.py      every table, and the one `SCHEMA_VERSION`
    migrations.py  the steps that bring an older store to this schema
    checks.py      what a file must be to be used as a store
    artifacts.py   where a record's files are, and the one atomic write of them

No SQL is written, and `sqlite3` is not imported, outside this package.
"""

from replay.store.database import Store

__all__ = ["Store"]
