"""`replay probe`: ask every probe under each method of a run, grade, print and export."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from replay.commands.options import (
    CallDeadline,
    Dataset,
    Ids,
    Pattern,
    Span,
    StorePath,
    console,
    existing_store,
)
from replay.commands.prompts import ensure_prompt
from replay.compaction.carriers import CARRIERS
from replay.compaction.summarize import parse_summarizer
from replay.errors import InputError
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.measures.probes import exports
from replay.measures.probes.answering import FULL, Clients, answer_all, build_contexts
from replay.measures.probes.files import read_probe_paths
from replay.measures.probes.inputs import load_inputs
from replay.measures.probes.scores import Row, history_scores, rows
from replay.models.cache import CallCache
from replay.models.registry import resolve
from replay.paths import default_store
from replay.report.exports import reports_folder
from replay.store import Store
from replay.sweep.plan import digest, latest_run, open_store, require_run


@dataclass(frozen=True)
class Selection:
    """Histories and methods named on the command line instead of a run."""

    methods: tuple[str, ...] = ()
    suite: str | None = None
    dataset: str | None = None
    ids: tuple[str, ...] = ()
    pattern: str | None = None
    span: str | None = None
    carrier: str | None = None
    prompt_sources: Path | None = None

    @property
    def names_histories(self) -> bool:
        """Whether options that only apply without a run were given."""
        return any((self.suite, self.dataset, self.ids, self.pattern, self.span, self.carrier,
                    self.prompt_sources))


@dataclass(frozen=True)
class ProbeOptions:
    """How to probe: the answering model, generations and answers, where results go."""

    model: str
    generations: int = 3
    answers: int = 2
    probes: tuple[Path, ...] = ()
    store: Path | None = None
    out: Path | None = None
    workers: int = 4
    call_deadline: float | None = None


@dataclass(frozen=True)
class Subject:
    """What is probed: a name for it, the instances, the methods (Full first), the carrier."""

    name: str
    instances: list[Instance]
    methods: list[str]
    carrier: str
    prompt_sources: Path | None


def run_subject(store: Store, run: str | None, methods: tuple[str, ...]) -> Subject:
    """A run's histories and summarizers; `methods` narrows them (an unknown one is refused)."""
    name = run or latest_run(store)
    plan = require_run(store, name)
    known = [FULL, *plan.summarizers]
    unknown = [method for method in methods if method not in known]
    if unknown:
        raise InputError(f"unknown method {', '.join(unknown)} in run {name}: use "
                         f"{', '.join(known)}")
    chosen = [FULL, *(m for m in plan.summarizers if not methods or m in methods)]
    instances = choose_instances(plan.suite, plan.dataset, plan.instances, None, None)
    sources = Path(plan.prompt_sources) if plan.prompt_sources else None
    return Subject(name, instances, chosen, plan.carrier, sources)


def selection_subject(selection: Selection) -> Subject:
    """The histories and methods the command line names."""
    carrier = selection.carrier or "summary-only"
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    methods = [FULL, *dict.fromkeys(m.strip() for m in selection.methods if m.strip() != FULL)]
    for method in methods[1:]:
        parse_summarizer(method)
    instances = choose_instances(selection.suite or "demo", selection.dataset,
                                 list(selection.ids), selection.pattern, selection.span)
    name = "probe-" + digest({"methods": methods, "carrier": carrier,
                              "instances": [i.instance_id for i in instances]})[:10]
    return Subject(name, instances, methods, carrier, selection.prompt_sources)


def probe_command(run: str | None, selection: Selection, options: ProbeOptions,
                  out: Console) -> int:
    """Probe a run (or a selection), print the table, write the exports; 0 when no planned
    answer failed, else 1."""
    if run is not None and selection.names_histories:
        raise InputError("give a run, or histories and methods (--suite, --method, ...), "
                         "not both")
    path = options.store or default_store()
    answering = resolve(options.model)
    given = read_probe_paths(list(options.probes))
    use_run = run is not None or not (selection.methods or selection.names_histories)
    with open_store(existing_store(path) if use_run else path) as store:
        subject = (run_subject(store, run, selection.methods) if use_run
                   else selection_subject(selection))
        inputs, skipped = load_inputs(
            subject.instances, subject.methods, subject.carrier, store, given,
            lambda name: ensure_prompt(name, subject.prompt_sources, out))
        with CallCache(path) as cache:
            clients = Clients(cache, options.call_deadline)
            try:
                contexts = build_contexts(inputs, store, clients, options.generations)
                answers = answer_all(inputs, contexts, clients(answering), options.answers,
                                     options.workers)
            finally:
                clients.close()
        cohorts = {iid: found.cohort for iid, found in inputs.probes.items()}
        scores = history_scores(answers, cohorts)
        table = rows(scores, subject.methods)
        about = {"run": subject.name, "model": answering.alias, "carrier": subject.carrier,
                 "generations": options.generations, "answers": options.answers,
                 "methods": subject.methods, "skipped": skipped}
        folder = options.out or reports_folder(store, subject.name) / "probes"
        written = exports.write(folder, about, table, scores, contexts, answers)
    render(about, table, contexts, answers, out)
    for written_path in written:
        out.print(f"wrote {written_path}", highlight=False)
    return 1 if any(answer.error for answer in answers) else 0


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
    out.print(f"probes of {about['run']}: answered by {about['model']}, carrier "
              f"{about['carrier']}, {about['generations']} generation(s) of each model "
              f"summary, {about['answers']} answer(s) per probe", highlight=False)
    grid = Table("method", "cohort", "n", "answers", "failed", "field acc", "all correct",
                 "tokens/answer", "vs Full")
    for row in table:
        tokens = "-" if row.input_tokens is None else f"{row.input_tokens:,.0f}"
        grid.add_row(row.method, row.cohort, str(row.n), str(row.answers), str(row.failed),
                     f"{row.accuracy:.3f}", f"{row.all_correct:.3f}", tokens, vs_full(row))
    out.print(grid)
    for line in fusion_lines(contexts):
        out.print(line, highlight=False)
    failed = [answer for answer in answers if answer.error]
    if failed:
        out.print(f"{len(failed)} planned answer(s) failed and count zero:", highlight=False)
        for answer in failed[:5]:
            out.print(f"  {answer.instance_id} {answer.method} generation {answer.generation} "
                      f"{answer.probe} #{answer.sample}: {answer.error}", highlight=False,
                      soft_wrap=True)
    if about["skipped"]:
        out.print(f"no probes for: {', '.join(about['skipped'])}", highlight=False)


def fusion_lines(contexts: list) -> list[str]:
    """One line per fused method: units kept against asked, cuts, skips, and size."""
    lines = []
    for method in dict.fromkeys(c.method for c in contexts if c.details):
        found = [c.details for c in contexts if c.method == method and c.details]
        top = found[0]["top"]
        fewer = sum(d["units_available"] < top for d in found)
        cut = sum(d["summary_kept_tokens"] < d["summary_tokens"] for d in found)
        skipped = sum(len(d["units_skipped_for_ceiling"]) for d in found)
        longer = sum(not d["shorter_than_full"] for d in found)
        kept = sum(len(d["units_kept"]) for d in found) / len(found)
        lines.append(f"{method}: {kept:.1f} unit(s) kept of {top} asked ({fewer} context(s) "
                     f"had fewer: all kept); summary cut to its allowance in {cut}/{len(found)}; "
                     f"{skipped} unit(s) skipped for the ceiling; not shorter than the full "
                     f"history in {longer}/{len(found)}")
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
            help="Run name (default: the latest run, unless --method/--suite name others)."
        )] = None,
        generations: Annotated[int, typer.Option(
            min=1, help="Summaries per model summarizer (sample indexes 0..G-1).")] = 3,
        answers: Annotated[int, typer.Option(min=1, help="Answers per probe and context.")] = 2,
        method: Methods = None,
        suite: Annotated[str | None, typer.Option(help="Suite, without a run.")] = None,
        dataset: Dataset = None, instance: Ids = None, filter_: Pattern = None,
        slice_: Span = None,
        carrier: Annotated[str | None, typer.Option(
            help="summary-only or native, without a run.")] = None,
        prompt_sources: Annotated[Path | None, typer.Option(
            help="A prompt catalogue, without a run.")] = None,
        probes: Annotated[list[Path] | None, typer.Option(
            "--probes", help="Probe files or folders for histories of the store.")] = None,
        store: StorePath = None,
        out: Annotated[Path | None, typer.Option(
            help="Folder for the exports (default: reports/RUN/probes beside the store).")
        ] = None,
        workers: Annotated[int, typer.Option(min=1, help="Answers asked at once.")] = 4,
        call_deadline: CallDeadline = None,
    ) -> None:
        """Ask each history's probes under Full and every method; print and export scores."""
        selection = Selection(tuple(method or ()), suite, dataset, tuple(instance or ()),
                              filter_, slice_, carrier, prompt_sources)
        options = ProbeOptions(model, generations, answers, tuple(probes or ()), store, out,
                               workers, call_deadline)
        raise typer.Exit(probe_command(run, selection, options, console))
