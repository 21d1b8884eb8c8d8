"""`replay collect`: run the agent from the start of each task and cut Phase A histories.

Each boundary rule is cut from each trajectory on its own: the histories of the rules that land
are kept, and a rule that does not land in a trajectory (past its end, no edit for
`before-edit`) is one line; the command then exits 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.agent.loop import AgentConfig
from replay.commands.options import (
    CallDeadline,
    Dataset,
    Ids,
    Mirrors,
    Pattern,
    Span,
    StorePath,
    Suite,
    TestTimeout,
    console,
    say,
)
from replay.core.errors import InputError
from replay.core.paths import default_store
from replay.environments.backends import make_backend
from replay.histories.boundaries import RULES, Rule, parse_rule
from replay.histories.collect import Collected, collect_trajectory, is_collected
from replay.histories.trajectories import Trajectory, keep
from replay.instances.records import Instance
from replay.instances.selection import choose_instances
from replay.judge.validate import preflight
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.keys import api_key
from replay.models.registry import resolve
from replay.records.history import History
from replay.store import Store
from replay.sweep.continuation import model_id

Boundaries = Annotated[list[str] | None, typer.Option(
    "--boundary", help=f"Where a history stops (repeatable): {', '.join(RULES)}.")]


def collect_command(instances: Sequence[Instance], model_name: str, rules: Sequence[Rule],
                    config: AgentConfig, seed_index: int, store_path: Path,
                    mirrors: Path | None, console: Console,
                    call_deadline: float | None = None,
                    test_timeout: float | None = None) -> int:
    """Collect every instance's trajectory, then cut each rule; 0 when every trajectory was
    collected and every rule landed, else 1.

    Raises `Halt` for a refused key or an unreachable endpoint.
    """
    spec = resolve(model_name)
    identity = model_id(spec)
    with Store.peek(store_path) as seen:  # bad input is refused before the store is written
        missing = [i for i in instances if not is_collected(seen, i, identity, config,
                                                            seed_index)]
    if missing:
        api_key(spec)
        preflight(missing)
    with Store.open(store_path) as store, CallCache(store_path) as cache:
        backend = make_backend("local", mirrors)
        results = []
        with ModelClient(spec, cache, deadline=call_deadline) as model:
            for instance in instances:
                result = collect_trajectory(instance, backend, model, identity, spec.alias,
                                            config, store, seed_index, test_timeout)
                say(console, _collected_line(result))
                results.append(result)
        trajectories = [r.trajectory for r in results if r.trajectory is not None]
        histories, missed = cut_histories(trajectories, rules)
        fresh = keep(store, histories)
    for history in histories:
        say(console, history_line(history, history.content_id() in fresh))
    for line in missed:
        say(console, line)
    return 1 if missed or any(result.error for result in results) else 0


def cut_histories(trajectories: Sequence[Trajectory],
                  rules: Sequence[Rule]) -> tuple[list[History], list[str]]:
    """The history of every rule in every trajectory where it lands, and a line for each
    (trajectory, rule) where it does not."""
    histories, missed = [], []
    for trajectory in trajectories:
        for rule in rules:
            try:
                histories.append(trajectory.history(rule))
            except InputError as exc:
                missed.append(f"  {rule.text:<14} no history: {exc}")
    return histories, missed


def _collected_line(result: Collected) -> str:
    if result.trajectory is None:
        return f"error    {result.instance_id}: {result.error}"
    return f"collected {result.instance_id}: {trajectory_summary(result.trajectory)}" + \
        (" (kept from an earlier run)" if result.reused else "")


def trajectory_summary(trajectory: Trajectory) -> str:
    """Steps, how the run ended, whether it resolved the instance, and its key."""
    verdict = {True: "resolved", False: "not resolved", None: "not graded"}[trajectory.resolved]
    return (f"{len(trajectory.steps)} steps, {trajectory.exit_reason}, {verdict}, "
            f"trajectory {trajectory.key[:12]}")


def history_line(history: History, new: bool) -> str:
    """One history: its id, boundary, tokens and snapshot."""
    boundary = history.boundary
    about = "~" if boundary.get("tokens_estimated") else ""
    return (f"  {boundary['rule']:<14} history {history.content_id()[:12]}  "
            f"{history.instance_id} step {boundary['step']}/{boundary['steps_total']}, "
            f"{about}{boundary['tokens']} tokens, snapshot {history.snapshot.fingerprint[:12]}"
            f"{'' if new else ' (already stored)'}")


def register(app: typer.Typer) -> None:
    """Add `replay collect` to the command line."""

    @app.command()
    def collect(
        model: Annotated[str, typer.Option(
            help="The agent's model: an alias or PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS].")],
        boundary: Boundaries = None,
        max_steps: Annotated[int, typer.Option(min=1, help="Step limit of a trajectory.")] = 30,
        seed_index: Annotated[int, typer.Option(
            min=0, help="Sample index: the request's seed, and part of the cache key.")] = 0,
        temperature: Annotated[float, typer.Option(
            min=0, help="What the agent samples at (default 0: a Phase A history is an input, "
                        "greedy so that collecting again gives it again).")] = 0.0,
        suite: Suite = "demo", dataset: Dataset = None, instance: Ids = None,
        filter_: Pattern = None, slice_: Span = None, store: StorePath = None,
        repo_mirror: Mirrors = None, call_deadline: CallDeadline = None,
        test_timeout: TestTimeout = None,
    ) -> None:
        """Run the agent from the start of each task; cut Phase A histories at --boundary."""
        rules = [parse_rule(text) for text in boundary or []]
        chosen = choose_instances(suite, dataset, instance or [], filter_, slice_)
        config = AgentConfig(max_steps=max_steps, temperature=temperature)
        code = collect_command(chosen, model, rules, config,
                               seed_index, store or default_store(),
                               repo_mirror, console, call_deadline, test_timeout)
        raise typer.Exit(code)
