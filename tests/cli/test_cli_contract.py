"""The bad-input contract, generated from the command line's own definition (issue 39): every
command of `replay --help` and every option and argument of it, fed values of the wrong kind
for its type (a folder for a file, a FIFO, a socket, a device, a missing path, an existing file
where a folder is written, a path under a file, negative, zero, huge, nan, inf, not a number,
control characters), each: exactly one line on stderr naming the option, exit 2, nothing
written under the test's folder (REPLAY_HOME, the working folder, the inputs) and no request to
the model server every model option points at.

Commands run in-process through `replay.cli.run`, the function `replay` itself calls."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.cli import command, run
from replay.commands.inputs import PathKind
from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from cli_walk import (
    CONTROLS,
    Param,
    Places,
    bad_numbers,
    commands,
    numeric,
    takes_path,
    wrong_paths,
)

COMMANDS = commands()
MODEL_OPTIONS = {"agent_model", "model", "summarizer", "check"}


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedServer]:
    """The model every model option names: it records each request."""
    with ScriptedServer(Script([{"content": "x"}] * 100)) as found:
        yield found


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Places]:
    """Paths of every kind under tmp_path, REPLAY_HOME and the working folder there too."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.json").write_text("{}")
    os.mkfifo(inputs / "fifo")
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.setenv("REPLAY_HOME", str(tmp_path / "home"))
    for name in ("REPLAY_STORE", "REPLAY_REPO_MIRRORS", "REPLAY_ENVIRONMENTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path / "work")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(inputs / "socket"))
        yield Places(file=inputs / "a.json", folder=inputs, fifo=inputs / "fifo",
                     socket=inputs / "socket", device=Path("/dev/null"),
                     missing=inputs / "missing", under_file=inputs / "a.json" / "x",
                     missing_rows=inputs / "missing.jsonl")


def tree(folder: Path) -> dict[str, tuple[int, str]]:
    """Every entry under `folder`: its kind and, for a file, the sha256 of its bytes."""
    return {str(path.relative_to(folder)): (
        stat.S_IFMT(path.lstat().st_mode),
        hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "")
        for path in sorted(folder.rglob("*"))}


def replay(argv: list[str]) -> tuple[int, str, str]:
    """Run the command line in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(argv)
    return code, out.getvalue(), err.getvalue()


def base_argv(command: tuple[str, ...], skip: Param, places: Places,
              server: ScriptedServer) -> list[str]:
    """The command with a good value for each required parameter but `skip`, and every model
    option naming the server that records requests."""
    argv = list(command)
    for param in COMMANDS[command]:
        if param is skip or not (param.required or param.name in MODEL_OPTIONS):
            continue
        if param.name in MODEL_OPTIONS:
            value = f"openai:m@{server.base_url}"
        elif param.metavar == PathKind.FILE.value:
            value = str(places.file)
        else:
            value = {"arm": "pre"}.get(param.name, "x")
        argv += param.argv(value)
    return argv


def bad_values(param: Param, places: Places) -> list[tuple[str, str]]:
    """Each value of the wrong kind for `param`, with the start of the line it must give."""
    cases = [(value, "holds a control character") for value in CONTROLS] \
        if not param.is_flag else []
    if numeric(param):
        cases += [(value, f"{param.shown}: give ") for value in bad_numbers(param)]
    if takes_path(param):
        cases += [(value, param.shown) for value in wrong_paths(param, places)]
    return cases


def refusals(command: tuple[str, ...], places: Places, server: ScriptedServer,
             root: Path) -> list[str]:
    """What went wrong feeding every parameter of `command` its bad values (none: the
    contract holds)."""
    problems = []
    for param in COMMANDS[command]:
        for value, expected in bad_values(param, places):
            argv = [*base_argv(command, param, places, server), *param.argv(value)]
            before = tree(root)
            code, out, err = replay(argv)
            lines = err.strip().splitlines()
            if (code, len(lines)) != (2, 1) or not lines[0].startswith("error: ") or \
                    expected not in lines[0] or not lines[0].isprintable():
                problems.append(f"{argv!r}: exit {code}, stderr {err!r}, stdout {out[:200]!r}")
            elif tree(root) != before:
                problems.append(f"{argv!r}: wrote {set(tree(root)) ^ set(before)}")
    return problems


@pytest.mark.parametrize("command", list(COMMANDS), ids=" ".join)
def test_every_bad_value_of_every_option_is_one_line_and_exit_2(
        command: tuple[str, ...], places: Places, server: ScriptedServer,
        tmp_path: Path) -> None:
    problems = refusals(command, places, server, tmp_path)
    assert not problems, "\n".join(problems)
    assert server.count == 0


@pytest.mark.parametrize("command", list(COMMANDS), ids=" ".join)
def test_a_replay_home_that_is_not_a_folder_is_one_line(
        command: tuple[str, ...], places: Places, server: ScriptedServer,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for home in (places.file, places.fifo, places.under_file):
        monkeypatch.setenv("REPLAY_HOME", str(home))
        before = tree(tmp_path)
        code, _, err = replay(base_argv(command, None, places, server))  # type: ignore[arg-type]
        assert code == 2 and err.startswith(f"error: REPLAY_HOME {home} "), err
        assert len(err.strip().splitlines()) == 1, err
        assert tree(tmp_path) == before
    assert server.count == 0


def test_the_walk_sees_every_command_of_the_help() -> None:
    code, out, _ = replay(["--help"])
    assert code == 0
    listed = set(re.findall(r"^  (\S+)", out.split("Commands:")[1], re.MULTILINE))
    hidden = {name for name, found in command().commands.items() if found.hidden}
    assert listed == {path[0] for path in COMMANDS} - hidden
    for group in ("prompts", "recipes"):
        code, out, _ = replay([group, "--help"])
        listed = set(re.findall(r"^  (\S+)", out.split("Commands:")[1], re.MULTILINE))
        assert listed == {path[1] for path in COMMANDS if path[0] == group}


def test_every_number_has_a_range_and_every_path_a_kind() -> None:
    """What makes the contract hold by construction for an option added tomorrow."""
    for params in COMMANDS.values():
        for param in params:
            if numeric(param):
                assert bad_numbers(param)
            if param.annotation is Path or param.annotation == list[Path]:
                assert wrong_paths(param, Places(*[Path()] * 8))
