"""What each cell of a run cost, and the sums by summarizer and by arm.

A cell's spend counts the model calls made for it (its summary's too, for a POST), never
replies replayed from the call cache: a cell answered from the store costs nothing and took
no time here. `seconds` is the cell's wall time when it ran, and `estimated_dollars` what the
dry run estimated it would cost at most (recorded when it ran; 0 for cells stored before).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.table import Table
from rich.text import Text

from replay.records.cell import CellId, CellResult
from replay.records.spend import Spend, tokens_text

COST_COLUMNS = ("tokens_in", "cached_tokens", "tokens_out", "dollars", "seconds",
                "estimated_dollars")
PRE_GROUP = "PRE (shared)"


def cell_cost(result: CellResult) -> dict[str, Any]:
    """The cost columns of one cell."""
    spent = result.spent
    return {"tokens_in": spent.input_tokens, "cached_tokens": spent.cached_tokens,
            "tokens_out": spent.output_tokens, "dollars": round(spent.cost, 6),
            "seconds": round(result.seconds, 2), "estimated_dollars": round(result.estimate, 6)}


def cost_sums(cells: Mapping[CellId, CellResult],
              names: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
    """The spend summed by summarizer (PRE cells in their own row, first; then the columns in
    the order of `names`) and by arm."""
    groups: dict[str, dict[str, tuple[Spend, list[float], list[float]]]] = {
        "summarizer": {}, "arm": {}}
    order = {summarizer: index for index, summarizer in enumerate(["", *names])}
    for cell, result in sorted(cells.items(), key=lambda item: (
            order.get(item[0].summarizer, len(order)), item[0])):
        keys = {"summarizer": names.get(cell.summarizer, cell.summarizer) if cell.summarizer
                else PRE_GROUP, "arm": cell.arm}
        for group, key in keys.items():
            spend, seconds, estimates = groups[group].setdefault(key, (Spend(), [], []))
            spend.add(result.spent)
            seconds.append(result.seconds)
            estimates.append(result.estimate)
    return {group: [{group: key, "cells": len(seconds), "tokens_in": spend.input_tokens,
                     "cached_tokens": spend.cached_tokens, "tokens_out": spend.output_tokens,
                     "dollars": round(spend.cost, 6), "seconds": round(sum(seconds), 2),
                     "estimated_dollars": round(sum(estimates), 6)}
                    for key, (spend, seconds, estimates) in found.items()]
            for group, found in groups.items()}


def cost_table(rows: list[dict[str, Any]], group: str) -> Table:
    """A printed table of `cost_sums(...)[group]`."""
    table = Table(title=f"cost by {group} (model calls made for the run's cells; the dry run's "
                        "estimate of the cells that ran, an upper bound)")
    for column in (group, "cells", "tokens in", "cached", "tokens out", "dollars",
                   "estimated", "seconds"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(str(value)) for value in (
            row[group], row["cells"], tokens_text(row["tokens_in"]),
            tokens_text(row["cached_tokens"]), tokens_text(row["tokens_out"]),
            f"${row['dollars']:.4f}", f"${row['estimated_dollars']:.4f}",
            f"{row['seconds']:.1f}")))
    return table
