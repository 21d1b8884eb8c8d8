"""The summary stage of a POST cell: the summary kept in the store, else written now and kept.

A summary is kept by what determines it (`summary_key`: the history, the summarizer's model,
settings and prompt text, the sampling temperature, the seed index), so a re-run, another run or
another sweep that needs the same summary finds it without a model call. A summarizer request
the server refused for its content is kept in the summary's place (a record with `refused` and
no text), so that it is not asked again either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from replay.compaction import hermes_native, qwen_tokens
from replay.compaction.fusion import FUSION_VERSION
from replay.compaction.hermes import STUDY as HERMES_STUDY
from replay.compaction.sources import PromptText
from replay.compaction.summarize import SummarizerName, summarize
from replay.models.transport import ModelRefused
from replay.models.types import Model, ModelSpec
from replay.pipeline.calls import recording
from replay.records.history import History
from replay.records.summary import Summary
from replay.store import Store, summaries


@dataclass(frozen=True)
class Summarizer:
    """A summarizer as a POST cell runs it: its parsed name (`MODEL:PROMPT`, a mechanical
    baseline or a fused name, parsed once where the run's names are read), the backbone's model,
    the prompt's text, the evidence judge of a fused name and the temperature the run samples
    at."""

    name: SummarizerName
    backbone: ModelSpec | None = None
    prompt: PromptText | None = None
    judge: ModelSpec | None = None
    temperature: float = 0.0

    def identity(self) -> dict[str, Any]:
        """What of the summarizer determines its summaries (part of `summary_key`)."""
        backbone = _model_identity(self.backbone)
        judge = _model_identity(self.judge)
        name = self.name
        content: dict[str, Any] = {
            "summarizer": name.prompt if backbone else name.name, "backbone": backbone,
            "prompt": None if self.prompt is None else self.prompt.parts}
        if backbone:
            content["temperature"] = self.temperature
        if name.prompt == HERMES_STUDY.name:  # Hermes' real class, budgeted in Qwen tokens
            content["budget_tokens"] = qwen_tokens.VOCABULARY
            content["hermes"] = hermes_native.DISTRIBUTION
        if name.fused is not None:
            base = name.fused.base
            content["fusion"] = {"base": base.prompt if base.backbone else base.name,
                                 "top": name.fused.top, "judge": judge,
                                 "version": FUSION_VERSION}
        return content


def _model_identity(spec: ModelSpec | None) -> dict[str, Any] | None:
    return None if spec is None else {**spec.model_dump(
        include={"provider", "model", "base_url", "temperature", "max_tokens"}),
        **spec.request_settings()}


def summary_key(summarizer: Summarizer, history: History, seed_index: int) -> str:
    """The identity of the summary `summarizer` writes of `history` at `seed_index`."""
    return summaries.key(summarizer.identity(), history, seed_index)


@dataclass(frozen=True)
class Summarized:
    """The summary stage's result: the summary kept under `key`, or why the summarizer's server
    refused to write it (`refused`; then there is no summary)."""

    key: str
    summary: Summary | None = None
    refused: str | None = None

    @property
    def usable(self) -> bool:
        """Whether there is a summary to continue from: not refused, and not invalid by its
        method's own rules (`Summary.invalid`)."""
        return self.summary is not None and self.summary.invalid is None


def summary_of(summarizer: Summarizer, history: History, seed_index: int, store: Store,
               model: Callable[[ModelSpec], Model]) -> Summarized:
    """The summary of a POST cell: kept, or written now (and kept before it is used).
    `model(spec)` gives the client the backbone and the judge are called through.

    A request the summarizer's server refused for its content, now or before, is a result:
    the refusal is kept in the summary's place and not asked again.
    """
    kept = kept_summary(summarizer, history, seed_index, store)
    if kept is not None:
        return kept
    written = write_summary(summarizer, history, seed_index, model)
    return replace(written, key=summaries.keep_written(
        store, summarizer.identity(), history, seed_index, summarizer.name.name,
        written.summary, written.refused))


def write_summary(summarizer: Summarizer, history: History, seed_index: int,
                  model: Callable[[ModelSpec], Model]) -> Summarized:
    """The summary written now, carrying the keys of the calls that wrote it, or the refusal;
    not kept yet (`replay.store.summaries.keep_written` keeps it and gives its key)."""
    keys: list[str] = []
    calls = recording(model, keys)
    backbone = None if summarizer.backbone is None else calls(summarizer.backbone)
    judge = None if summarizer.judge is None else calls(summarizer.judge)
    try:
        summary = summarize(history.messages, summarizer.name,
                            summarizer.prompt, backbone, seed_index, judge,
                            summarizer.temperature)
    except ModelRefused as exc:
        return Summarized("", refused=str(exc))
    return Summarized("", replace(summary, calls=tuple(keys)))


def kept_summary(summarizer: Summarizer, history: History, seed_index: int,
                 store: Store) -> Summarized | None:
    """The summary (or the summarizer's refusal) of `history` at `seed_index` the store keeps,
    if any."""
    identity = summarizer.identity()
    return kept_summarized(store, summaries.key(identity, history, seed_index))


def kept_summarized(store: Store, key: str) -> Summarized | None:
    """The summary (or the summarizer's refusal) the store keeps under `key`, if any."""
    summary = summaries.summary(store, key)
    if summary is not None:
        return Summarized(key, summary)
    refused = summaries.refusal(store, key)
    return None if refused is None else Summarized(key, refused=refused)
