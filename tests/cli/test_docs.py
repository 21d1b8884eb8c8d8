"""The documentation covers the command line: every command and every option of `replay --help`
appears in README.md or docs/, and every `replay ...` command the pages show exists (its
`--help` runs)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import typer
from click.testing import CliRunner

from replay import cli

from paths import ROOT

ROOT = ROOT
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@functools.cache
def command_tree() -> click.Group:
    """The `replay` command as click sees it, every command registered."""
    cli._register_commands()
    return typer.main.get_command(cli.app)


def code_of(page: Path) -> str:
    """The code of a page: its fenced blocks and inline code spans."""
    text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))
    return "\n".join(blocks + spans)


def commands(group: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every command path under `group`, groups included (`("prompts", "sync")`)."""
    if path:
        yield path
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            yield from commands(sub, (*path, name))


def command_at(group: click.Command, path: tuple[str, ...]) -> click.Command:
    for name in path:
        group = group.commands[name]
    return group


def docs_text() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def test_every_command_and_option_is_documented() -> None:
    text, tree = docs_text(), command_tree()
    missing = []
    for path in commands(tree):
        name = "replay " + " ".join(path)
        if not mentions(text, name):
            missing.append(name)
        for param in command_at(tree, path).params:
            missing += [f"{name} {opt}" for opt in param.opts
                        if opt.startswith("--") and not mentions(text, opt)]
    assert missing == [], f"not in README.md or docs/: {missing}"


def documented_commands() -> list[tuple[str, ...]]:
    """The command paths that the pages' code runs: `replay X [Y]` in blocks and spans."""
    known = set(commands(command_tree()))
    found: set[tuple[str, ...]] = set()
    for page in PAGES:
        for words in re.findall(r"(?:^|[\s/])replay ([a-z][a-z-]*(?: [a-z][a-z-]*)?)",
                                code_of(page), re.M):
            parts = tuple(words.split())
            path = parts if parts in known else parts[:1]
            found.add(path)
    return sorted(found)


@pytest.mark.parametrize("path", documented_commands(), ids=" ".join)
def test_every_documented_command_runs(path: tuple[str, ...]) -> None:
    done = CliRunner().invoke(command_tree(), [*path, "--help"], prog_name="replay")
    assert done.exit_code == 0, f"replay {' '.join(path)}: {done.output}"
    assert "Usage:" in done.output


def test_the_pages_link_to_pages_that_exist() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if not (page.parent / target).is_file():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []
