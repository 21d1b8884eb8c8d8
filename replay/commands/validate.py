"""`replay validate`: check instances before any model is called."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

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
from replay.environments.backends import open_backend
from replay.histories.records import bundled_snapshot
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.timeouts import derived_timeout, gold_seconds
from replay.judge.validate import preflight, validate_all
from replay.records.validation import Validation
from replay.store import Store

STYLES = {"valid": "green", "excluded": "yellow", "error": "red"}


def _line(validation: Validation) -> Text:
    style = STYLES[validation.status]
    seconds = sum(validation.checks.get("seconds", {}).values())
    text = Text.assemble((f"{validation.status:<8}", style),
                         f" {validation.instance_id}  ({seconds:.1f} s)")
    for reason in validation.reasons:
        text.append(f"\n         {reason}")
    return text


def _timing(record: dict[str, Any]) -> tuple[str, str]:
    """The gold patch's test time, and the default test timeout of the instance's cells."""
    gold = gold_seconds(record)
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
                      *_timing({"checks": checks}))
    return table


def validate_command(instances: list[Instance], store_path: Path, mirrors: Path | None,
                     rebuild: bool, console: Console, backend: str = "local",
                     base_image: str | None = None, test_timeout: float | None = None) -> int:
    """Validate, printing a line per instance and a table; 0 all valid, 1 otherwise. Each test
    run may take `test_timeout` seconds (default DEFAULT_TEST_TIMEOUT)."""
    preflight(instances, mirrors)
    results = []
    with open_backend(backend, mirrors, base_image) as chosen, Store.open(store_path) as store:
        for validation in validate_all(instances, chosen, store, bundled_snapshot,
                                       rebuild=rebuild, test_timeout=test_timeout):
            console.print(_line(validation), soft_wrap=True)
            results.append(validation)
    console.print(_table(results))
    return 0 if all(result.status == "valid" for result in results) else 1


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
        chosen = choose_instances(suite, dataset, instance or [], filter_, slice_)
        code = validate_command(chosen, store or default_store(),
                                repo_mirror, rebuild, console, backend, base_image,
                                test_timeout)
        raise typer.Exit(code)
