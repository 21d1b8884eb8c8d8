import pytest

from iniconf.errors import ParseError
from iniconf.parser import normalize_key, parse


def test_sections_and_options():
    data = parse("[server]\nhost = example.org\nport: 8080\n")
    assert data == {"DEFAULT": {}, "server": {"host": "example.org", "port": "8080"}}


def test_option_names_are_normalized():
    data = parse("[a]\nLog-Level = debug\n")
    assert data["a"] == {"log_level": "debug"}
    assert normalize_key(" Cache-Dir ") == "cache_dir"


def test_comments_and_continuation_lines():
    data = parse("; top\n[a]\n# note\nhosts = one,\n  two\n")
    assert data["a"]["hosts"] == "one,\ntwo"


def test_option_outside_section():
    with pytest.raises(ParseError, match="line 1"):
        parse("key = value\n")


def test_garbage_line():
    with pytest.raises(ParseError, match="line 2"):
        parse("[a]\nthis is not an option\n")
