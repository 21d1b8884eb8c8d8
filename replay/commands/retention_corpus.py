"""`replay retention --corpus DIR`: the study's tables on a collected corpus, beside its figures,
with JSON, CSV and a plot of retention by boundary position."""

from __future__ import annotations

import csv
import os
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from replay.commands.options import make_console
from replay.core.errors import InputError
from replay.corpus.manifest import read_manifest
from replay.corpus.precision import THRESHOLD, KindChoice
from replay.corpus.scoring import jobs, score_corpus
from replay.corpus.tables import Row, SessionRecord, Tables, build
from replay.measures.details import KINDS
from replay.measures.retention import Limits


def check_outputs(paths: list[Path | None]) -> None:
    """Bad input unless each output's folder exists and is writable."""
    for path in paths:
        if path is None:
            continue
        parent = path.resolve().parent
        if path.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
            raise InputError(f"{path}: cannot write there (a folder, or its folder is missing "
                             "or not writable)")


def score(folder: Path, limits: Limits, kinds: KindChoice, workers: int,
          out: Console) -> Tables:
    """Score the corpus (resuming from its kept records) and build the tables; one line per
    unreadable file, on standard error (so that --json stays JSON)."""
    notes = make_console(stderr=True)
    entries = read_manifest(folder)
    todo = jobs(folder, entries, limits)
    sessions: list[tuple[str, SessionRecord]] = []
    columns = (TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=notes, transient=True, disable=not notes.is_terminal) as bar:
        task = bar.add_task("scoring", total=len(todo))
        for job, record in score_corpus(todo, limits, workers, lambda: bar.advance(task)):
            if "error" in record:
                notes.print(f"[yellow]unreadable[/] {escape(record['error'])}",
                            highlight=False)
            sessions.append((job.entry.file, SessionRecord(job.entry.repository, job.entry.agent,
                                                           record)))
    sessions.sort(key=lambda pair: pair[0])  # the order of the files, whatever finished first
    return build([session for _, session in sessions],
                 sum(1 for entry in entries if not entry.complete), kinds)


def _value(row: Row) -> str:
    if row.value is None:
        return "-"
    if not row.share:
        return f"{row.value:.2f}" if isinstance(row.value, float) else str(row.value)
    shown = f"{100 * row.value:.1f}%"
    if row.low is not None and row.high is not None:
        shown += f" ({100 * row.low:.1f}-{100 * row.high:.1f}%)"
    return shown


def print_tables(tables: Tables, kinds: KindChoice, out: Console) -> None:
    """The tables beside the study's figures, and the counts of what was not scored."""
    table = Table(title="retention on the corpus beside Compact-Bench's figures")
    for column in ("table", "row", "corpus", "n", "study"):
        table.add_column(column)
    for row in tables.rows:
        table.add_row(escape(row.table), escape(row.label), _value(row), str(row.n),
                      escape(row.study))
    out.print(table)
    out.print(kinds_line(kinds), highlight=False)
    out.print(f"{tables.sessions} complete session(s) scored; {tables.unreadable} unreadable; "
              f"{tables.incomplete} incomplete (a shard's transcript missing) not scored; the "
              f"completeness filter removed {tables.removed}. Intervals: 95% percentile "
              "bootstrap over boundaries (sessions for the ratio).", highlight=False)


def kinds_line(kinds: KindChoice) -> str:
    """Which detail types were scored and why the others were not."""
    scored = ", ".join(kinds.scored) or "none"
    others = ", ".join(kind for kind in KINDS if kind not in kinds.scored) or "none"
    if kinds.named:
        return (f"Detail types scored: {scored} (named by --kinds, not chosen by the "
                f"{THRESHOLD} precision rule); not scored: {others}.")
    return (f"Detail types scored: {scored} (measured precision >= {THRESHOLD} on the shipped "
            f"labels); not scored: {others} (precision under {THRESHOLD}, or no labelled "
            "values; see the detail types rows).")


def tables_json(tables: Tables) -> dict[str, object]:
    """The rows and counts as a JSON object."""
    data = {key: value for key, value in asdict(tables).items() if key != "rows"}
    data["rows"] = [asdict(row) for row in tables.rows]
    return data


def write_csv(tables: Tables, path: Path) -> None:
    """One line per row: table, label, value, n, low, high, study."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["table", "row", "value", "n", "low", "high", "study"])
        for row in tables.rows:
            writer.writerow([row.table, row.label, row.value, row.n, row.low, row.high,
                             row.study])


def write_plot(tables: Tables, path: Path) -> None:
    """A PNG of production-chain retention by position, the study's means beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from replay.corpus.tables import STUDY_POSITIONS

    rows = [row for row in tables.rows if row.table == "production chain by position"]
    positions = list(range(1, len(rows) + 1))
    figure, axes = plt.subplots(figsize=(6, 4))
    means = [100 * (row.value or 0) for row in rows]
    errors = [[m - 100 * (r.low if r.low is not None else (r.value or 0)) for m, r in
               zip(means, rows, strict=True)],
              [100 * (r.high if r.high is not None else (r.value or 0)) - m for m, r in
               zip(means, rows, strict=True)]]
    axes.bar([p - 0.2 for p in positions], means, 0.4, yerr=errors, label="corpus")
    axes.bar([p + 0.2 for p in positions],
             [100 * STUDY_POSITIONS.get(p, (0, 0))[0] for p in positions], 0.4, label="study")
    for position, row in zip(positions, rows, strict=True):
        axes.annotate(f"n={row.n}", (position - 0.2, 0), ha="center", va="bottom", fontsize=8)
    axes.set_xlabel("boundary position")
    axes.set_ylabel("production-chain retention (%)")
    axes.set_xticks(positions)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def artificial(folder: Path, limits: Limits, kinds: KindChoice, backbone: str,
               prompt_name: str, limit: int | None, history_chars: int, store: Path,
               out: Console) -> None:
    """Summaries by `backbone` with prompt `prompt_name` at each drawn session's artificial
    boundary, scored and printed beside the production summaries at the same boundaries."""
    from replay.compaction.sources import load_prompt
    from replay.compaction.summarize import parse_summarizer
    from replay.corpus.artificial import draw, score_all
    from replay.models.cache import CallCache
    from replay.models.client import ModelClient
    from replay.models.registry import resolve

    name = parse_summarizer(f"{backbone}:{prompt_name}")
    prompt = load_prompt(name.source_prompt or prompt_name)
    spec = resolve(backbone)
    todo = draw(jobs(folder, read_manifest(folder), limits), limit)
    columns = (TextColumn("summarizing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with CallCache(store) as cache, ModelClient(spec, cache) as client, \
            Progress(*columns, console=out, transient=True, disable=not out.is_terminal) as bar:
        task = bar.add_task("summarizing", total=len(todo))
        found = list(score_all(todo, name, prompt, client, limits, history_chars,
                               lambda: bar.advance(task)))
    real = [s for s in found if s.real]
    table = Table(title=f"{name.name} at artificial boundaries ({len(found)} session(s) of "
                        f"{len(todo)} drawn; {len(real)} at a real compaction)")
    for column in ("summaries", "production chain", "recurring details", "summary chars"):
        table.add_column(column)
    rows = [(name.name, [s.production for s in found], [s.recurring for s in found],
             [s.summary_chars for s in found]),
            (f"{name.name} (real boundaries)", [s.production for s in real],
             [s.recurring for s in real], [s.summary_chars for s in real]),
            ("production summaries (same boundaries)", [s.real_production for s in real],
             [s.real_recurring for s in real], [])]
    for label, production, recurring, chars in rows:
        table.add_row(escape(label), _mean_text(production), _mean_text(recurring),
                      f"{sum(chars) / len(chars):,.0f}" if chars else "-")
    out.print(table)
    out.print(kinds_line(kinds), highlight=False)


def _mean_text(values: list[float | None]) -> str:
    from replay.corpus.tables import mean_row

    row = mean_row("", "", [v for v in values if v is not None])
    return f"{_value(row)} n={row.n}"
