"""Scripted models for `replay probe`: a reader that answers from what its context shows, an
evidence judge that scores the units holding a probe's facts, and a summarizer that drops them.

- `reader`: for each probe, the expected facts when every needle of the probe (its expected
  strings, or its numbers when it has no string) is somewhere in the request's messages; else
  an answer that knows nothing. So Full scores 1.0 and a summary that lost the needles less.
- `judge`: for each history (recognized by its task), 9 for every unit holding a needle of its
  probes, 1 for the others.
- `summ-drop`: a summary that keeps the gist and drops every needle.
"""

from __future__ import annotations

import json
from pathlib import Path

from replay.compaction.fusion import JUDGE_ASK, evidence_units
from replay.histories.records import bundled_history
from replay.instances.records import Instance, load_suite
from replay.measures.probes.answering import probe_message
from replay.measures.probes.files import Probe, ProbeSet, bundled_probes, leaves
from replay.models.scripts import Script
from replay.records.history import History

DROPPED = ("<analysis>Read everything.</analysis><summary>The agent read the task's files, logs "
           "and outputs, found where the fix belongs and has not edited anything yet. Next: "
           "make the fix and run the tests.</summary>")


def panel(*suites: str) -> list[tuple[Instance, History, ProbeSet]]:
    """The bundled histories of `suites` with their probes."""
    found = []
    for suite in suites:
        for instance in load_suite(suite).instances:
            history, probes = bundled_history(instance), bundled_probes(instance)
            assert history is not None and probes is not None
            found.append((instance, history, probes))
    return found


def needles(probe: Probe) -> list[str]:
    """What a reader must see to know a probe's facts."""
    found = leaves(probe.expected)
    strings = [leaf for leaf in found if isinstance(leaf, str)]
    return strings or [json.dumps(leaf) for leaf in found]


def reader_scripts(items: list[tuple[Instance, History, ProbeSet]]) -> list[Script]:
    scripts = []
    for _, history, probes in items:
        shown = "\n".join(str(m.get("content") or "") for m in history.messages)
        for probe in probes.probes:
            seen = [text for text in needles(probe) if text in shown]  # not a derived value
            knows = {"content": json.dumps({"facts": probe.expected})}
            guesses = {"content": json.dumps({"facts": {name: "unknown"
                                                        for name in probe.fields}})}
            asked = str(probe_message(probe)["content"])  # the question and its fields
            scripts += [Script([knows], model="reader", contains=asked, seen=seen),
                        Script([guesses], model="reader", contains=asked)]
    return scripts


def judge_scripts(items: list[tuple[Instance, History, ProbeSet]]) -> list[Script]:
    scripts = []
    for instance, history, probes in items:
        wanted = [text for probe in probes.probes for text in needles(probe)]
        scores = {str(unit.position): 9 if any(text in unit.text for text in wanted) else 1
                  for unit in evidence_units(history.messages)}
        scripts.append(Script([{"content": json.dumps({"scores": scores})}], model="judge",
                              contains=JUDGE_ASK, seen=[instance.problem_statement[:80]]))
    return scripts


def summarizer_scripts() -> list[Script]:
    return [Script([{"content": DROPPED}], model="summ-drop")]


def models_file(home: Path, base_url: str) -> dict[str, str]:
    """Aliases reader, judge, summ-drop and agent on the scripted server, in a user models file
    under `home`; returns the environment that uses it."""
    tables = [f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\nbase_url = "{base_url}"\n'
              for alias in ("reader", "judge", "summ-drop", "agent")]
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tables))
    return {"HOME": str(home)}
