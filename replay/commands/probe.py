"""`replay probe`: ask every probe under each method of a run, grade, print and export."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from replay.commands.options import (
    CallDeadline,
    Dataset,
    Ids,
    Pattern,
    Span,
    StorePath,
    console,
    existing_store,
    run_name,
)
from replay.commands.sweep import prompt_loader
from replay.compaction.carriers import CARRIERS
from replay.compaction.hermes import SETTINGS as HERMES_SETTINGS
from replay.compaction.summarize import parse_summarizer
from replay.core.digest import digest
from replay.core.errors import InputError
from replay.core.paths import default_store
from replay.instances.selection import choose_instances
from replay.measures.probes import exports
from replay.measures.probes.answering import FULL, Clients, answer_all, build_contexts
from replay.measures.probes.arms import Planned, plan, study_arms
from replay.measures.probes.files import bundled_probes, read_probe_paths
from replay.measures.probes.inputs import load_inputs
from replay.measures.probes.scores import Row, history_scores, rows
from replay.measures.statistics import BOOTSTRAP_NOTE, Interval
from replay.models.cache import CallCache
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.records.plan import Plan
from replay.report.exports import reports_folder
from replay.store import Store
from replay.sweep.cells import prepare
from replay.sweep.continuation import model_id
from replay.sweep.plan import latest_run, require_run


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
        """Whether options that only apply without a run were given (`--instance` narrows a
        run's histories instead)."""
        return any((self.suite, self.dataset, self.pattern, self.span, self.carrier,
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
    study_arms: str | None = None
    dry_run: bool = False


def run_plan(store: Store, run: str | None, methods: tuple[str, ...],
             ids: tuple[str, ...] = ()) -> tuple[str, Plan]:
    """A run's plan; `methods` narrows its summarizers and `ids` its instances (an unknown
    one is refused)."""
    name = run or latest_run(store)
    plan = require_run(store, name)
    unknown = [m for m in methods if m != FULL and m not in plan.summarizers]
    if unknown:
        raise InputError(f"unknown method {', '.join(unknown)} in run {name}: use "
                         f"{', '.join([FULL, *plan.summarizers])}")
    strangers = [i for i in ids if i not in plan.instances]
    if strangers:
        raise InputError(f"instance {', '.join(strangers)} is not in run {name}: use "
                         f"{', '.join(plan.instances)}")
    chosen = tuple(m for m in plan.summarizers if not methods or m in methods)
    instances = tuple(i for i in plan.instances if not ids or i in ids)
    return name, plan.model_copy(update={"summarizers": chosen, "instances": instances})


def selection_plan(selection: Selection, answering: ModelSpec) -> tuple[str, Plan]:
    """A plan of the histories and methods the command line names (never saved as a run)."""
    carrier = selection.carrier or "summary-only"
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    methods = tuple(dict.fromkeys(m.strip() for m in selection.methods if m.strip() != FULL))
    for method in methods:
        parse_summarizer(method)
    instances = choose_instances(selection.suite or "demo", selection.dataset,
                                 list(selection.ids), selection.pattern, selection.span)
    sources = selection.prompt_sources
    plan = Plan(kind="prompt", suite=selection.suite or "demo", dataset=selection.dataset,
                agent=answering.alias, agent_id=model_id(answering), carrier=carrier,
                prompt_sources=str(sources.resolve()) if sources else None,
                instances=tuple(i.instance_id for i in instances), summarizers=methods)
    return "probe-" + digest(plan.model_dump(exclude={"agent", "agent_id"}))[:10], plan


def probe_command(run: str | None, selection: Selection, options: ProbeOptions,
                  out: Console) -> int:
    """Probe a run (or a selection), print the table, write the exports; 0 when no planned
    answer failed, else 1."""
    if run is not None and selection.names_histories:
        raise InputError("give a run, or histories and methods (--suite, --method, ...), "
                         "not both")
    if options.study_arms:
        if run is not None or selection.methods:
            raise InputError("--study-arms names the methods itself: give no run or --method")
        selection = replace(selection, methods=tuple(study_arms(options.study_arms)))
    if options.dry_run:
        for line in dry_run(selection, options).lines():
            out.print(Text(line), soft_wrap=True)
        return 0
    path = options.store or default_store()
    answering = resolve(options.model)
    given = read_probe_paths(list(options.probes))
    use_run = run is not None or not (selection.methods or selection.names_histories)
    with Store.open(existing_store(path) if use_run else path) as store:
        name, plan = (run_plan(store, run, selection.methods, selection.ids) if use_run
                      else selection_plan(selection, answering))
        inputs, skipped = load_inputs(prepare(plan, answering, prompt_loader(plan), store), given)
        with CallCache(path) as cache:
            clients = Clients(cache, options.call_deadline)
            try:
                contexts = build_contexts(inputs, store, clients, options.generations,
                                          every_arm=bool(options.study_arms))
                answers = answer_all(inputs, contexts, clients(answering), options.answers,
                                     options.workers)
            finally:
                clients.close()
        scores = history_scores(answers, {i: found.cohort for i, found in inputs.probes.items()})
        table = rows(scores, inputs.methods)
        about = {"run": name, "model": answering.alias, "carrier": plan.carrier,
                 "generations": options.generations, "answers": options.answers,
                 "methods": inputs.methods, "skipped": skipped}
        folder = options.out or reports_folder(store, name) / "probes"
        written = exports.write(folder, about, table, scores, contexts, answers)
    render(about, table, contexts, answers, out)
    for written_path in written:
        out.print(Text(f"wrote {written_path}"), soft_wrap=True)
    return 1 if any(answer.error for answer in answers) else 0


def dry_run(selection: Selection, options: ProbeOptions) -> Planned:
    """What the command would ask for the selection's bundled probes, without asking."""
    for method in selection.methods:
        parse_summarizer(method)
    instances = choose_instances(selection.suite or "demo", selection.dataset,
                                 list(selection.ids), selection.pattern, selection.span)
    found = {i.instance_id: p for i in instances if (p := bundled_probes(i)) is not None}
    if not found:
        raise InputError("no history of the selection has probes (bundled probes.json)")
    methods = [FULL, *dict.fromkeys(m for m in selection.methods if m != FULL)]
    counts = {iid: (p.cohort, len(p.probes)) for iid, p in found.items()}
    return plan(counts, methods, options.generations, options.answers,
                every_arm=bool(options.study_arms))


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
    lines = [PROBE_NOTE, *fusion_lines(contexts)]
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
                     f"shorter than the full history (token pieces) in {longer}/{count}")
    return lines


def hermes_lines(contexts: list) -> list[str]:
    """One line per Hermes method: summaries within their allowance, and attempts taken."""
    lines = []
    for method in dict.fromkeys(c.method for c in contexts if c.method != FULL
                                and parse_summarizer(c.method).prompt in HERMES_SETTINGS):
        planned = [c for c in contexts if c.method == method]
        made = [c.details for c in planned if "hermes" in c.details]
        attempts = sum(len(d["attempts"]) for d in made) / max(len(made), 1)
        lines.append(f"{method}: {len(made)}/{len(planned)} summaries within their allowance "
                     f"(the others score zero), {attempts:.1f} attempt(s) on average")
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
        study_arms: Annotated[str | None, typer.Option(
            "--study-arms", help="The study's 13 arms for this backbone: Full, S and S+top:1-5 "
                                 "(claude-code), H and H+top:1-5 (hermes-h), every arm once "
                                 "per generation.")] = None,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Print the planned histories, arms, contexts and answers; ask "
                              "nothing.")] = False,
    ) -> None:
        """Ask each history's probes under Full and every method; print and export scores."""
        selection = Selection(tuple(method or ()), suite, dataset, tuple(instance or ()),
                              filter_, slice_, carrier, prompt_sources)
        options = ProbeOptions(model, generations, answers, tuple(probes or ()), store, out,
                               workers, call_deadline, study_arms, dry_run)
        raise typer.Exit(probe_command(run, selection, options, console))
