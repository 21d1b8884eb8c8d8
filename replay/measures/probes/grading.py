"""Grading a probe's answer: recursive, type-strict JSON equality per field.

- An integer is not a boolean and not a float (`1`, `true` and `1.0` are three answers); a string
  or an ordered array matches exactly; an object matches when it has the same keys, each value
  matching; a field declared `order_free` matches an array with the same elements in any order.
- The reply must be one JSON object `{"facts": {...}}` (one enclosing ``` fence is allowed);
  anything else is malformed and every field scores zero. A field that is missing, or of another
  type, scores zero; fields the probe did not ask for are ignored.
- Nothing is retried, aliased or rewritten: the grade is that of the reply as it came.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from replay.compaction.fusion import reply_object
from replay.core.digest import canonical_json
from replay.measures.probes.files import Probe


def same(expected: Any, got: Any) -> bool:
    """Recursive, type-strict JSON equality."""
    if isinstance(expected, dict):
        return (isinstance(got, dict) and expected.keys() == got.keys()
                and all(same(value, got[key]) for key, value in expected.items()))
    if isinstance(expected, list):
        return (isinstance(got, list) and len(expected) == len(got)
                and all(same(a, b) for a, b in zip(expected, got, strict=True)))
    return type(expected) is type(got) and expected == got


def same_field(expected: Any, got: Any, order_free: bool = False) -> bool:
    """`same`, except that an order-free array may list its elements in any order."""
    if order_free and isinstance(expected, list):
        return isinstance(got, list) and Counter(map(canonical_json, expected)) == Counter(
            map(canonical_json, got))
    return same(expected, got)


def read_facts(reply: str) -> dict[str, Any] | None:
    """The `facts` object of a reply, or None when the reply is malformed."""
    found = reply_object(reply)
    facts = None if found is None else found.get("facts")
    return facts if isinstance(facts, dict) else None


@dataclass(frozen=True)
class AnswerGrade:
    """Which fields of one answer were right; `malformed` when the reply was not the JSON asked."""

    fields: dict[str, bool]
    malformed: bool = False

    @property
    def accuracy(self) -> float:
        return sum(self.fields.values()) / len(self.fields)

    @property
    def all_correct(self) -> bool:
        return all(self.fields.values())


def grade(probe: Probe, reply: str) -> AnswerGrade:
    """Grade one reply to `probe`."""
    facts = read_facts(reply)
    if facts is None:
        return AnswerGrade({name: False for name in probe.fields}, malformed=True)
    return AnswerGrade({name: name in facts and same_field(probe.expected[name], facts[name],
                                                     field.order_free)
                  for name, field in probe.fields.items()})
