"""GGUF models run in process by llama.cpp (the `xllamacpp` package): no server to start, no key.

One loaded model serves every caller of a process: `loaded()` loads each file once (under a
lock) with its spec's context, threads and parallel slots, and llama.cpp's own server queues
the requests (or decodes `parallel` of them at once) and reuses its prompt cache across them:
the next step of a continuation, or a POST summary of a history a PRE just read, prefills only
the tokens past the prefix the slot already holds.

Tool calls: the chat template renders the tools and the history's calls (the model's own, or
`chat_template = "chatml-tools"`, the bundled ChatML template with Hermes-style `<tool_call>`
tags for models such as SmolLM2 whose own template has none) and llama.cpp parses the calls the
model writes. A request with `tool_choice = "required"` is constrained by a JSON schema to one
call of one of its tools (`{"name": ..., "arguments": {...}}`), which becomes the reply's tool
call: a small model then always speaks in tool calls. A prompt longer than the context is
refused (`ModelRefused`, as a server's HTTP 400). A call cannot be interrupted: its time is
bounded by its `max_tokens`, not by the attempt timeout.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

from replay.core.errors import InputError
from replay.models.gguf_widen import widened
from replay.models.openai import parse_reply, request_settings, sendable
from replay.models.transport import ModelRefused, raise_for_status
from replay.models.types import ChatRequest, Message, ModelSpec, Tool
from replay.records.reply import ChatResponse

TEMPLATES = Path(__file__).with_name("templates")
PACKAGE = "package:"
_LOCK = threading.Lock()
_LOADED: dict[tuple[Any, ...], Any] = {}


def model_file(spec: ModelSpec) -> Path:
    """The GGUF file of `spec`: its path, or `package:MODULE/FILE` inside an installed package.

    Raises `InputError` naming what is missing.
    """
    text = spec.path or ""
    if text.startswith(PACKAGE):
        module, _, name = text.removeprefix(PACKAGE).partition("/")
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise InputError(f"model {spec.alias!r}: package {module} is not installed "
                             "(bash scripts/setup.sh installs it)")
        path = Path(next(iter(found.submodule_search_locations))) / name
    else:
        path = Path(text).expanduser()
    if not path.is_file():
        raise InputError(f"model {spec.alias!r}: GGUF file not found: {path}")
    return path


def template_text(spec: ModelSpec) -> str | None:
    """The chat template `spec` names: a bundled one, a file, or None (the model's own)."""
    if not spec.chat_template:
        return None
    bundled = TEMPLATES / f"{spec.chat_template}.jinja"
    path = bundled if bundled.is_file() else Path(spec.chat_template).expanduser()
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"model {spec.alias!r}: chat template {spec.chat_template!r}: "
                         f"neither bundled ({', '.join(bundled_templates())}) nor a readable "
                         f"file: {exc.strerror}") from None


def bundled_templates() -> list[str]:
    """The names of the chat templates shipped with replay."""
    return sorted(path.stem for path in TEMPLATES.glob("*.jinja"))


def threads_of(spec: ModelSpec) -> int:
    """How many CPU threads prefill prompts for `spec` (default: every core)."""
    return spec.threads or os.cpu_count() or 1


def decode_threads_of(spec: ModelSpec) -> int:
    """How many CPU threads generate tokens for `spec` (default: as many as prefill)."""
    return spec.decode_threads or threads_of(spec)


def weights_file(spec: ModelSpec) -> Path:
    """The file llama.cpp loads: `spec`'s, or its widened copy when `widen` is set."""
    path = model_file(spec)
    return widened(path, spec.widen) if spec.widen else path


def loaded(spec: ModelSpec) -> Any:
    """The llama.cpp server holding `spec`'s model, loaded at the first call of the process."""
    key = (str(model_file(spec)), spec.widen, spec.context_window, threads_of(spec),
           decode_threads_of(spec), spec.parallel, spec.gpu_layers, spec.chat_template,
           spec.flash_attn)
    with _LOCK:
        if key not in _LOADED:
            if not _LOADED:
                atexit.register(unload_all)
            _LOADED[key] = _load(spec)
        return _LOADED[key]


def _load(spec: ModelSpec) -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise InputError(f"model {spec.alias!r}: the xllamacpp package is not installed "
                         "(bash scripts/setup.sh installs it)") from None
    params = xllamacpp.CommonParams()
    params.model.path = str(weights_file(spec))
    slots = spec.parallel or 1
    params.n_parallel = slots
    params.n_ctx = (spec.context_window or 0) * slots  # 0: the model's own context
    params.cpuparams.n_threads = decode_threads_of(spec)
    params.cpuparams_batch.n_threads = threads_of(spec)
    for cpu in (params.cpuparams, params.cpuparams_batch):
        cpu.poll = 0  # threads sleep between jobs: spinning ones lose to any other process
    if spec.gpu_layers is not None:
        params.n_gpu_layers = spec.gpu_layers
    if spec.flash_attn is not None:
        params.flash_attn_type = int(spec.flash_attn)  # llama.cpp's enum: 0 off, 1 on, -1 auto
    template = template_text(spec)
    if template is not None:
        params.chat_template = template
    params.use_jinja = True
    params.verbosity = -1
    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # llama.cpp says why in its own words
        raise InputError(f"model {spec.alias!r}: llama.cpp cannot load "
                         f"{params.model.path}: {exc}") from None


def unload_all() -> None:
    """Release every loaded model (at exit; tests that load another context may call it)."""
    with _LOCK:
        _LOADED.clear()


def call_schema(tools: list[Tool]) -> dict[str, Any]:
    """The JSON schema of one call of one of `tools`: `{"name": ..., "arguments": {...}}`."""
    return {"anyOf": [
        {"type": "object", "required": ["name", "arguments"],
         "properties": {"name": {"const": tool["function"]["name"]},
                        "arguments": tool["function"].get("parameters") or {"type": "object"}}}
        for tool in tools]}


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The chat-completions body llama.cpp is given; a required tool call is a JSON schema.

    Messages calling tools go with content "" (never null: some templates and servers fail
    on null)."""
    body: dict[str, Any] = {**request.extra_body, "messages": sendable(request.messages),
                            **request_settings(request)}
    if request.tools and request.tool_choice == "required":
        body["json_schema"] = call_schema(request.tools)
        del body["tool_choice"]
    return body


def forced_call(message: Message) -> Message:
    """A reply written under `call_schema` as the tool call it is; text that is not one (cut
    off by the length limit) stays text."""
    try:
        call = json.loads(message.get("content") or "")
    except ValueError:
        return message
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return message
    arguments = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function",
         "function": {"name": call["name"], "arguments": arguments}}]}


class GGUFProvider:
    """Answers chat requests with the spec's GGUF model in this process (see the module
    docstring). Raises `InputError` at construction when the file or xllamacpp is missing."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self._server = loaded(spec)

    def complete(self, request: ChatRequest, timeout: float) -> ChatResponse:
        """One request; `timeout` is not enforced (llama.cpp cannot stop a call midway)."""
        body = request_body(request)
        try:
            reply = self._server.handle_chat_completions(body)
        except (RuntimeError, ValueError) as exc:
            raise ModelRefused(f"model {self.spec.alias!r} refused the request: {exc}",
                               400) from None
        error = reply.get("error") if isinstance(reply, dict) else None
        if isinstance(error, dict):
            sizes = (f" ({error['n_prompt_tokens']} prompt tokens, context {error['n_ctx']})"
                     if "n_prompt_tokens" in error else "")
            raise_for_status(self.spec, int(error.get("code") or 500),
                             f"{error.get('message', '')}{sizes}", body=json.dumps(error))
        response = parse_reply(self.spec, reply)
        if "json_schema" in body:
            response = response.model_copy(update={"message": forced_call(response.message)})
        elif response.message.get("tool_calls") and response.message.get("content") is None:
            response = response.model_copy(
                update={"message": {**response.message, "content": ""}})
        return response

    def close(self) -> None:
        """Nothing to release: the loaded model serves the process until it exits."""
