"""Model aliases: the built-in table (models.toml beside this file), a user file, ad-hoc specs.

The user file (`~/.config/replay/models.toml` unless a path is given) has the built-in file's
shape, one table per alias. A table for a built-in alias overrides only the fields it sets; a
new alias must set provider, model and base_url.

An ad-hoc spec names a model on the command line without editing any file:

    PROVIDER:MODEL[@BASE_URL][#KEY_ENV][?SETTING=VALUE&...]

PROVIDER is `openai` (any chat-completions server) or `anthropic`. Without @BASE_URL the
provider's own endpoint and key variable are used (OPENAI_API_KEY, ANTHROPIC_API_KEY). With
@BASE_URL no key is sent unless #KEY_ENV names the variable that holds one. MODEL may contain
`/`, `:` and `@` but not `://`, `#`, `?` or spaces (only an `@` followed by http:// or https://
starts the URL); an `@` followed by what looks like an address without its scheme
(`@127.0.0.1:8000/v1`, `@localhost:8000`, `@http:/host`) is refused, since read as a model name
it would go to the provider's public endpoint. SETTINGs are the fields of a models.toml table
(`timeout`, `deadline`, `tool_choice`, `temperature`, `max_tokens`, `context_window`,
`price_in`, `price_out`, `price_cached_in`) and `extra_body.NAME` for a field added to every
request body (its VALUE read as JSON when it is JSON, else as text). Examples:

    openai:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1     (vLLM, SGLang)
    openai:qwen2.5:7b@http://127.0.0.1:11434/v1                   (Ollama)
    openai:smollm2@http://127.0.0.1:8080/v1?tool_choice=required&timeout=1800   (llama.cpp)
    openai:my-model@https://gateway.example.com/v1#GATEWAY_KEY
    anthropic:claude-opus-4-1-20250805

Ad-hoc specs have no context window and zero prices unless their settings give them.

A local GGUF file runs in process (`replay.models.gguf`): `gguf:PATH[?SETTING=VALUE&...]`, with
the settings above and `n_ctx` (the context it is loaded with: its context window), `threads`,
`decode_threads`, `parallel`, `gpu_layers`, `chat_template`, `widen`, `flash_attn`, e.g.

    gguf:/models/qwen2.5-coder-7b-instruct-q4_k_m.gguf?n_ctx=32768&threads=8
"""

from __future__ import annotations

import difflib
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replay.core.errors import InputError
from replay.models.types import ModelSpec

BUILTIN_FILE = Path(__file__).with_name("models.toml")

_ADHOC = re.compile(
    r"(?P<provider>openai|anthropic):(?P<model>(?:(?!://)[^#?\s])+?)"
    r"(?:@(?P<base_url>https?://[^#?\s]+))?(?:#(?P<key_env>[A-Za-z_][A-Za-z0-9_]*))?"
    r"(?:\?(?P<settings>\S+))?"
)
SETTINGS = ("timeout", "deadline", "tool_choice", "temperature", "max_tokens", "context_window",
            "price_in", "price_out", "price_cached_in", "label")
EXTRA = "extra_body."
_OFFICIAL = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": ("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
}
_GGUF = re.compile(r"gguf:(?P<path>[^?\s]+)(?:\?(?P<settings>\S+))?")
GGUF_SETTINGS = ("n_ctx", "threads", "decode_threads", "parallel", "gpu_layers",
                 "chat_template", "widen", "flash_attn")
_GRAMMAR = ("PROVIDER:MODEL[@BASE_URL][#KEY_ENV][?SETTING=VALUE&...], e.g. "
            "openai:Qwen2.5-7B@http://127.0.0.1:8000/v1")


def default_user_file() -> Path:
    """Where the user's own aliases live."""
    return Path("~/.config/replay/models.toml").expanduser()


def load_registry(user_file: Path | None = None) -> dict[str, ModelSpec]:
    """Every alias: built-in entries merged with the user file's (an explicit file must exist)."""
    tables = _read_tables(BUILTIN_FILE)
    sources = dict.fromkeys(tables, BUILTIN_FILE)
    path = user_file if user_file is not None else default_user_file()
    if user_file is not None and not user_file.is_file():
        raise InputError(f"models file not found: {user_file}")
    if path.is_file():
        for alias, fields in _read_tables(path).items():
            tables[alias] = {**tables.get(alias, {}), **fields}
            sources[alias] = path
    return {alias: _validate(alias, fields, sources[alias]) for alias, fields in tables.items()}


def resolve(name: str, user_file: Path | None = None) -> ModelSpec:
    """The spec for an alias or an ad-hoc spec string.

    Raises `InputError` for an unknown alias, listing close matches.
    """
    registry = load_registry(user_file)
    if name in registry:
        return registry[name]
    if name.startswith(tuple(f"{provider}:" for provider in _OFFICIAL)):
        return parse_adhoc(name)
    if name.startswith("gguf:"):
        return parse_gguf(name)
    close = difflib.get_close_matches(name, list(registry), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(
        f"unknown model {name!r}{hint} (`replay models` lists the aliases; "
        f"an ad-hoc model is written {_GRAMMAR})"
    )


def parse_adhoc(text: str) -> ModelSpec:
    """A spec from `PROVIDER:MODEL[@BASE_URL][#KEY_ENV][?SETTING=VALUE&...]` (see the module
    docstring)."""
    match = _ADHOC.fullmatch(text.strip())
    if match is None:
        raise InputError(f"not an ad-hoc model spec: {text!r}; expected {_GRAMMAR}")
    provider = match["provider"]
    official_url, official_key = _OFFICIAL[provider]
    if not match["base_url"]:
        _refuse_schemeless(text.strip(), match["model"], official_url)
    base_url = match["base_url"] or official_url
    key_env = match["key_env"] or ("" if match["base_url"] else official_key)
    fields = {"alias": text.strip(), "provider": provider, "model": match["model"],
              "base_url": base_url, "key_env": key_env,
              **_settings(text.strip(), match["settings"] or "")}
    try:
        return ModelSpec.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise InputError(f"model {text.strip()!r}: setting {field}: {first['msg']}") from None


def parse_gguf(text: str) -> ModelSpec:
    """A spec from `gguf:PATH[?SETTING=VALUE&...]` (see the module docstring)."""
    match = _GGUF.fullmatch(text.strip())
    if match is None:
        raise InputError(f"not a GGUF model spec: {text!r}; expected gguf:PATH[?n_ctx=N&...]")
    pairs = [pair.partition("=") for pair in filter(None, (match["settings"] or "").split("&"))]
    local = {"context_window" if name == "n_ctx" else name: value
             for name, _, value in pairs if name in GGUF_SETTINGS and value}
    rest = "&".join(f"{name}={value}" for name, _, value in pairs if name not in GGUF_SETTINGS)
    fields = {"alias": text.strip(), "provider": "gguf", "path": match["path"], **local,
              **_settings(text.strip(), rest)}
    try:
        return ModelSpec.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "path"
        raise InputError(f"model {text.strip()!r}: {field}: {first['msg']}") from None


def _refuse_schemeless(text: str, model: str, official_url: str) -> None:
    """A spec whose MODEL ends in `@` and something like an address (a dot, a colon, a slash,
    localhost) is a base URL written without its scheme, or with a mistyped one: read as a model
    name, it would send the request (and the key) to the provider's public endpoint. Model
    names with an `@` version (`claude-opus-4-1@20250805`) have none of these after it."""
    name, at, after = model.rpartition("@")
    if not at or not name or not (any(mark in after for mark in "./:")
                                  or after.startswith("localhost") or not after):
        return
    if not after:
        raise InputError(f"model {text!r}: nothing after '@': write @http://HOST:PORT/v1, or "
                         f"leave the '@' out for {official_url}")
    mistyped = re.match(r"[A-Za-z]*:?/+", after) is not None
    fix = "" if mistyped else f"; write @http://{after}"
    raise InputError(f"model {text!r}: {after!r} after '@' looks like a base URL without a "
                     f"well-formed http:// or https://{fix} (read as a model name, the request "
                     f"would go to {official_url})")


def _settings(text: str, query: str) -> dict[str, Any]:
    """The settings after `?`: spec fields by name, `extra_body.NAME` into the body."""
    fields: dict[str, Any] = {}
    for pair in filter(None, query.split("&")):
        name, equals, value = pair.partition("=")
        if not equals or not value:
            raise InputError(f"model {text!r}: setting {pair!r} needs a value: NAME=VALUE")
        if name.startswith(EXTRA) and len(name) > len(EXTRA):
            fields.setdefault("extra_body", {})[name.removeprefix(EXTRA)] = _json_or_text(value)
        elif name in SETTINGS:
            fields[name] = value
        else:
            raise InputError(f"model {text!r}: unknown setting {name!r}: use "
                             f"{', '.join(SETTINGS)} or {EXTRA}NAME")
    return fields


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def _read_tables(path: Path) -> dict[str, dict[str, Any]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read models file: {exc}") from None
    for alias, fields in data.items():
        if not isinstance(fields, dict):
            raise InputError(f"{path}: {alias!r} must be a table of model fields ([\"{alias}\"])")
    return data


def _validate(alias: str, fields: dict[str, Any], source: Path) -> ModelSpec:
    try:
        return ModelSpec.model_validate({**fields, "alias": alias})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "entry"
        problem = "missing" if first["type"] == "missing" else first["msg"]
        raise InputError(f"{source}: model {alias!r}: field {field}: {problem}") from None
