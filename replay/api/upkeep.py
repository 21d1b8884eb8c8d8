"""Upkeep around the protocol: what crashed engines left behind, the model aliases and a check of
one model, the recipes' coverage of a dataset, and the web view's server."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from replay.api.results import existing_store
from replay.core.errors import InputError
from replay.instances.records import load_dataset, select
from replay.models.keys import key_is_set
from replay.models.registry import load_registry, resolve
from replay.models.types import ModelSpec

if TYPE_CHECKING:
    from replay.environments.recipes import Recipe
    from replay.judge.coverage import RowCheck
    from replay.report.web.server import ViewServer

SETTINGS = ("timeout", "deadline", "tool_choice", "temperature", "max_tokens", "extra_body")


@dataclass(frozen=True)
class Removed:
    """Docker containers removed and kept (their engine still going), and images removed."""

    containers: int
    kept: int
    images: int


def remove_containers(everything: bool = False, images: bool = False) -> Removed:
    """Remove replay's containers whose engine is gone (all of them with `everything`) and,
    with `images`, the images replay built (not the base image)."""
    from replay.environments.docker_engine import (
        OWNER,
        connect,
        owner_alive,
        replay_containers,
    )
    from replay.environments.docker_engine import (
        remove_containers as remove,
    )
    from replay.environments.docker_images import remove_images

    client = connect()
    found = replay_containers(client)
    doomed = [container for container in found
              if everything or not owner_alive(container.labels.get(OWNER, ""))]
    remove(client, [container.id for container in doomed])
    return Removed(len(doomed), len(found) - len(doomed), remove_images(client) if images else 0)


@dataclass(frozen=True)
class ModelRow:
    """One alias as listed. `key_set` is None when the model needs no key."""

    alias: str
    provider: str
    model: str
    base_url: str
    context_window: int | None
    price_in: float
    price_out: float
    key_env: str
    key_set: bool | None
    settings: str = ""
    price_cached_in: float = 0.0


def settings_text(spec: ModelSpec) -> str:
    """The settings a spec sets, as `name=value` (`-` when none)."""
    found = spec.model_dump(include=set(SETTINGS), exclude_defaults=True)
    return ", ".join(f"{name}={json.dumps(found[name]) if name == 'extra_body' else found[name]}"
                     for name in SETTINGS if found.get(name) is not None) or "-"


def models(user_file: Path | None = None) -> list[ModelRow]:
    """Every model alias (the built-ins and `user_file`'s), sorted; key values are never read
    out, only whether each is set."""
    registry = load_registry(user_file)
    return [
        ModelRow(alias, spec.provider, spec.model, spec.base_url, spec.context_window,
                 spec.price_in, spec.price_out, spec.key_env,
                 key_is_set(spec.key_env) if spec.key_env else None, settings_text(spec),
                 spec.cached_price())
        for alias, spec in sorted(registry.items())
    ]


def check_model(model: str, user_file: Path | None = None,
                note: Callable[[str], None] = lambda _: None) -> bool:
    """Try one model in a few small requests (tool calls, a summary, seeds, its context),
    saying each step to `note`; whether tool calls and summaries worked."""
    from replay.agent.tools import TOOLS
    from replay.models.check import check_model as check

    spec = resolve(model, user_file)
    note(f"checking {spec.alias} ({spec.provider}:{spec.model} at {spec.base_url})")
    return check(spec, TOOLS, note)


@dataclass(frozen=True)
class Coverage:
    """The rows checked now, and the coverage table (Markdown) with earlier checks counted."""

    outcomes: list[RowCheck]
    table: str

    @property
    def code(self) -> int:
        """0 when no row met a harness fault, else 1."""
        return 1 if any(outcome.status == "error" for outcome in self.outcomes) else 0


def check_recipes(dataset: str, repos: Sequence[str], k: int, store: Path,
                  mirrors: Path | None = None, jobs: int = 1,
                  on_row: Callable[[RowCheck], None] = lambda _: None,
                  note: Callable[[str], None] = lambda _: None) -> Coverage:
    """Validate `k` rows per repository and version of `dataset` with their derived recipes
    (each handed to `on_row` as it lands); the coverage table also counts the rows of earlier
    checks kept in the store with the same recipe."""
    from replay.judge.coverage import check_recipes as check
    from replay.judge.coverage import coverage_table, kept_outcomes, sample

    rows = load_dataset(dataset)
    chosen = sample(rows, list(repos), k)
    note(f"checking {len(chosen)} row(s): {k} per repository and version")
    outcomes = check(chosen, mirrors, store, jobs, on_row)
    mine = [row for row in rows if not repos or row.repo in repos]
    checked = {outcome.instance_id for outcome in outcomes}
    earlier = kept_outcomes([row for row in mine if row.instance_id not in checked], store,
                            mirrors)
    return Coverage(outcomes, coverage_table(mine, outcomes + earlier))


def recipe(dataset: str, instance_id: str,
           mirrors: Path | None = None) -> tuple[Recipe, list[str]]:
    """An instance's recipe, and the lines of its swebench spec that are not run here."""
    from replay.environments.recipes import derive_recipe

    instance = select(load_dataset(dataset), ids=[instance_id])[0]
    found, derived = derive_recipe(instance, mirrors=mirrors)
    return found, list(derived.dropped) if derived else []


def view_server(store: Path, run: str | None = None, host: str = "127.0.0.1",
                port: int = 8765) -> ViewServer:
    """A server of the web view of a run (default: the latest), bound and not yet serving;
    bad input when there is no such run or the address cannot be bound."""
    from replay.report.web.data import run_name
    from replay.report.web.server import ViewServer

    path = existing_store(store)
    name = run_name(path, run)
    try:
        return ViewServer(path, name, host, port)
    except OSError as exc:
        raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
