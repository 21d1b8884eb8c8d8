from srv.app import settings


def test_settings_has_three_keys():
    assert set(settings()) == {"host", "port", "workers"}
