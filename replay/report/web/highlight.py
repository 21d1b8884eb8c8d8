"""Escaped text with the details a summary kept, or lost, marked.

Every string a page shows may hold model or tool output, so it is escaped here or by the
templates' autoescaping; only the `<mark>` tags this module adds are markup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from markupsafe import Markup, escape

from replay.records.retention import ScoreDetail

MAX_VALUES = 600  # longest first; a reference holds at most 40 per kind of 11


def marked(text: str, kept: Iterable[str] = (), lost: Iterable[str] = ()) -> Markup:
    """`text` escaped, each occurrence of a kept value in `<mark class="kept">` and of a lost
    one in `<mark class="lost">` (the longest value wins where they overlap)."""
    classes = dict.fromkeys(lost, "lost")
    classes.update(dict.fromkeys(kept, "kept"))
    values = sorted((value for value in classes if value), key=len, reverse=True)[:MAX_VALUES]
    if not values:
        return escape(text)
    pattern = re.compile("|".join(map(re.escape, values)))
    parts, position = [], 0
    for match in pattern.finditer(text):
        parts.append(escape(text[position:match.start()]))
        parts.append(Markup('<mark class="{}">{}</mark>').format(classes[match.group()],
                                                                  match.group()))
        position = match.end()
    parts.append(escape(text[position:]))
    return Markup("").join(parts)


def values(detail: ScoreDetail | None, which: str) -> list[str]:
    """The kept or missed values of a summary's score, all kinds together."""
    found = {} if detail is None else getattr(detail, which)
    return [str(value) for kind in found.values() for value in kind]
