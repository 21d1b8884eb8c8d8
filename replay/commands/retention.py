"""`replay retention`: which literal details summaries keep, for a run or for real sessions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from replay import api
from replay.commands.inputs import PathKind, check_path, path_option
from replay.commands.options import StorePath, console
from replay.core.errors import InputError
from replay.core.input_paths import kind
from replay.core.limits import MAX_CHARS as MAX_READ_CHARS
from replay.core.limits import MAX_COUNT, MAX_WORKERS
from replay.core.names import shown
from replay.core.paths import default_store
from replay.corpus.precision import KindChoice, choice
from replay.measures.baseline import per_thousand
from replay.measures.chains import ChainReport
from replay.measures.details import KINDS
from replay.measures.disorder import validation_status, validation_status_text
from replay.measures.retention import MAX_CHARS, PER_KIND, Limits, Score
from replay.measures.session_files import FORMATS
from replay.measures.statistics import BOOTSTRAP_NOTE, bootstrap_mean, rate_text

CorpusDir = Annotated[Path | None, path_option(
    PathKind.FOLDER, "--corpus",
    help="Score every complete session of a folder `replay sessions collect` wrote, "
         "and print the study's tables beside its figures.")]
CsvOut = Annotated[Path | None, path_option(
    PathKind.OUTPUT_FILE, "--csv",
    help="With --corpus: also write the tables as CSV.")]
PlotOut = Annotated[Path | None, path_option(
    PathKind.OUTPUT_FILE, "--plot",
    help="With --corpus: also write a PNG of retention by position.")]
Workers = Annotated[int, typer.Option(
    min=1, max=MAX_WORKERS, help="With --corpus: sessions scored at once.")]
SummarizerOption = Annotated[str | None, typer.Option(
    "--summarizer", help="With --corpus: a model (alias or ad-hoc spec) that writes a summary "
                         "at an artificial boundary of each drawn session, with --prompt.")]
PromptOption = Annotated[str | None, typer.Option(
    "--prompt", help="With --summarizer: the production prompt (`replay prompts list`).")]
LimitOption = Annotated[int | None, typer.Option(
    min=1, max=MAX_COUNT, help="With --summarizer: sessions drawn (seeded).")]
KindsOption = Annotated[str | None, typer.Option(
    "--kinds", help="With --corpus: the detail types scored, comma-separated (default: the "
                    "types whose measured precision on the shipped labels is at least 0.95).")]
HistoryChars = Annotated[int, typer.Option(
    min=1000, max=MAX_READ_CHARS,
    help="With --summarizer: serialized characters of history the model is handed "
                   "(the last ones).")]


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal, or `-`."""
    return "-" if value is None else f"{100 * value:.1f}%"


def spread(value: float | None, values: list[float]) -> str:
    """A mean with its 95% bootstrap interval: `61.0% (48.2-73.9%)`."""
    interval = bootstrap_mean(values)
    shown = f" ({100 * interval.low:.1f}-{100 * interval.high:.1f}%)" if interval else ""
    return percent(value) + shown


def run_table(found: api.RunRetention, store: Path, out: Console) -> int:
    """Print the mean retention per summarizer of a run's scored summaries."""
    rows, name = found.rows, found.run
    for reason in found.skipped:
        out.print(f"[yellow]left out[/] {escape(shown(reason))}", highlight=False)
    table = Table(title=Text(f"recurring-detail retention of run {name} (seed 0)"))
    for column in ("summarizer", "retention", "n", "empty reference", "reference size (mean)",
                   "reference source", "summary chars (mean)", "per 1,000 chars"):
        table.add_column(column)
    for summarizer, (value, scored, empty, size, source) in found.means.items():
        chars = _mean_chars([r.chars for r in rows
                             if r.summarizer == summarizer and r.seed_index == 0])
        shares = [r.share for r in rows if r.summarizer == summarizer and r.seed_index == 0
                  and r.share is not None]
        table.add_row(Text(summarizer), spread(value, shares), str(scored), str(empty),
                      "-" if size is None else f"{size:.1f}", source, f"{chars:,.0f}",
                      _per_thousand_text(value, chars))
    out.print(table)
    out.print(Text("retention (low-high%): 95% interval, "
                   + BOOTSTRAP_NOTE.format(units="the summaries scored")), soft_wrap=True)
    out.print(Text(f"kept {len(rows)} score(s) of run {name} in {store}; `replay report "
                   f"{name}` shows them beside task damage"), soft_wrap=True)
    return 0


def sessions_table(report: ChainReport, as_json: bool, out: Console) -> int:
    """Print the per-position means and the disorder rate of real sessions' compactions (or,
    `as_json`, everything as JSON)."""
    if as_json:
        out.print_json(json.dumps(_report_json(report)))
        return 0
    sessions = Table(title="sessions")
    for column in ("session", "format", "completeness", "compactions", "kept"):
        sessions.add_column(column)
    for session in report.sessions:
        found = "-" if session.completeness is None else f"{session.completeness:.3f}"
        sessions.add_row(Text(shown(session.source)), session.format, f"{found} ({session.pairs})",
                         str(len(session.compactions)), "yes" if session.kept else "no")
    out.print(sessions)
    out.print(_positions_table(report))
    out.print(Text("means (low-high%): 95% interval, " + BOOTSTRAP_NOTE.format(
        units="the kept sessions' compactions at that position") + "; disorder: 95% Wilson"),
        soft_wrap=True)
    rate = rate_text(report.disorder_flagged, report.disorder_checked)
    out.print(f"disorder ({validation_status_text()}): {rate} of summaries with files written "
              "before their boundary describe one of them as pending work", highlight=False)
    if report.unreadable:
        out.print(f"{report.unreadable} compaction(s) kept no readable summary (a Codex remote "
                  "compaction) and are left out", highlight=False)
    return 0


def _positions_table(report: ChainReport) -> Table:
    table = Table(title="retention by boundary position (kept sessions; reference: the "
                        "session's own later messages)")
    columns = ["position", "production chain", "n", "left out", "recurring details", "n ",
               "left out ", "summary chars"]
    names = list(report.baseline_future)
    for name in names:
        columns += [f"{name}: production", f"{name}: recurring", f"{name} chars"]
    for column in columns:
        table.add_column(column)
    for index, (chain, again) in enumerate(zip(report.future, report.recurring, strict=True)):
        at = [c for s in report.scored for c in s.compactions
              if c.position == chain.position and c.future is not None]
        future = [c.future.share for c in at if c.future and c.future.share is not None]
        recurring = [c.recurring.share for c in at if c.recurring and c.recurring.share
                     is not None]
        row = [str(chain.position), spread(chain.mean, future), str(chain.n), str(chain.empty),
               spread(again.mean, recurring), str(again.n), str(again.empty),
               _chars_text([c.summary_chars for c in at])]
        for name in names:
            row += [percent(report.baseline_future[name][index].mean),
                    percent(report.baseline_recurring[name][index].mean),
                    _chars_text([m.chars for c in at for m in c.baseline if m.name == name])]
        table.add_row(*row)
    return table


def _mean_chars(sizes: Sequence[int]) -> float:
    return sum(sizes) / len(sizes) if sizes else 0.0


def _chars_text(sizes: Sequence[int]) -> str:
    return f"{_mean_chars(sizes):,.0f}" if sizes else "-"


def _per_thousand_text(share: float | None, chars: float) -> str:
    found = per_thousand(share, round(chars))
    return "-" if found is None else f"{100 * found:.2f}%"


def _score_json(found: Score | None, chars: int) -> dict[str, Any] | None:
    if found is None:
        return None
    return {**found.to_dict(), "reference": {"source": "session", "size": found.size},
            "per_1k_chars": per_thousand(found.share, chars)}


def _report_json(report: ChainReport) -> dict[str, Any]:
    return {
        "sessions": [{"source": s.source, "format": s.format, "completeness": s.completeness,
                      "pairs": s.pairs, "kept": s.kept,
                      "compactions": [{"position": c.position, "trigger": c.trigger,
                                       "summary_chars": c.summary_chars,
                                       "production": _score_json(c.future, c.summary_chars),
                                       "recurring": _score_json(c.recurring, c.summary_chars),
                                       "baseline": [m.to_dict() for m in c.baseline],
                                       "written": c.written, "disorder": c.disorder}
                                      for c in s.compactions]}
                     for s in report.sessions],
        "production": [asdict(mean) for mean in report.future],
        "recurring": [asdict(mean) for mean in report.recurring],
        "disorder": {"flagged": report.disorder_flagged, "checked": report.disorder_checked,
                     **validation_status()},
        "unreadable": report.unreadable,
        "baseline": {name: {"production": [asdict(m) for m in report.baseline_future[name]],
                            "recurring": [asdict(m) for m in report.baseline_recurring[name]]}
                     for name in report.baseline_future},
    }


def _corpus(folder: Path, limits: Limits, kinds: KindChoice, workers: int, as_json: bool,
            csv_out: Path | None, plot: Path | None) -> int:
    from replay.commands import retention_corpus as corpus

    corpus.check_outputs([csv_out, plot])
    if not (folder / "corpus.toml").is_file():
        raise InputError(f"{folder}: no corpus.toml (collect one with `replay sessions collect`)")
    tables = corpus.score(folder, limits, kinds, workers, console)
    if as_json:
        console.print_json(json.dumps(corpus.tables_json(tables)))
    else:
        corpus.print_tables(tables, kinds, console)
    if csv_out is not None:
        corpus.write_csv(tables, csv_out)
    if plot is not None:
        corpus.write_plot(tables, plot)
    return 0


def _kinds(text: str | None) -> tuple[str, ...] | None:
    """The detail types `--kinds` names (None when not given); bad input for another."""
    if text is None:
        return None
    named = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [kind for kind in named if kind not in KINDS]
    if unknown or not named:
        raise InputError(f"--kinds: unknown detail type {unknown[0] if unknown else text!r}; "
                         f"use {', '.join(KINDS)}")
    return named


def _need_corpus(corpus: Path | None, given: dict[str, object]) -> None:
    """Bad input when an option of --corpus is given without it."""
    named = [name for name, value in given.items() if value is not None]
    if corpus is None and named:
        raise InputError(f"{named[0]} needs --corpus")


def _artificial(folder: Path, limits: Limits, kinds: KindChoice, summarizer: str,
                prompt: str | None, limit: int | None, history_chars: int, store: Path) -> int:
    from replay.commands import retention_corpus as corpus

    if not prompt:
        raise InputError("--summarizer needs --prompt (a production prompt: `replay prompts "
                         "list`)")
    if not (folder / "corpus.toml").is_file():
        raise InputError(f"{folder}: no corpus.toml (collect one with `replay sessions collect`)")
    corpus.artificial(folder, limits, kinds, summarizer, prompt, limit, history_chars, store,
                      console)
    return 0


def _sessions(targets: list[str], format_: str, limits: Limits, with_anchor_index: bool,
              literal: bool, as_json: bool) -> int:
    """Score the real compactions of the session files or folders `targets`."""
    if not targets:
        raise InputError("--sessions needs at least one session file or folder")
    files = [Path(target) for target in targets]
    for path in files:  # a missing one is named by the reader
        if kind(path) is not None:
            check_path("session file", path, PathKind.FILE_OR_FOLDER)
    found = api.session_retention(files, format_, limits, with_anchor_index, literal)
    return sessions_table(found, as_json, console)


def _run(targets: list[str], limits: Limits, store: Path) -> int:
    """Score every summary of the run `targets` names (the latest when none)."""
    if len(targets) > 1:
        raise InputError("give one run name (or --sessions with session files)")
    return run_table(api.retention(store, targets[0] if targets else None, limits), store,
                     console)


def register(app: typer.Typer) -> None:
    """Add `replay retention` to the command line."""

    @app.command()
    def retention(
        targets: Annotated[list[str] | None, typer.Argument(
            metavar="[RUN | FILE...]",
            help="A run (default: the latest), or with --sessions the session files.")] = None,
        sessions: Annotated[bool, typer.Option(
            "--sessions", help="Score real sessions (Claude Code, Codex, JSONL of messages) "
                               "instead of a run.")] = False,
        format_: Annotated[str, typer.Option(
            "--format", help=f"Session format: {', '.join(FORMATS)}.")] = "auto",
        max_chars: Annotated[int, typer.Option(
            min=1, max=MAX_READ_CHARS,
            help="Serialized characters a reference reads.")] = MAX_CHARS,
        per_kind: Annotated[int, typer.Option(
            min=1, max=MAX_READ_CHARS, help="Values of each kind a reference keeps.")] = PER_KIND,
        as_json: Annotated[bool, typer.Option(
            "--json", help="With --sessions: print the scores as JSON.")] = False,
        with_anchor_index: Annotated[bool, typer.Option(
            "--anchor-index", help="With --sessions: also score anchor_index written from what "
                                   "each compactor saw, cut to the summary's size in characters "
                                   "(and unbounded, as anchor_index_full), on the same "
                                   "references.")] = False,
        literal: Annotated[bool, typer.Option(
            "--literal", help="Match paths only as written (the study's strict rule), not in "
                              "their forms (relative, absolute, unique suffix).")] = False,
        corpus: CorpusDir = None,
        csv_out: CsvOut = None,
        plot: PlotOut = None,
        workers: Workers = 2,
        summarizer: SummarizerOption = None,
        prompt: PromptOption = None,
        limit: LimitOption = None,
        history_chars: HistoryChars = 24_000,
        kinds: KindsOption = None,
        store: StorePath = None,
    ) -> None:
        """Score which literal details summaries keep: every summary of a run (kept in the store
        for `replay report`), the real compactions of sessions you bring, or a whole corpus."""
        _need_corpus(corpus, {"--csv": csv_out, "--plot": plot, "--summarizer": summarizer,
                              "--prompt": prompt, "--limit": limit, "--kinds": kinds})
        chosen = choice(_kinds(kinds))  # the 0.95 rule's types, or --kinds (corpus only)
        limits = Limits(max_chars, per_kind, chosen.scored) if corpus is not None else \
            Limits(max_chars, per_kind)
        if corpus is not None and summarizer is not None:
            raise typer.Exit(_artificial(corpus, limits, chosen, summarizer, prompt, limit,
                                         history_chars, store or default_store()))
        if corpus is not None:
            raise typer.Exit(_corpus(corpus, limits, chosen, workers, as_json, csv_out, plot))
        if sessions:
            raise typer.Exit(_sessions(targets or [], format_, limits, with_anchor_index,
                                       literal, as_json))
        raise typer.Exit(_run(targets or [], limits, store or default_store()))
