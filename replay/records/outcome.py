"""The label of one (instance, summarizer) pair from its PRE and POST cells."""

from __future__ import annotations

from dataclasses import dataclass

from replay.core.vocab import Confirmation, Label


@dataclass(frozen=True)
class Outcome:
    """The label of one (instance, summarizer) pair, and its confirmation if it was damaged.

    `refused` says which seed-0 request of the pair the server refused for its content after
    the agent had run (the run ended there and its tree was graded); `not_run` says which seed-0
    cell could not run at all, and why: its first request was refused (the history, or the
    summary, longer than the model's context). A PRE that could not run leaves the pair
    `unevaluated` (there is no PRE verdict to compare with); a POST that could not run fails as
    a POST (nothing was continued from the summary; see `replay.sweep.labels`).
    `timed_out` says which seed-0 cell of the pair had its tests time out, and after how long;
    `truncated` whether the seed-0 POST's summary was cut off at the summarizer's output cap.
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
    not_run: str | None = None
    truncated: bool = False
