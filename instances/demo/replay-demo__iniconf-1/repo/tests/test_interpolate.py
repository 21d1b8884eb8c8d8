import pytest

import iniconf
from iniconf import InterpolationError


def test_reference_in_same_section():
    cfg = iniconf.loads("[a]\nbase = /srv\nlogs = ${base}/logs\n")
    assert cfg.get("a", "logs") == "/srv/logs"


def test_reference_to_other_section():
    cfg = iniconf.loads("[paths]\nbase = /srv\n[app]\nlogfile = ${paths:base}/app.log\n")
    assert cfg.get("app", "logfile") == "/srv/app.log"


def test_reference_falls_back_to_default():
    cfg = iniconf.loads("[DEFAULT]\nhome = /home/me\n[a]\ncache = ${home}/.cache\n")
    assert cfg.get("a", "cache") == "/home/me/.cache"


def test_dollar_escape_and_raw():
    cfg = iniconf.loads("[a]\nprice = $$5 for ${item}\nitem = tea\n")
    assert cfg.get("a", "price") == "$5 for tea"
    assert cfg.get("a", "price", raw=True) == "$$5 for ${item}"


def test_missing_reference():
    cfg = iniconf.loads("[a]\nx = ${nope}\n")
    with pytest.raises(InterpolationError, match="nope"):
        cfg.get("a", "x")


def test_reference_loop():
    cfg = iniconf.loads("[a]\nx = ${y}\ny = ${x}\n")
    with pytest.raises(InterpolationError, match="deeper"):
        cfg.get("a", "x")
