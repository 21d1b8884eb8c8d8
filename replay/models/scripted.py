"""Deterministic fake models: a real HTTP server on 127.0.0.1 and an in-process stand-in.

`ScriptedServer` speaks both the OpenAI chat-completions format (`POST /v1/chat/completions`) and
the Anthropic Messages format (`POST /v1/messages`), answering with scripted turns (see
`replay.models.scripts`) and rejecting with HTTP 400 what the real APIs reject. It keeps every
request it received, in memory only, with the Authorization and x-api-key headers it got.

    with ScriptedServer(Script([{"content": "done"}], model="agent")) as server:
        spec = server.spec("agent")              # a ModelSpec pointing at the server
        ...
        assert server.count_for("agent") == 1

Two behaviours of real servers can be switched on: `context_window` (with `dialect`, see
`replay.models.refusals`) refuses a request whose prompt (4 characters a token) does not fit,
with the 400 body that server sends; `tools_need_choice` serves the tool calls of its turns as
text unless the request sets `tool_choice`, as a llama.cpp server whose chat template drops the
tools does (ggml-org/llama.cpp issue #27129); `prompt_cache` plays the providers' prompt caches
(`replay.models.prompt_cache`) in the usage of turns that script none.

`ScriptedModel` serves the same scripts without sockets, for fast unit tests.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from replay.core.digest import canonical_json
from replay.models.prompt_cache import PromptCaches
from replay.models.refusals import DIALECTS, context_refusal, exceeds
from replay.models.scripts import (
    Script,
    ScriptBook,
    Turn,
    fault_of,
    finish_reason,
    last_user_text,
    messages_text,
    reply_message,
    sample_of,
    turn_usage,
)
from replay.models.transport import ModelRequestRejected, ModelTransientError, raise_for_status
from replay.models.types import ChatRequest, ModelSpec
from replay.models.wire_checks import anthropic_problem, openai_problem
from replay.records.reply import ChatResponse, Usage

logger = logging.getLogger(__name__)

_ROUTES = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}
_STOP_REASONS = {"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}
_FAULT_WHY = {"slow": "timeout", "hang": "timeout", "malformed": "malformed response",
              "drop": "connection dropped"}


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server got it. The auth headers stay in memory, never in a file."""

    path: str
    model: str | None
    body: dict[str, Any] | None
    authorization: str | None
    api_key: str | None


class ScriptedServer:
    """A scripted model server on 127.0.0.1 at a free port (or at `port`); use it as a context
    manager.

    With `api_key` set, a request without that key (Bearer for OpenAI, x-api-key for
    Anthropic) gets HTTP 401 and consumes no turn; so does a request refused for its length
    (`context_window`, see the module docstring).
    """

    def __init__(self, *scripts: Script, api_key: str | None = None,
                 context_window: int | None = None, dialect: str = "openai",
                 tools_need_choice: bool = False, prompt_cache: bool = False,
                 port: int = 0) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
        self.book = ScriptBook(scripts)
        self.api_key = api_key
        self.context_window = context_window
        self.dialect = dialect
        self.tools_need_choice = tools_need_choice
        self.prompt_caches = PromptCaches() if prompt_cache else None
        self._received: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._http: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()  # set on exit: requests that hang are let go
        self.port = port

    def __enter__(self) -> ScriptedServer:
        self.stopping.clear()
        self._http = _HTTPServer(("127.0.0.1", self.port), _Handler)
        self._http.owner = self
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join()
        self._http = self._thread = None

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1`, the base URL for either provider."""
        if self._http is None:
            raise RuntimeError("the scripted server is not running; use it in a with block")
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def spec(self, model: str = "scripted", *, provider: str = "openai", key_env: str = "",
             **fields: Any) -> ModelSpec:
        """A spec for `model` on this server (alias defaults to `scripted-MODEL`)."""
        fields.setdefault("alias", f"scripted-{model}")
        return ModelSpec(provider=provider, model=model, base_url=self.base_url,
                         key_env=key_env, **fields)

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far, in order."""
        with self._lock:
            return list(self._received)

    @property
    def count(self) -> int:
        """How many requests arrived, faults and rejections included."""
        with self._lock:
            return len(self._received)

    def count_for(self, model: str) -> int:
        """How many requests named `model`."""
        with self._lock:
            return sum(1 for request in self._received if request.model == model)

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self._received.append(request)

    def _too_long(self, body: dict[str, Any], request_chars: int) -> bytes | None:
        """The refusal of a request that does not fit `context_window`, or None."""
        if self.context_window is None:
            return None
        prompt = max(1, request_chars // 4)
        max_tokens = body.get("max_tokens") if isinstance(body.get("max_tokens"), int) else None
        if not exceeds(self.dialect, prompt, max_tokens, self.context_window):
            return None
        return context_refusal(self.dialect, prompt, max_tokens, self.context_window)

    def _key_ok(self, wire: str, request: ReceivedRequest) -> bool:
        if self.api_key is None:
            return True
        if wire == "openai":
            return request.authorization == f"Bearer {self.api_key}"
        return request.api_key == self.api_key


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.exception("scripted server failed on a request from %s", client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: _HTTPServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        body = body if isinstance(body, dict) else None
        request = ReceivedRequest(
            path=self.path,
            model=body.get("model") if body else None,
            body=body,
            authorization=self.headers.get("authorization"),
            api_key=self.headers.get("x-api-key"),
        )
        owner = self.server.owner
        owner._record(request)
        wire = _ROUTES.get(self.path)
        if wire is None:
            return self._error("openai", 404, f"no route {self.path}")
        if body is None:
            return self._error(wire, 400, "the body is not a JSON object")
        if not owner._key_ok(wire, request):
            return self._error(wire, 401, "invalid API key")
        problem = openai_problem(body) if wire == "openai" else anthropic_problem(body)
        if problem:
            return self._error(wire, 400, problem)
        refusal = owner._too_long(body, len(raw))
        if refusal is not None:
            return self._send(400, refusal, {})
        turn = owner.book.next_turn(body["model"], last_user_text(body["messages"]),
                                    messages_text(body["messages"]), sample_of(body))
        if turn is None:
            return self._error(wire, 400, f"no script matches model {body['model']!r}")
        if owner.tools_need_choice and body.get("tools") and "tool_choice" not in body:
            turn = _narrated(turn)
        self._serve(wire, body, turn, len(raw))

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("scripted server: " + format, *args)

    def _serve(self, wire: str, body: dict[str, Any], turn: Turn, request_chars: int) -> None:
        fault = fault_of(turn)
        if fault in ("drop", "hang"):
            if fault == "hang":
                self.server.owner.stopping.wait()
            self.close_connection = True
            return
        if fault == "malformed":
            return self._send(200, b'{"choices": [{"message": ', {})
        if fault is not None and fault.isdigit():
            headers = {"retry-after": str(turn["retry_after"])} if "retry_after" in turn else {}
            if "body" in turn:
                return self._send(int(fault), str(turn["body"]).encode(), headers)
            return self._error(wire, int(fault), turn.get("message", f"scripted {fault}"), headers)
        if fault == "slow":
            time.sleep(turn["seconds"])
        usage = turn_usage(turn, request_chars)
        caches = self.server.owner.prompt_caches
        if caches is not None and "usage" not in turn:
            usage = caches.usage(wire, body, usage)
        render = _openai_reply if wire == "openai" else _anthropic_reply
        self._send(200, json.dumps(render(turn, body["model"], usage)).encode(), {})

    def _error(self, wire: str, status: int, message: str,
               headers: dict[str, str] | None = None) -> None:
        if wire == "openai":
            payload: dict[str, Any] = {"error": {"message": message, "type": "scripted",
                                                 "code": status}}
        else:
            payload = {"type": "error", "error": {"type": "scripted_error", "message": message}}
        self._send(status, json.dumps(payload).encode(), headers or {})

    def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout): nothing to answer


def _openai_reply(turn: Turn, model: str, usage: Usage) -> dict[str, Any]:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": reply_message(turn),
                     "finish_reason": finish_reason(turn)}],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0,
                                          "rejected_prediction_tokens": 0},
        },
    }


def _anthropic_reply(turn: Turn, model: str, usage: Usage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.get("content"):
        content.append({"type": "text", "text": turn["content"]})
    for call in turn.get("tool_calls") or []:
        content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                        "input": _arguments(call["function"]["arguments"])})
    finish = finish_reason(turn)
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _STOP_REASONS.get(finish, finish),
        "stop_sequence": None,
        "usage": {  # input_tokens counts only the input after the last breakpoint
            "input_tokens": max(0, usage.input_tokens - usage.cached_tokens
                                - usage.cache_write_tokens),
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
            "cache_creation": {"ephemeral_5m_input_tokens": usage.cache_write_tokens,
                               "ephemeral_1h_input_tokens": 0},
            "output_tokens": usage.output_tokens,
            "service_tier": "standard",
        },
    }


def _narrated(turn: Turn) -> Turn:
    """A turn whose tool calls are written as text: what a model says when its server dropped
    the tools from its prompt."""
    if not turn.get("tool_calls"):
        return turn
    calls = "\n".join(json.dumps({"name": call["function"]["name"],
                                  "arguments": call["function"]["arguments"]})
                      for call in turn["tool_calls"])
    text = f"{turn.get('content') or ''}\n{calls}".strip()
    return {key: value for key, value in turn.items() if key != "tool_calls"} | {"content": text}


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"raw_arguments": text}
    return value if isinstance(value, dict) else {"raw_arguments": text}


class ScriptedModel:
    """The scripted turns in-process, with a provider's `complete()`; no sockets.

    Give it the spec of the `ModelClient` it stands behind, so model rules match. Faults raise
    what the HTTP provider would: statuses through the same classification, and `slow`,
    `hang`, `malformed` and `drop` as `ModelTransientError` at once (there is no clock to time
    out).
    """

    def __init__(self, *scripts: Script, spec: ModelSpec | None = None) -> None:
        self.spec = spec or ModelSpec(alias="scripted", provider="openai", model="scripted",
                                      base_url="http://127.0.0.1/v1")
        self.book = ScriptBook(scripts)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest, seed_index: int = 0, *,
                 timeout: float | None = None) -> ChatResponse:
        """The next scripted turn for `request` as a `ChatResponse`.

        Fits both the provider protocol (which gives a `timeout`: with no clock, nothing waits)
        and `ModelClient.complete`; every request takes the next turn whatever its `seed_index`.
        """
        self.requests.append(request)
        problem = openai_problem({"model": self.spec.model, "messages": request.messages})
        if problem:
            raise ModelRequestRejected(f"scripted model rejected the request: {problem}", 400)
        turn = self.book.next_turn(self.spec.model, last_user_text(request.messages),
                                   messages_text(request.messages),
                                   sample_of({"temperature": request.temperature,
                                              "seed": request.seed}))
        if turn is None:
            raise ModelRequestRejected(f"no script matches model {self.spec.model!r}", 400)
        fault = fault_of(turn)
        if fault is not None and fault.isdigit():
            raise_for_status(self.spec, int(fault), turn.get("message", f"scripted {fault}"),
                             turn.get("retry_after"), str(turn.get("body", "")))
        if fault is not None:
            raise ModelTransientError(f"model {self.spec.alias!r}: scripted fault {fault!r}",
                                      why=_FAULT_WHY[fault])
        usage = turn_usage(turn, len(canonical_json(request.messages)))
        return ChatResponse(message=reply_message(turn), usage=usage, cost=self.spec.cost(usage),
                            finish_reason=finish_reason(turn))

    def close(self) -> None:
        """Nothing to release."""
