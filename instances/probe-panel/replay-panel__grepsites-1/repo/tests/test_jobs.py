from ledger.db import open_session


def test_open_session_defaults():
    assert open_session("db").timeout == 10
