"""Answering probes: the context each method gives a history, and the model's answers in it.

Methods are `full` (the history as it is) and the summarizers of a run, fused ones too. A
summarizer's context is the one its POST continuation starts from: its summary, kept in the
store under the same key a sweep uses (so task damage and probe accuracy are measured on the
same contexts), brought back by the run's carrier. A summary written by a model has one
generation per sample index 0..G-1; Full, the mechanical baselines and fusions of them are
deterministic and have one. Each probe is asked `answers` times in each context (sample indexes
0..A-1) at temperature 0, as one more user message; it never reaches a summarizer or a judge.
A summary or an answer that fails (a harness fault, a request the server refused for its
content: a summary refused, a history longer than the answering model's window, or a summary its
own method rejects: H over its allowance) is kept as a failure that scores zero.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from replay.agent.tools import TOOLS
from replay.compaction.carriers import post_messages
from replay.core.digest import canonical_json
from replay.core.errors import HarnessError
from replay.core.paths import TESTBED
from replay.core.vocab import Arm
from replay.measures.probes.arms import generation_count
from replay.measures.probes.files import Probe, ProbeSet
from replay.measures.probes.grading import AnswerGrade, grade
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, Message, ModelSpec
from replay.pipeline.cell import CellTask
from replay.pipeline.summary import summary_of
from replay.records.cell import CellId
from replay.records.history import History
from replay.records.reply import ChatResponse
from replay.store import Store

FULL = "full"
PROBE_INTRO = "Answer from what this conversation shows, without calling any tool."


@dataclass(frozen=True)
class Inputs:
    """What a probe run needs, as the api hands it over from the run's prepared cells: the
    summarizers to probe, the carrier, every history, the probes of the histories that have
    some, and the task of a POST cell exactly as the sweep has it (`cell_task`)."""

    summarizers: tuple[str, ...]
    carrier: str
    every_history: dict[str, History]
    probes: dict[str, ProbeSet]
    cell_task: Callable[[CellId], CellTask]

    @property
    def methods(self) -> list[str]:
        """Full first, then the run's summarizers."""
        return [FULL, *self.summarizers]

    @property
    def histories(self) -> dict[str, History]:
        """The histories that have probes."""
        return {iid: self.every_history[iid] for iid in self.probes}

    def task(self, instance_id: str, method: str, generation: int) -> CellTask:
        """The POST cell whose summary is this method's context, exactly as the sweep has it."""
        return self.cell_task(CellId(instance_id, Arm.POST, method, generation))


@dataclass(frozen=True)
class Context:
    """What one method gives one history in one generation, or why it could not; `length` is
    filled in by `probes.ceiling.measure`, which returns new records."""

    instance_id: str
    method: str
    generation: int
    messages: list[Message] | None = None
    error: str | None = None
    summary: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    length: dict[str, Any] = field(default_factory=dict)  # see `probes.ceiling.measure`


@dataclass(frozen=True)
class Answer:
    """One answer to one probe in one context, graded; `error` when it could not be had."""

    instance_id: str
    method: str
    generation: int
    probe: str
    sample: int
    grade: AnswerGrade | None = None
    input_tokens: int | None = None
    reply: str = ""
    error: str | None = None

    @property
    def accuracy(self) -> float:
        """Field accuracy; zero for an answer that failed."""
        return 0.0 if self.grade is None else self.grade.accuracy

    @property
    def all_correct(self) -> bool:
        return self.grade is not None and self.grade.all_correct


class Clients:
    """One cached model client per model, made when first needed. Thread-safe."""

    def __init__(self, cache: CallCache, deadline: float | None = None) -> None:
        self.cache = cache
        self.deadline = deadline
        self._clients: dict[str, ModelClient] = {}
        self._lock = threading.Lock()

    def __call__(self, spec: ModelSpec) -> ModelClient:
        with self._lock:
            if spec.alias not in self._clients:
                self._clients[spec.alias] = ModelClient(spec, self.cache, deadline=self.deadline)
            return self._clients[spec.alias]

    def close(self) -> None:
        """Close every client made."""
        for client in self._clients.values():
            client.close()


def generations(method: str, wanted: int, every_arm: bool = False) -> int:
    """How many generations a method has: `wanted` when a model writes its summary, else 1;
    `wanted` for every method when every arm is planned per generation (the study's count)."""
    return generation_count(method, wanted, every_arm)


def build_contexts(inputs: Inputs, store: Store, clients: Callable[[ModelSpec], ModelClient],
                   wanted: int, every_arm: bool = False) -> list[Context]:
    """Every (history, method, generation) context, summaries made or found in the store."""
    contexts = []
    for instance_id, history in inputs.histories.items():
        for method in inputs.methods:
            for generation in range(generations(method, wanted, every_arm)):
                if method == FULL:
                    contexts.append(Context(instance_id, method, generation, history.messages))
                else:
                    contexts.append(_summary_context(inputs, store, clients, instance_id,
                                                     method, generation))
    return contexts


def _summary_context(inputs: Inputs, store: Store, clients: Callable[[ModelSpec], ModelClient],
                     instance_id: str, method: str, generation: int) -> Context:
    task = inputs.task(instance_id, method, generation)
    assert task.summarizer is not None  # a POST cell's
    context = Context(instance_id, method, generation)
    try:
        summarized = summary_of(task.summarizer, task.history, task.cell.seed_index, store,
                                clients)
    except HarnessError as exc:
        return replace(context, error=f"summary: {_why(exc)}")
    summary = summarized.summary
    if summary is None:  # a refusal is a failed summary, never a halt
        return replace(context, error=f"summary: refused: {summarized.refused}")
    context = replace(context, summary=summarized.key, details=summary.details)
    if summary.invalid:  # the method's own failure (H over its allowance): zero, no fallback
        return replace(context, error=f"summary: invalid: {summary.invalid}")
    return replace(context, messages=post_messages(summary, task.history.messages,
                                                   task.instance.problem_statement, TESTBED,
                                                   inputs.carrier, task.summarizer.prompt))


def probe_message(probe: Probe) -> Message:
    """The probe as a user message: the question and the fields of the JSON to reply with."""
    lines = [PROBE_INTRO, probe.question, "",
             'Reply with one JSON object and nothing else: {"facts": {...}} with these fields:']
    for name, spec in probe.fields.items():
        kind = f"{spec.type}, in any order" if spec.order_free else spec.type
        lines.append(f'- "{name}" ({kind}): {spec.description}')
    return {"role": "user", "content": "\n".join(lines)}


def answer_all(inputs: Inputs, contexts: list[Context], model: ModelClient, answers: int,
               workers: int = 4) -> list[Answer]:
    """Ask every probe `answers` times in every context; failed contexts fail their answers.

    Identical requests with the same sample index are one sample (as the call cache has it):
    each is asked once, also when two generations wrote the same summary.
    """
    jobs = [(context, probe, sample) for context in contexts
            for probe in inputs.probes[context.instance_id].probes for sample in range(answers)]
    asked: dict[str, tuple[ChatRequest, int]] = {}
    for context, probe, sample in jobs:
        if context.messages is not None:
            request = answer_request(context.messages, probe)
            asked.setdefault(_identity(request, sample), (request, sample))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        replies = dict(zip(asked, pool.map(lambda item: _ask(model, *item), asked.values()),
                           strict=True))
    return [_answer(context, probe, sample, replies) for context, probe, sample in jobs]


def answer_request(messages: list[Message], probe: Probe) -> ChatRequest:
    """The request asking `probe` after `messages`, at temperature 0."""
    return ChatRequest(messages=[*messages, probe_message(probe)], tools=TOOLS, temperature=0.0)


def _identity(request: ChatRequest, sample: int) -> str:
    return canonical_json({"request": request.model_dump(), "sample": sample})


def _ask(model: ModelClient, request: ChatRequest, sample: int) -> ChatResponse | str:
    """The reply, or what went wrong when a harness fault kept it away."""
    try:
        return model.complete(request, seed_index=sample)
    except (HarnessError, ModelRefused) as exc:  # e.g. a history longer than the model's window
        return f"answer: {_why(exc)}"


def _why(exc: Exception) -> str:
    kind = "refused" if isinstance(exc, ModelRefused) else type(exc).__name__
    return f"{kind}: {exc}"


def _answer(context: Context, probe: Probe, sample: int,
            replies: dict[str, ChatResponse | str]) -> Answer:
    asked = Answer(context.instance_id, context.method, context.generation, probe.id, sample)
    if context.messages is None:
        return replace(asked, error=context.error)
    reply = replies[_identity(answer_request(context.messages, probe), sample)]
    if isinstance(reply, str):
        return replace(asked, error=reply)
    content = reply.message.get("content")
    text = content if isinstance(content, str) else ""
    return replace(asked, grade=grade(probe, text), input_tokens=reply.usage.input_tokens,
                   reply=text)
