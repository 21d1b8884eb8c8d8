"""The label of one (instance, summarizer) pair from its PRE and POST cells."""

from __future__ import annotations

from dataclasses import dataclass

from replay.core.vocab import Confirmation, Label


@dataclass(frozen=True)
class Outcome:
    """The label of one (instance, summarizer) pair, and its confirmation if it was damaged.

    `refused` says which seed-0 request of the pair the server refused for its content (a POST
    whose summary the agent cannot read fails as a POST; see `replay.sweep.cells`).
    `timed_out` says which seed-0 cell of the pair had its tests time out, and after how long.
    """

    instance_id: str
    summarizer: str
    label: Label
    pre: bool | None = None
    post: bool | None = None
    confirmation: Confirmation | None = None
    post_runs: tuple[bool | None, ...] = ()
    cause: str | None = None
    refused: str | None = None
    timed_out: str | None = None
