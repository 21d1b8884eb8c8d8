"""What a probe run loads: the probes of the histories of a run's instances."""

from __future__ import annotations

from replay.core.errors import InputError
from replay.instances.records import Instance
from replay.measures.probes.files import ProbeSet, probes_for
from replay.records.history import History


def load_probes(instances: dict[str, Instance], histories: dict[str, History],
                given: list[ProbeSet]) -> tuple[dict[str, ProbeSet], list[str]]:
    """The probes of each instance's history (bundled, or `given`), and the instances left out
    because their history has none. Bad input: a probe file for another history or for an
    instance not selected, or no probe at all."""
    probes: dict[str, ProbeSet] = {}
    skipped = []
    for instance_id, instance in instances.items():
        found = probes_for(instance, histories[instance_id], given)
        if found is None:
            skipped.append(instance_id)
        else:
            probes[instance_id] = found
    strays = sorted({g.instance_id for g in given} - set(instances))
    if strays:
        raise InputError(f"probes given for {', '.join(strays)}, which the selection does not "
                         "hold")
    if not probes:
        raise InputError("no history of the selection has probes (bundled probes.json beside "
                         "a history, or --probes FILE)")
    return probes, skipped
