"""A stand-in for Hermes' compressor code and redaction, written for the tests with the names and
shapes `replay.compaction.hermes` reads (the real files come from the pinned wheel at run time
and are never committed), and a catalogue entry that pins it."""

from __future__ import annotations

import json
from pathlib import Path

from replay.compaction.sources import PromptText, save_prompt, text_sha256

CODE = '''
import re
HISTORICAL_TASK_HEADING = "## Historical Task Snapshot"
SUMMARY_PREFIX = "[HANDOFF] Earlier turns were compacted:"
LEGACY_SUMMARY_PREFIX = "[CONTEXT SUMMARY]:"
_SUMMARY_END_MARKER = "--- END OF SUMMARY ---"
_HISTORICAL_SUMMARY_PREFIXES = ("[OLD HANDOFF]",)
_SUMMARY_RATIO = 0.20
_MIN_SUMMARY_TOKENS = 2000
_MEDIA_RE = re.compile(r"MEDIA:\\S+")

class ContextCompressor:
    _CONTENT_MAX = 6000

    @staticmethod
    def _strip_summary_prefix(summary: str) -> str:
        text = (summary or "").strip()
        for prefix in (SUMMARY_PREFIX, LEGACY_SUMMARY_PREFIX, *_HISTORICAL_SUMMARY_PREFIXES):
            if text.startswith(prefix):
                text = text[len(prefix):].lstrip()
                break
        return text

    def _serialize_for_summary(self, turns: list) -> str:
        from agent.agent_runtime_helpers import strip_think_blocks
        parts = []
        for msg in turns:
            content = redact_sensitive_text(str(msg.get("content") or ""))
            parts.append(f"[{msg['role'].upper()}]: {content[:self._CONTENT_MAX]}")
        return "\\n\\n".join(parts)

    def _generate_summary(self, turns, focus_topic=None):
        summary_budget = 0
        _summarizer_preamble = ("You write a checkpoint. " "Keep exact values.")
        _template_sections = f"""{HISTORICAL_TASK_HEADING}
## Critical Context
Target ~{summary_budget} tokens.{_temporal_anchoring_rule}"""
        if self._previous_summary:
            prompt = f"""{_summarizer_preamble} UPDATE {content_to_summarize}"""
        else:
            prompt = f"""{_summarizer_preamble}
Create a structured checkpoint summary.
TURNS TO SUMMARIZE:
{content_to_summarize}{_memory_section}

{_template_sections}"""
        if focus_topic:
            prompt += f"""
FOCUS TOPIC: {focus_topic}"""
'''
REDACTION = '''
import re
def redact_sensitive_text(text, **_options):
    return re.sub(r"sk-[A-Za-z0-9]{20,}", "[REDACTED]", text or "")
'''
PROMPT = PromptText(name="hermes", agent="Hermes agent", registry="pypi", package="hermes-agent",
                    version="test", digest="sha256:0", synced_at="now",
                    parts={"code": CODE, "redaction": REDACTION})


def save_hermes(catalogue: Path) -> None:
    """Cache the stand-in as the synced `hermes` prompt and pin it in `catalogue`."""
    save_prompt(PROMPT)
    lines = ["[[prompt]]", 'name = "hermes"', 'agent = "Hermes agent"', 'license = "MIT"',
             'registry = "pypi"', 'package = "hermes-agent"', 'version = "test"',
             'python = "3.11"', 'digest = "sha256:0"']
    for role, text in PROMPT.parts.items():
        lines += ["[[prompt.part]]", f'role = "{role}"', 'file = "x.py"', f"chars = {len(text)}",
                  f"sha256 = {json.dumps(text_sha256(text))}", "[[prompt.part.cut]]",
                  'kind = "file"']
    with catalogue.open("a", encoding="utf-8") as handle:
        handle.write("\n" + "\n".join(lines) + "\n")

# The Historical Task Snapshot Hermes' provenance validation asks of a summary of turns with no
# user turn (the study's H summarizes the evidence turns, the task going in as its focus).
NO_USER = "## Historical Task Snapshot\nNone. This session contains no user-authored turns.\n"
