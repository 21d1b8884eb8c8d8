"""One cell (PRE or POST) on a restored snapshot, through the sweep's cell pipeline, graded:
for looking at one case."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from replay.api.listen import SILENT, Listener
from replay.api.prepare import prompt
from replay.compaction.carriers import CARRIERS
from replay.compaction.summarize import SummarizerName, parse_summarizer
from replay.core.errors import Halt, InputError
from replay.core.vocab import Arm, CellStatus, FaultKind
from replay.environments.backends import close_backend, make_backend
from replay.environments.recipes import load_recipe
from replay.histories.boundaries import parse_rule
from replay.histories.records import find_history
from replay.instances.records import Instance
from replay.judge.timeouts import cell_timeout, gold_seconds
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.models.retry import Breaker
from replay.models.types import ModelSpec
from replay.pipeline.cell import CellTask, Settings, lookup
from replay.pipeline.cell import run_cell as run_task
from replay.pipeline.summary import Summarizer
from replay.records.cell import CellId, CellResult
from replay.records.plan import DEFAULT_TEMPERATURE
from replay.store import Store, continuations, summaries, validations


@dataclass(frozen=True)
class CellOptions:
    """Which cell to run and how: the arm (`pre` or `post`), the continuation agent, the
    summarizer of a POST cell, the carrier, the step limit, the sample index, the history
    (an id or prefix, or a boundary rule; default the bundled one), the call deadline, the
    temperature and the test timeout (None: derived from the instance's validation)."""

    arm: str
    agent_model: str
    summarizer: str | None = None
    carrier: str = "summary-only"
    steps: int = 8
    seed_index: int = 0
    history_id: str | None = None
    history_rule: str | None = None
    call_deadline: float | None = None
    temperature: float = DEFAULT_TEMPERATURE
    test_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.history_rule:  # a malformed rule is bad input; a rule is kept as its text
            object.__setattr__(self, "history_rule", parse_rule(self.history_rule).text)


@dataclass(frozen=True)
class CellRun:
    """A cell that ran: its result, the length of its summary (POST), where its trace is."""

    cell: CellId
    result: CellResult
    summary_chars: int | None
    trace: Path | None

    @property
    def code(self) -> int:
        """0 when the cell's tests pass, else 1."""
        return 0 if self.result.passed else 1


def _task(instance: Instance, options: CellOptions, store: Store, listener: Listener) -> CellTask:
    """The cell asked for, as a sweep would give it to a worker; bad input raises."""
    if options.arm not in ("pre", "post"):
        raise InputError(f"unknown arm {options.arm!r}: use pre or post")
    if options.carrier not in CARRIERS:
        raise InputError(f"unknown carrier {options.carrier!r}: use {' or '.join(CARRIERS)}")
    chosen = None
    if options.arm == Arm.POST:
        if not options.summarizer:
            raise InputError("--arm post needs --summarizer MODEL:PROMPT (or anchor_index, "
                             "observation-masking, tail:N)")
        chosen = _summarizer(parse_summarizer(options.summarizer), options.temperature, listener)
    history = find_history(instance, store=store, history_id=options.history_id,
                           rule=options.history_rule)
    cell = CellId(instance.instance_id, options.arm, chosen.name.name if chosen else "",
                  options.seed_index)
    return CellTask(cell, instance, history, chosen)


def _summarizer(name: SummarizerName, temperature: float, listener: Listener) -> Summarizer:
    """The summarizer `name` with its models resolved (their keys checked) and its prompt read."""
    backbone = judge = text = None
    if not name.mechanical:
        backbone = resolve(name.backbone or "")
        api_key(backbone)
    if name.source_prompt:
        text = prompt(name.source_prompt, listener=listener)
    if name.fused:
        judge = resolve(name.fused.judge)
        api_key(judge)
    return Summarizer(name, backbone, text, judge, temperature)


def run_cell(instance: Instance, options: CellOptions, store: Path, *,
             mirrors: Path | None = None, backend: str = "local", base_image: str | None = None,
             listener: Listener = SILENT) -> CellRun:
    """Run one cell (PRE or POST) through the sweep's cell pipeline, storing its summary and
    continuation as a sweep does. Raises `Halt` for a refused key, a model not found or an
    unreachable endpoint; bad input is refused before the store is opened to write (or
    created)."""
    agent = resolve(options.agent_model)
    api_key(agent)
    settings = Settings(agent, options.carrier, options.steps, options.temperature)
    recipe = load_recipe(instance, mirrors=mirrors)
    with Store.peek(store) as seen:  # all input checked before the store is written
        task = _task(instance, options, seen, listener)
    chosen = make_backend(backend, mirrors, base_image)
    clients: list[ModelClient] = []
    breaker = Breaker()
    try:
        with Store.open(store) as opened, CallCache(store) as cache:
            validation = validations.find(opened, instance.instance_id, chosen.name)
            task = replace(task, gold_seconds=gold_seconds(validation),
                           test_timeout=cell_timeout(options.test_timeout, validation))

            def model(spec: ModelSpec) -> ModelClient:
                clients.append(ModelClient(spec, cache, deadline=options.call_deadline,
                                           breaker=breaker))
                return clients[-1]

            found = lookup(task, settings, opened)
            result = found if isinstance(found, CellResult) else run_task(
                found, settings, opened, lambda _: (chosen.start(instance, recipe), recipe),
                model)
            if breaker.tripped is not None:
                raise Halt(breaker.tripped)
            if result.fault is not None and result.fault.kind == FaultKind.INPUT:
                raise InputError(result.fault.detail)
            return _ran(task, result, opened)
    finally:
        for client in clients:
            client.close()
        close_backend(chosen)


def _ran(task: CellTask, result: CellResult, store: Store) -> CellRun:
    chars = None
    if result.summary:
        summary = summaries.summary(store, result.summary)
        chars = len(summary.text) if summary is not None else 0
    trace = (continuations.trace_file(store, result.continuation)
             if result.continuation and result.status != CellStatus.ERROR else None)
    return CellRun(task.cell, result, chars, trace)
