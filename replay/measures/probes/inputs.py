"""What a probe run loads: the prepared cells of a run, and the probes of its histories."""

from __future__ import annotations

from replay.core.errors import InputError
from replay.measures.probes.answering import Inputs
from replay.measures.probes.files import ProbeSet, probes_for
from replay.sweep.cells import Prepared


def load_inputs(prepared: Prepared, given: list[ProbeSet]) -> tuple[Inputs, list[str]]:
    """The inputs of a probe run, and the instances left out because their history has no
    probes. Bad input: a probe file for another history or for an instance not selected, or no
    probe at all."""
    probes: dict[str, ProbeSet] = {}
    skipped = []
    for instance_id, instance in prepared.instances.items():
        found = probes_for(instance, prepared.histories[instance_id], given)
        if found is None:
            skipped.append(instance_id)
        else:
            probes[instance_id] = found
    strays = sorted({g.instance_id for g in given} - set(prepared.instances))
    if strays:
        raise InputError(f"probes given for {', '.join(strays)}, which the selection does not "
                         "hold")
    if not probes:
        raise InputError("no history of the selection has probes (bundled probes.json beside "
                         "a history, or --probes FILE)")
    return Inputs(prepared, probes), skipped
