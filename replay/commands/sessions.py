"""`replay sessions collect`: a corpus of real sessions from repositories' checkpoint branches."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from replay.commands.inputs import PathKind, path_option
from replay.commands.options import console
from replay.corpus.collect import check_out, collect


def register(app: typer.Typer) -> None:
    """Add `replay sessions` and its `collect` command to the command line."""
    group = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="Real sessions of production agents.")
    app.add_typer(group, name="sessions")

    @group.command("collect")
    def collect_command(
        sources: Annotated[list[str], typer.Argument(
            metavar="REPO_OR_URL...",
            help="Git repositories (a clone, a bare mirror, or a git URL) whose "
                 "entire/checkpoints/v1 branch holds session transcripts.")],
        out: Annotated[Path, path_option(
            PathKind.OUTPUT_FOLDER, "--out",
            help="A new folder for the corpus: one redacted file per session, "
                 "corpus.toml and PROVENANCE.tsv.")],
    ) -> None:
        """Collect one redacted file per session from repositories' checkpoint branches."""
        check_out(out)
        found = collect(sources, out, lambda line: console.print(escape(line), highlight=False))
        entries = found.entries
        boundaries = sum(entry.boundaries or 0 for entry in entries)
        incomplete = sum(1 for entry in entries if not entry.complete)
        console.print(f"wrote {len(entries)} session(s) with {boundaries} compaction "
                      f"boundaries to {escape(str(out))} ({incomplete} incomplete: a shard's "
                      "transcript is missing)", highlight=False)
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(found.redacted.items()))
        scored = sum(found.scored.values())
        console.print(f"redacted: {kinds or 'nothing'}; {scored} of them were values retention "
                      "scores as details (see corpus.toml)", highlight=False)
