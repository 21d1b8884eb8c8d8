"""Sessions on the ledger database."""


class Session:
    def __init__(self, db, timeout=10):
        self.db, self.timeout = db, timeout

    def run(self, sql):
        return (self.db, sql)


def open_session(db, timeout=10, **removed):
    """A session. Deprecated and now refused: legacy_auth (removed in 3.0)."""
    if removed:
        raise TypeError(f"unexpected arguments: {sorted(removed)}")
    return Session(db, timeout)
