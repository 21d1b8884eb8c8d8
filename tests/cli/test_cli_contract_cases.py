"""Issue 39's classes of bad input, one case each, as a user meets them (`python -m replay` in a
subprocess): what the generated contract test (test_cli_contract.py) checks for every option,
end to end here, and what it cannot reach (names from inputs printed, read-only commands)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from rich.text import Text
from test_cli_bad_input_table import a_store, tree

from replay.commands.options import SafeConsole, say
from replay.core.names import shown
from replay.store import Store

from conftest import one_line_exit_2, run_replay
from sweep_scripts import TALLY

GONE = "openai:a@http://127.0.0.1:9/v1"
CELL = ["cell", "--instance", TALLY, "--arm", "pre", "--agent-model", GONE]


def test_numbers_beyond_what_the_os_sqlite_or_a_float_hold_are_refused_when_read(
        tmp_path: Path) -> None:
    """A test timeout of 1e300 made the store and left a cgroup; a seed index of 10^30 was
    "bug: OverflowError"; a temperature of 1e308 ran a cell."""
    store = tmp_path / "runs" / "replay.db"
    for option, value, line in (
            ("--test-timeout", "1e300", "--test-timeout: give a number from 1 to 604800"),
            ("--seed-index", str(10 ** 30), "--seed-index: give an integer from 0 to 1000000"),
            ("--temperature", "1e308", "--temperature: give a number from 0 to 2"),
            ("--temperature", "nan", "--temperature: give a number from 0 to 2"),
            ("--steps", "0", "--steps: give an integer from 1 to 10000")):
        one_line_exit_2(run_replay(*CELL, option, value, "--store", str(store)), line)
    assert not tmp_path.joinpath("runs").exists()


def test_outputs_are_checked_before_the_work(tmp_path: Path) -> None:
    """`probe --out` naming a file and `recipes check --table` naming a folder were found after
    every model call, then a traceback."""
    a_file = tmp_path / "exports.txt"
    a_file.write_text("kept")
    store = tmp_path / "runs" / "replay.db"
    one_line_exit_2(run_replay("probe", "--model", GONE, "--out", str(a_file), "--store",
                               str(store)), f"--out {a_file} is a file: give a folder")
    one_line_exit_2(run_replay("recipes", "check", "--table", str(tmp_path), "--store",
                               str(store)), f"--table {tmp_path} is a folder: give a file")
    one_line_exit_2(run_replay("report", "--html", str(a_file / "site"), "--store", str(store)),
                    f"--html {a_file / 'site'} cannot be made: {a_file} is a file")
    assert a_file.read_text() == "kept" and not tmp_path.joinpath("runs").exists()


def test_a_default_exports_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    """`reports` beside the store being a file ended `replay report` in a traceback."""
    store = a_store(tmp_path)
    (store.parent / "reports").write_text("a file")
    before = tree(tmp_path)
    one_line_exit_2(run_replay("report", "--store", str(store)),
                    f"the exports folder {store.parent / 'reports' / 'taken'} cannot be made: "
                    f"{store.parent / 'reports'} is a file")
    one_line_exit_2(run_replay("probe", "--model", GONE, "--store", str(store)),
                    f"the probes' exports folder {store.parent / 'reports' / 'taken'}")
    assert tree(tmp_path) == before


def test_a_replay_home_that_is_not_a_folder_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("a file")
    done = run_replay(*CELL, "--store", str(tmp_path / "r.db"), env={"REPLAY_HOME": str(home)})
    one_line_exit_2(done, f"REPLAY_HOME {home} is a file: give a folder")
    assert home.read_text() == "a file" and not tmp_path.joinpath("r.db").exists()


def test_environment_variables_naming_the_wrong_kind_of_path_are_one_line(
        tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("kept")
    for env, line in (
            ({"REPLAY_STORE": str(tmp_path)},
             f"cannot use the store {tmp_path} (REPLAY_STORE): it is a folder: give a file"),
            ({"REPLAY_ENVIRONMENTS": str(a_file)},
             f"REPLAY_ENVIRONMENTS {a_file} is not a folder"),
            ({"REPLAY_REPO_MIRRORS": str(a_file)}, f"REPLAY_REPO_MIRRORS {a_file} is not a")):
        one_line_exit_2(run_replay(*CELL, env=env, cwd=tmp_path), line)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a-file"]


def test_importing_from_a_fifo_is_refused_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "trajectory.json"
    os.mkfifo(fifo)
    done = run_replay("import", str(fifo), "--instance", TALLY, "--store",
                      str(tmp_path / "r.db"))
    one_line_exit_2(done, f"FILES {fifo} is a FIFO: give a file")
    one_line_exit_2(run_replay("retention", "--sessions", str(fifo)),
                    f"session file {fifo} is a FIFO: give a file or a folder")
    one_line_exit_2(run_replay("validate", "--dataset", "/dev/zero"),
                    "--dataset /dev/zero is a device: give a file")
    folder = tmp_path / "sessions"
    folder.mkdir()
    os.mkfifo(folder / "session.jsonl")
    one_line_exit_2(run_replay("retention", "--sessions", str(folder)),
                    f"{folder / 'session.jsonl'} is a FIFO: give a file")


def test_viewing_an_unknown_run_writes_nothing(tmp_path: Path) -> None:
    """`view` of an unknown run left the store's -wal and -shm files."""
    store = tmp_path / "replay.db"
    with Store.open(store):
        pass
    before = store.read_bytes()
    one_line_exit_2(run_replay("view", "nope", "--store", str(store)), "no run 'nope'")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["replay.db"]
    assert store.read_bytes() == before
    missing = tmp_path / "none" / "replay.db"
    one_line_exit_2(run_replay("view", "--store", str(missing)), f"no store at {missing}")
    assert not missing.parent.exists()


def test_control_characters_on_the_command_line_never_reach_the_terminal(
        tmp_path: Path) -> None:
    done = run_replay("cell", "--instance", "a\nerror: forged\x1b[2J", "--arm", "pre",
                      "--agent-model", GONE, "--store", str(tmp_path / "r.db"))
    one_line_exit_2(done, "argument 3 'a\\nerror: forged\\x1b[2J' holds a control character")
    assert "\x1b" not in done.stderr


def test_names_from_inputs_are_printed_escaped(tmp_path: Path) -> None:
    """A session file whose name holds a newline and an escape sequence: the table shows it
    escaped, on a terminal too."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    name = "evil\nforged line\x1b[31m.jsonl"
    (folder / name).write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    done = run_replay("retention", "--sessions", str(folder))
    assert "forged line" in done.stdout and "\x1b[31m" not in done.stdout
    assert not any(line.startswith("forged line") for line in done.stdout.splitlines())
    assert shown(name) == "evil\\nforged line\\x1b[31m.jsonl"
    out = io.StringIO()
    terminal = SafeConsole(file=out, force_terminal=True, width=200)
    say(terminal, f"instance {name}")  # one line: the newline escaped too
    assert out.getvalue().count("\n") == 1 and "\\nforged line" in out.getvalue()
    terminal.print(Text(f"cell {name}", style="red"))  # any text: its escape sequence escaped
    assert "\\x1b[31m" in out.getvalue() and "\x1b[31m.jsonl" not in out.getvalue()
    assert "\x1b[31mcell" in out.getvalue()  # the console's own style still reaches it
