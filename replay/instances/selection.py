"""Turn the command line's selection options into a list of instances."""

from __future__ import annotations

from collections.abc import Sequence

from replay.core.errors import InputError
from replay.instances.records import (
    Instance,
    is_dataset_backed,
    load_dataset,
    load_suite,
    select,
)


def choose_instances(suite: str, dataset: str | None, ids: Sequence[str],
                     pattern: str | None, span: str | None) -> list[Instance]:
    """The suite's instances, narrowed by id, regex and slice.

    With `dataset`, a suite that reads its instances from a dataset (its suite.toml names one,
    as compact-bench does) reads its rows from `dataset` instead; any other suite (the demo,
    the default) is replaced by all of the dataset's records.
    """
    if dataset and not is_dataset_backed(suite):
        rows = load_dataset(dataset)
    else:
        rows = load_suite(suite, dataset).instances
    chosen = select(rows, ids=ids, pattern=pattern, span=span)
    if not chosen:
        raise InputError("the selection is empty: no instance matches")
    return chosen
