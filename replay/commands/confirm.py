"""`replay confirm` and `replay report`: what follows a sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.inputs import PathKind, path_option
from replay.commands.options import (
    BaseImage,
    CallDeadline,
    Mirrors,
    StorePath,
    TestTimeout,
    console,
    printed,
    run_name,
    say,
)
from replay.commands.sweep import (
    Backend,
    Dollars,
    DryRun,
    Executor,
    PerProvider,
    RayAddress,
    Workers,
    show_estimate,
    show_outcome,
)
from replay.core.paths import default_store
from replay.report.tables import render

RunArgument = Annotated[str | None, typer.Argument(
    callback=run_name, help="Run name (default: the latest run).")]


def confirm_command(run: str | None, options: api.RunOptions, dry_run: bool,
                    out: Console) -> int:
    """Confirm the run's damaged pairs, printing each round; 0 when no cell ended in an error,
    else 1."""
    def show(done: api.SweepOutcome | api.SweepEstimate) -> None:
        if isinstance(done, api.SweepEstimate):
            show_estimate(done, out)
        else:
            show_outcome(done, options.store, out, grid=False)

    done = api.confirm(options, run, dry_run, printed, show)
    if dry_run:
        return done.code
    if not done.plan.confirm:
        say(out, f"run {done.run}: no damaged pair to confirm")
    render(api.report(options.store, done.run), out)
    return done.code


def register(app: typer.Typer) -> None:
    """Add `replay confirm` and `replay report` to the command line."""

    @app.command()
    def confirm(
        run: RunArgument = None, workers: Workers = 1, per_provider: PerProvider = 8,
        backend: Backend = None, executor: Executor = "local", ray_address: RayAddress = None,
        dry_run: DryRun = False, store: StorePath = None, repo_mirror: Mirrors = None,
        base_image: BaseImage = None, call_deadline: CallDeadline = None,
        test_timeout: TestTimeout = None, budget: Dollars = None,
    ) -> None:
        """Re-run every damaged pair twice more (seeds 1, 2): stable damage or seed-variable."""
        options = api.RunOptions(store or default_store(), workers, per_provider, backend,
                                   executor, ray_address, repo_mirror, base_image,
                                   call_deadline, test_timeout, budget)
        raise typer.Exit(confirm_command(run, options, dry_run, console))

    @app.command()
    def report(
        run: RunArgument = None, store: StorePath = None,
        out: Annotated[Path | None, path_option(
            PathKind.OUTPUT_FOLDER, "--out",
            help="Folder for the exports (default: reports/RUN beside the store).")] = None,
        cells: Annotated[bool, typer.Option(help="Also print the diagnostics per cell.")] = False,
        html: Annotated[Path | None, path_option(
            PathKind.OUTPUT_FOLDER, "--html",
            help="Also write the web view's pages (see `replay view`) into this folder.")] = None,
    ) -> None:
        """Print a run's outcome grid, damage rates and prompt table; write the exports."""
        exported = api.export(store or default_store(), run, out, html)
        render(exported.report, console, cells=cells)
        for path in exported.files:
            say(console, f"wrote {path}")
        if html is not None:
            say(console, f"wrote {len(exported.pages)} files of the web view: open "
                         f"{html / 'index.html'}")
