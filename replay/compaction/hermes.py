"""Hermes agent's compaction (H), run from the code of the pinned `hermes-agent` package.

Hermes builds its compaction prompt in code (`agent/context_compressor.py`,
`ContextCompressor._generate_summary`), so the synced prompt `hermes` holds that file and the
redaction module it calls (`agent/redact.py`), both checked by sha256 (`prompts/sources.toml`).
This module reads out of them, by name, with `ast`: the module's constants (SUMMARY_PREFIX, the
section headings, the budget ratio and floor), the first-compaction prompt and its focus-topic
addition (f-strings rendered here with their own variables), the serialization of turns
(`_serialize_for_summary`) and the prefix-stripping helper (`_strip_summary_prefix`), which run
as Hermes wrote them, and `redact_sensitive_text`, applied to the input and to the output as
Hermes does. Nothing of that code is kept in this repository.

Two settings (`Setting`):
- `hermes`: Hermes' own budget (20% of the serialized turns' tokens, at least its 2,000-token
  floor), one call, no length check.
- `hermes-h`: the study's budgeted H, run by Hermes' real class in its own venv
  (`replay.compaction.hermes_native`); this module gives it its budget and keeps its result. The
  allowance is the same as S's for the task, frozen: 20% of the rendered evidence tokens clamped
  to 64-256 (`replay.compaction.fusion.budget`, in Qwen tokens, which also measure the body);
  each of at most three attempts asks for a target reduced by 0.8 from the last (the first asks
  for the allowance) with a total word limit of 35% of that target (at least 18 words) that
  lets nonessential sections go; a body longer than the allowance, or a reply Hermes' own
  checks reject, is asked again, without feedback. After the third, H is invalid (its details
  say why, `invalid`): it is the method's own failure, kept as its summary, and scores zero (a
  POST fails with nothing continued, a probe context fails); there is no fallback.
The native setting's call sees the history without its system prompt and the original task as
its focus topic. Its deviations, said here so they are not mistaken for Hermes: the
temporal-anchoring rule is left out (Hermes' own branch when the date does not resolve: prompts
stay reproducible), no memory-provider context is given, Hermes' task grounding
(`_ground_historical_task_snapshot`, which needs its conversation module) is not applied, and
`<think>` blocks are stripped by replay's pattern (Hermes' helper lives in a module with heavy
imports). The native setting's tokens are characters / 4, as Hermes estimates. The study's
further validity rules (the per-task input ceiling, fewer input tokens than Full) are the
probe's to check (`replay.measures.probes.ceiling`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from replay.compaction.fusion import budget, count_tokens, evidence_units
from replay.compaction.sources import PromptText
from replay.core.errors import InputError
from replay.models.types import Message

CARRIER = "Summary:"
FIRST_PROMPT = "Create a structured checkpoint summary"
FOCUS_PROMPT = "FOCUS TOPIC"
WORD_LIMIT = ("\n\nWORD LIMIT: at most {words} words in total. Omit nonessential sections; keep "
              "the {task} section (or its \"None.\") and the ## Critical Context section.")
THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S)
SAFE = (ast.Constant, ast.JoinedStr, ast.FormattedValue, ast.Tuple, ast.Name, ast.Load, ast.BinOp,
        ast.Mult, ast.Add, ast.Call, ast.Attribute, ast.keyword)


class HermesCodeError(InputError):
    """The synced Hermes code lacks a piece this module reads by name."""


@dataclass(frozen=True)
class Setting:
    """How H is budgeted: Hermes' own budget (20% of the serialized turns' tokens, characters /
    4, at least its floor; the length unchecked), or `frozen`: S's frozen allowance of the task
    in Qwen tokens, the body checked against it; then the word share, attempts and shrink of
    the length check."""

    name: str
    frozen: bool = False
    word_share: float | None = None
    min_words: int = 18
    attempts: int = 1
    shrink: float = 0.8


NATIVE = Setting("hermes")
STUDY = Setting("hermes-h", frozen=True, word_share=0.35, attempts=3)
SETTINGS = (NATIVE.name, STUDY.name)  # the summarizer prompt names of the two settings


def tokens(text: str) -> int:
    """Hermes' rough token estimate: characters / 4."""
    return len(text) // 4


class HermesCode:
    """The pieces of Hermes' compressor and redaction that H runs (see the module docstring)."""

    def __init__(self, code: str, redaction: str) -> None:
        tree = ast.parse(code)
        self.namespace = _constants(tree.body, {"re": re})
        redact_ns: dict[str, Any] = {"__name__": "hermes_redact"}
        exec(compile(redaction, "agent/redact.py", "exec"), redact_ns)  # noqa: S102 - pinned code
        self.namespace["redact_sensitive_text"] = redact_ns["redact_sensitive_text"]
        self.namespace["strip_think_blocks"] = lambda _self, text: THINK.sub("", text or "")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in ("_image_part_label",
                                                                   "_content_text_for_contains"):
                _define(node, self.namespace)
        compressor = _node(tree.body, ast.ClassDef, "ContextCompressor")
        self.fields = SimpleNamespace(**_constants(compressor.body, dict(self.namespace)))
        self.strip_prefix = _define(_node(compressor.body, ast.FunctionDef,
                                          "_strip_summary_prefix"), self.namespace)
        self._serialize = _define(_node(compressor.body, ast.FunctionDef,
                                        "_serialize_for_summary"), self.namespace)
        generate = _node(compressor.body, ast.FunctionDef, "_generate_summary")
        self.locals = {name: _assigned(generate, name) for name in
                       ("_summarizer_preamble", "_template_sections")}
        self.first = _assigned(generate, "prompt", FIRST_PROMPT)
        self.focus = _assigned(generate, "prompt", FOCUS_PROMPT, augmented=True)

    def serialize(self, turns: list[Message]) -> str:
        """Hermes' labelled, redacted serialization of `turns`."""
        return str(self._serialize(self.fields, turns))

    def redact(self, text: str) -> str:
        """Hermes' redaction of secrets in `text`."""
        return str(self.namespace["redact_sensitive_text"](text))

    def prompt(self, content: str, budget: int, focus: str | None) -> str:
        """The first-compaction prompt for `content`, targeting `budget` tokens."""
        values = {**self.namespace, "summary_budget": budget, "_temporal_anchoring_rule": "",
                  "content_to_summarize": content, "_memory_section": "", "focus_topic": focus}
        for name, node in self.locals.items():
            values[name] = _render(node, values)
        text = _render(self.first, values)
        return text + _render(self.focus, values) if focus else text

    def constant(self, name: str) -> Any:
        """A module-level constant of the compressor (SUMMARY_PREFIX, _SUMMARY_RATIO, ...)."""
        if name not in self.namespace:
            raise HermesCodeError(f"the synced Hermes code has no {name}: run `replay prompts "
                                  "sync hermes --force`")
        return self.namespace[name]


@lru_cache(maxsize=4)
def _code(code: str, redaction: str) -> HermesCode:
    return HermesCode(code, redaction)


def load_code(prompt: PromptText) -> HermesCode:
    """The Hermes pieces of a synced `hermes` prompt (parsed once per text)."""
    code, redaction = prompt.parts.get("code"), prompt.parts.get("redaction")
    if not code or not redaction:
        raise HermesCodeError(f"prompt {prompt.name} has no Hermes code: run `replay prompts sync "
                              "hermes`")
    return _code(code, redaction)


def allowance(history: list[Message], chosen: Setting, code: HermesCode) -> tuple[int, int]:
    """The evidence tokens and the summary budget: S's frozen allowance of the task (`frozen`),
    else Hermes' ratio of its serialized turns, at least its floor."""
    if chosen.frozen:
        frozen = budget(history, evidence_units(history))
        return frozen.evidence_tokens, frozen.allowance
    evidence = evidence_tokens(code, history)
    ratio, floor = code.constant("_SUMMARY_RATIO"), code.constant("_MIN_SUMMARY_TOKENS")
    return evidence, max(floor, int(evidence * ratio))


def measure(chosen: Setting) -> Callable[[str], int]:
    """How a body's tokens are counted: Qwen tokens against S's allowance, else Hermes'
    estimate."""
    return count_tokens if chosen.frozen else tokens


def targets(limit: int, chosen: Setting) -> list[tuple[int, int | None]]:
    """Each attempt's (token target, word limit): the allowance, then shrunk by `shrink`."""
    found = []
    target = float(limit)
    for _ in range(chosen.attempts):
        words = (None if chosen.word_share is None
                 else max(chosen.min_words, int(chosen.word_share * int(target))))
        found.append((int(target), words))
        target *= chosen.shrink
    return found


@dataclass
class Attempt:
    """One request of H and what came of it."""

    target: int
    words: int | None
    prompt: str
    body: str = ""
    tokens: int = 0  # the stripped body's, as the setting counts them
    rejected: str | None = None  # why Hermes' own checks returned no summary


def request_text(code: HermesCode, history: list[Message], target: int, words: int | None) -> str:
    """The user message H sends for `history` at one target (and word limit)."""
    turns = [m for m in history if m.get("role") != "system"]
    focus = next((str(m.get("content") or "") for m in turns if m.get("role") == "user"), None)
    text = code.prompt(code.serialize(turns), target, focus)
    if words is not None:
        task = code.constant("HISTORICAL_TASK_HEADING")
        text += WORD_LIMIT.format(words=words, task=task)
    return text


def body_of(code: HermesCode, reply: str) -> str:
    """Hermes' post-processing of a reply (think blocks out, redacted, normalized to its prefix as
    `_with_summary_prefix` does: an echoed prefix stripped, the current one put before), then the
    native prefix stripped by Hermes' own helper."""
    summary = code.redact(THINK.sub("", reply).strip())
    prefix = code.constant("SUMMARY_PREFIX")
    body = code.strip_prefix(summary)
    return str(code.strip_prefix(f"{prefix}\n{body}" if body else prefix))


def evidence_tokens(code: HermesCode, history: list[Message]) -> int:
    """The tokens of the rendered evidence (the serialized turns) H is budgeted on."""
    return tokens(code.serialize([m for m in history if m.get("role") != "system"]))


@dataclass
class Result:
    """What H made of a history: its attempts, the allowance and the evidence it was set by."""

    evidence_tokens: int
    allowance: int
    checked: bool
    attempts: list[Attempt]

    @property
    def valid(self) -> bool:
        """Whether the last body fits the allowance (any body, when the length is unchecked)."""
        last = self.attempts[-1] if self.attempts else None
        return last is not None and last.rejected is None and (
            not self.checked or last.tokens <= self.allowance)

    def details(self, chosen: Setting) -> dict[str, Any]:
        """What a probe reports of H; `invalid` says why an H over its allowance scores zero."""
        found: dict[str, Any] = {
            "hermes": chosen.name, "evidence_tokens": self.evidence_tokens,
            "allowance": self.allowance, "valid": self.valid,
            "attempts": [{"target": a.target, "words": a.words, "tokens": a.tokens,
                          **({"rejected": a.rejected} if a.rejected else {})}
                         for a in self.attempts]}
        last = self.attempts[-1]
        if last.rejected is not None:
            found["invalid"] = (f"{chosen.name}: Hermes returned no summary after "
                                f"{len(self.attempts)} attempts: {last.rejected}")
        elif not self.valid:
            found["invalid"] = (f"{chosen.name}: {last.tokens} tokens after "
                                f"{len(self.attempts)} attempts, over the allowance of "
                                f"{self.allowance}")
        return found


def compact(code: HermesCode, history: list[Message], chosen: Setting,
            call: Callable[[str], str]) -> Result:
    """Run H on `history`: `call` sends one prompt (a fresh request) and returns the reply.

    With S's frozen allowance, a body over it is asked again at the next target, up to the
    setting's attempts; the result says whether the last one fits.
    """
    evidence, limit = allowance(history, chosen, code)
    result = Result(evidence, limit, chosen.frozen, [])
    for target, words in targets(limit, chosen):
        attempt = Attempt(target, words, request_text(code, history, target, words))
        attempt.body = body_of(code, call(attempt.prompt))
        attempt.tokens = measure(chosen)(attempt.body)
        result.attempts.append(attempt)
        if result.valid:
            break
    return result


def carried(body: str) -> str:
    """The body as the `Summary:` carrier brings it back (the same as S's)."""
    return f"{CARRIER}\n{body}"


def native_text(prompt: PromptText, text: str) -> str:
    """A carried summary as Hermes itself inserts it: its prefix, the body, its end marker."""
    code = load_code(prompt)
    body = text.removeprefix(f"{CARRIER}\n")
    return f"{code.constant('SUMMARY_PREFIX')}\n{body}\n\n{code.constant('_SUMMARY_END_MARKER')}"


def _node(body: list[ast.stmt], kind: type, name: str) -> Any:
    for node in body:
        if isinstance(node, kind) and getattr(node, "name", None) == name:
            return node
    raise HermesCodeError(f"the synced Hermes code has no {name}")


def _constants(body: list[ast.stmt], namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the plain constant assignments of `body` (strings, numbers, tuples, re.compile)."""
    for node in body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        if all(isinstance(part, SAFE) for part in ast.walk(node.value)) and all(
                name.id in namespace for name in ast.walk(node.value)
                if isinstance(name, ast.Name)):
            exec(compile(ast.Module([node], []), "hermes", "exec"), namespace)  # noqa: S102
    return namespace


def _define(node: ast.FunctionDef, namespace: dict[str, Any]) -> Any:
    """Compile one of Hermes' functions (decorators, annotations and lazy imports dropped) in
    `namespace`."""
    for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        arg.annotation = None
    function = ast.FunctionDef(name=node.name, args=node.args, returns=None, type_comment=None,
                               decorator_list=[], type_params=[],
                               body=[s for s in node.body if not isinstance(s, ast.ImportFrom)])
    module = ast.fix_missing_locations(ast.Module([function], []))
    exec(compile(module, "agent/context_compressor.py", "exec"), namespace)  # noqa: S102
    return namespace[node.name]


def _assigned(function: ast.FunctionDef, name: str, contains: str | None = None,
              augmented: bool = False) -> ast.expr:
    """The value of the first assignment to `name` in `function` whose text holds `contains`."""
    for node in ast.walk(function):
        if augmented and isinstance(node, ast.AugAssign):
            target, value = node.target, node.value
        elif not augmented and isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name and (
                contains is None or contains in ast.unparse(value)):
            return value
    raise HermesCodeError(f"the synced Hermes code has no {name} holding {contains!r}")


def _render(node: ast.expr, values: dict[str, Any]) -> str:
    """The value of a string constant or f-string whose fields are plain names in `values`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        raise HermesCodeError(f"unexpected Hermes prompt expression {ast.unparse(node)[:60]}")
    pieces = []
    for part in node.values:
        if isinstance(part, ast.FormattedValue):
            if not isinstance(part.value, ast.Name) or part.value.id not in values:
                raise HermesCodeError(f"unknown field {ast.unparse(part.value)} in Hermes' prompt")
            pieces.append(str(values[part.value.id]))
        else:
            pieces.append(_render(part, values))
    return "".join(pieces)
