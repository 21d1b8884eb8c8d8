"""`replay confirm` and `replay report`: what follows a sweep."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay.commands.options import (
    BaseImage,
    CallDeadline,
    Mirrors,
    StorePath,
    TestTimeout,
    console,
    existing_store,
    run_name,
    say,
)
from replay.commands.sweep import (
    Backend,
    Dollars,
    DryRun,
    Execution,
    Executor,
    PerProvider,
    RayAddress,
    Workers,
    checked_todo,
    execute_plan,
    print_estimate,
    prompt_loader,
)
from replay.compaction.summarize import parse_summarizer
from replay.core.errors import InputError
from replay.core.paths import default_store
from replay.models.registry import resolve
from replay.models.types import ModelSpec
from replay.records.plan import Plan
from replay.report.exports import reports_folder, write
from replay.report.tables import build, render
from replay.store import Store
from replay.sweep.budget import Budget
from replay.sweep.cells import prepare
from replay.sweep.confirm import confirm_pairs, fixed_samples
from replay.sweep.continuation import model_id
from replay.sweep.executors import check_executor
from replay.sweep.plan import check_timeout, latest_run, require_run

RunArgument = Annotated[str | None, typer.Argument(
    callback=run_name, help="Run name (default: the latest run).")]


def confirm_command(run: str | None, how: Execution, out: Console) -> int:
    """Re-run each damaged pair at seeds 1 and 2; 0 when no cell ended in an error, else 1.

    Pending seed-0 cells of the run are run too, and pairs they turn out damaged are confirmed
    in a second round. The run and its models are checked reading the store only; a dry run
    never writes to it.
    """
    if not how.dry_run:
        check_executor(how.executor, how.ray_address)
    with Store.peek(existing_store(how.store)) as seen:
        name = run or latest_run(seen)
        plan = require_run(seen, name)
        check_timeout(name, plan, how.test_timeout)
        if how.backend:
            plan = plan.model_copy(update={"backend": how.backend})
        agent = resolve(plan.agent)
        if model_id(agent) != plan.agent_id:
            raise InputError(f"the agent model {plan.agent!r} is now {model_id(agent)}, not "
                             f"{plan.agent_id} as when run {name!r} began")
        note = _greedy_note(plan, agent)
        if how.dry_run:
            return _confirm(seen, name, plan, agent, how, out, note)
    with Store.open(how.store) as store:
        return _confirm(store, name, plan, agent, how, out, note)


def _confirm(store: Store, name: str, plan: Plan, agent: ModelSpec, how: Execution,
             out: Console, note: str | None) -> int:
    def run_plan(plan: Plan) -> int:
        prepared = prepare(plan, agent, prompt_loader(plan), store)
        if how.dry_run:
            print_estimate(store, name, prepared, out)
            return 0
        return execute_plan(store, name, prepared, how, out, checked_todo(store, name, prepared),
                        show=False)

    plan, code = confirm_pairs(store, name, plan, how.dry_run, run_plan,
                               lambda line: say(out, line), note)
    if how.dry_run:
        return code
    if not plan.confirm:
        say(out, f"run {name}: no damaged pair to confirm")
    render(build(store, name), out)
    return code


def _greedy_note(plan: Plan, agent: ModelSpec) -> str | None:
    """What confirm says when the agent or a summarizer backbone samples at temperature 0."""
    backbones = {parse_summarizer(s).backbone for s in plan.summarizers} - {None}
    fixed = fixed_samples(plan, [agent, *(resolve(name) for name in sorted(backbones))])
    if not fixed:
        return None
    return (f"note: {', '.join(fixed)} sample(s) at temperature 0 (the run's temperature is "
            f"{plan.temperature:g}; a model's own `temperature` setting wins): a deterministic "
            "server answers seeds 1 and 2 as it answered seed 0 (a seed changes nothing without "
            "sampling), so these confirmation samples cannot differ and damage can only look "
            "stable")


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
        how = Execution(store or default_store(), workers, per_provider, backend, executor,
                        ray_address, repo_mirror, dry_run, base_image=base_image,
                        call_deadline=call_deadline, test_timeout=test_timeout,
                        budget=Budget.of(budget))
        raise typer.Exit(confirm_command(run, how, console))

    @app.command()
    def report(
        run: RunArgument = None, store: StorePath = None,
        out: Annotated[Path | None, typer.Option(
            help="Folder for the exports (default: reports/RUN beside the store).")] = None,
        cells: Annotated[bool, typer.Option(help="Also print the diagnostics per cell.")] = False,
        html: Annotated[Path | None, typer.Option(
            help="Also write the web view's pages (see `replay view`) into this folder.")] = None,
    ) -> None:
        """Print a run's outcome grid, damage rates and prompt table; write the exports."""
        for folder, option in ((out, "--out"), (html, "--html")):
            if folder is not None and folder.exists() and not folder.is_dir():
                raise InputError(f"{option} {folder} is a file: give a folder (made if "
                                 "missing)")
        with Store.peek(existing_store(store or default_store())) as opened:
            name = run or latest_run(opened)
            found = build(opened, name)
            render(found, console, cells=cells)
            for path in write(found, out or reports_folder(opened, name)):
                say(console, f"wrote {path}")
            if html is not None:
                from replay.report.web.pages import write_site

                pages = write_site(opened, name, html)
                say(console, f"wrote {len(pages)} files of the web view: open "
                             f"{html / 'index.html'}")

