"""Scripted models for sweeps on the demo suite, and fixture compaction prompts.

The agent's replies depend only on what its request says, never on the order of requests, so
cells can run in any order, on any number of workers:

- a POST whose summary holds LOST (the summary of a summarizer that lost the thread) fixes tally
  only: stockroom is damaged, iniconf stays unsolved, tally is preserved;
- any other POST fixes whichever demo repository it is in;
- PRE gives up on iniconf (PRE fails there) and fixes the others.

Each continuation is one request: one step that runs the fix in bash and finishes.
"""

from __future__ import annotations

import base64
import functools
import json
import shlex
from pathlib import Path

from replay.compaction.sources import PromptText, save_prompt, text_sha256
from replay.instances.records import Instance, load_suite
from replay.models.scripts import Script

from agent_scripts import gold_files

DEMO = {instance.instance_id: instance for instance in load_suite("demo").instances}
STOCKROOM, TALLY, INICONF = (f"replay-demo__{name}-1" for name in ("stockroom", "tally", "iniconf"))


def summary(model: str, good: bool, prompt: str = "") -> dict:
    """A scripted summary, distinct for each model and prompt (so no two POSTs are the same)."""
    verdict = "PLAN-OK: finish the repair that was started" if good else "LOST: nothing found"
    return {"content": f"<summary>{verdict} ({model} {prompt}).</summary>"}


RESUMED = "You already worked on this issue before"
PROMPT_MARKERS = {"claude-code": "CLAUDE-FIXTURE", "codex": "CODEX-FIXTURE",
                  "gemini-cli": "GEMINI-FIXTURE", "opencode": "OPENCODE-FIXTURE",
                  "kimi-code": "KIMI-FIXTURE"}


def call(name: str, **arguments: object) -> dict:
    return {"function": {"name": name, "arguments": arguments}}


@functools.cache
def _gold(instance_id: str, scratch: Path) -> dict[str, str]:
    return gold_files(DEMO[instance_id], scratch / "gold")


def fix_command(instances: list[Instance], scratch: Path, sleep: float = 0) -> str:
    """A bash command that writes the gold files of whichever of `instances` it runs in."""
    parts = [f"sleep {sleep}"] if sleep else []
    for instance in instances:
        files = _gold(instance.instance_id, scratch)
        top = next(iter(files)).split("/")[0]
        writes = "; ".join(
            f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > {shlex.quote(name)}"
            for name, text in files.items())
        parts.append(f"if [ -d {top} ]; then {writes}; fi")
    return "; ".join(parts) + "; true"


def fix_turn(instances: list[Instance], scratch: Path, sleep: float = 0) -> dict:
    """One step: run the fix, then finish."""
    return {"content": "Fixing.", "tool_calls": [
        call("bash", command=fix_command(instances, scratch, sleep)),
        call("finish", summary="done")]}


GIVE_UP = {"content": "Giving up.", "tool_calls": [call("finish", summary="nothing to do")]}


def agent_scripts(scratch: Path, lost_sleep: float = 0, sleeping: int = 1) -> list[Script]:
    """The continuation agent (model `agent`); `lost_sleep` slows the command of the first
    `sleeping` LOST POSTs the server answers (up to the one a test interrupts: those after it,
    as a run that resumes, need not wait)."""
    everything = list(DEMO.values())
    return [
        Script([fix_turn([DEMO[TALLY]], scratch, lost_sleep)] * sleeping, model="agent",
               contains="LOST", default=fix_turn([DEMO[TALLY]], scratch)),
        Script([fix_turn(everything, scratch)], model="agent", contains=RESUMED),
        Script([GIVE_UP], model="agent", contains="InterpolationError when reading"),
        Script([fix_turn(everything, scratch)], model="agent"),
    ]


def summarizer_scripts() -> list[Script]:
    """summ-a writes good summaries except with the codex prompt; summ-b always loses the
    thread; summ-c loses it for its first three summaries (seed 0 of the three instances) and
    writes good ones after (the confirmation runs)."""
    by_prompt = [Script([summary("summ-a", name != "codex", name)], model="summ-a",
                        contains=marker) for name, marker in PROMPT_MARKERS.items()]
    return [
        *by_prompt,
        Script([summary("summ-a", True)], model="summ-a"),
        Script([summary("summ-b", False)], model="summ-b"),
        Script([summary("summ-c", False)] * 3, model="summ-c", default=summary("summ-c", True)),
    ]


def fixture_prompts(folder: Path) -> Path:
    """Save a fixture text for each of the five prompts in the replay home and write the
    catalogue that pins them; return the catalogue's path."""
    entries = []
    for name, marker in PROMPT_MARKERS.items():
        text = f"{marker}: summarize the conversation so far in <summary> tags."
        parts = {"system": text} if name == "gemini-cli" else {"user": text}
        if name == "opencode":
            parts["system"] = "You summarize coding sessions."
        if name == "codex":
            parts["summary-prefix"] = "Another model worked on this task; its summary:"
        save_prompt(PromptText(name=name, agent=name, registry="npm", package=f"fixture-{name}",
                               version="0.0.0", digest="sha512-fixture", parts=parts,
                               synced_at="2026-01-01T00:00:00Z"))
        entries.append(_catalogue_entry(name, parts))
    path = folder / "sources.toml"
    path.write_text("\n".join(entries))
    return path


def _catalogue_entry(name: str, parts: dict[str, str]) -> str:
    lines = ["[[prompt]]", f'name = "{name}"', 'agent = "fixture"', 'license = "test"',
             'registry = "npm"', f'package = "fixture-{name}"', 'version = "0.0.0"',
             'digest = "sha512-fixture"']
    for role, text in parts.items():
        lines += ["[[prompt.part]]", f'role = "{role}"', 'file = "prompt.txt"',
                  f"chars = {len(text)}", f"sha256 = {json.dumps(text_sha256(text))}",
                  "[[prompt.part.cut]]", 'kind = "file"']
    return "\n".join(lines) + "\n"


def models_file(home: Path, base_url: str) -> dict[str, str]:
    """Aliases agent, summ-a, summ-b, summ-c on the scripted server (and `keyed`, whose key is
    never set) in a user models file under `home`; returns the environment that uses it."""
    tables = []
    for alias in ("agent", "summ-a", "summ-b", "summ-c", "keyed"):
        key = 'key_env = "REPLAY_TEST_UNSET_KEY"\n' if alias == "keyed" else ""
        tables.append(f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\n'
                      f'base_url = "{base_url}"\n{key}price_in = 1.0\nprice_out = 2.0\n')
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tables))
    return {"HOME": str(home), "REPLAY_TEST_UNSET_KEY": ""}


def models_env(home: Path, tables: dict[str, tuple[str, str]]) -> dict[str, str]:
    """A user models file: alias -> (base URL, extra TOML lines); the environment using it."""
    path = home / ".config" / "replay" / "models.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(f'["{alias}"]\nprovider = "openai"\nmodel = "{alias}"\n'
                              f'base_url = "{url}"\n{extra}\n'
                              for alias, (url, extra) in tables.items()))
    return {"HOME": str(home)}
