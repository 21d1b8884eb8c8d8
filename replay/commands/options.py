"""Options shared by several commands, and the consoles they print to."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

console = Console()

Suite = Annotated[str, typer.Option(
    help="Suite: a bundled name (see instances/) or a folder holding a suite.toml.")]
Dataset = Annotated[str | None, typer.Option(
    help="SWE-bench records: a .json/.jsonl/.parquet file or a Hugging Face dataset name.")]
Ids = Annotated[list[str] | None, typer.Option("--instance", help="Instance id (repeatable).")]
Pattern = Annotated[str | None, typer.Option("--filter", help="Regex on instance ids.")]
Span = Annotated[str | None, typer.Option("--slice", help="START:STOP of the selection.")]
StorePath = Annotated[Path | None, typer.Option(
    "--store", help="SQLite results file (default runs/replay.db).")]
Mirrors = Annotated[Path | None, typer.Option(
    "--repo-mirror", help="Folder of bare git mirrors (full history) instead of GitHub.")]
BackendName = Annotated[str, typer.Option(
    "--backend", help="Where commands run: local (namespaces on this machine) or docker.")]
BaseImage = Annotated[str | None, typer.Option(
    "--base-image", help="docker: the image environments are built on (default "
                         "replay-base:bookworm, from scripts/build-base-image.sh).")]
