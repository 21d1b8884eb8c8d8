"""What a run's model calls cost: tokens in and out, the share of the prompts the providers read
from their prompt caches, cost, and what that caching saved.

The sums are those of the calls made for the run's cells, at the models' list prices. A reply
replayed from replay's call cache (a re-run, a cell kept from another run) cost nothing and
counts nothing here; cached tokens are the providers' own prompt caches at work.
"""

from __future__ import annotations

from collections.abc import Mapping

from replay.records.cell import CellId, CellResult
from replay.records.spend import Spend

NOTE = ("Model calls made for this run's cells, at the models' list prices; cached tokens were "
        "read from the providers' prompt caches. Replies replayed from the call cache cost "
        "nothing and are not counted.")


def run_spend(cells: Mapping[CellId, CellResult]) -> Spend:
    """The spend of the calls made for `cells`."""
    spend = Spend()
    for result in cells.values():
        spend.add(result.spent)
    return spend


def spend_line(run: str, spend: Spend) -> str:
    """One line for the printed report."""
    return (f"spend of run {run}: {spend.text()} (model calls made for its cells; replies "
            "replayed from the call cache cost nothing)")


def spend_markdown(spend: Spend) -> list[str]:
    """The cost section of report.md: one table row and what it counts."""
    share = spend.cached_share
    cached = f"{spend.cached_tokens:,}" + (f" ({100 * share:.1f}%)" if share is not None else "")
    header = ["tokens in", "cached", "written to prompt caches", "tokens out", "cost",
              "saved by prompt caching", "cost uncached"]
    row = [f"{spend.input_tokens:,}", cached, f"{spend.cache_write_tokens:,}",
           f"{spend.output_tokens:,}", f"${spend.cost:.4f}", f"${spend.saved:.4f}",
           f"${spend.uncached_cost:.4f}"]
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            "| " + " | ".join(row) + " |", "", NOTE]
