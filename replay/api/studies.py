"""A study: the Task Preservation design of Compact-Bench as one plan of sweeps.

The design (DESIGN.md, steps 2 to 10): validation; the backbone comparison (the prompt fixed to
Claude Code's, one continuation agent, N summarizer backbones); the three-run confirmation of
every first-round damaged instance-backbone pair; the prompt comparison (the summarizer fixed,
the five production prompts, single-run as the paper's). Each comparison is an ordinary run in
the store (`NAME-backbones`, `NAME-prompts`), so the same call resumes it and PRE cells are
shared between them; `replay.report.paper` reads both runs into the paper's tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from replay.api.listen import SILENT, Listener
from replay.api.results import report
from replay.api.sweeps import (
    RunOptions,
    SweepEstimate,
    SweepOutcome,
    confirm,
    estimate,
    plan,
    summarizers,
    sweep,
)
from replay.core.errors import InputError
from replay.records.plan import DEFAULT_TEMPERATURE, Plan
from replay.report.paper import study_tables
from replay.report.paper_render import write
from replay.report.paper_study import PaperTable, Study
from replay.sweep.execution import Estimate, ModelUse
from replay.sweep.executors import check_executor

PAPER_PROMPTS = ("claude-code", "codex", "gemini-cli", "opencode", "kimi-code")


@dataclass(frozen=True)
class Backbone:
    """A summarizer backbone of the study: the user's model alias and, when given, the name of
    the paper's model it stands for (its published figures are then shown beside it)."""

    alias: str
    paper: str | None = None


def parse_backbones(values: Sequence[str], file: Path | None = None) -> tuple[Backbone, ...]:
    """Backbones from `ALIAS` or `ALIAS=PAPER MODEL` values and from a file of such lines
    (`#` starts a comment); bad input when there is none or one is named twice."""
    lines = list(values)
    if file is not None:
        if not file.is_file():
            raise InputError(f"--backbones {file}: no such file")
        lines += [line.split("#", 1)[0] for line in file.read_text().splitlines()]
    found: dict[str, Backbone] = {}
    for line in filter(None, (line.strip() for line in lines)):
        alias, _, paper = (part.strip() for part in line.partition("="))
        if not alias or alias in found:
            raise InputError(f"backbone {line!r}: " + ("named twice" if alias else "no alias"))
        found[alias] = Backbone(alias, paper or None)
    if not found:
        raise InputError("no backbone: give --model ALIAS (repeatable) or --backbones FILE")
    return tuple(found.values())


@dataclass(frozen=True)
class StudyDesign:
    """What the study compares, and where its runs are kept (`name`: the runs' prefix)."""

    name: str
    agent: str
    backbones: tuple[Backbone, ...]
    summarizer: str
    suite: str = "compact-bench"
    dataset: str | None = None
    prompts: tuple[str, ...] = PAPER_PROMPTS
    backbone_prompt: str = "claude-code"
    steps: int = 8
    temperature: float = DEFAULT_TEMPERATURE
    prompt_sources: Path | None = None
    test_timeout: float | None = None

    @property
    def backbone_run(self) -> str:
        """The backbone comparison's run name."""
        return f"{self.name}-backbones"

    @property
    def prompt_run(self) -> str:
        """The prompt comparison's run name."""
        return f"{self.name}-prompts"

    def backbone_plan(self) -> Plan:
        """The backbone comparison: each backbone with the fixed prompt."""
        names = summarizers([b.alias for b in self.backbones], self.backbone_prompt)
        return self._plan("backbone", names)

    def prompt_plan(self) -> Plan:
        """The prompt comparison: the fixed summarizer with each prompt."""
        names = [s for name in self.prompts for s in summarizers([self.summarizer], name)]
        return self._plan("prompt", names)

    def _plan(self, kind: str, names: list[str]) -> Plan:
        return plan(kind, names, self.agent, suite=self.suite, dataset=self.dataset,
                    steps=self.steps, prompt_sources=self.prompt_sources,
                    temperature=self.temperature, test_timeout=self.test_timeout)


@dataclass(frozen=True)
class StudyEstimate:
    """The dry run of a study: each comparison's estimate, the confirmation's worst case (every
    first-round PRE-pass pair damaged) and the totals per model."""

    backbones: SweepEstimate
    confirmation: Estimate
    prompts: SweepEstimate
    models: dict[str, ModelUse]

    @property
    def total(self) -> ModelUse:
        """Calls, tokens and cost of the whole study, at most."""
        found = ModelUse()
        for use in self.models.values():
            found.add(use)
        return found


def study_estimate(design: StudyDesign, options: RunOptions,
                   listener: Listener = SILENT) -> StudyEstimate:
    """What the study would call and cost, before anything runs; nothing is written. Bad input
    (an unknown executor too) raises as the study itself would."""
    check_executor(options.executor, options.ray_address)
    first = design.backbone_plan()
    backbones = estimate(first, options, design.backbone_run, listener=listener)
    every = backbones.plan.model_copy(update={"confirm": tuple(
        (instance, summarizer) for instance in backbones.plan.instances
        for summarizer in backbones.plan.summarizers)})
    worst = estimate(every, options, design.backbone_run, listener=listener).estimate
    confirmation = _minus(worst, backbones.estimate)
    prompts = estimate(design.prompt_plan(), options, design.prompt_run, listener=listener)
    models: dict[str, ModelUse] = {}
    for part in (backbones.estimate, confirmation, prompts.estimate):
        for alias, use in part.models.items():
            models.setdefault(alias, ModelUse()).add(use)
    return StudyEstimate(backbones, confirmation, prompts, models)


def _minus(whole: Estimate, part: Estimate) -> Estimate:
    """`whole` less `part` (both estimates of the same run; `part`'s cells are in `whole`)."""
    models = {alias: replace(use) for alias, use in whole.models.items()}
    for alias, use in part.models.items():
        left = models[alias]
        models[alias] = ModelUse(left.calls - use.calls, left.input_tokens - use.input_tokens,
                                 left.output_tokens - use.output_tokens, left.cost - use.cost)
    return Estimate(
        cells=whole.cells - part.cells, done=whole.done - part.done, kept=whole.kept - part.kept,
        to_run=whole.to_run - part.to_run, summary_calls=whole.summary_calls - part.summary_calls,
        agent_calls=whole.agent_calls - part.agent_calls,
        input_tokens=whole.input_tokens - part.input_tokens,
        output_tokens=whole.output_tokens - part.output_tokens, cost=whole.cost - part.cost,
        unpriced=whole.unpriced, models={a: u for a, u in models.items() if u.calls})


Step = Callable[[str, object], None]


def study(design: StudyDesign, options: RunOptions, listener: Listener = SILENT,
          on_step: Step = lambda _name, _done: None) -> int:
    """Run (or resume) the study: the backbone comparison (validation first), the confirmation
    of its damaged pairs, then the prompt comparison; `on_step` hears of each step once done
    (of the confirmation with None when no pair was damaged).
    One budget (`options.budget`) holds for all of it. Returns 0 when no cell and no validation
    ended in an error, else 1."""
    first_plan, prompt_plan = design.backbone_plan(), design.prompt_plan()
    first = sweep(first_plan, options, design.backbone_run, listener=listener)
    on_step("backbone comparison", first)
    checked = confirm(options, design.backbone_run, listener=listener,
                      on_round=lambda done: on_step("confirmation", done))
    if not checked.rounds:
        on_step("confirmation", None)  # no first-round damaged pair
    prompts: SweepOutcome = sweep(prompt_plan, options, design.prompt_run, listener=listener)
    on_step("prompt comparison", prompts)
    return max(first.code, checked.code, prompts.code)


@dataclass(frozen=True)
class StudyReport:
    """The study's tables in the paper's shapes and the files written for them."""

    tables: list[PaperTable]
    files: list[Path]


def study_report(design: StudyDesign, store: Path, out: Path | None = None) -> StudyReport:
    """The paper's tables from the study's two runs as the store holds them now, written as CSV
    and PNG into `out` (default: reports/NAME beside the store)."""
    names = {f"{b.alias}:{design.backbone_prompt}": b.paper for b in design.backbones if b.paper}
    tables = study_tables(Study(report(store, design.backbone_run),
                                report(store, design.prompt_run), names))
    folder = out or store.parent / "reports" / design.name
    return StudyReport(tables, write(tables, folder))
