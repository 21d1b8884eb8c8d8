"""The model calls of a cell, listed from the keys its records carry.

A POST cell's summary carries the keys of the calls that wrote it (`Summary.calls`); each
continuation, PRE or POST, is kept with the keys of its agent steps. A key names a row of the
model call cache (model, tokens, cached tokens, cost, latency), whatever the models' settings
and the agent's action format. A key with no row there is listed as not found; a record kept
before its calls were recorded with it lists its calls as not recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.records.cell import CellResult
from replay.store import Store, continuations, summaries
from replay.store.calls import CallUsage, kept_calls

NOT_FOUND = "not in the store's model calls"
NOT_RECORDED = "kept before its calls were recorded with it"


@dataclass
class Call:
    """One model call of a cell; `found` is False when the store does not hold it, and `note`
    says why."""

    arm: str
    what: str
    key: str = ""
    model: str = ""
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    latency: float | None = None
    created_at: str = ""
    found: bool = True
    note: str = ""

    @property
    def output_per_second(self) -> float | None:
        """Output tokens per second of the call's time (None when its time was not kept)."""
        return self.output_tokens / self.latency if self.latency else None


def cell_calls(store: Store, result: CellResult | None) -> list[Call]:
    """The calls of one cell, in the order they were made: its summary's, then its agent
    steps."""
    if result is None:
        return []
    arm = result.cell.arm
    wanted: list[tuple[str, str | None]] = []  # (what, key); key None: not recorded
    if result.summary:
        kept = summaries.find(store, result.summary)
        if kept is not None and kept.summary is not None and kept.keys_recorded:
            keys = kept.summary.calls
            wanted += [(_summary_label(index, len(keys)), key) for index, key in enumerate(keys)]
        elif kept is not None:
            wanted += [("summary", None)] * kept.requests
    if result.continuation:
        kept = continuations.find(store, result.continuation)
        keys = list(kept.calls) if kept is not None else None
        steps = int(result.diagnostics.get("steps") or 0)
        wanted += ([(f"step {n}", key) for n, key in enumerate(keys, start=1)] if keys else
                   [(f"step {n}", None) for n in range(1, steps + 1)])
    rows = kept_calls(store, [key for _, key in wanted if key])
    return [_call(arm, what, key, rows.get(key or "")) for what, key in wanted]


def _summary_label(index: int, count: int) -> str:
    return "summary" if count == 1 else f"summary {index + 1}/{count}"


def _call(arm: str, what: str, key: str | None, row: CallUsage | None) -> Call:
    if key is None:
        return Call(arm, what, found=False, note=NOT_RECORDED)
    if row is None:
        return Call(arm, what, key, found=False, note=NOT_FOUND)
    return Call(arm, what, key, row.model, row.input_tokens, row.cached_tokens,
                row.output_tokens, row.cost, row.seconds, row.created_at)
