"""Fact probes: ask every probe of a history under Full and under each method's summary, grade
the answers, score them per method and cohort, and write the exports."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replay.api.listen import SILENT, Listener
from replay.api.prepare import prompt
from replay.api.results import existing_store
from replay.compaction.carriers import CARRIERS
from replay.compaction.summarize import parse_summarizer
from replay.core.digest import digest
from replay.core.errors import InputError
from replay.core.input_paths import checked_output_folder
from replay.core.paths import default_store
from replay.histories.records import bundled_history
from replay.instances.selection import choose_instances
from replay.measures.probes import exports
from replay.measures.probes.answering import (
    FULL,
    Answer,
    Clients,
    Context,
    Inputs,
    answer_all,
    build_contexts,
)
from replay.measures.probes.arms import Planned, study_arms, token_estimate
from replay.measures.probes.arms import plan as plan_answers
from replay.measures.probes.ceiling import measure, shrinkage, task_ceiling
from replay.measures.probes.files import bundled_probes, read_probe_paths
from replay.measures.probes.inputs import load_probes
from replay.measures.probes.scores import Row, history_scores, rows
from replay.models.cache import CallCache
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.pipeline.continuation import model_id
from replay.records.plan import Plan
from replay.report.exports import reports_folder
from replay.store import Store
from replay.sweep.plan import latest_run, require_run
from replay.sweep.run import RunOptions, loaded


@dataclass(frozen=True)
class Selection:
    """Histories and methods named instead of a run."""

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
        """Whether options that only apply without a run were given (`ids` narrow a run's
        histories instead)."""
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


@dataclass(frozen=True)
class Probed:
    """What `probe` found: what was asked (`about`), the table per method and cohort, every
    context and answer, and the files written."""

    about: dict[str, Any]
    table: list[Row]
    contexts: list[Context]
    answers: list[Answer]
    written: list[Path]

    @property
    def code(self) -> int:
        """0 when no planned answer failed, else 1."""
        return 1 if any(answer.error for answer in self.answers) else 0


def _run_plan(store: Store, run: str | None, methods: tuple[str, ...],
              ids: tuple[str, ...] = ()) -> tuple[str, Plan]:
    """A run's plan; `methods` narrows its summarizers and `ids` its instances (an unknown
    one is refused)."""
    name = run or latest_run(store)
    found = require_run(store, name)
    unknown = [m for m in methods if m != FULL and m not in found.summarizers]
    if unknown:
        raise InputError(f"unknown method {', '.join(unknown)} in run {name}: use "
                         f"{', '.join([FULL, *found.summarizers])}")
    strangers = [i for i in ids if i not in found.instances]
    if strangers:
        raise InputError(f"instance {', '.join(strangers)} is not in run {name}: use "
                         f"{', '.join(found.instances)}")
    chosen = tuple(m for m in found.summarizers if not methods or m in methods)
    instances = tuple(i for i in found.instances if not ids or i in ids)
    return name, found.model_copy(update={"summarizers": chosen, "instances": instances})


def _selection_plan(selection: Selection, answering: ModelSpec) -> tuple[str, Plan]:
    """A plan of the histories and methods a selection names (never saved as a run)."""
    carrier = selection.carrier or "summary-only"
    if carrier not in CARRIERS:
        raise InputError(f"unknown carrier {carrier!r}: use {' or '.join(CARRIERS)}")
    methods = tuple(dict.fromkeys(m.strip() for m in selection.methods if m.strip() != FULL))
    for method in methods:
        parse_summarizer(method)
    instances = choose_instances(selection.suite or "demo", selection.dataset,
                                 list(selection.ids), selection.pattern, selection.span)
    sources = selection.prompt_sources
    found = Plan(kind="prompt", suite=selection.suite or "demo", dataset=selection.dataset,
                 agent=answering.alias, agent_id=model_id(answering), carrier=carrier,
                 prompt_sources=str(sources.resolve()) if sources else None,
                 instances=tuple(i.instance_id for i in instances), summarizers=methods)
    return "probe-" + digest(found.model_dump(exclude={"agent", "agent_id"}))[:10], found


def _checked(run: str | None, selection: Selection, options: ProbeOptions) -> Selection:
    if run is not None and selection.names_histories:
        raise InputError("give a run, or histories and methods (--suite, --method, ...), "
                         "not both")
    if options.study_arms:
        if run is not None or selection.methods:
            raise InputError("--study-arms names the methods itself: give no run or --method")
        selection = replace(selection, methods=tuple(study_arms(options.study_arms)))
    return selection


def probe(options: ProbeOptions, run: str | None = None, selection: Selection = Selection(),
          listener: Listener = SILENT) -> Probed:
    """Probe a run (default: the latest) or a selection of histories and methods, score the
    answers and write the exports (default reports/RUN/probes beside the store)."""
    selection = _checked(run, selection, options)
    path = options.store or default_store()
    answering = resolve(options.model)
    given = read_probe_paths(list(options.probes))
    use_run = run is not None or not (selection.methods or selection.names_histories)
    with Store.open(existing_store(path) if use_run else path) as store:
        name, found = (_run_plan(store, run, selection.methods, selection.ids) if use_run
                       else _selection_plan(selection, answering))
        folder = checked_output_folder(options.out or reports_folder(store, name) / "probes",
                                       "the probes' exports folder")
        sources = Path(found.prompt_sources) if found.prompt_sources else None
        run = loaded(store, name, found, RunOptions(path), answering,
                     lambda n: prompt(n, sources, listener))
        probes, skipped = load_probes(dict(run.instances), dict(run.histories), given)
        inputs = Inputs(run.plan.summarizers, run.settings.carrier, dict(run.histories), probes,
                        run.task)
        with CallCache(path) as cache:
            clients = Clients(cache, options.call_deadline)
            try:
                contexts = build_contexts(inputs, store, clients, options.generations,
                                          every_arm=bool(options.study_arms))
                contexts, _ = measure(contexts, inputs.histories, inputs.probes)
                answers = answer_all(inputs, contexts, clients(answering), options.answers,
                                     options.workers)
            finally:
                clients.close()
        cohorts = {i: p.cohort for i, p in inputs.probes.items()}
        scores = history_scores(answers, cohorts)
        table = rows(scores, inputs.methods)
        about = {"run": name, "model": answering.alias, "carrier": found.carrier,
                 "generations": options.generations, "answers": options.answers,
                 "methods": inputs.methods, "skipped": skipped,
                 "shrinkage": [s.record() for s in shrinkage(contexts, cohorts)]}
        written = exports.write(folder, about, table, scores, contexts, answers)
    return Probed(about, table, contexts, answers, written)


def probe_plan(options: ProbeOptions, run: str | None = None,
               selection: Selection = Selection()) -> Planned:
    """What `probe` would ask for the selection's bundled probes, without asking."""
    selection = _checked(run, selection, options)
    for method in selection.methods:
        parse_summarizer(method)
    instances = choose_instances(selection.suite or "demo", selection.dataset,
                                 list(selection.ids), selection.pattern, selection.span)
    found = {i.instance_id: p for i in instances if (p := bundled_probes(i)) is not None}
    if not found:
        raise InputError("no history of the selection has probes (bundled probes.json)")
    methods = [FULL, *dict.fromkeys(m for m in selection.methods if m != FULL)]
    counts = {iid: (p.cohort, len(p.probes)) for iid, p in found.items()}
    planned = plan_answers(counts, methods, options.generations, options.answers,
                           every_arm=bool(options.study_arms))
    sizes = {}
    for instance in instances:
        history = bundled_history(instance)
        if instance.instance_id in found and history is not None:
            ceiling = task_ceiling(history, found[instance.instance_id])
            sizes[instance.instance_id] = (len(found[instance.instance_id].probes),
                                           ceiling.full_tokens, ceiling.base)
    asked, written = token_estimate(sizes, methods, options.generations, options.answers,
                                    every_arm=bool(options.study_arms))
    return replace(planned, answer_tokens=asked, summary_tokens=written)
