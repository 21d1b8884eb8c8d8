"""Running a plan: validate its instances, answer kept cells from the store, run the rest.

The driver (this module, in the `replay` process) alone writes cells. Stages:

1. instances of pending cells without a validation verdict on the backend (or whose last one was
   a harness fault) are validated on the workers (each verdict is recorded once, by the worker
   that made it, or from a remote worker's export);
2. pending cells of instances validation excluded are not run (their pairs are `excluded`);
3. a cell whose summary and continuation the store keeps is answered from it with no work;
4. the other cells run on the executor; each is recorded the moment it finishes.

A cell that ended in a refused request is done, and is not run again while the store keeps
that refusal for the request the plan sends; once the request changes (a model's settings in
models.toml), it runs again.

A task that comes back `halted` (a model endpoint unreachable, an API key refused) is not
recorded; once the tasks in flight are back, `Halt` is raised: the command stops with what was
recorded before kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, Protocol

from replay.compaction.tails import tokens
from replay.core.errors import Halt
from replay.core.vocab import Arm, CellStatus
from replay.models.cache import CallCache
from replay.models.retry import RetryNotice
from replay.pipeline.cell import CellTask, kept_result, lookup
from replay.pipeline.summary import summary_key
from replay.records.cell import CellId, CellResult
from replay.records.validation import Validation
from replay.store import Store, summaries
from replay.store import validations as stored_validations
from replay.store.runs import keep_cell
from replay.sweep.exports import ingest
from replay.sweep.labels import Tally
from replay.sweep.run import Run
from replay.sweep.workers import Finished, Task

SUMMARY_TOKENS = 1_500  # assumed length of a model summary, for estimates
STEP_OUTPUT_TOKENS = 300  # assumed output of one agent step
STEP_GROWTH_TOKENS = 600  # assumed context added by one step (the reply and its tool results)
RESUME_TOKENS = 500  # the agent's system prompt and the resume message around a summary


class Executor(Protocol):
    """What the driver needs of an executor (see `replay.sweep.executors`)."""

    def map(self, tasks: list[Task]) -> Iterable[tuple[str, Task, Any]]: ...


class Progress(Protocol):
    """What the driver reports as it goes (see `replay.sweep.progress`)."""

    def planned(self, cells: int) -> None: ...

    def started(self, task: Task) -> None: ...

    def retrying(self, task: Task, notice: RetryNotice) -> None: ...

    def validated(self, validation: Validation) -> None: ...

    def finished(self, result: CellResult, labels: Counter[str]) -> None: ...


@dataclass
class SweepResult:
    """What one invocation did to a run."""

    run: str
    results: list[CellResult] = field(default_factory=list)
    validated: list[Validation] = field(default_factory=list)
    unstarted: list[CellId] = field(default_factory=list)  # kept from starting by the budget

    @property
    def ran(self) -> int:
        """Cells this invocation ran to a result (not answered from the store)."""
        return sum(1 for result in self.results
                   if result.status == CellStatus.DONE and not result.reused)

    @property
    def kept(self) -> int:
        """Cells answered from the store."""
        return sum(1 for result in self.results if result.reused)

    @property
    def refused(self) -> int:
        """Cells that ended in a refused request (run now or kept)."""
        return sum(1 for result in self.results if result.refused)

    @property
    def timed_out(self) -> int:
        """Cells whose tests timed out (run now or kept)."""
        return sum(1 for result in self.results if result.timed_out is not None)

    @property
    def errors(self) -> list[CellResult]:
        return [result for result in self.results if result.status == CellStatus.ERROR]


def finished_line(run: str, result: SweepResult, planned: int, faults: int = 0) -> str:
    """What a sweep command says it did: the cells it ran, those the store answered, errors
    (`faults`: validations that ended in a harness fault count too); plainly that the cells
    came from the store when none had to run."""
    refused = f", {result.refused} ended in a refused request" if result.refused else ""
    refused += f", {result.timed_out} with tests timed out" if result.timed_out else ""
    if not result.results and not result.unstarted and not faults:
        return (f"run {run}: all {planned} cell(s) of the plan were already in the store: "
                "nothing ran, no model was called")
    if result.results and result.kept == len(result.results):
        return (f"run {run}: {result.kept} cell(s) came from the store (kept from earlier "
                f"runs): nothing ran{refused}")
    return (f"run {run}: {len(result.results)} cell(s) finished: {result.ran} run, "
            f"{result.kept} kept from the store, {len(result.errors) + faults} error(s){refused}")


def validate(run: Run, store: Store, cache: CallCache, executor: Executor,
             progress: Progress) -> tuple[Run, list[Validation]]:
    """Stage 1: validate the instances of the run's cells to run that have no verdict (or
    whose last one was a harness fault). Each verdict is recorded by its worker, from a remote
    worker's export, or here when no worker could; returns the run with the verdicts read back
    and the verdicts made."""
    made: list[Validation] = []
    for finished in _run(executor, run.unjudged(run.todo), progress, []):
        if finished.export is not None:
            ingest(store, cache, finished.export, run.plan.backend)
        verdict = finished.result
        assert isinstance(verdict, Validation)
        if finished.unrecorded:
            stored_validations.keep(store, run.plan.backend, verdict)
        made.append(verdict)
        progress.validated(verdict)
    return run.judged({found.instance_id: stored_validations.find(store, found.instance_id,
                                                                  run.plan.backend)
                       for found in made}), made


def execute(run: Run, store: Store, cache: CallCache, executor: Executor,
            progress: Progress) -> SweepResult:
    """Stages 2-4 on a validated run (`validate`): the pipeline answers each valid cell to run
    from the store or gives its task; tasks run on the executor. Each result is counted and
    recorded as it comes; each cell that runs records the dry run's estimate of its cost, and
    the run's budget (shared with the executor) hears of it."""
    outcome = SweepResult(run.name)
    runnable = run.valid(run.todo)
    progress.planned(len(runnable))
    tally = Tally(run.plan, dict(run.cells), run.verdicts)
    found = [lookup(task, run.settings, store) for task in run.tasks(runnable)]
    tasks = [task for task in found if isinstance(task, CellTask)]
    estimates = {task.cell: task_estimate(run, task, store).cost for task in tasks}
    if run.options.spending is not None:
        run.options.spending.expect(estimates)
    answered = [result for result in found if isinstance(result, CellResult)]
    for result in chain(answered, _ran(executor, tasks, progress, outcome, store, cache,
                                       run.plan.backend)):
        labels = tally.add(result)
        result = replace(result, estimate=estimates.get(result.cell, 0.0))
        keep_cell(store, run.name, result)
        outcome.results.append(result)
        progress.finished(result, labels)
    return outcome


def _ran(executor: Executor, tasks: list[CellTask], progress: Progress, outcome: SweepResult,
         store: Store, cache: CallCache, backend: str) -> Iterable[CellResult]:
    """The tasks' results as they finish, a remote worker's export taken into the store first."""
    for finished in _run(executor, tasks, progress, outcome.unstarted):
        if finished.export is not None:
            ingest(store, cache, finished.export, backend)
        assert isinstance(finished.result, CellResult)
        yield finished.result


def _run(executor: Executor, tasks: Sequence[Task], progress: Progress,
         unstarted: list[CellId]) -> Iterable[Finished]:
    """The tasks' results as they finish, halted ones left out and the cells the budget kept
    from starting added to `unstarted`; `Halt` at the end if any was halted."""
    if not tasks:
        return
    halted = None
    for kind, task, payload in executor.map(tasks):
        if kind == "started":
            progress.started(task)
        elif kind == "retrying":
            progress.retrying(task, payload)
        elif payload.halted is not None:
            halted = halted or payload.halted
        elif payload.unstarted:
            unstarted.append(payload.result.cell)
        else:
            yield payload
    if halted is not None:
        raise Halt(f"{halted}; the sweep stopped (finished cells are kept: run it again to "
                   "go on)")


@dataclass
class ModelUse:
    """One model's share of an estimate: its calls, tokens (upper bounds) and cost."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0

    def add(self, other: ModelUse) -> None:
        """Count `other` into this one."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost += other.cost


@dataclass
class Estimate:
    """What a plan would do, before anything is called. Token figures are upper bounds;
    `models` splits them by model alias."""

    cells: int
    done: int
    kept: int
    to_run: int
    summary_calls: int = 0
    agent_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    unpriced: list[str] = field(default_factory=list)
    models: dict[str, ModelUse] = field(default_factory=dict)


def estimate(run: Run, store: Store) -> Estimate:
    """The cells, model calls, tokens and cost of the run's pending cells (nothing is run)."""
    found = Estimate(cells=len(run.plan.cells()), done=len(run.plan.cells()) - len(run.todo),
                     kept=0, to_run=0)
    for cell in run.todo:
        task = run.task(cell)
        if kept_result(task, run.settings, store) is not None:
            found.kept += 1
            continue
        one = task_estimate(run, task, store)
        found.to_run += 1
        found.summary_calls += one.summary_calls
        found.agent_calls += one.agent_calls
        found.input_tokens += one.input_tokens
        found.output_tokens += one.output_tokens
        found.cost += one.cost
        found.unpriced += [alias for alias in one.unpriced if alias not in found.unpriced]
        for alias, use in one.models.items():
            found.models.setdefault(alias, ModelUse()).add(use)
    return found


def task_estimate(run: Run, task: CellTask, store: Store) -> Estimate:
    """The model calls, tokens and cost of one cell that runs (upper bounds)."""
    found = Estimate(cells=1, done=0, kept=0, to_run=1)
    start = sum(tokens(message) for message in task.history.messages)
    if task.cell.arm == Arm.POST:
        start = _summary_estimate(task, store, start, found)
    steps = run.settings.steps
    input_tokens = sum(start + step * STEP_GROWTH_TOKENS for step in range(steps))
    _add(found, run.settings.agent, steps, input_tokens, steps * STEP_OUTPUT_TOKENS)
    return found


def _summary_estimate(task: CellTask, store: Store, history_tokens: int, found: Estimate) -> int:
    """Count the summary's calls into `found`; return the POST continuation's start size."""
    problem = len(task.instance.problem_statement) // 4 + RESUME_TOKENS
    summarizer = task.summarizer
    agent = None if summarizer is None else summarizer.name.agent
    if summarizer is None or agent is None or summarizer.backbone is None:
        return problem + SUMMARY_TOKENS
    key = summary_key(summarizer, task.history, task.cell.seed_index)
    if summaries.summary(store, key) is not None:
        return problem + SUMMARY_TOKENS
    calls = agent.calls
    found.summary_calls += calls
    prompt = sum(len(text) for text in (summarizer.prompt.parts.values()
                                        if summarizer.prompt else ())) // 4
    _add(found, summarizer.backbone, calls, calls * (history_tokens + prompt),
         calls * SUMMARY_TOKENS, summary=True)
    return problem + SUMMARY_TOKENS


def _add(found: Estimate, spec: Any, calls: int, input_tokens: int, output_tokens: int,
         summary: bool = False) -> None:
    if not summary:
        found.agent_calls += calls
    found.input_tokens += input_tokens
    found.output_tokens += output_tokens
    cost = (input_tokens * spec.price_in + output_tokens * spec.price_out) / 1e6
    found.cost += cost
    found.models.setdefault(spec.alias, ModelUse()).add(
        ModelUse(calls, input_tokens, output_tokens, cost))
    free = spec.provider == "gguf"  # run in process: no bill
    if not (spec.price_in or spec.price_out or free) and spec.alias not in found.unpriced:
        found.unpriced.append(spec.alias)
