"""`replay clean`: remove what crashed engines left behind (Docker containers and images)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from replay import api
from replay.commands.options import console


def clean_command(everything: bool, images: bool, console: Console) -> int:
    """Remove replay's containers whose process is gone (all of them with `everything`)."""
    removed = api.remove_containers(everything, images)
    note = (f" (kept {removed.kept} of engines still going; --all removes them too)"
            if removed.kept else "")
    console.print(f"removed {removed.containers} container(s){note}", highlight=False)
    if images:
        console.print(f"removed {removed.images} image(s)", highlight=False)
    return 0


def register(app: typer.Typer) -> None:
    """Add `replay clean` to the command line."""

    @app.command()
    def clean(
        all_: Annotated[bool, typer.Option(
            "--all", help="Also remove the containers of replay engines still going.")] = False,
        images: Annotated[bool, typer.Option(
            help="Also remove the images replay built (not the base image).")] = False,
    ) -> None:
        """Remove what crashed engines left behind: the Docker containers (labelled replay=1)."""
        raise typer.Exit(clean_command(all_, images, console))
