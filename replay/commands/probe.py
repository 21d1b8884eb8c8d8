"""`replay probe`: ask every probe under each method of a run, grade, print and export."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay import api
from replay.commands.inputs import PathKind, path_option
from replay.commands.options import (
    CallDeadline,
    Dataset,
    Ids,
    Pattern,
    Span,
    StorePath,
    console,
    printed,
    run_name,
)
from replay.compaction.hermes import SETTINGS as HERMES_SETTINGS
from replay.compaction.summarize import parse_summarizer
from replay.core.limits import MAX_COUNT, MAX_WORKERS
from replay.measures.probes.answering import FULL
from replay.measures.probes.ceiling import SHRINKAGE_NOTE
from replay.measures.probes.scores import Row
from replay.measures.statistics import BOOTSTRAP_NOTE, Interval


def probe_command(run: str | None, selection: api.Selection, options: api.ProbeOptions,
                  dry_run: bool, out: Console) -> int:
    """Probe a run (or a selection), print the table and the files written (with `dry_run`,
    only what would be asked); 0 when no planned answer failed, else 1."""
    if dry_run:
        for line in api.probe_plan(options, run, selection).lines():
            out.print(Text(line), soft_wrap=True)
        return 0
    probed = api.probe(options, run, selection, printed)
    render(probed.about, probed.table, probed.contexts, probed.answers, out)
    for written_path in probed.written:
        out.print(Text(f"wrote {written_path}"), soft_wrap=True)
    return probed.code


def vs_full(row: Row) -> str:
    """The reduction against Full, or `not shorter`, never a negative compression."""
    if row.method == FULL or row.reduction is None:
        return "-"
    if row.reduction <= 0:
        return "not shorter"
    longer = f" ({len(row.not_shorter)}/{row.n} not shorter)" if row.not_shorter else ""
    return f"{100 * row.reduction:.1f}% shorter{longer}"


def render(about: dict[str, Any], table: list[Row], contexts: list, answers: list,
           out: Console) -> None:
    """The table per method and cohort, then fusion figures, failures and skipped histories."""
    out.print(Text(f"probes of {about['run']}: answered by {about['model']}, carrier "
                   f"{about['carrier']}, {about['generations']} generation(s) of each model "
                   f"summary, {about['answers']} answer(s) per probe"), soft_wrap=True)
    grid = Table("method", "cohort", "n", "answers", "failed", "not JSON", "field acc",
                 "all correct", "tokens/answer", "vs Full")
    for row in table:
        tokens = "-" if row.input_tokens is None else f"{row.input_tokens:,.0f}"
        grid.add_row(Text(row.method), Text(row.cohort), str(row.n), str(row.answers),
                     str(row.failed), str(row.malformed),
                     _spread(row.accuracy, row.accuracy_interval),
                     _spread(row.all_correct, row.all_correct_interval), tokens, vs_full(row))
    out.print(grid)
    lines = [PROBE_NOTE, *shrinkage_lines(about["shrinkage"]), *fusion_lines(contexts)]
    malformed = sum(row.malformed for row in table)
    if malformed:
        lines.append(f"{malformed} repl(ies) were not the JSON asked ({{\"facts\": {{...}}}}) "
                     "and score zero (answers.csv marks them malformed)")
    failed = [answer for answer in answers if answer.error]
    if failed:
        lines.append(f"{len(failed)} planned answer(s) failed and count zero:")
        lines += [f"  {answer.instance_id} {answer.method} generation {answer.generation} "
                  f"{answer.probe} #{answer.sample}: {answer.error}" for answer in failed[:5]]
    if about["skipped"]:
        lines.append(f"no probes for: {', '.join(about['skipped'])}")
    for line in lines:
        out.print(Text(line), soft_wrap=True)


PROBE_NOTE = ("field acc, all correct: means over histories (low-high: their 95% interval, "
              + BOOTSTRAP_NOTE.format(units="histories") + "; none for a single history)")


def _spread(value: float, interval: Interval | None) -> str:
    return f"{value:.3f}" + (f" ({interval.low:.3f}-{interval.high:.3f})" if interval else "")


def shrinkage_lines(counts: list[dict[str, Any]]) -> list[str]:
    """Per arm: its contexts strictly shorter than Full, and within the ceiling, per cohort."""
    lines = [SHRINKAGE_NOTE] if counts else []
    for method in dict.fromkeys(count["method"] for count in counts):
        mine = [count for count in counts if count["method"] == method]
        shorter = ", ".join(f"{c['cohort']} {c['shorter']}/{c['contexts']}" for c in mine)
        within = ", ".join(f"{c['cohort']} {c['within_ceiling']}/{c['contexts']}" for c in mine)
        lines.append(f"{method}: strictly shorter {shorter}; within the ceiling {within}")
    return lines


def fusion_lines(contexts: list) -> list[str]:
    """One line per fused method: units kept against asked, cuts, skips, and size."""
    lines = hermes_lines(contexts)
    for method in dict.fromkeys(c.method for c in contexts if "top" in c.details):
        found = [c.details for c in contexts if c.method == method and "top" in c.details]
        top = found[0]["top"]
        fewer = sum(d["units_available"] < top for d in found)
        cut = sum(d["summary_kept_tokens"] < d["summary_tokens"] for d in found)
        skipped = sum(len(d["units_skipped_for_ceiling"]) for d in found)
        longer = sum(not d["shorter_than_full"] for d in found)
        kept = sum(len(d["units_kept"]) for d in found) / len(found)
        count = len(found)
        lines.append(f"{method}: {kept:.1f} of {top} units kept on average ({fewer}/{count} "
                     f"contexts had fewer, all kept); summary cut to its allowance in "
                     f"{cut}/{count}; {skipped} unit(s) skipped for the ceiling; fused text not "
                     f"shorter than the full history (Qwen tokens) in {longer}/{count}")
    return lines


def hermes_lines(contexts: list) -> list[str]:
    """One line per Hermes method: summaries within their allowance, contexts that stayed valid
    (an H alone must also fit the task's ceiling and be shorter than Full), attempts taken."""
    lines = []
    for method in dict.fromkeys(c.method for c in contexts if c.method != FULL
                                and parse_summarizer(c.method).prompt in HERMES_SETTINGS):
        planned = [c for c in contexts if c.method == method]
        tried = [c.details for c in planned if "hermes" in c.details]
        made = sum(bool(d["valid"]) for d in tried)
        kept = sum(c.messages is not None for c in planned)
        attempts = sum(len(d["attempts"]) for d in tried) / max(len(tried), 1)
        lines.append(f"{method}: {made}/{len(planned)} summaries within their allowance, "
                     f"{kept}/{len(planned)} contexts valid (the others score zero), "
                     f"{attempts:.1f} attempt(s) on average")
    return lines


Methods = Annotated[list[str] | None, typer.Option(
    "--method", help="A method to probe (repeatable): with a run, narrows its summarizers; "
                     "without, names summarizers to probe on --suite's histories. Full is "
                     "always probed.")]


def register(app: typer.Typer) -> None:
    """Add `replay probe` to the command line."""

    @app.command()
    def probe(
        model: Annotated[str, typer.Option(help="The answering model: an alias or "
                                                "PROVIDER:MODEL[@URL][#KEY_ENV].")],
        run: Annotated[str | None, typer.Argument(
            callback=run_name,
            help="Run name (default: the latest run, unless --method/--suite name others)."
        )] = None,
        generations: Annotated[int, typer.Option(
            min=1, max=MAX_COUNT,
            help="Summaries per model summarizer (sample indexes 0..G-1).")] = 3,
        answers: Annotated[int, typer.Option(
            min=1, max=MAX_COUNT, help="Answers per probe and context.")] = 2,
        method: Methods = None,
        suite: Annotated[str | None, typer.Option(help="Suite, without a run.")] = None,
        dataset: Dataset = None, instance: Ids = None, filter_: Pattern = None,
        slice_: Span = None,
        carrier: Annotated[str | None, typer.Option(
            help="summary-only or native, without a run.")] = None,
        prompt_sources: Annotated[Path | None, path_option(
            PathKind.FILE, "--prompt-sources", help="A prompt catalogue, without a run.")] = None,
        probes: Annotated[list[Path] | None, path_option(
            PathKind.FILE_OR_FOLDER, "--probes",
            help="Probe files or folders for histories of the store.")] = None,
        store: StorePath = None,
        out: Annotated[Path | None, path_option(
            PathKind.OUTPUT_FOLDER, "--out",
            help="Folder for the exports (default: reports/RUN/probes beside the store).")
        ] = None,
        workers: Annotated[int, typer.Option(
            min=1, max=MAX_WORKERS, help="Answers asked at once.")] = 4,
        call_deadline: CallDeadline = None,
        study_arms: Annotated[str | None, typer.Option(
            "--study-arms", help="The study's 13 arms for this backbone: Full, S and S+top:1-5 "
                                 "(claude-code), H and H+top:1-5 (hermes-h), every arm once "
                                 "per generation.")] = None,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Print the planned histories, arms, contexts and answers; ask "
                              "nothing.")] = False,
    ) -> None:
        """Ask each history's probes under Full and every method; print and export scores."""
        selection = api.Selection(tuple(method or ()), suite, dataset, tuple(instance or ()),
                                  filter_, slice_, carrier, prompt_sources)
        options = api.ProbeOptions(model, generations, answers, tuple(probes or ()), store, out,
                                   workers, call_deadline, study_arms)
        raise typer.Exit(probe_command(run, selection, options, dry_run, console))
