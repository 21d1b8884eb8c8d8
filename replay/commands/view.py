"""`replay view`: serve a run's grid, cells, traces and model calls as a local web page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.options import StorePath, console, say
from replay.core.paths import default_store


def view_command(run: str | None, store_path: Path, host: str, port: int, out: Console) -> int:
    """Serve the pages of run `run` (the latest when None) until interrupted."""
    server = api.view_server(store_path, run, host, port)  # bad input: one line, exit 2
    with server:
        say(out, f"serving run {server.run} of {server.store_path} at {server.url} "
                 "(Ctrl-C stops)")
        if not server.loopback:
            say(out, f"warning: {host} is reachable from other machines, and the pages show "
                     "every prompt, trace and test log of the run", style="yellow")
        server.serve_forever()
    return 0


def register(app: typer.Typer) -> None:
    @app.command()
    def view(
        run: Annotated[str | None, typer.Argument(
            help="The run to show (default: the latest).")] = None,
        store: StorePath = None,
        host: Annotated[str, typer.Option(
            help="Address to listen on; the default answers this machine only.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=0, max=65535,
                                          help="Port (0: any free one).")] = 8765,
    ) -> None:
        """Serve a run as a web page: the grid, and per cell the summary, PRE and POST side by
        side, the tests and the model calls. Reads the store only."""
        raise typer.Exit(view_command(run, store or default_store(), host, port, console))
