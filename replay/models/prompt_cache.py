"""The providers' prompt caches as the scripted server plays them (not replay's call cache).

A provider keeps the prefixes of recent prompts and bills the part of a new prompt that starts
with one of them as cached input. The scripted server counts characters, four to a token as its
usage estimates do, and keeps one cache per model, never expiring (a test is shorter than the
five minutes real caches last):

- OpenAI-compatible (automatic): the longest prefix the prompt (tools, then messages, as
  canonical JSON) shares with any earlier prompt is cached, in steps of 128 tokens from 1024
  on, as OpenAI documents.
- Anthropic (explicit): only prefixes ending at a block marked `cache_control` are written;
  a request reads the longest prefix written before that ends at one of its breakpoints or up
  to 20 blocks before one, and writes the rest up to its last breakpoint. Prefixes shorter
  than 1024 tokens (the minimum of the Sonnet and Opus models) are not cached. Blocks are
  tools, then system blocks, then message blocks, each compared without its mark.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from replay.core.digest import canonical_json, chained
from replay.records.reply import Usage

CHARS_PER_TOKEN = 4
MIN_TOKENS = 1024
OPENAI_STEP = 128
LOOKBACK = 20


class PromptCaches:
    """One simulated prompt cache per model. Thread-safe."""

    def __init__(self) -> None:
        self._prompts: dict[str, list[str]] = {}
        self._written: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()

    def usage(self, wire: str, body: dict[str, Any], estimate: Usage) -> Usage:
        """`estimate` with the cached (and, for Anthropic, written) tokens of this request,
        which is remembered for the requests after it; the prompt counts at least the tokens
        the cache counted in it."""
        model = str(body.get("model"))
        with self._lock:
            if wire == "openai":
                total, cached, written = self._openai(model, body)
            else:
                total, cached, written = self._anthropic(model, body)
        return estimate.model_copy(update={"input_tokens": max(estimate.input_tokens, total),
                                           "cached_tokens": cached,
                                           "cache_write_tokens": written})

    def _openai(self, model: str, body: dict[str, Any]) -> tuple[int, int, int]:
        prompt = canonical_json(body.get("tools") or []) + canonical_json(body.get("messages"))
        earlier = self._prompts.setdefault(model, [])
        shared = max((len(os.path.commonprefix([prompt, other])) for other in earlier),
                     default=0)
        earlier.append(prompt)
        tokens = shared // CHARS_PER_TOKEN
        cached = tokens // OPENAI_STEP * OPENAI_STEP if tokens >= MIN_TOKENS else 0
        return len(prompt) // CHARS_PER_TOKEN, cached, 0

    def _anthropic(self, model: str, body: dict[str, Any]) -> tuple[int, int, int]:
        prefixes = _block_prefixes(body)
        if not prefixes:
            return 0, 0, 0
        marked = [index for index, (_, _, mark) in enumerate(prefixes) if mark]
        written = self._written.setdefault(model, {})
        read = 0
        for index in marked:
            for back in range(index, max(-1, index - LOOKBACK - 1), -1):
                digest = prefixes[back][0]
                if digest in written:
                    read = max(read, written[digest])
                    break
        wrote = 0
        for index in marked:
            digest, tokens, _ = prefixes[index]
            if tokens >= MIN_TOKENS and digest not in written:
                written[digest] = tokens
                wrote = max(wrote, tokens - read)
        return prefixes[-1][1], read, wrote


def _block_prefixes(body: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """For each block of an Anthropic body, in cache order: the digest and token count of the
    prefix ending with it, and whether it is marked as a breakpoint."""
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    blocks = [*(body.get("tools") or []), *system]
    for turn in body.get("messages") or []:
        content = turn.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks += [{**part, "role": turn.get("role")} for part in parts or []]
    prefixes = chained({k: v for k, v in block.items() if k != "cache_control"}
                       for block in blocks)
    return [(key, chars // CHARS_PER_TOKEN, "cache_control" in block)
            for (key, chars), block in zip(prefixes, blocks, strict=True)]
