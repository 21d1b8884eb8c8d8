"""`replay recipes check|show`: the recipes derived from swebench's specs, and what they prove."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.inputs import PathKind, path_option
from replay.commands.options import (
    DATASET,
    Mirrors,
    StorePath,
    console,
    dataset_name,
    say,
    say_lines,
)
from replay.core.limits import MAX_COUNT, MAX_WORKERS
from replay.core.paths import default_store

if TYPE_CHECKING:
    from replay.judge.coverage import RowCheck

VERIFIED = "princeton-nlp/SWE-bench_Verified"
STYLES = {"valid": "green", "excluded": "yellow", "error": "red", "refused": "magenta"}

DatasetOption = Annotated[str, typer.Option(
    "--dataset", metavar=DATASET, callback=dataset_name,
    help="SWE-bench records: a .json/.jsonl/.parquet file or a Hugging Face "
                      "dataset name.")]


def recipes_check(dataset: str, repos: list[str], k: int, mirrors: Path | None, store: Path,
                  jobs: int, table: Path | None, console: Console) -> int:
    """Check K rows per repository and version, a line per row, then the coverage table (also
    written to `table` when given). 0 when no row met a harness fault, else 1."""
    lock = threading.Lock()

    def done(outcome: RowCheck) -> None:
        """One line per checked row, as it lands."""
        line = (f"{outcome.status:<8} {outcome.instance_id} ({outcome.version}, "
                f"{outcome.seconds:.0f} s)" + (f"  {outcome.reason}" if outcome.reason else ""))
        with lock:
            say(console, line, STYLES.get(outcome.status))

    coverage = api.check_recipes(dataset, repos, k, store, mirrors, jobs, done,
                                 lambda line: say(console, line))
    say(console, "")
    say_lines(console, coverage.table)
    if table is not None:
        table.write_text(coverage.table + "\n", encoding="utf-8")
    return coverage.code


def recipes_show(dataset: str, instance_id: str, mirrors: Path | None, console: Console) -> int:
    """Print an instance's recipe (JSON) and the spec lines that are not run here."""
    recipe, dropped = api.recipe(dataset, instance_id, mirrors)
    say_lines(console, json.dumps(recipe.model_dump(), indent=2))
    for line in dropped:
        say(console, f"not run here: {line}")
    return 0


def register(app: typer.Typer) -> None:
    """Add `replay recipes check|show` to the command line."""
    group = typer.Typer(no_args_is_help=True, help="Environment recipes derived from "
                                                   "swebench's specs: check, show.")
    app.add_typer(group, name="recipes")

    @group.command("check")
    def check_command(
        dataset: DatasetOption = VERIFIED,
        repo: Annotated[list[str] | None, typer.Option(
            "--repo", help="Repository owner/name (repeatable; default every one).")] = None,
        sample: Annotated[int, typer.Option(
            "--sample", min=1, max=MAX_COUNT, help="Rows checked per repository and version.")] = 1,
        repo_mirror: Mirrors = None, store: StorePath = None,
        jobs: Annotated[int, typer.Option(
            min=1, max=MAX_WORKERS, help="Rows checked at once.")] = 1,
        table: Annotated[Path | None, path_option(
            PathKind.OUTPUT_FILE, "--table",
            help="Also write the coverage table (Markdown) to this file.")] = None,
    ) -> None:
        """Validate K rows per repository and version; print a coverage table."""
        raise typer.Exit(recipes_check(dataset, repo or [], sample, repo_mirror,
                                       store or default_store(), jobs, table, console))

    @group.command("show")
    def show_command(
        instance: Annotated[str, typer.Argument(help="Instance id.")],
        dataset: DatasetOption = VERIFIED, repo_mirror: Mirrors = None,
    ) -> None:
        """Print an instance's recipe and the lines of its spec that are not run here."""
        raise typer.Exit(recipes_show(dataset, instance, repo_mirror, console))

