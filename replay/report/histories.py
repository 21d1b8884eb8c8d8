"""The histories of a run: which Phase A history each instance continued from, and where that
history came from (its provenance when it was made elsewhere, else its source)."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from replay.records.plan import Plan, PlannedHistory

HISTORY_COLUMNS = ("instance", "history", "rule", "protocol", "model", "from", "source")


def origin(found: PlannedHistory) -> str:
    """Where a history came from: `repository@commit path` of its provenance, else its source."""
    where = found.provenance
    if not where.get("repository"):
        return found.source
    commit = f"@{where['commit'][:8]}" if where.get("commit") else ""
    return f"{where['repository']}{commit} {where.get('path', '')}".strip()


def history_rows(plan: Plan) -> list[dict[str, str]]:
    """One row per instance of the run that has a recorded history, in the run's order."""
    recorded = {found.instance_id: found for found in plan.histories}
    return [{"instance": ident, "history": found.id[:12], "rule": found.rule,
             "protocol": found.dialect, "model": found.model,
             "from": "bundled" if found.bundled else "store", "source": origin(found)}
            for ident in plan.instances if (found := recorded.get(ident)) is not None]


def histories_table(plan: Plan) -> Table:
    """The histories of a run as a table, every name whole."""
    table = Table(title="histories (what each instance continued from)")
    for column in HISTORY_COLUMNS:
        table.add_column(column, **({"no_wrap": True} if column in ("instance", "history")
                                    else {"overflow": "fold"}))
    for row in history_rows(plan):
        table.add_row(*(Text(row[column]) for column in HISTORY_COLUMNS))
    return table
