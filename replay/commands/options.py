"""Options shared by several commands, the checks they need before anything runs, and the
consoles they print to.

Text that comes from outside (instance ids, run and model names, errors, paths) is printed with
`say` or as `rich.text.Text`, never read as rich markup: `[/x]` is shown as it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.segment import Segment
from rich.text import Text

from replay.commands.inputs import PathKind, check_path, number_option, option_name, path_option
from replay.core.errors import InputError
from replay.core.input_paths import kind
from replay.core.limits import MAX_SAMPLE_INDEX, MAX_SECONDS
from replay.core.names import history_id, safe_name, shown
from replay.core.paths import repo_mirrors_from_env
from replay.sweep.execution import Progress
from replay.sweep.progress import SweepProgress

PIPED_WIDTH = 10_000  # output that is not a terminal: tables as wide as their cells


class SafeConsole(Console):
    """A console whose text never drives the terminal: every control character in what it
    prints (an escape sequence, a carriage return) is written escaped (see `shown`), except the
    line ends of its own layout; its own styles and cursor moves are not text and stay."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else
            Segment("\n".join(shown(line) for line in segment.text.split("\n")),
                    segment.style, segment.control)
            for segment in buffer)


def make_console(stderr: bool = False) -> Console:
    """A console that is the terminal's width on a terminal; piped, and unless COLUMNS says
    otherwise, so wide that tables keep their natural width (rich would cut them at 80). Its
    text never drives the terminal (see `SafeConsole`)."""
    found = SafeConsole(stderr=stderr)
    if found.is_terminal or os.environ.get("COLUMNS", "").isdigit():
        return found
    return SafeConsole(stderr=stderr, width=PIPED_WIDTH)


def say(out: Console, text: str, style: str | None = None) -> None:
    """Print one line of text as it is (no markup, no highlighting, never wrapped); a newline
    in it, from a name that came from an input, is shown escaped and cannot forge a line."""
    out.print(Text(shown(text), style=style or ""), soft_wrap=True)


def say_lines(out: Console, text: str) -> None:
    """Print text of several lines, each as `say` does."""
    for line in text.split("\n"):
        say(out, line)


console = make_console()


class Printed:
    """The API's listener of the command line: notes are lines, a slow step a spinner on a
    terminal, a sweep's cells a live display (see `SweepProgress`)."""

    def __init__(self, out: Console) -> None:
        self.out = out

    def note(self, line: str) -> None:
        """Print the line as it is."""
        say(self.out, line)

    def busy(self, what: str) -> AbstractContextManager[object]:
        """A spinner while it lasts (nothing outside a terminal)."""
        return self.out.status(Text(what))

    def cells(self, todo: int, workers: int) -> AbstractContextManager[Progress]:
        """The sweep's progress display."""
        return SweepProgress(self.out, todo, workers=workers)


printed = Printed(console)


def mirrors_folder(option: Path | None) -> Path | None:
    """`--repo-mirror`, else REPLAY_REPO_MIRRORS; bad input when it names no folder."""
    folder = option or repo_mirrors_from_env()
    if folder is None or folder.is_dir():
        return folder
    source = "--repo-mirror" if option else "REPLAY_REPO_MIRRORS"
    problem = "is not a folder" if folder.exists() else "does not exist"
    raise InputError(f"{source} {folder} {problem}: give a folder of bare git mirrors")


def run_name(value: str | None) -> str | None:
    """A run name names the folder of its exports: a safe name, or bad input."""
    return None if value is None else safe_name("run name", value)


def history_ids(values: list[str] | None) -> list[str] | None:
    """`--history` values: histories' ids or prefixes (hexadecimal), or bad input."""
    return None if values is None else [history_id(value) for value in values]


def one_history_id(value: str | None) -> str | None:
    """One `--history` value (see `history_ids`)."""
    return None if value is None else history_id(value)


def suite_name(param: typer.CallbackParam, value: str | None) -> str | None:
    """A suite: a bundled name, or a path that must then be a folder."""
    if value is not None and kind(Path(value)) is not None:
        check_path(option_name(param), Path(value), PathKind.FOLDER)
    return value


def dataset_name(param: typer.CallbackParam, value: str | None) -> str | None:
    """A dataset: a Hugging Face name, or a path that must then be a regular file (a name with
    a file's suffix must be one)."""
    if value is not None and (kind(Path(value)) is not None or value.endswith(DATA_SUFFIXES)):
        check_path(option_name(param), Path(value), PathKind.FILE)
    return value


DATA_SUFFIXES = (".json", ".jsonl", ".parquet")
SUITE = "NAME|FOLDER"  # the metavars of the options above
DATASET = "NAME|FILE"
Suite = Annotated[str, typer.Option(
    metavar=SUITE, callback=suite_name,
    help="Suite: a bundled name (see instances/) or a folder holding a suite.toml.")]
Dataset = Annotated[str | None, typer.Option(
    metavar=DATASET, callback=dataset_name,
    help="SWE-bench records: a .json/.jsonl/.parquet file or a Hugging Face dataset name. A "
         "suite whose suite.toml names a dataset (compact-bench) reads its instances' rows "
         "from this one instead; any other suite (the default demo) is replaced by all of its "
         "records.")]
Ids = Annotated[list[str] | None, typer.Option("--instance", help="Instance id (repeatable).")]
Pattern = Annotated[str | None, typer.Option("--filter", help="Regex on instance ids.")]
Span = Annotated[str | None, typer.Option("--slice", help="START:STOP of the selection.")]
SeedIndex = Annotated[int, typer.Option(
    min=0, max=MAX_SAMPLE_INDEX,
    help="Sample index: the request's seed, and part of the cache key.")]
StorePath = Annotated[Path | None, path_option(
    PathKind.STORE, "--store", help="SQLite results file (default runs/replay.db).")]
Mirrors = Annotated[Path | None, typer.Option(
    "--repo-mirror", callback=mirrors_folder, metavar=PathKind.FOLDER.value,
    help="Folder of bare git mirrors (full history) instead of GitHub (default: "
         "REPLAY_REPO_MIRRORS).")]
BackendName = Annotated[str, typer.Option(
    "--backend", help="Where commands run: local (namespaces on this machine) or docker.")]
BaseImage = Annotated[str | None, typer.Option(
    "--base-image", help="docker: the image environments are built on (default "
                         "replay-base:bookworm, from scripts/build-base-image.sh).")]
CallDeadline = Annotated[float | None, number_option(
    0.1, MAX_SECONDS, "--call-deadline", metavar="SECONDS",
    help="Seconds one model call may take, all its retries included; then the cell is an "
         "error, run again next time (default: the model's `deadline`, else 900).")]
HistoryIds = Annotated[list[str] | None, typer.Option(
    "--history", callback=history_ids,
    help="A history's id or a prefix of it (repeatable): the one its instance continues "
         "from, bundled or kept in the store (`replay collect`, `replay import`); default: "
         "the instance's bundled history, else its one history kept in the store.")]
HistoryRule = Annotated[str | None, typer.Option(
    "--history-rule", help="For the instances no --history names: their history kept in the "
                           "store cut by this boundary rule, e.g. steps:6 or before-edit.")]
TestTimeout = Annotated[float | None, number_option(
    1, MAX_SECONDS, "--test-timeout", metavar="SECONDS",
    help="Seconds an instance's tests may run; then the run is killed and marked timed out "
         "(default: max(120, 5 x the gold patch's test run in validation); validation itself "
         "and instances never validated: 1800). A sweep keeps its run's for life.")]
