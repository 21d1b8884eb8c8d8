"""Which Phase A history each instance of a run continues from.

A run chooses once, when an instance joins it, and records the choice in its plan
(`Plan.histories`: the history's content id, boundary rule, dialect, model, source and
provenance). Every later invocation of the run (a resume, `replay confirm`, `replay retention`)
continues from that same history, and another choice for an instance already in the run is
refused (`bind_run`). A run stored before histories were recorded records its choice when it
next runs.

The choice (`choose_histories`):

- `--history ID` (repeatable) names a history by its content id or a prefix of it, a stored one
  (`replay collect`, `replay import`) or one bundled with an instance of the selection; it is
  the history of the instance it belongs to.
- `--history-rule RULE` chooses, for every instance no id names, its stored history cut by RULE.
- Without either, an instance continues from its bundled history, else from its one stored
  history (`find_history`).

An id that matches no history, or histories of several, one whose instance is not selected, two
for one instance, and a rule that matches none or several histories of an instance are bad input.
"""

from __future__ import annotations

from collections.abc import Sequence

from replay.core.errors import InputError
from replay.histories.records import bundled_history, find_history
from replay.instances.records import Instance
from replay.records.history import History
from replay.records.plan import Plan, PlannedHistory
from replay.store import Store
from replay.store.histories import StoredHistory, load_history, stored_histories


def planned(history: History, bundled: bool) -> PlannedHistory:
    """What a plan records of the history an instance continues from."""
    return PlannedHistory(instance_id=history.instance_id, id=history.content_id(),
                          rule=history.boundary.rule, dialect=history.dialect,
                          model=history.model, source=history.source, bundled=bundled,
                          provenance=history.provenance)


def choose_histories(instances: Sequence[Instance], store: Store, ids: Sequence[str] = (),
                     rule: str | None = None) -> tuple[PlannedHistory, ...]:
    """The history of each instance, chosen by `ids` and `rule` (see the module docstring)."""
    named = _named(instances, store, ids)
    chosen = []
    for instance in instances:
        bundled = bundled_history(instance)
        history = named.get(instance.instance_id)
        if history is None:
            history = (bundled if bundled is not None and rule is None
                       else find_history(instance, store=store, rule=rule))
        chosen.append(planned(history, _same(bundled, history)))
    return tuple(chosen)


def _same(bundled: History | None, history: History) -> bool:
    """Whether `history` is the instance's bundled one."""
    return bundled is not None and bundled.content_id() == history.content_id()


def _named(instances: Sequence[Instance], store: Store, ids: Sequence[str]) -> dict[str, History]:
    selected = {instance.instance_id for instance in instances}
    found: dict[str, History] = {}
    for prefix in ids:
        history = _by_prefix(prefix, instances, store)
        ident = history.instance_id
        if ident not in selected:
            raise InputError(f"--history {prefix}: history {history.content_id()[:12]} is for "
                             f"instance {ident}, which is not in the selection")
        if ident in found and found[ident].content_id() != history.content_id():
            raise InputError(f"--history names two histories of instance {ident}: "
                             f"{found[ident].content_id()[:12]} and {history.content_id()[:12]}")
        found[ident] = history
    return found


def _by_prefix(prefix: str, instances: Sequence[Instance], store: Store) -> History:
    """The one history, bundled with a selected instance or stored, whose id starts `prefix`."""
    if not prefix.strip():
        raise InputError("--history needs a history id (or a prefix of one)")
    matches: dict[str, History | StoredHistory] = {}
    for instance in instances:
        bundled = bundled_history(instance)
        if bundled is not None and bundled.content_id().startswith(prefix):
            matches[bundled.content_id()] = bundled
    for row in stored_histories(store):
        if row.id.startswith(prefix):
            matches.setdefault(row.id, row)
    if not matches:
        raise InputError(f"--history {prefix}: no history bundled with the selected instances "
                         "or stored has this id (`replay collect` and `replay import` store "
                         "histories)")
    if len(matches) > 1:
        named = ", ".join(f"{ident[:12]} ({_instance(match)})"
                          for ident, match in sorted(matches.items()))
        raise InputError(f"--history {prefix}: {len(matches)} histories match: {named}; give "
                         "more of the id")
    match = next(iter(matches.values()))
    return match if isinstance(match, History) else load_history(store, match.id)


def _instance(match: History | StoredHistory) -> str:
    return match.instance_id


def history_of(plan: Plan, instance: Instance, store: Store | None,
               bundled: History | None = None) -> History:
    """The history run `plan` continues `instance` from: the one it recorded (bundled or
    stored, found by its content id), else, for a run that recorded none, the default choice.
    `bundled` is the instance's bundled history when the caller has read it already."""
    bundled = bundled or bundled_history(instance)
    recorded = plan.history_ids().get(instance.instance_id)
    if recorded is None:
        return bundled if bundled is not None else find_history(instance, store=store)
    if bundled is not None and bundled.content_id() == recorded:
        return bundled
    if store is not None:
        for row in stored_histories(store, instance.instance_id):
            if row.id == recorded:
                return load_history(store, row.id)
    raise InputError(f"the run continues {instance.instance_id} from history {recorded[:12]}, "
                     "which is neither bundled with it nor stored in this store any more")


def with_histories(plan: Plan, instances: Sequence[Instance],
                   store: Store | None) -> tuple[Plan, dict[str, History]]:
    """The histories `plan` continues `instances` from, and the plan with a record of each
    (those it had none for added); each bundled history is read once."""
    recorded = plan.history_ids()
    histories: dict[str, History] = {}
    added = []
    for instance in instances:
        bundled = bundled_history(instance)
        history = histories[instance.instance_id] = history_of(plan, instance, store, bundled)
        if instance.instance_id not in recorded:
            added.append(planned(history, _same(bundled, history)))
    if added:
        plan = plan.model_copy(update={"histories": (*plan.histories, *added)})
    return plan, histories
