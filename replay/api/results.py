"""What a run's results give: its report and exports, the retention of its summaries (and of
real sessions' compactions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.core.input_paths import checked_output_folder
from replay.measures.chains import ChainReport, score_sessions
from replay.measures.retention import Limits
from replay.measures.runs import RetentionRow, keep_scores, score_run, summarizer_means
from replay.measures.session_files import load_sessions
from replay.report.contents import Report
from replay.report.exports import reports_folder, write
from replay.report.tables import build
from replay.store import Store
from replay.store.runs import load_cells
from replay.sweep.plan import latest_run, require_run


def report(store: Path, run: str | None = None) -> Report:
    """The report of a run (default: the latest) as the store holds it now."""
    with Store.peek(existing_store(store)) as opened:
        return build(opened, run or latest_run(opened))


@dataclass(frozen=True)
class Exported:
    """A run's report and the files written for it: exports, and the web view's pages."""

    report: Report
    files: list[Path]
    pages: list[Path]


def export(store: Path, run: str | None = None, out: Path | None = None,
           html: Path | None = None) -> Exported:
    """Write a run's exports (JSON, CSV, Markdown, plots) into `out` (default reports/RUN
    beside the store) and, given `html`, the web view's pages into that folder."""
    for folder, option in ((out, "--out"), (html, "--html")):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise InputError(f"{option} {folder} is a file: give a folder (made if missing)")
    with Store.peek(existing_store(store)) as opened:
        name = run or latest_run(opened)
        folder = checked_output_folder(out or reports_folder(opened, name), "the exports folder")
        found = build(opened, name)
        files = write(found, folder)
        pages: list[Path] = []
        if html is not None:
            from replay.report.web.pages import write_site

            pages = write_site(opened, name, html)
    return Exported(found, files, pages)


def existing_store(path: Path) -> Path:
    """`path` when a store file is there; bad input otherwise (nothing is created)."""
    if not path.is_file():
        raise InputError(f"no store at {path}: give --store, or run `replay backbone` or "
                         "`replay prompt` first")
    return path


@dataclass(frozen=True)
class RunRetention:
    """The retention of every kept POST summary of a run (`rows`, now kept in the store), the
    instances left out with why, and the mean per summarizer (see `summarizer_means`)."""

    run: str
    rows: list[RetentionRow]
    skipped: list[str]
    means: dict[str, tuple[Any, ...]]


def retention(store: Path, run: str | None = None, limits: Limits | None = None) -> RunRetention:
    """Score every summary of a run (default: the latest) and keep the scores in the store for
    `report`. An unknown run is refused with nothing written."""
    limits = limits or Limits()
    with Store.peek(existing_store(store)) as seen:
        name = run or latest_run(seen)
        require_run(seen, name)
    with Store.open(store) as opened:
        rows, skipped = score_run(opened, require_run(opened, name), load_cells(opened, name),
                                  limits)
        keep_scores(opened, name, rows, limits)
    means = summarizer_means([row.kept() for row in rows])
    return RunRetention(name, rows, skipped, means)


def session_retention(paths: Sequence[Path], fmt: str = "auto", limits: Limits | None = None,
                      baseline: bool = False, literal: bool = False) -> ChainReport:
    """Score the compactions of real sessions (Claude Code, Codex, JSONL of messages) against
    their own later messages; with `baseline`, `anchor_index` on the same boundaries beside
    them; with `literal`, paths match only as written."""
    return score_sessions(load_sessions(paths, fmt), limits or Limits(), baseline, literal)
