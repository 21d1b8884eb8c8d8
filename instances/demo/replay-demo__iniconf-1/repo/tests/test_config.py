import pytest

import iniconf
from iniconf import NoOptionError

TEXT = """
[DEFAULT]
timeout = 30

[server]
Port = 8080
debug = on
ratio = 0.75
hosts = a.example.org,
    b.example.org
"""


@pytest.fixture
def cfg():
    return iniconf.loads(TEXT)


def test_typed_getters(cfg):
    assert cfg.getint("server", "port") == 8080
    assert cfg.getbool("server", "debug") is True
    assert cfg.getfloat("server", "ratio") == 0.75
    assert cfg.getlist("server", "hosts") == ["a.example.org", "b.example.org"]


def test_default_section_is_inherited(cfg):
    assert cfg.getint("server", "timeout") == 30
    assert cfg.options("server") == ["port", "debug", "ratio", "hosts", "timeout"]
    assert cfg.sections() == ["server"]


def test_missing_option(cfg):
    with pytest.raises(NoOptionError, match="nope"):
        cfg.get("server", "nope")
    assert cfg.get("server", "nope", fallback=None) is None


def test_option_lookup_ignores_case_and_dashes(cfg):
    assert cfg.get("server", "PORT") == "8080"
    assert cfg.has_option("server", "Time-Out") is False
    assert cfg.has_option("server", "TIMEOUT")


def test_bad_boolean(cfg):
    with pytest.raises(ValueError, match="not a boolean"):
        cfg.getbool("server", "port")
