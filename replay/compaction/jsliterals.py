"""Decode JavaScript string and template literals, and find one by the text it starts with.

Production prompts ship inside bundled JavaScript (or inside a Bun binary that embeds it), written
as literals: `"..."`, `'...'` or template literals in backticks, sometimes joined with `+`. These
pure functions turn such source text into the string value JavaScript would compute.

Supported escapes: `\\n \\t \\r \\b \\f \\v \\0`, `\\xXX`, `\\uXXXX` (surrogate pairs joined),
`\\u{X...}`, line continuations, and any other escaped character standing for itself
(`\\" \\' \\\\ \\` \\$`). Legacy octal escapes (`\\1`, `\\07`) are refused. A template literal's
raw CR and CRLF become LF, as in JavaScript; each `${expr}` is replaced by the value the caller
maps the expression's source text to, and an unmapped expression is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

QUOTES = "\"'`"
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_LINE_TERMINATORS = "\n\r\u2028\u2029"
_HEX = set("0123456789abcdefABCDEF")
# Characters that bundlers write verbatim inside literals: a run of them is searched for as is.
_VERBATIM = set(map(chr, range(0x20, 0x7F))) - set("\\\"'`$")
# The longest escape of one character: a surrogate pair written as two \uXXXX escapes.
MAX_ESCAPE_LEN = 12


class JSLiteralError(ValueError):
    """The source text at a position is not a literal this module can decode."""


def decode_literal(
    source: str, pos: int, substitutions: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """Decode the literal whose opening quote is at `source[pos]`.

    Returns the literal's value and the index just after its closing quote. `substitutions` maps
    the source text of a template literal's `${...}` expressions (stripped) to their values.
    """
    if pos >= len(source) or source[pos] not in QUOTES:
        raise JSLiteralError(f"no quote at offset {pos}")
    quote = source[pos]
    out: list[str] = []
    i = pos + 1
    while i < len(source):
        char = source[i]
        if char == quote:
            return _join_surrogates("".join(out)), i + 1
        if char == "\\":
            value, i = _decode_escape(source, i + 1)
            out.append(value)
        elif quote == "`" and source.startswith("${", i):
            expression, i = _template_expression(source, i + 2)
            if substitutions is None or expression not in substitutions:
                raise JSLiteralError(f"no value given for template substitution ${{{expression}}}")
            out.append(substitutions[expression])
        elif quote == "`" and char == "\r":
            out.append("\n")
            i += 2 if source.startswith("\r\n", i) else 1
        elif quote != "`" and char in "\n\r":
            raise JSLiteralError(f"unterminated string literal at offset {pos}")
        else:
            out.append(char)
            i += 1
    raise JSLiteralError(f"unterminated literal at offset {pos}")


def decode_concatenation(
    source: str, pos: int, substitutions: Mapping[str, str] | None = None
) -> tuple[str, int]:
    """Decode `lit + lit + ...` starting with the literal at `pos`; stop at anything else.

    Returns the joined value and the index just after the last literal of the chain.
    """
    text, end = decode_literal(source, pos, substitutions)
    parts = [text]
    while True:
        plus = _skip_space(source, end)
        if not source.startswith("+", plus):
            break
        nxt = _skip_space(source, plus + 1)
        if nxt >= len(source) or source[nxt] not in QUOTES:
            break
        text, end = decode_literal(source, nxt, substitutions)
        parts.append(text)
    return "".join(parts), end


def search_key(prefix: str) -> tuple[str, int]:
    """The longest run of `prefix` that any encoding of it shows verbatim, and its offset."""
    best, best_at, start = "", 0, None
    for i, char in enumerate(prefix + "\0"):
        if char in _VERBATIM:
            start = i if start is None else start
            continue
        if start is not None and i - start > len(best):
            best, best_at = prefix[start:i], start
        start = None
    if not best:
        raise JSLiteralError(f"anchor {prefix!r} has no plain ASCII text to search for")
    return best, best_at


def literal_around(
    source: str,
    key_pos: int,
    key_offset: int,
    prefix: str,
    contains: str | None = None,
    substitutions: Mapping[str, str] | None = None,
) -> str | None:
    """The value of the literal chain whose text starts with `prefix`, seen at `key_pos`.

    `key_pos` is where `prefix[key_offset:]`'s search key was found in `source`. The opening quote
    lies before it, at most `MAX_ESCAPE_LEN` source characters per character of `prefix` before
    the key. Returns None when no literal there starts with `prefix` (and contains `contains`).
    """
    for quote_pos in _quote_candidates(source, key_pos, key_offset):
        try:
            text, _ = decode_concatenation(source, quote_pos, substitutions)
        except JSLiteralError:
            continue
        if text.startswith(prefix) and (contains is None or contains in text):
            return text
    return None


def _quote_candidates(source: str, key_pos: int, key_offset: int) -> Iterator[int]:
    """Quote positions where a literal holding the key at `key_pos` could open, nearest first."""
    nearest = key_pos - key_offset - 1
    farthest = max(key_pos - MAX_ESCAPE_LEN * key_offset - 1, 0)
    for i in range(nearest, farthest - 1, -1):
        if source[i] in QUOTES:
            yield i


def _decode_escape(source: str, i: int) -> tuple[str, int]:
    """Decode the escape whose backslash ends just before `i`; return its value and next index."""
    if i >= len(source):
        raise JSLiteralError("backslash at end of text")
    char = source[i]
    if char in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[char], i + 1
    if char == "0" and not source[i + 1 : i + 2].isdigit():
        return "\0", i + 1
    if char.isdigit():
        raise JSLiteralError(f"legacy octal escape \\{char} at offset {i - 1}")
    if char == "x":
        return chr(_hex(source, i + 1, 2)), i + 3
    if char == "u":
        return _decode_unicode_escape(source, i + 1)
    if char in _LINE_TERMINATORS:
        return "", i + (2 if source.startswith("\r\n", i) else 1)
    return char, i + 1


def _decode_unicode_escape(source: str, i: int) -> tuple[str, int]:
    """Decode `XXXX` or `{X...}` after `\\u`."""
    if source.startswith("{", i):
        close = source.find("}", i)
        if close < 0:
            raise JSLiteralError(f"unterminated \\u{{ escape at offset {i}")
        code = _hex(source, i + 1, close - i - 1)
        if code > 0x10FFFF:
            raise JSLiteralError(f"code point {code:#x} out of range at offset {i}")
        return chr(code), close + 1
    return chr(_hex(source, i, 4)), i + 4


def _hex(source: str, i: int, count: int) -> int:
    digits = source[i : i + count]
    if count == 0 or len(digits) != count or not set(digits) <= _HEX:
        raise JSLiteralError(f"bad hexadecimal escape {digits!r} at offset {i}")
    return int(digits, 16)


def _join_surrogates(text: str) -> str:
    """Join UTF-16 surrogate pairs from `\\uD83D\\uDE00`-style escapes into one character."""
    if not any("\ud800" <= char <= "\udfff" for char in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _template_expression(source: str, i: int) -> tuple[str, int]:
    """Read a `${...}` expression starting at `i` (after `${`): its stripped text and next index.

    Nested braces and the string and template literals inside it are skipped over.
    """
    depth, start = 0, i
    while i < len(source):
        char = source[i]
        if char in QUOTES:
            i = _skip_literal(source, i)
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return source[start:i].strip(), i + 1
            depth -= 1
        i += 1
    raise JSLiteralError(f"unterminated template substitution at offset {start}")


def _skip_literal(source: str, pos: int) -> int:
    """Index after the literal at `pos`, without needing values for its substitutions."""
    quote, i = source[pos], pos + 1
    while i < len(source):
        if source[i] == "\\":
            i += 2
        elif source[i] == quote:
            return i + 1
        elif quote == "`" and source.startswith("${", i):
            _, i = _template_expression(source, i + 2)
        else:
            i += 1
    raise JSLiteralError(f"unterminated literal at offset {pos}")


def _skip_space(source: str, i: int) -> int:
    while i < len(source) and source[i].isspace():
        i += 1
    return i
