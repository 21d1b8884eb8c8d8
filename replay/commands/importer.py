"""`replay import`: Phase A histories from trajectories users already have."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.commands.collect import Boundaries, history_line, trajectory_summary
from replay.commands.options import (
    Dataset,
    Mirrors,
    StorePath,
    Suite,
    TestTimeout,
    console,
    say,
)
from replay.core.errors import HarnessError
from replay.core.paths import default_store
from replay.environments.backends import make_backend
from replay.histories.boundaries import Rule, parse_rule
from replay.histories.importers import FORMATS
from replay.histories.importers.rebuild import check_files, import_files
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.store import Store

DEFAULT_BOUNDARY = "fraction:1"


def import_command(paths: Sequence[Path], rules: Sequence[Rule], instances: Sequence[Instance],
                   fmt: str, instance_id: str | None, store_path: Path, mirrors: Path | None,
                   console: Console, test_timeout: float | None = None) -> int:
    """Import the files, print each with its divergences and histories; 1 on a harness fault.
    The files are read and checked before the store is opened (or created)."""
    check_files(paths, rules, instances, fmt, instance_id)
    with Store.open(store_path) as store:
        try:
            imported, fresh = import_files(paths, rules, instances,
                                           make_backend("local", mirrors), store, fmt,
                                           instance_id, test_timeout)
        except HarnessError as exc:
            say(console, f"error {type(exc).__name__}: {exc}")
            return 1
    for item in imported:
        trajectory = item.trajectory
        kept = " (kept from an earlier import)" if item.reused else ""
        say(console, f"imported {item.path} ({item.format}) for "
                     f"{trajectory.instance_id}: {trajectory_summary(trajectory)}{kept}")
        divergences = trajectory.divergences
        if divergences:
            say(console, f"  {len(divergences)} recorded output(s) differ from execution:",
                "yellow")
        for text in divergences:
            say(console, f"  diverged {text}")
        for history in item.histories:
            say(console, history_line(history, history.content_id() in fresh))
    return 0


def register(app: typer.Typer) -> None:
    """Add `replay import` to the command line."""

    @app.command("import")
    def import_(
        files: Annotated[list[Path], typer.Argument(help="Trajectory files.")],
        boundary: Boundaries = None,
        format_: Annotated[str, typer.Option(
            "--format", help=f"auto, {', '.join(FORMATS)}.")] = "auto",
        instance: Annotated[str | None, typer.Option(
            "--instance", help="The instance, for files that do not name it.")] = None,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None, test_timeout: TestTimeout = None,
    ) -> None:
        """Make Phase A histories from mini-swe-agent, SWE-agent or OpenAI trajectories."""
        rules = [parse_rule(text) for text in boundary or [DEFAULT_BOUNDARY]]
        instances = choose_instances(suite, dataset, [], None, None)
        code = import_command(files, rules, instances, format_, instance,
                              store or default_store(), repo_mirror, console, test_timeout)
        raise typer.Exit(code)
