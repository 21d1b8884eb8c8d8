"""`replay collect`: run the agent from the start of each task and cut Phase A histories.

Each boundary rule is cut from each trajectory on its own: the histories of the rules that land
are kept, and a rule that does not land in a trajectory (past its end, no edit for
`before-edit`) is one line; the command then exits 1.
"""

from __future__ import annotations

from typing import Annotated

import typer

from replay import api
from replay.commands.options import (
    CallDeadline,
    Dataset,
    Ids,
    Mirrors,
    Pattern,
    SeedIndex,
    Span,
    StorePath,
    Suite,
    TestTimeout,
    console,
    say,
)
from replay.core.limits import MAX_STEPS, MAX_TEMPERATURE
from replay.core.paths import default_store
from replay.histories.boundaries import RULES
from replay.histories.collect import Collected
from replay.records.history import History
from replay.records.trajectory import Trajectory

Boundaries = Annotated[list[str] | None, typer.Option(
    "--boundary", help=f"Where a history stops (repeatable): {', '.join(RULES)}.")]


def _collected_line(result: Collected) -> str:
    if result.trajectory is None:
        return f"error    {result.instance_id}: {result.error}"
    return f"collected {result.instance_id}: {trajectory_summary(result.trajectory)}" + \
        (" (kept in the store)" if result.reused else "")


def trajectory_summary(trajectory: Trajectory) -> str:
    """Steps, how the run ended, whether it resolved the instance, and its key."""
    verdict = {True: "resolved", False: "not resolved", None: "not graded"}[trajectory.resolved]
    return (f"{len(trajectory.steps)} steps, {trajectory.exit_reason}, {verdict}, "
            f"trajectory {trajectory.key[:12]}")


def history_line(history: History, new: bool) -> str:
    """One history: its id, boundary, tokens and snapshot."""
    boundary = history.boundary
    about = "~" if boundary.tokens_estimated else ""
    return (f"  {boundary.rule:<14} history {history.content_id()[:12]}  "
            f"{history.instance_id} step {boundary.step}/{boundary.steps_total}, "
            f"{about}{boundary.tokens} tokens, snapshot {history.snapshot.fingerprint[:12]}"
            f"{'' if new else ' (already kept)'}")


def register(app: typer.Typer) -> None:
    """Add `replay collect` to the command line."""

    @app.command()
    def collect(
        model: Annotated[str, typer.Option(
            help="The agent's model: an alias or PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS].")],
        boundary: Boundaries = None,
        max_steps: Annotated[int, typer.Option(
            min=1, max=MAX_STEPS, help="Step limit of a trajectory.")] = 30,
        seed_index: SeedIndex = 0,
        temperature: Annotated[float, typer.Option(
            min=0, max=MAX_TEMPERATURE,
            help="What the agent samples at (default 0: a Phase A history is an input, "
                        "greedy so that collecting again gives it again).")] = 0.0,
        suite: Suite = "demo", dataset: Dataset = None, instance: Ids = None,
        filter_: Pattern = None, slice_: Span = None, store: StorePath = None,
        repo_mirror: Mirrors = None, call_deadline: CallDeadline = None,
        test_timeout: TestTimeout = None,
    ) -> None:
        """Run the agent from the start of each task; cut Phase A histories at --boundary."""
        rules = api.boundaries(boundary or [])
        chosen = api.instances(suite, dataset, instance or [], filter_, slice_)
        made = api.collect(chosen, model, rules, store or default_store(),
                           max_steps=max_steps, temperature=temperature, seed_index=seed_index,
                           mirrors=repo_mirror, call_deadline=call_deadline,
                           test_timeout=test_timeout,
                           on_collected=lambda found: say(console, _collected_line(found)))
        for history in made.histories:
            say(console, history_line(history, history.content_id() in made.fresh))
        for line in made.missed:
            say(console, line)
        raise typer.Exit(made.code)
