"""The study's 13-arm comparison, and what a probe run plans before it asks anything.

The arms are Full, S and S + Top 1-5, H and H + Top 1-5 (Top 0 is the summary alone): S is the
backbone with a production prompt (`claude-code` unless named), H is the study's budgeted Hermes
compaction (`hermes-h`, see `replay.compaction.hermes`), and Top N fuses the N best evidence
units (`replay.compaction.fusion`). In the study every arm is planned once per generation, Full
and the deterministic ones too, so 14 tasks x 13 arms x 3 generations make 546 contexts and, at
two answers each, 1,092 answers; a repeated deterministic context is the same request again (the
call cache answers it), so it adds no information, only the study's weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.compaction.summarize import parse_summarizer

S_PROMPT = "claude-code"
H_PROMPT = "hermes-h"
TOPS = (1, 2, 3, 4, 5)


def study_arms(backbone: str, s_prompt: str = S_PROMPT) -> list[str]:
    """The 12 summarizer arms for `backbone` (Full is the 13th): S + Top 0-5, H + Top 0-5."""
    arms: list[str] = []
    for prompt in (s_prompt, H_PROMPT):
        base = f"{backbone}:{prompt}"
        arms += [base, *(f"{base}+top:{top}" for top in TOPS)]
    return arms


def generation_count(method: str, wanted: int, every_arm: bool = False) -> int:
    """A method's generations: `wanted` when a model writes its summary (or every arm is
    planned per generation, as the study does), else 1."""
    if every_arm:
        return wanted
    if method == "full" or parse_summarizer(method).backbone is None:
        return 1
    return wanted


@dataclass(frozen=True)
class Planned:
    """What a probe run will ask: histories (by cohort), methods, contexts and answers."""

    cohorts: dict[str, int]
    methods: list[str]
    generations: int
    answers: int
    contexts: int
    asked: int
    answer_tokens: int | None = None
    summary_tokens: int | None = None

    def lines(self) -> list[str]:
        """The plan as printed by a dry run."""
        cohorts = ", ".join(f"{count} {name}" for name, count in sorted(self.cohorts.items()))
        found = [f"plan: {sum(self.cohorts.values())} histories ({cohorts}), "
                 f"{len(self.methods)} arms, {self.generations} generation(s), "
                 f"{self.answers} answer(s) per probe: {self.contexts:,} contexts, "
                 f"{self.asked:,} answers",
                 *(f"  arm {index}: {method}" for index, method in enumerate(self.methods, 1))]
        if self.answer_tokens is not None:
            found.append(f"token estimate (Qwen tokens, before the call cache's repeats): "
                         f"answers at most {self.answer_tokens:,} input tokens (Full's complete "
                         f"input for Full, the task's ceiling for every other arm); summaries "
                         f"and judges about {self.summary_tokens:,} (each model summary reads "
                         "its history once, an H up to three times, a judge once per history)")
        return found


def plan(probes: dict[str, tuple[str, int]], methods: list[str], generations: int,
         answers: int, every_arm: bool = False) -> Planned:
    """The counts for histories `probes` (instance id -> (cohort, probes)) under `methods`."""
    cohorts: dict[str, int] = {}
    contexts = asked = 0
    for cohort, count in probes.values():
        cohorts[cohort] = cohorts.get(cohort, 0) + 1
        for method in methods:
            made = generation_count(method, generations, every_arm)
            contexts += made
            asked += made * count * answers
    return Planned(cohorts, methods, generations, answers, contexts, asked)


def token_estimate(sizes: dict[str, tuple[int, int, int]], methods: list[str], generations: int,
                   answers: int, every_arm: bool = False) -> tuple[int, int]:
    """Input tokens a plan asks for: (answers, summaries and judges). `sizes` gives per history
    (instance id) its probe count, Full's complete input and its ceiling."""
    asked = written = 0
    for count, full, ceiling in sizes.values():
        judges: set[str] = set()
        for method in methods:
            made = generation_count(method, generations, every_arm)
            asked += made * count * answers * (full if method == "full" else ceiling)
            if method == "full":
                continue
            name = parse_summarizer(method)
            base = name.fused.base if name.fused is not None else name
            if name.fused is not None:
                judges.add(name.fused.judge or str(base.backbone))
            elif base.backbone is not None:
                written += made * full * (3 if base.prompt == H_PROMPT else 1)
        written += len(judges) * full
    return asked, written
