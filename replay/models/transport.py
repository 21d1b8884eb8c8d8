"""One JSON POST to a model server, with every failure classified here and nowhere else.

Transient faults (429, 408, 5xx, timeouts, dropped or refused connections, bodies that are not
the JSON object expected) raise `ModelTransientError`, which the retry wrapper retries; its `why`
says which in a few words (`CONNECTION` for a server that cannot be reached at all). A refused
key (401, 403: `KeyRefused`) and a model or endpoint that is not there (404: `ModelNotFound`)
halt the command: no call to that model can succeed. The other 4xx (400, 413, 422, ...) are the
server refusing the request for its content, a context too long above all (`ModelRefused`): the
same request is refused again whatever its seed, so it is never retried, and a sweep records it
as the result of the request it ended.
"""

from __future__ import annotations

import email.utils
import functools
import json
import re
import ssl
import time
from typing import Any

import httpx

from replay.core.errors import Halt, HarnessError, InputError
from replay.models.types import ModelSpec

_TRANSIENT_STATUSES = {408, 429}
CONNECTION = "connection failed"  # refused, unreachable, no route: the server is not there
# How the servers say a request does not fit the model's context (OpenAI's code, vLLM's and
# OpenAI's message, llama.cpp's error type and message, Anthropic's message).
CONTEXT_EXCEEDED = re.compile(
    r"context_length_exceeded|exceed_context_size_error|maximum context length"
    r"|exceeds the available context size|context length is only|prompt is too long"
    r"|longer than the maximum model length", re.IGNORECASE)


class ModelTransientError(HarnessError):
    """A model call failed in a way that may pass on retry.

    `why` is the failure in a few words (`HTTP 503`, `timeout`, `CONNECTION`, ...);
    `retry_after` is the server's wish.
    """

    def __init__(self, message: str, retry_after: float | None = None,
                 why: str = "transient fault") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.why = why


class KeyRefused(InputError, Halt):
    """The server refused the API key (HTTP 401, 403): no call can succeed, the command stops."""


class ModelRequestRejected(InputError):
    """The server refused the request itself (HTTP 400, 404, 413, 422, ...): not retried."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ModelNotFound(ModelRequestRejected, Halt):
    """HTTP 404: the model or its endpoint is not at the base URL; the command stops."""


class ModelRefused(ModelRequestRejected):
    """The server refused the request for its content (HTTP 400, 413, 422, ...), e.g. a context
    too long (`context`). Deterministic: the same request, whatever its seed, is refused again."""

    def __init__(self, message: str, status: int, context: bool = False) -> None:
        super().__init__(message, status)
        self.context = context


def raise_for_status(
    spec: ModelSpec, status: int, server_message: str, retry_after: float | None = None,
    body: str = "",
) -> None:
    """Raise the error an HTTP status means for a call to `spec`; return for 2xx. `body` is the
    raw response text, read for the signatures of a context too long."""
    where = f"model {spec.alias!r} ({spec.model} at {spec.base_url})"
    if 200 <= status < 300:
        return
    if status in _TRANSIENT_STATUSES or status >= 500:
        raise ModelTransientError(
            f"{where}: HTTP {status}: {server_message}", retry_after=retry_after,
            why=f"HTTP {status}",
        )
    if status in (401, 403):
        fix = (f"check {spec.key_env}" if spec.key_env
               else "the spec sends no key: name its variable (key_env, or #KEY_ENV ad hoc)")
        raise KeyRefused(f"{where} refused the API key (HTTP {status}): {fix}")
    if status == 404:
        raise ModelNotFound(
            f"model {spec.model!r} or its endpoint not found at {spec.base_url} (HTTP 404): "
            f"{server_message}",
            status,
        )
    context = bool(CONTEXT_EXCEEDED.search(body or server_message))
    why = "context length exceeded, " if context else ""
    raise ModelRefused(f"{where} refused the request ({why}HTTP {status}): {server_message}",
                       status, context)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_message(response: httpx.Response) -> str:
    """The server's own explanation: `error.message` in both wire formats, else the raw text."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:500] or response.reason_phrase
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            sizes = (f" ({error['n_prompt_tokens']} prompt tokens, context {error['n_ctx']})"
                     if "n_prompt_tokens" in error and "n_ctx" in error else "")  # llama.cpp
            return str(error["message"]) + sizes
        if isinstance(error, str):
            return error
        if body.get("message"):
            return str(body["message"])
    return response.text[:500]


class JsonTransport:
    """A sync httpx client bound to one spec's base URL and headers."""

    def __init__(self, spec: ModelSpec, headers: dict[str, str]) -> None:
        self.spec = spec
        self._client = httpx.Client(base_url=spec.base_url, headers=headers,
                                    verify=_ssl_context())

    def post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST `body` as JSON to `base_url + path` and return the decoded JSON object.

        `timeout` bounds connecting (at most 30 s of it) and each wait for the server.
        """
        where = f"model {self.spec.alias!r} at {self.spec.base_url}{path}"
        try:
            response = self._client.post(
                path.lstrip("/"), json=body,
                timeout=httpx.Timeout(timeout, connect=min(timeout, 30.0)))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ModelTransientError(f"{where}: cannot connect: {exc}", why=CONNECTION) from exc
        except httpx.TimeoutException as exc:
            raise ModelTransientError(f"{where}: no answer within {timeout:.3g} s "
                                      f"({type(exc).__name__})", why="timeout") from exc
        except (httpx.TransportError, httpx.DecodingError) as exc:
            raise ModelTransientError(f"{where}: connection dropped: {exc!r}",
                                      why="connection dropped") from exc
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        if not response.is_success:
            raise_for_status(self.spec, response.status_code, error_message(response), retry_after,
                             response.text)
        try:
            decoded = json.loads(response.content)
        except ValueError as exc:
            raise ModelTransientError(f"{where}: response body is not JSON: {exc}",
                                      why="malformed response") from exc
        if not isinstance(decoded, dict):
            raise ModelTransientError(f"{where}: response body is not a JSON object",
                                      why="malformed response")
        return decoded

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying SSL context per process: building one per client costs tens of ms."""
    return httpx.create_ssl_context()


def malformed(spec: ModelSpec, what: str) -> ModelTransientError:
    """The error for a 2xx body that lacks what the wire format promises."""
    return ModelTransientError(f"model {spec.alias!r}: malformed response: {what}",
                               why="malformed response")
