"""One cell's work: the summary a POST starts from, the continuation, and its diagnostics.

A POST cell's summary is kept in the store by what determines it (the history, the summarizer's
model, settings and prompt text, the sampling temperature, the seed index), so a re-run, another
run or another sweep that needs the same summary finds it without a model call. A cell whose
summary and continuation are both kept is answered from the store alone (`kept_result`), with no
environment and no model.

A request the server refuses for its content is a result, not a fault: a refused summarizer
request is kept in place of the summary and fails the POST (nothing to continue from); a refused
agent request ends the continuation (see `replay.sweep.continuation`). Either marks the cell
`refused`, is answered from the store next time, and never marks it `error`.

A cell's tests run for at most its `test_timeout`; tests that ran into it fail the cell, which
keeps the limit as `timed_out`, unless the limit is shorter than the validated tests took with
the gold patch: then the cell is an `error` (see `replay.judge.timeouts`).
"""

from __future__ import annotations

import json
import posixpath
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replay.agent.loop import AgentConfig
from replay.compaction.carriers import post_messages
from replay.compaction.fusion import FUSION_VERSION
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.digest import digest
from replay.core.errors import HarnessError, InputError
from replay.core.paths import TESTBED
from replay.environments.base import Environment
from replay.environments.recipes import Recipe
from replay.histories.planned import with_histories
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.grading import patch_files
from replay.judge.timeouts import (
    DEFAULT_TEST_TIMEOUT,
    cell_timeout,
    gold_seconds,
    still_holds,
    timed_out,
    timeout_fault,
)
from replay.models.registry import resolve
from replay.models.transport import ModelRefused
from replay.models.types import Message, Model, ModelSpec
from replay.records.cell import CellId, CellResult
from replay.records.grade import Grade
from replay.records.history import History
from replay.records.plan import Plan
from replay.records.summary import Summary
from replay.store import Store
from replay.store.artifacts import CONTINUATIONS, TRACE
from replay.sweep.continuation import continuation_key, continue_and_grade, model_id
from replay.sweep.summaries import (
    keep_summary,
    kept_refusal,
    kept_summary,
    refusal_record,
    summary_record,
)

TEST_COMMAND = re.compile(r"\b(pytest|py\.test|unittest|tox|nox|nosetests|runtests)\b"
                          r"|manage\.py\s+test|\bmake\s+test")
INPUT_FAULT = "input: "  # how a cell's error starts when bad input caused it
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


@dataclass(frozen=True)
class Settings:
    """What every cell of a run shares: the continuation agent, the carrier, the step limit and
    the sampling temperature."""

    agent: ModelSpec
    carrier: str = "summary-only"
    steps: int = 8
    temperature: float = 0.0

    @property
    def agent_id(self) -> str:
        return model_id(self.agent)

    @property
    def agent_key(self) -> str:
        """The agent in a continuation's key: its model, and its request settings if it has any
        (a continuation made with other settings is another continuation)."""
        extra = self.agent.request_settings()
        return self.agent_id + (f" {json.dumps(extra, sort_keys=True)}" if extra else "")

    @property
    def config(self) -> AgentConfig:
        return AgentConfig(max_steps=self.steps, temperature=self.temperature)


@dataclass(frozen=True)
class CellTask:
    """Everything a worker needs to run one cell, on any machine."""

    cell: CellId
    instance: Instance
    history: History
    backbone: ModelSpec | None = None
    prompt: PromptText | None = None
    judge: ModelSpec | None = None  # the evidence judge of a fused summarizer
    temperature: float = 0.0  # what the summarizer samples at (the run's)
    test_timeout: float = DEFAULT_TEST_TIMEOUT  # seconds the cell's tests may run
    gold_seconds: float | None = None  # what the gold patch's test run took in validation


@dataclass(frozen=True)
class ValidateTask:
    """Protocol step 2 for one instance, before any of its cells (each test run may take
    `test_timeout` seconds; None: DEFAULT_TEST_TIMEOUT)."""

    instance: Instance
    test_timeout: float | None = None


@dataclass
class Prepared:
    """A plan with what its cells need loaded: instances, histories, models, prompts."""

    plan: Plan
    settings: Settings
    instances: dict[str, Instance]
    histories: dict[str, History]
    backbones: dict[str, ModelSpec | None]
    prompts: dict[str, PromptText | None]
    judges: dict[str, ModelSpec | None] = field(default_factory=dict)

    def task(self, cell: CellId, validation: dict[str, Any] | None = None) -> CellTask:
        """The task of one cell of the plan; its test timeout is the plan's, else derived from
        the instance's `validation` record."""
        return CellTask(cell, self.instances[cell.instance_id],
                        self.histories[cell.instance_id], self.backbones.get(cell.summarizer),
                        self.prompts.get(cell.summarizer), self.judges.get(cell.summarizer),
                        self.settings.temperature,
                        cell_timeout(self.plan.test_timeout, validation),
                        gold_seconds(validation))

    def models(self, cells: list[CellId]) -> list[ModelSpec]:
        """The distinct models that `cells` may call: the agent, the POST summarizers' and
        their evidence judges."""
        specs = {self.settings.agent.alias: self.settings.agent}
        for cell in cells:
            for spec in (self.backbones.get(cell.summarizer), self.judges.get(cell.summarizer)):
                if spec is not None:
                    specs.setdefault(spec.alias, spec)
        return list(specs.values())


def prepare(plan: Plan, agent: ModelSpec, load_prompt: Callable[[str], PromptText],
            store: Store | None = None) -> Prepared:
    """Load what the plan's cells need; bad input (unknown model, prompt, instance) raises.

    Histories are the ones the plan records (bundled, or the store's from `replay collect` and
    `replay import`); `Prepared.plan` records one for each instance (`with_histories`).
    """
    chosen = choose_instances(plan.suite, plan.dataset, plan.instances, None, None)
    backbones: dict[str, ModelSpec | None] = {}
    prompts: dict[str, PromptText | None] = {}
    judges: dict[str, ModelSpec | None] = {}
    for summarizer in plan.summarizers:
        name = parse_summarizer(summarizer)
        backbones[summarizer] = None if name.mechanical else resolve(name.backbone or "")
        prompts[summarizer] = load_prompt(name.source_prompt) if name.source_prompt else None
        judges[summarizer] = resolve(name.fused.judge) if name.fused else None
    plan, histories = with_histories(plan, chosen, store)
    return Prepared(plan, Settings(agent, plan.carrier, plan.steps, plan.temperature),
                    {instance.instance_id: instance for instance in chosen}, histories,
                    backbones, prompts, judges)


def summary_key(task: CellTask) -> str:
    """The identity of a POST cell's summary."""
    name = parse_summarizer(task.cell.summarizer)
    backbone = _model_identity(task.backbone)
    content = {"instance": task.instance.instance_id,
               "snapshot": task.history.snapshot.fingerprint,
               "history": digest(task.history.messages),
               "summarizer": name.prompt if backbone else name.name, "backbone": backbone,
               "prompt": None if task.prompt is None else task.prompt.parts,
               "seed_index": task.cell.seed_index}
    if backbone:
        content["temperature"] = task.temperature
    if name.fused is not None:
        base = name.fused.base
        content["fusion"] = {"base": base.prompt if base.backbone else base.name,
                             "top": name.fused.top, "judge": _model_identity(task.judge),
                             "version": FUSION_VERSION}
    return digest(content)


def _model_identity(spec: ModelSpec | None) -> dict[str, Any] | None:
    return None if spec is None else {**spec.model_dump(
        include={"provider", "model", "base_url", "temperature", "max_tokens"}),
        **spec.request_settings()}


def make_summary(task: CellTask, store: Store, backbone: Model | None,
                 judge: Model | None = None) -> tuple[str, Summary]:
    """The summary of a POST cell: kept, or written now (and kept before it is used).

    Raises `ModelRefused` when the summarizer's server refused the request for its content,
    now or before (the refusal is kept in the summary's place and not asked again).
    """
    key = summary_key(task)
    summary = kept_summary(store, key)
    refused = None if summary is not None else kept_refusal(store, key)
    if refused is not None:
        raise ModelRefused(refused, 400)
    if summary is None:
        name = parse_summarizer(task.cell.summarizer)
        try:
            summary = summarize(task.history.messages, name, task.prompt, backbone,
                                task.cell.seed_index, judge, task.temperature)
        except ModelRefused as exc:
            keep_summary(store, key, task.instance.instance_id, task.cell.seed_index,
                         refusal_record(task.cell.summarizer, str(exc)))
            raise
        keep_summary(store, key, task.instance.instance_id, task.cell.seed_index,
                     summary_record(summary))
    return key, summary


def start_messages(task: CellTask, settings: Settings, summary: Summary | None) -> list[Message]:
    """What the continuation starts from: the full history (PRE) or the summary (POST)."""
    if summary is None:
        return task.history.messages
    return post_messages(summary, task.history.messages, task.instance.problem_statement,
                         TESTBED, settings.carrier, task.prompt, task.history.dialect)


def run_cell(task: CellTask, settings: Settings, store: Store,
             environment: Callable[[], tuple[Environment, Recipe]],
             model: Callable[[ModelSpec], Model]) -> CellResult:
    """Run one cell in the environment `environment()` gives; faults become an `error` result,
    refused requests a `done` one marked `refused` (see the module docstring).

    `model(spec)` gives the client to call a model through. Writes the summary and the
    continuation to `store`; the cell's own row is the caller's to write.
    """
    started = time.monotonic()
    cell = task.cell
    summary_id = None
    stage = "summarizer: "
    try:
        summary = None
        if cell.arm == "post":
            backbone = None if task.backbone is None else model(task.backbone)
            judge = None if task.judge is None else model(task.judge)
            summary_id, summary = make_summary(task, store, backbone, judge)
        stage = ""
        env, recipe = environment()
        result = continue_and_grade(
            task.instance, task.history, env, recipe, model(settings.agent), settings.agent_key,
            start_messages(task, settings, summary), cell.arm, settings.config, store,
            cell.seed_index, task.test_timeout)
    except ModelRefused as exc:  # the summarizer's: a refused agent request ends its run
        return summarizer_refused(cell, summary_key(task), str(exc), time.monotonic() - started)
    except Exception as exc:  # a cell's fault is its result: recorded, retried next run
        return CellResult(cell, "error", summary=summary_id, error=fault_text(exc, stage),
                          diagnostics={"traceback": traceback.format_exc(limit=8)},
                          seconds=time.monotonic() - started)
    seconds = time.monotonic() - started
    fault = timeout_fault(result.grade, task.gold_seconds)
    if result.passed is None or fault:
        return CellResult(cell, "error", summary=summary_id, error=result.error or fault,
                          seconds=seconds)
    trace = result.trace.to_dict()
    return CellResult(cell, "done", result.passed, result.key, summary_id, result.reused,
                      diagnose(trace, task, summary), seconds=seconds, refused=refusal_of(trace),
                      timed_out=timed_out(result.grade))


def summarizer_refused(cell: CellId, summary_id: str, why: str, seconds: float = 0.0,
                       reused: bool = False) -> CellResult:
    """A POST whose summarizer request was refused: it fails, with nothing continued."""
    diagnostics = {"steps": 0, "actions": 0, "exit_reason": "refused", "repeated_reads": 0,
                   "tests_run": 0, "files_edited": [], "input_tokens": 0, "output_tokens": 0,
                   "cost": 0.0}
    return CellResult(cell, "done", False, summary=summary_id, reused=reused,
                      diagnostics=diagnostics, seconds=seconds,
                      refused=f"summarizer request refused: {why}")


def refusal_of(trace: dict[str, Any]) -> str | None:
    """Why a continuation's agent request was refused, if its run ended so."""
    return trace.get("error") if trace.get("exit_reason") == "refused" else None


def fault_text(exc: BaseException, where: str = "") -> str:
    """A cell's error: whose fault it is, the exception class, where (`summarizer: `) and its
    message."""
    whose = ("harness" if isinstance(exc, HarnessError)
             else INPUT_FAULT.rstrip(": ") if isinstance(exc, InputError) else "bug")
    return f"{whose}: {type(exc).__name__}: {where}{exc}"


def kept_result(task: CellTask, settings: Settings, store: Store) -> CellResult | None:
    """The cell's result from the store alone, when its summary (or the summarizer's refusal)
    and its continuation are kept."""
    summary_id = summary = None
    if task.cell.arm == "post":
        summary_id = summary_key(task)
        summary = kept_summary(store, summary_id)
        if summary is None:
            refused = kept_refusal(store, summary_id)
            return None if refused is None else summarizer_refused(
                task.cell, summary_id, refused, reused=True)
    messages = start_messages(task, settings, summary)
    key = continuation_key(task.instance, task.history, messages, settings.agent_key,
                           settings.config, task.cell.seed_index)
    record = store.continuation(key)
    trace_path = store.folder(CONTINUATIONS, key) / TRACE
    if record is None or not trace_path.is_file():
        return None
    grade = Grade(**json.loads(record["grade"]))
    if not still_holds(grade, task.test_timeout) or timeout_fault(grade, task.gold_seconds):
        return None
    trace = json.loads(trace_path.read_text(encoding="utf-8"))
    return CellResult(task.cell, "done", record["passed"], key, summary_id, True,
                      diagnose(trace, task, summary), refused=refusal_of(trace),
                      timed_out=timed_out(grade))


def diagnose(trace: dict[str, Any], task: CellTask, summary: Summary | None) -> dict[str, Any]:
    """Protocol step 10 for one continuation, from its trace (and its summary for POST)."""
    read_before = phase_a_reads(task.history.messages)
    actions = trace["actions"]
    repeated = sum(1 for action in actions if action["tool"] == "read_file"
                   and _path(action["arguments"].get("path")) in read_before)
    tests = sum(1 for action in actions if action["tool"] == "bash"
                and TEST_COMMAND.search(str(action["arguments"].get("command", ""))))
    found = {"steps": trace["steps"], "actions": len(actions),
             "exit_reason": trace["exit_reason"], "repeated_reads": repeated, "tests_run": tests,
             "files_edited": trace["files_edited"], "input_tokens": trace["input_tokens"],
             "output_tokens": trace["output_tokens"], "cost": trace["cost"],
             "protocol": trace.get("protocol", "tool-calls")}
    if summary is not None:
        found["summary"] = summary_keeps(summary, task.instance)
    return found


def phase_a_reads(messages: list[Message]) -> set[str]:
    """The files the Phase A history read with `read_file`, as absolute paths."""
    paths = set()
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") != "read_file":
                continue
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except (TypeError, ValueError):
                continue
            if isinstance(arguments, dict) and arguments.get("path"):
                paths.add(_path(arguments["path"]))
    return paths


def _path(path: object) -> str:
    return posixpath.normpath(posixpath.join(TESTBED, str(path)))


def summary_keeps(summary: Summary, instance: Instance) -> dict[str, Any]:
    """How much of the repair the summary kept: the gold patch's files and its new identifiers,
    with the summary's size and cost, and whether a reply was cut off by its output cap."""
    text = summary.text or "\n".join(str(m.get("content") or "") for m in summary.messages or [])
    files = patch_files(instance.patch).all
    added, removed = set(), set()
    for line in instance.patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added.update(IDENTIFIER.findall(line))
        elif line.startswith("-") and not line.startswith("---"):
            removed.update(IDENTIFIER.findall(line))
    tokens = sorted(added - removed)
    return {"chars": len(text), "input_tokens": summary.input_tokens,
            "output_tokens": summary.output_tokens, "cost": summary.cost,
            "target_files": [sum(1 for name in files if name in text), len(files)],
            "gold_tokens": [sum(1 for token in tokens if token in text), len(tokens)],
            "truncated": bool(summary.details.get("truncated"))}
