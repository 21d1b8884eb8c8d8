"""`replay validate`: check instances before any model is called."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from replay import api
from replay.commands.options import (
    BackendName,
    BaseImage,
    Dataset,
    Ids,
    Mirrors,
    Pattern,
    Span,
    StorePath,
    Suite,
    TestTimeout,
    console,
)
from replay.core.paths import default_store
from replay.judge.timeouts import derived_timeout, gold_seconds
from replay.records.validation import Validation

STYLES = {"valid": "green", "excluded": "yellow", "error": "red"}


def _line(validation: Validation) -> Text:
    style = STYLES[validation.status]
    seconds = sum(validation.checks.get("seconds", {}).values())
    text = Text.assemble((f"{validation.status:<8}", style),
                         f" {validation.instance_id}  ({seconds:.1f} s)")
    for reason in validation.reasons:
        text.append(f"\n         {reason}")
    return text


def _timing(validation: Validation) -> tuple[str, str]:
    """The gold patch's test time, and the default test timeout of the instance's cells."""
    gold = gold_seconds(validation)
    return ("-" if gold is None else f"{gold:.1f} s"), f"{derived_timeout(gold):g} s"


def _table(results: list[Validation]) -> Table:
    table = Table(title="validation")
    for column in ("instance", "status", "real repair", "solvable", "restore", "seconds",
                   "gold tests", "cells' test timeout"):
        table.add_column(column)

    def mark(value: object) -> str:
        return {True: "yes", False: "no"}.get(value, "-")  # type: ignore[arg-type]

    for result in results:
        checks = result.checks
        table.add_row(Text(result.instance_id), Text(result.status, STYLES[result.status]),
                      mark(checks.get("real_repair")), mark(checks.get("solvable")),
                      mark(checks.get("restore_identical")),
                      f"{sum(checks.get('seconds', {}).values()):.1f}",
                      *_timing(result))
    return table


def register(app: typer.Typer) -> None:
    """Add `replay validate` to the command line."""

    @app.command()
    def validate(
        suite: Suite = "demo", dataset: Dataset = None, instance: Ids = None,
        filter_: Pattern = None, slice_: Span = None, store: StorePath = None,
        repo_mirror: Mirrors = None, backend: BackendName = "local", base_image: BaseImage = None,
        rebuild: Annotated[bool, typer.Option(help="Rebuild environments.")] = False,
        test_timeout: TestTimeout = None,
    ) -> None:
        """Check instances before any model is called: solvable, a real repair, restorable."""
        chosen = api.instances(suite, dataset, instance or [], filter_, slice_)
        results = api.validate(chosen, store or default_store(), mirrors=repo_mirror,
                               backend=backend, base_image=base_image, rebuild=rebuild,
                               test_timeout=test_timeout,
                               on_result=lambda found: console.print(_line(found),
                                                                     soft_wrap=True))
        console.print(_table(results))
        raise typer.Exit(0 if all(result.status == "valid" for result in results) else 1)
