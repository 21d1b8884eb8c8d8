"""Build the probe panel (instances/probe-panel/) and the demo suite's probe files.

Each task is built as panel_build.py says; its probes are checked so that every expected fact
is shown by a tool output and by nothing else (the task, the agent's words and calls), that each
primary fact sits in an output of at least 2,000 characters and that a control's outputs stay
short.

    .venv/bin/python scripts/build_probe_panel.py            # (re)build the committed files
    .venv/bin/python scripts/build_probe_panel.py --check    # rebuild elsewhere, compare
"""

from __future__ import annotations

import sys
from pathlib import Path

from panel_build import build_suite, main, probe_set, write_probes
from panel_controls import envvar, port, version
from panel_demo import DEMO_PROBES
from panel_files import configdrift, grepsites, lockfile, pytestlog
from panel_fixtures import Task
from panel_logs import buildlog, incident, serverlog

from replay import api
from replay.api.blocks import History, ProbeSet, bundled_history, evidence_problems

TASKS = [buildlog, serverlog, incident, configdrift, pytestlog, lockfile, grepsites,
         version, port, envvar]
SUITE = "probe-panel"
PRIMARY_OUTPUT = 2_000
DESCRIPTION = (
    "Ten evidence-retention tasks written for this project, in the shape of the study's panel: "
    "a small repository whose issue needs facts that only command outputs show, a Phase A "
    "history of a scripted agent running real commands on the fixture tree, stopped before any "
    "edit, and probes asking for those facts as strict JSON. Built by "
    "scripts/build_probe_panel.py. Each is also a real repair (gold patch, FAIL_TO_PASS), so "
    "sweeps run on it too.")
RULE = (
    "Cohorts fixed in each probes.json. primary (7): facts inside tool outputs of at least "
    "2,000 characters: a noisy build log with one error line, a server log with one error, an "
    "incident across three logs, two settings dumps, a verbose test run, a dependency check, a "
    "61-line search. control (3): short fixtures, every output under 2,000 characters in all.")


def shape_problems(found: ProbeSet, history: History) -> list[str]:
    """A primary fact outside every long output, or a control with long outputs."""
    outputs = [str(m.get("content") or "") for m in history.messages if m.get("role") == "tool"]
    if found.cohort == "control":
        total = sum(map(len, outputs))
        return [] if total < PRIMARY_OUTPUT else [f"{found.instance_id}: {total} characters"]
    if found.cohort != "primary":
        return []
    long = [text for text in outputs if len(text) >= PRIMARY_OUTPUT]
    return [f"{found.instance_id} {probe.id}.{name}: not in an output of 2,000+ characters"
            for probe in found.probes for name, value in probe.expected.items()
            if isinstance(value, str) and not any(value in text for text in long)]


def fact_problems(found: ProbeSet, history: History) -> list[str]:
    """A fact shown by anything but a tool output, or outside the cohort's shape."""
    return evidence_problems(found, history) + shape_problems(found, history)


def problems(_task: Task, found: ProbeSet, history: History) -> list[str]:
    """A panel task's problems: its facts' (the task itself adds none)."""
    return fact_problems(found, history)


def build(instances: Path) -> None:
    """Build the panel into `instances`/probe-panel and the demo probes into `instances`/demo."""
    build_suite([make() for make in TASKS], instances / SUITE, DESCRIPTION, RULE, problems)
    for instance in api.instances("demo"):
        history = bundled_history(instance)
        if history is None:
            raise SystemExit(f"{instance.instance_id} has no bundled history")
        folder = instances / "demo" / instance.instance_id
        folder.mkdir(parents=True, exist_ok=True)
        found = probe_set(instance.instance_id, history, "demo", DEMO_PROBES[instance.instance_id])
        write_probes(found, fact_problems(found, history), folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], __doc__, build, [SUITE]))
