"""Short display names for a run's summarizers, and the legend that spells them out.

An ad-hoc model spec (`openai:name@http://host:port/v1#KEY?...`) is 100-150 characters: as a
column head it hides the table. A model is shown by its `label` setting (in the spec or in
models.toml), else by its alias, else (ad hoc) by its model name plus the settings that tell it
apart from the other columns' models. A prompt sweep's columns are headed by their prompt and a
backbone sweep's by their model, the shared part said once; the legend gives every full name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from replay.compaction.summarize import SummarizerName
from replay.core.errors import InputError
from replay.models.registry import resolve
from replay.models.types import ModelSpec

SHOWN_SETTINGS = ("temperature", "max_tokens", "tool_choice", "timeout", "deadline")


def _spec(backbone: str) -> ModelSpec | None:
    try:
        return resolve(backbone)
    except InputError:  # an alias of another machine's models.toml: shown as it is
        return None


def _traits(spec: ModelSpec) -> dict[str, str]:
    """What may tell two ad-hoc models apart, in the order shown."""
    where = urlsplit(spec.base_url)
    found = {"at": where.netloc + (where.path.rstrip("/") if where.path not in ("", "/v1")
                                   else "")}
    for name in SHOWN_SETTINGS:
        if getattr(spec, name) is not None:
            found[name] = str(getattr(spec, name))
    for name, value in sorted(spec.extra_body.items()):
        found[name] = str(value)
    return found


def model_names(backbones: Sequence[str]) -> dict[str, str]:
    """backbone -> its short name (see the module docstring); distinct where the backbones are."""
    specs = {backbone: _spec(backbone) for backbone in dict.fromkeys(backbones)}
    shown: dict[str, str] = {}
    for backbone, spec in specs.items():
        if spec is None or spec.label:
            shown[backbone] = spec.label if spec else backbone
        elif not backbone.startswith(f"{spec.provider}:"):  # an alias of models.toml
            shown[backbone] = backbone
        else:
            shown[backbone] = spec.model
    by_name: dict[str, list[str]] = {}
    for backbone, name in shown.items():
        by_name.setdefault(name, []).append(backbone)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        traits = {b: _traits(specs[b]) if specs[b] else {} for b in same}
        keys = list(dict.fromkeys(key for found in traits.values() for key in found))
        differing = [key for key in keys
                     if len({found.get(key) for found in traits.values()}) > 1]
        for backbone in same:
            extra = " ".join(f"{key}={traits[backbone].get(key, '-')}" for key in differing)
            shown[backbone] = f"{name} {extra}".strip() if extra else backbone
    return shown


def _short(name: SummarizerName, models: dict[str, str]) -> str:
    if name.fused is not None:
        base = _short(name.fused.base, models)
        return f"{base}+top:{name.fused.top}@{models.get(name.fused.judge, name.fused.judge)}"
    if name.backbone is None:
        return name.name
    return f"{models.get(name.backbone, name.backbone)}:{name.prompt}"


def display_names(names: Mapping[str, SummarizerName],
                  kind: str) -> tuple[dict[str, str], str]:
    """summarizer -> its column name, and what the columns share (`model X`, `prompt P` or "").

    `names` are the summarizers, parsed (`parse_summarizers`). A prompt sweep with one model is
    headed by prompts, a sweep with one prompt by models; baselines and fused summarizers keep
    their own (shortened) names.
    """
    backbones = [b for n in names.values() for b in (n.backbone, n.fused.judge if n.fused
                                                     else None) if b]
    models = model_names(backbones)
    shown = {s: _short(n, models) for s, n in names.items()}
    plain = {s: n for s, n in names.items() if n.backbone and n.prompt and n.fused is None}
    used = {n.backbone for n in plain.values()}
    prompts = {n.prompt for n in plain.values()}
    by_prompt = len(used) == 1 and (len(prompts) > 1 or kind == "prompt")
    shared = ""
    if plain and (by_prompt or len(prompts) == 1):
        for s, n in plain.items():
            shown[s] = str(n.prompt) if by_prompt else models[str(n.backbone)]
        shared = (f"model {models[used.pop()]}" if by_prompt else f"prompt {prompts.pop()}")
    if len(set(shown.values())) < len(shown):  # two columns would read alike: full names
        return {s: s for s in names}, ""
    return shown, shared


def legend_lines(names: dict[str, str]) -> list[str]:
    """One line per column whose shown name is not its full name: `kimi = openai:...`."""
    return [f"{shown} = {full}" for full, shown in names.items() if shown != full]
