"""One JSON POST to a model server, with every failure classified here and nowhere else.

Transient faults (429, 408, 5xx, timeouts, dropped or refused connections, bodies that are not
the JSON object expected) raise `ModelTransientError`, which the retry wrapper retries; its `why`
says which in a few words (`CONNECTION` for a server that cannot be reached at all). Faults of
the request or its credentials (401, 403, 404, 400 and other 4xx) raise `InputError` subclasses
that name what to fix; they are never retried, and a refused key (`KeyRefused`) also halts the
command.
"""

from __future__ import annotations

import email.utils
import functools
import json
import ssl
import time
from typing import Any

import httpx

from replay.errors import Halt, HarnessError, InputError
from replay.models.types import ModelSpec

_TRANSIENT_STATUSES = {408, 429}
CONNECTION = "connection failed"  # refused, unreachable, no route: the server is not there


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


def raise_for_status(
    spec: ModelSpec, status: int, server_message: str, retry_after: float | None = None
) -> None:
    """Raise the error an HTTP status means for a call to `spec`; return for 2xx."""
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
        raise ModelRequestRejected(
            f"model {spec.model!r} or its endpoint not found at {spec.base_url} (HTTP 404): "
            f"{server_message}",
            status,
        )
    raise ModelRequestRejected(
        f"{where} rejected the request (HTTP {status}): {server_message}", status
    )


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
            return str(error["message"])
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
            raise_for_status(self.spec, response.status_code, error_message(response), retry_after)
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
