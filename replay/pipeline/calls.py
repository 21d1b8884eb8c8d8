"""The model calls of a cell, kept by their keys as they are made.

Every call a cell makes goes through a `Recorder`, which notes the call's cache key (the key
its reply is kept under in the model call cache, `replay.models.client.call_key`) in order.
A summary carries the keys of the calls that wrote it (`Summary.calls`); a continuation those of
its agent steps, kept with it in the store. The report and the web view list a cell's calls
from these keys alone, whatever the models' settings and the agent's action format.
"""

from __future__ import annotations

from collections.abc import Callable

from replay.models.client import call_key
from replay.models.types import ChatRequest, Model, ModelSpec
from replay.records.reply import ChatResponse


class Recorder:
    """A model client that notes, in order, the key of each call it answers."""

    def __init__(self, client: Model, spec: ModelSpec, keys: list[str]) -> None:
        self.client = client
        self.spec = spec
        self.keys = keys

    def complete(self, request: ChatRequest, seed_index: int = 0) -> ChatResponse:
        """The client's reply; its key is noted once the call is answered."""
        response = self.client.complete(request, seed_index)
        self.keys.append(call_key(self.spec, request, seed_index))
        return response


def recording(model: Callable[[ModelSpec], Model],
              keys: list[str]) -> Callable[[ModelSpec], Model]:
    """`model`, with the key of every call made through its clients noted in `keys`."""
    return lambda spec: Recorder(model(spec), spec, keys)
