"""What a remote worker sends back to the driver, and how the driver writes it into the run's
store.

A remote worker (a Ray actor) writes to a scratch store on its own node. Once a task is done it
exports what the run's store needs: the cell's summary and continuation records and their files,
the model calls the cell made (replies and refusals, for the run's call cache), or an instance's
validation and its logs. The driver alone writes the run's store (`ingest`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from replay.models.cache import CallCache, call_request, refusal_key, request_key
from replay.models.client import settled
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ModelSpec
from replay.records.cell import CellResult
from replay.records.continuation import KeptContinuation
from replay.records.reply import CallRequest, ChatResponse
from replay.records.summary import KeptSummary
from replay.records.validation import Validation
from replay.store import Store, continuations, summaries, validations
from replay.store.artifacts import Files


@dataclass(frozen=True)
class Called:
    """One model call a worker made for its task: the model, the request, the sample and the
    reply, or the refusal."""

    spec: ModelSpec
    request: ChatRequest
    seed_index: int
    reply: ChatResponse | ModelRefused


@dataclass(frozen=True)
class KeptCall:
    """A model call's row of the call cache: its key, request and reply."""

    key: str
    request: CallRequest
    response: ChatResponse


@dataclass(frozen=True)
class KeptRefusal:
    """A refused request's row of the call cache: its key, the request and what the server
    said."""

    key: str
    request: CallRequest
    status: int
    context: bool
    message: str


@dataclass(frozen=True)
class Export:
    """What a remote worker produced, for the driver to write into the run's store."""

    continuation: KeptContinuation | None = None
    files: Files = Files()  # the continuation's files, or the validation's logs, packed
    summary: tuple[str, KeptSummary] | None = None  # its key and record
    calls: list[KeptCall] = field(default_factory=list)
    refusals: list[KeptRefusal] = field(default_factory=list)
    validation: Validation | None = None


def cell_export(store: Store, result: CellResult, calls: list[Called]) -> Export:
    """What the run's store needs of a cell the worker ran into its scratch `store`."""
    replies: list[KeptCall] = []
    refusals: list[KeptRefusal] = []
    for call in calls:
        asked = call_request(call.spec, settled(call.spec, call.request, call.seed_index),
                             call.seed_index)
        if isinstance(call.reply, ModelRefused):
            refusals.append(KeptRefusal(refusal_key(asked), asked, call.reply.status,
                                        call.reply.context, str(call.reply)))
        else:
            replies.append(KeptCall(request_key(asked), asked, call.reply))
    kept = summaries.find(store, result.summary) if result.summary else None
    key = result.continuation
    return Export(continuations.find(store, key) if key else None,
                  continuations.files(store, key) if key else Files(),
                  (result.summary, kept) if result.summary and kept is not None else None,
                  replies, refusals)


def validation_export(store: Store, validation: Validation) -> Export:
    """What the run's store needs of an instance the worker validated: the verdict and its
    logs."""
    return Export(files=validations.files(store, validation.instance_id),
                  validation=validation)


def ingest(store: Store, cache: CallCache, export: Export, backend: str) -> None:
    """Write what a remote worker sent back into the run's store (a validation as made on
    `backend`)."""
    for call in export.calls:
        cache.put(call.key, call.request, call.response)
    for refusal in export.refusals:
        cache.keep_refusal(refusal.key, refusal.request,
                           ModelRefused(refusal.message, refusal.status, refusal.context))
    if export.summary is not None:
        summaries.keep(store, *export.summary)
    if export.validation is not None:
        validations.take(store, backend, export.validation, export.files)
    if export.continuation is not None:
        continuations.take(store, export.continuation, export.files)
