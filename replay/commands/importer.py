"""`replay import`: Phase A histories from trajectories users already have."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.collect import Boundaries, history_line, trajectory_summary
from replay.commands.inputs import PathKind, path_argument
from replay.commands.options import (
    Dataset,
    Mirrors,
    StorePath,
    Suite,
    TestTimeout,
    console,
    say,
)
from replay.core.paths import default_store
from replay.histories.importers import FORMATS

DEFAULT_BOUNDARY = "fraction:1"


def show(done: api.Imports, out: Console) -> int:
    """Each file imported with its divergences and histories; 1 on a harness fault."""
    if done.fault is not None:
        say(out, f"error {done.fault}")
        return 1
    for item in done.imported:
        trajectory = item.trajectory
        kept = " (kept from an earlier import)" if item.reused else ""
        say(out, f"imported {item.path} ({item.format}) for "
                 f"{trajectory.instance_id}: {trajectory_summary(trajectory)}{kept}")
        divergences = trajectory.divergences
        if divergences:
            say(out, f"  {len(divergences)} recorded output(s) differ from execution:",
                "yellow")
        for text in divergences:
            say(out, f"  diverged {text}")
        for history in item.histories:
            say(out, history_line(history, history.content_id() in done.fresh))
    return 0


def register(app: typer.Typer) -> None:
    """Add `replay import` to the command line."""

    @app.command("import")
    def import_(
        files: Annotated[list[Path], path_argument(PathKind.FILE, help="Trajectory files.")],
        boundary: Boundaries = None,
        format_: Annotated[str, typer.Option(
            "--format", help=f"auto, {', '.join(FORMATS)}.")] = "auto",
        instance: Annotated[str | None, typer.Option(
            "--instance", help="The instance, for files that do not name it.")] = None,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None, test_timeout: TestTimeout = None,
    ) -> None:
        """Make Phase A histories from mini-swe-agent, SWE-agent or OpenAI trajectories."""
        rules = api.boundaries(boundary or [DEFAULT_BOUNDARY])
        known = api.instances(suite, dataset)
        done = api.import_histories(files, rules, known, store or default_store(), fmt=format_,
                                    instance_id=instance, mirrors=repo_mirror,
                                    test_timeout=test_timeout)
        raise typer.Exit(show(done, console))
