"""What real servers answer when a request does not fit the model's context: the HTTP 400 bodies,
byte for byte, for the scripted server to serve.

Each template reproduces a body quoted whole in a public report, with the report's numbers
replaced by the request's:

- `openai`, the OpenAI API: mckaywrigley/chatbot-ui issue #102 (March 2023) logs the raw
  response text: pretty-printed JSON with a two-space indent and a final newline, `param`
  `messages`, `code` `context_length_exceeded`. Without max_tokens the API says "your messages
  resulted in N tokens" instead (crewAIInc/crewAI-examples issue #121).
- `vllm`, vLLM's OpenAI-compatible server (0.6 to 0.8): the message of
  llamastack/llama-stack discussion #981 (ogx-ai/ogx issue #4534, February 2025), in vLLM's
  ErrorResponse fields (object, message, type `BadRequestError`, param, code 400) as FastAPI's
  JSONResponse writes them (compact separators, null param).
- `llama.cpp`, `llama-server` since ggml-org/llama.cpp pull request #15780: the body quoted in
  oobabooga/textgen issue #7257 (October 2025), type `exceed_context_size_error` with
  `n_prompt_tokens` and `n_ctx`. llama.cpp compares the prompt alone with its context; the
  others count the completion asked for too.
"""

from __future__ import annotations

import json

DIALECTS = ("openai", "vllm", "llama.cpp")

_OPENAI_REQUESTED = ("This model's maximum context length is {window} tokens. However, you "
                     "requested {total} tokens ({prompt} in the messages, {completion} in the "
                     "completion). Please reduce the length of the messages or completion.")
_OPENAI_RESULTED = ("This model's maximum context length is {window} tokens. However, your "
                    "messages resulted in {prompt} tokens. Please reduce the length of the "
                    "messages.")
_LLAMA_CPP = ("the request exceeds the available context size. try increasing the context size "
              "or enable context shift")


def exceeds(dialect: str, prompt_tokens: int, max_tokens: int | None, window: int) -> bool:
    """Whether a server of `dialect` with a context of `window` tokens refuses the request."""
    if dialect == "llama.cpp":
        return prompt_tokens > window
    return prompt_tokens + (max_tokens or 0) > window


def context_refusal(dialect: str, prompt_tokens: int, max_tokens: int | None,
                    window: int) -> bytes:
    """The body a server of `dialect` sends with HTTP 400 for a request too long."""
    numbers = {"window": window, "prompt": prompt_tokens, "completion": max_tokens or 0,
               "total": prompt_tokens + (max_tokens or 0)}
    if dialect == "openai":
        message = (_OPENAI_REQUESTED if max_tokens else _OPENAI_RESULTED).format(**numbers)
        body = {"error": {"message": message, "type": "invalid_request_error",
                          "param": "messages", "code": "context_length_exceeded"}}
        return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode()
    if dialect == "vllm":
        body = {"object": "error", "message": _OPENAI_REQUESTED.format(**numbers),
                "type": "BadRequestError", "param": None, "code": 400}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    if dialect == "llama.cpp":
        body = {"error": {"code": 400, "message": _LLAMA_CPP, "type": "exceed_context_size_error",
                          "n_prompt_tokens": prompt_tokens, "n_ctx": window}}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    raise ValueError(f"unknown dialect {dialect!r}: use one of {', '.join(DIALECTS)}")
