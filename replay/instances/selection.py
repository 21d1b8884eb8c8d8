"""Turn the command line's selection options into a list of instances."""

from __future__ import annotations

from collections.abc import Sequence

from replay.errors import InputError
from replay.instances.records import Instance, load_dataset, load_suite, select


def choose_instances(suite: str, dataset: str | None, ids: Sequence[str],
                     pattern: str | None, span: str | None) -> list[Instance]:
    """Instances from `--dataset` if given, else from the suite; narrowed by id, regex, slice."""
    rows = load_dataset(dataset) if dataset else load_suite(suite).instances
    chosen = select(rows, ids=ids, pattern=pattern, span=span)
    if not chosen:
        raise InputError("the selection is empty: no instance matches")
    return chosen
