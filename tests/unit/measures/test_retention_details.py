"""Detail extraction and retention scores on hand-made text: every type, the limits, literal
case-sensitive matching, secrets, empty references, and the one-pass scan against a naive one."""

from __future__ import annotations

import json
import re

import pytest

from replay.measures.details import KINDS, find_details, message_payload, serialize
from replay.measures.retention import (
    Limits,
    Occurrences,
    future_reference,
    mean,
    position_means,
    recurring_reference,
    score,
    written_files,
)

OUTPUT = """\
$ python -m pytest tests/test_api.py -q
FAILED tests/test_api.py::TestClient::test_get[1] - KeyError: 'user_id'
E       assert 404 == 200
Traceback (most recent call last):
  File "/srv/app/api/client.py", line 42, in get_user
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='api.example.com', port=443)
Connected to 10.0.0.12:5432 and [::1]:8080 in 3.21s, 512 MB used, 95% done, 16 passed
commit 7f3a9c0e5b1d2a4 on v2.3.1 with pytest==7.4.0, run 123e4567-e89b-12d3-a456-426614174000
See https://github.com/org/repo/issues/42 and call parse_config(path) or ConfigLoader.load
The Config class reads settings.toml from ./conf/ and the and/or choice is the user's.
"""

EXPECTED = {
    "path": ["/srv/app/api/client.py", "settings.toml", "./conf/"],
    "test_id": ["tests/test_api.py::TestClient::test_get[1]"],
    "url": ["https://github.com/org/repo/issues/42"],
    "host": ["api.example.com", "10.0.0.12:5432", "[::1]:8080"],  # a URL's host is its URL's
    "error_type": ["KeyError", "requests.exceptions.ConnectionError"],
    "error_message": ["KeyError: 'user_id'", "assert 404 == 200",
                      "requests.exceptions.ConnectionError: HTTPSConnectionPool("
                      "host='api.example.com', port=443)"],
    "command": ["python -m pytest tests/test_api.py -q"],
    "version": ["v2.3.1", "7.4.0"],
    "hash": ["7f3a9c0e5b1d2a4", "123e4567-e89b-12d3-a456-426614174000"],
    "number": ["512 MB", "16 passed", "95%"],  # unit words first, then glued; `3.21s` a timing
    "identifier": ["user_id", "get_user", "HTTPSConnectionPool", "parse_config",
                   "ConfigLoader.load"],
}


def test_every_type_is_found_in_order_of_first_sight() -> None:
    found = find_details(OUTPUT)
    for kind in KINDS:
        assert set(EXPECTED[kind]) <= set(found.values[kind]), kind
    assert list(found.values["number"]) == EXPECTED["number"]
    assert list(found.values["version"]) == EXPECTED["version"]
    assert "and/or" not in found.values["path"]  # a slash between words is not a path
    assert "Config" not in found.values["identifier"]  # a capitalized word is not a name
    assert "test_get" not in found.values["identifier"]  # a piece of the test id


def call(name: str, **arguments: object) -> dict:
    """An OpenAI-format tool call with JSON arguments."""
    return {"id": f"call-{name}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_tool_calls_count_with_their_decoded_arguments() -> None:
    message = {"role": "assistant", "content": "Editing.", "tool_calls": [
        call("bash", command="cd /testbed && sed -n '1,20p' iniconf/parser.py\nls"),
        call("edit_file", path="/testbed/iniconf/interpolate.py", old="x = 1\n",
             new="y_value = 2\n"),
        call("shell", command=["bash", "-lc", "rg -n normalize_key iniconf"])]}
    found = find_details(message_payload(message))
    assert list(found.values["command"]) == [
        "cd /testbed && sed -n '1,20p' iniconf/parser.py", "rg -n normalize_key iniconf"]
    assert "/testbed/iniconf/interpolate.py" in found.values["path"]
    assert "y_value" in found.values["identifier"]
    assert "nls" not in "".join(found.values["identifier"])  # no `\n` read as text


def test_secrets_are_found_and_never_in_a_reference() -> None:
    history = find_details(
        "export OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0 and DB_PASSWORD=Hunter2_Secret!\n"
        "curl -H 'Authorization: Bearer abcdefghij0123456789xyz' https://api.example.com/v1\n")
    assert {"sk-proj-a1B2c3D4e5F6g7H8i9J0", "Hunter2_Secret", "abcdefghij0123456789xyz"} <= (
        history.secrets)
    later = Occurrences("OPENAI_API_KEY=sk-proj-a1B2c3D4e5F6g7H8i9J0 DB_PASSWORD=Hunter2_Secret "
                        "https://api.example.com/v1 abcdefghij0123456789xyz")
    reference = recurring_reference(history, later, Limits())
    values = [value for values in reference.values() for value in values]
    assert "OPENAI_API_KEY" in values and "DB_PASSWORD" in values
    assert not any("Hunter2" in value or "sk-proj" in value or "abcdefghij0123" in value
                   for value in values)
    assert "https://api.example.com/v1" in reference["url"]


def test_secrets_of_every_format_inside_a_token_or_spanning_tokens() -> None:
    text = ("key sk-ant-api03-AbCdEfGhIjKlMnOpQr, ghp_0123456789abcdefghijABCDEFGHIJ0123 and "
            "github_pat_11ABCDEFG0123456789_abcdef\nAKIAIOSFODNN7EXAMPLE "
            "(xoxb-1234-5678-abcdEFGH) AIzaSyA1234567890abcdefghijklmnopqrstu\n"
            "Authorization: Bearer abc.DEF-123_456~789/xyz=\n"
            "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4\n"
            "-----BEGIN RSA PRIVATE KEY-----\n"
            "PASSWORD: 'Hunter2_Secret!' and Api-Key = abcd1234efgh; my_token=\"tok_98765432\"\n")
    assert find_details(text).secrets == {
        "sk-ant-api03-AbCdEfGhIjKlMnOpQr", "ghp_0123456789abcdefghijABCDEFGHIJ0123",
        "github_pat_11ABCDEFG0123456789_abcdef", "AKIAIOSFODNN7EXAMPLE", "xoxb-1234-5678-abcdEFGH",
        "AIzaSyA1234567890abcdefghijklmnopqrstu", "abc.DEF-123_456~789/xyz=",
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4", "-----BEGIN RSA PRIVATE KEY-----",
        "Hunter2_Secret", "abcd1234efgh", "tok_98765432"}
    assert find_details("a token or an API, no secret here: password is set").secrets == set()


def test_errors_of_every_ending_word_with_their_messages() -> None:
    found = find_details(
        "raised ValueError: bad value\n  warnings: DeprecationWarning: old call\nthen "
        "KeyboardInterrupt and SystemExit: 2\nconcurrent.futures.TimeoutException: slow")
    assert list(found.values["error_type"]) == [
        "ValueError", "DeprecationWarning", "KeyboardInterrupt", "SystemExit",
        "concurrent.futures.TimeoutException"]
    assert list(found.values["error_message"]) == [
        "ValueError: bad value", "DeprecationWarning: old call", "SystemExit: 2",
        "concurrent.futures.TimeoutException: slow"]


def test_only_recurring_details_in_order_and_at_most_per_kind() -> None:
    history = find_details(" ".join(f"call_{i}(x)" for i in range(60)) + " missing_name()")
    later = Occurrences(" ".join(f"call_{i}" for i in range(59, -1, -1)))
    reference = recurring_reference(history, later, Limits(per_kind=40))
    assert reference["identifier"] == [f"call_{i}" for i in range(40)]
    assert "missing_name" not in reference["identifier"]
    assert recurring_reference(history, later, Limits(per_kind=3))["identifier"] == [
        "call_0", "call_1", "call_2"]


def test_matching_is_by_whole_token_and_case_sensitive() -> None:
    reference = {"identifier": ["get_unit", "Money", "load"], "path": ["tally/money.py"],
                 "error_message": ["KeyError: 'MRO'"]}
    summary = ("We fixed money handling in Tally/money.py; keyerror: 'mro' came from get_units(); "
               "`load()` is next.")
    kept = score(reference, summary)
    assert kept.kept == {"identifier": ["load"], "path": [], "error_message": []}
    assert (kept.found, kept.size, kept.share) == (1, 5, 0.2)


def test_an_empty_reference_is_left_out_of_the_mean_and_counted() -> None:
    empty = score({kind: [] for kind in KINDS}, "anything")
    assert empty.share is None and empty.to_dict()["size"] == 0
    assert mean([0.5, None, 1.0, None]) == (0.75, 2, 2)
    assert mean([None]) == (None, 0, 1)
    means = position_means([[0.2, None], [0.4], [None, 0.9, 0.1]])
    assert [(m.position, m.mean, m.n, m.empty) for m in means] == [
        (1, pytest.approx(0.3), 2, 1), (2, 0.9, 1, 1), (3, 0.1, 1, 0)]


def test_a_reference_reads_at_most_max_chars() -> None:
    messages = [{"role": "tool", "content": "early_name() " + "x " * 300},
                {"role": "tool", "content": "late_name()"}]
    text = serialize(messages)
    tail = find_details(text[-50:])
    assert "late_name" in tail.values["identifier"]
    assert "early_name" not in tail.values["identifier"]
    future = future_reference(find_details(text[:20]), Limits(max_chars=20))
    assert future["identifier"] == ["early_name"]
    with pytest.raises(ValueError):
        Limits(max_chars=0)


def test_names_inside_a_token_keep_their_letters_beyond_ascii() -> None:
    # read by the identifier pattern, not as single names: a letter such as `é` or `ö` is a word
    # character anywhere in a name, before its underscore or its capital too
    found = find_details("set x=café_au_lait(y)+naïve_cache-größeNeu*getÉtatHTTP+"
                         "XMLHttpRequest.open(); not Über+état")
    assert list(found.values["identifier"]) == [
        "café_au_lait", "naïve_cache", "größeNeu", "getÉtatHTTP", "XMLHttpRequest.open"]


def whole_in(value: str, text: str) -> bool:
    """The naive whole-token look-up: a word-character edge of `value` must not touch one."""
    before = r"(?<!\w)" if re.match(r"\w", value) else ""
    after = r"(?!\w)" if re.search(r"\w$", value) else ""
    return re.search(before + re.escape(value) + after, text) is not None


def test_lookups_among_distinct_tokens_equal_lookups_in_the_text() -> None:
    text = "see /srv/app/config.py, then run `make  test` and load_config(x)\nAnd 12 passed"
    occurrences = Occurrences(text)
    for value in ("app/config.py", "config.py,", "load_config", "config", "make  test",
                  "12 passed", "12  passed", "and load", "passed\nAnd", "Load_config", "and",
                  "/srv/app/config.py, then run", "config.py, then", "then run `make",
                  "`make  test` and", "x)\nAnd 12", "the run", "then ru", "hen run", "run `mak",
                  "app/config.py, then run `make  test` and load_config(x)"):
        assert (value in occurrences) == whole_in(value, text), value


def test_written_files_of_write_tools_patches_and_redirects() -> None:
    history = [{"role": "assistant", "content": "", "tool_calls": [
        call("Write", file_path="/repo/src/parser.py", content="x"),
        call("apply_patch", input="*** Begin Patch\n*** Update File: src/lexer.py\n@@\n"),
        call("Bash", command="echo ok > notes/done.txt && cat > /dev/null")]}]
    assert written_files(history) == ["/repo/src/parser.py", "src/lexer.py", "notes/done.txt"]


def naive_scan(text: str) -> dict[str, set[str]]:
    """One regular expression per type over the whole text, for comparison."""
    patterns = {"identifier": r"(?<![\w./:])[A-Za-z]\w*_\w+(?![\w./])",
                "path": r"(?<![\w.])/[\w./-]+\.py",
                "number": r"\b\d+ passed"}
    return {kind: set(re.findall(pattern, text)) for kind, pattern in patterns.items()}


def test_the_one_pass_scan_finds_what_a_naive_scan_finds() -> None:
    text = OUTPUT * 3 + "\n".join(f"/srv/m{i}/mod_{i}.py: 1{i} passed" for i in range(30))
    found = find_details(text)
    for kind, values in naive_scan(text).items():
        assert values <= set(found.values[kind]), kind


def test_a_path_of_grep_context_lines_loses_its_line_suffix() -> None:
    text = ("/work/cli/strategy/temporary.go-443- x cmd/a/hooks.go-1018- y /a/b/t.go-447-/ "
            "and docs/v-2-/notes.md plus cmd/entire/cli/a.go")
    assert set(find_details(text).values["path"]) == {
        "/work/cli/strategy/temporary.go", "cmd/a/hooks.go", "/a/b/t.go", "docs/v-2-/notes.md",
        "cmd/entire/cli/a.go"}
