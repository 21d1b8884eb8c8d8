"""`replay cell`: one cell (PRE or POST) on a restored snapshot, graded, for looking at one case.
`replay run`, its old name, still works for one release and says so on stderr.

Exit code 0 when the cell's tests pass, 1 when they fail (a refused request included) or the
harness failed; 2 for bad input and for faults that stop every call (see `replay.cli`).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from replay import api
from replay.commands.options import (
    BackendName,
    BaseImage,
    CallDeadline,
    Dataset,
    Mirrors,
    SeedIndex,
    StorePath,
    Suite,
    TestTimeout,
    console,
    make_console,
    one_history_id,
    printed,
    say,
)
from replay.core.limits import MAX_STEPS, MAX_TEMPERATURE
from replay.core.paths import default_store
from replay.core.vocab import CellStatus
from replay.records.plan import DEFAULT_TEMPERATURE

DEPRECATED = ("warning: `replay run` is now `replay cell` (a run is a sweep kept in the "
              "store); the old name goes in the next release")


def show(ran: api.CellRun, out: Console) -> None:
    """What came of the cell: its summary, verdict, refusal, diagnostics and trace."""
    result, cell = ran.result, ran.cell
    if ran.summary_chars is not None:
        say(out, f"summary ({ran.summary_chars} chars) kept as {result.summary[:12]}")
    shown, style = (("error", "red") if result.status == CellStatus.ERROR else
                    ("tests pass", "green") if result.passed else
                    (f"tests timed out after {result.timed_out:g} s", "yellow")
                    if result.timed_out is not None else ("tests fail", "yellow"))
    out.print(Text.assemble(f"{cell.instance_id} {cell.arm}: ", (shown, style),
                            f" {result.fault.text()}" if result.fault else ""),
                  soft_wrap=True)
    if result.refused:
        say(out, f"  {result.refused}")
    if result.status == CellStatus.ERROR:
        return
    found = result.diagnostics
    if found.get("summary_invalid"):
        say(out, f"  the summary breaks its method's rules: {found['summary_invalid']}")
    say(out, f"  steps {found['steps']}, actions {found['actions']}, exit "
             f"{found['exit_reason']}, edited {', '.join(found['files_edited']) or 'nothing'}")
    if ran.trace is not None:
        reused = " (kept in the store)" if result.reused else ""
        say(out, f"  trace {ran.trace}{reused}")


def register(app: typer.Typer) -> None:
    """Add `replay cell`, and its old name `replay run` (hidden), to the command line."""

    def cell(
        instance: Annotated[str, typer.Option("--instance", help="Instance id.")],
        arm: Annotated[str, typer.Option(help="pre (full history) or post (a summary).")],
        agent_model: Annotated[str, typer.Option(
            help="The continuation agent: an alias or "
                 "PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS].")],
        summarizer: Annotated[str | None, typer.Option(
            help="For post: MODEL:PROMPT, anchor_index, observation-masking or tail:N.")] = None,
        carrier: Annotated[str, typer.Option(help="summary-only or native.")] = "summary-only",
        steps: Annotated[int, typer.Option(min=1, max=MAX_STEPS, help="Step limit.")] = 8,
        seed_index: SeedIndex = 0,
        temperature: Annotated[float, typer.Option(
            min=0, max=MAX_TEMPERATURE,
            help="What the agent and the summarizer sample at (a model's own "
                        "temperature setting wins).")] = DEFAULT_TEMPERATURE,
        suite: Suite = "demo", dataset: Dataset = None, store: StorePath = None,
        repo_mirror: Mirrors = None, backend: BackendName = "local", base_image: BaseImage = None,
        history: Annotated[str | None, typer.Option(
            callback=one_history_id,
            help="The id (or a prefix) of a history kept in the store by `replay collect` or "
                 "`replay import`; "
                 "default: the instance's bundled history.")] = None,
        history_rule: Annotated[str | None, typer.Option(
            help="Pick the history kept in the store that this boundary rule cut, e.g. "
                 "steps:6.")] = None,
        call_deadline: CallDeadline = None, test_timeout: TestTimeout = None,
    ) -> None:
        """Run one continuation on a restored snapshot and grade it (for debugging one case)."""
        options = api.CellOptions(
            arm=arm, agent_model=agent_model, summarizer=summarizer, carrier=carrier,
            steps=steps, seed_index=seed_index, history_id=history, history_rule=history_rule,
            call_deadline=call_deadline, temperature=temperature, test_timeout=test_timeout)
        chosen = api.instances(suite, dataset, [instance])[0]
        ran = api.run_cell(chosen, options, store or default_store(), mirrors=repo_mirror,
                           backend=backend, base_image=base_image, listener=printed)
        show(ran, console)
        raise typer.Exit(ran.code)

    @functools.wraps(cell)
    def run(**options: Any) -> None:
        say(make_console(stderr=True), DEPRECATED)
        cell(**options)

    app.command("cell")(cell)
    app.command("run", hidden=True)(run)
