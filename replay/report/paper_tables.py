"""The backbone comparison's tables after confirmation: Table 7 (three runs of each first-round
damaged pair), the stable damage per backbone, Figure 2 (which backbones damage which repairs,
ordered by damage) and the diagnostics of §4.4 (see `replay.report.paper`)."""

from __future__ import annotations

from replay.core.vocab import PRE_PASS, Arm, Confirmation, Label
from replay.records.cell import CellId
from replay.report.contents import Report
from replay.report.paper_figures import NOT_RUN, Beside, published, rate_beside
from replay.report.paper_study import PaperTable, Study, is_stable

VERDICTS = {Confirmation.STABLE: "confirmed", Confirmation.SEED_VARIABLE: "variable"}
RUN_TEXT = {True: "pass", False: "fail", None: "-"}
FIGURE2_CODES = {Confirmation.STABLE: "D!", Confirmation.SEED_VARIABLE: "D~"}


def confirmation_table(study: Study) -> PaperTable:
    """Table 7: each first-round damaged pair's three POST runs and its verdict."""
    report, paper = study.backbones, published()
    rows = []
    for (instance, summarizer), outcome in report.outcomes.items():
        if outcome.label != Label.DAMAGED:
            continue
        runs = outcome.post_runs or (outcome.post, None, None)
        rows.append((instance, study.column(summarizer), *(RUN_TEXT[run] for run in runs),
                     VERDICTS.get(outcome.confirmation, "pending")))  # type: ignore[arg-type]
    confirmed = sum(row[-1] == "confirmed" for row in rows)
    decided = sum(row[-1] != "pending" for row in rows)
    section = paper["confirmation"]["section"]
    beside = [rate_beside("first-round damaged pairs confirmed", section,
                          (confirmed, decided) if decided else None,
                          (paper["confirmation"]["confirmed"], paper["confirmation"]["pairs"]))]
    for model in paper["backbone"]:
        if "confirmed" not in model:
            continue
        summarizer = study.by_paper(model["name"])
        rate = next((r for r in report.rates if r.summarizer == summarizer), None)
        run = NOT_RUN if rate is None else f"{rate.damaged} -> {rate.stable}"
        beside.append(Beside(f"{model['name']}: first-round damaged -> confirmed",
                             model["section"], f"{model['first_round_damaged']} -> "
                             f"{model['confirmed']}", run, "-"))
    return PaperTable("table7", "Table 7: three-run confirmation",
                      ("instance", "backbone", "seed 0", "seed 1", "seed 2", "verdict"), rows,
                      beside, ["confirmed: POST fails in at least 2 of 3 runs; other backbones "
                               "reuse the first seed's PRE"])


def stable_table(study: Study) -> PaperTable:
    """Stable damage per backbone, lowest first, with the paper's per-backbone figures."""
    report, paper = study.backbones, published()
    rates = sorted((r for r in report.rates), key=lambda r: (
        r.stable / r.pre_pass if r.pre_pass else 2.0, r.summarizer))
    rows = []
    for rate in rates:
        stable = "-" if rate.unconfirmed else f"{rate.stable}/{rate.pre_pass}"
        kept = "-" if rate.unconfirmed else f"{rate.pre_pass - rate.stable}/{rate.pre_pass}"
        rows.append((study.column(rate.summarizer), str(rate.pre_pass), str(rate.damaged),
                     stable, kept))
    beside = []
    for model in paper["backbone"]:
        if "preserved" not in model:
            continue
        rate = next((r for r in rates if r.summarizer == study.by_paper(model["name"])), None)
        run = None if rate is None or rate.unconfirmed else (rate.pre_pass - rate.stable,
                                                             rate.pre_pass)
        beside.append(rate_beside(f"{model['name']}: repairs preserved (stable view)",
                                  model["section"], run, (model["preserved"], model["n"])))
    return PaperTable("stable_damage", "Stable damage per backbone (lowest first)",
                      ("backbone", "PRE pass", "first-round damaged", "stable damage",
                       "preserved"), rows, beside,
                      ["preserved: PRE-pass repairs without stable damage; `-` until every "
                       "damaged pair is confirmed"])


def figure2_table(study: Study) -> PaperTable:
    """Figure 2: backbones (rows, least damage first) x PRE-pass repairs (columns, most damaged
    first); D! stable, D~ seed-variable, D? not confirmed yet, P preserved."""
    report = study.backbones
    summarizers = [r.summarizer for r in sorted(report.rates, key=lambda r: (
        r.stable, r.damaged, r.summarizer))]
    repairs = [i for i in report.plan.instances
               if any(o.label in PRE_PASS for (j, _), o in report.outcomes.items() if j == i)]
    damage = {i: sum(is_stable(report.outcomes[(i, s)]) for s in summarizers) for i in repairs}
    repairs.sort(key=lambda i: (-damage[i], i))
    rows = []
    for summarizer in summarizers:
        codes = []
        for instance in repairs:
            outcome = report.outcomes[(instance, summarizer)]
            damaged = outcome.label == Label.DAMAGED
            codes.append(FIGURE2_CODES.get(outcome.confirmation, "D?") if damaged  # type: ignore[arg-type]
                         else "P" if outcome.label == Label.PRESERVED else "-")
        rows.append((study.column(summarizer), *codes))
    rows.append(("backbones with stable damage", *(str(damage[i]) for i in repairs)))
    return PaperTable("figure2", "Figure 2: which backbones damage which repairs",
                      ("backbone", *repairs), rows, _figure2_beside(study, summarizers, damage))


def _figure2_beside(study: Study, summarizers: list[str], damage: dict[str, int]) -> list[Beside]:
    paper = published()["figure2"]
    worst, sole = paper["most_damaged"], paper["sole_preserver"]
    total = published()["stable_damage"]["backbones"]
    found = worst["instance"] in damage
    beside = [rate_beside(f"backbones with stable damage on {worst['instance']}",
                          paper["section"],
                          (damage[worst["instance"]], len(summarizers)) if found else None,
                          (worst["backbones"], total))]
    run = NOT_RUN
    if sole["instance"] in damage:
        keep = [study.column(s) for s in summarizers if study.backbones.outcomes[
            (sole["instance"], s)].label in PRE_PASS and not is_stable(
            study.backbones.outcomes[(sole["instance"], s)])]
        run = ", ".join(keep) or "none"
    beside.append(Beside(f"backbones preserving {sole['instance']}", paper["section"],
                         f"only {sole['backbone']}", run, "-"))
    return beside


DIAGNOSTIC_HEADER = ("run", "instance", "summarizer", "confirmation", "target files kept",
                     "gold tokens kept", "repeated reads PRE/POST", "actions PRE/POST",
                     "exit PRE/POST")


def diagnostics_table(study: Study) -> PaperTable:
    """§4.4: for each damaging summary (seed 0), what it kept of the repair and what PRE and
    POST then did."""
    rows = []
    for report in (study.backbones, study.prompts):
        for (instance, summarizer), outcome in report.outcomes.items():
            if outcome.label == Label.DAMAGED:
                rows.append(_diagnosis(report, instance, summarizer,
                                       outcome.confirmation or "single run"))
    paper = published()["diagnostics"]
    kept = sum(1 for row in rows if row[3] == Confirmation.STABLE and _whole(row[4]))
    stable = sum(1 for row in rows if row[3] == Confirmation.STABLE)
    gold = paper["all_gold_tokens"]
    tokens = [row[5] for row in rows if row[1] == gold["instance"]]
    beside = [Beside("stable failures keeping every target file", paper["section"],
                     f"{paper['stable_failures_keeping_target_files']} (Kimi-K3)",
                     f"{kept} of {stable}" if stable else NOT_RUN, "-"),
              Beside(f"gold-patch tokens kept on {gold['instance']}", paper["section"],
                     f"all {gold['tokens']} audited", ", ".join(tokens) or NOT_RUN, "-")]
    return PaperTable("diagnostics", "§4.4 diagnostics of the damaging summaries",
                      DIAGNOSTIC_HEADER, rows, beside,
                      ["kept: of the gold patch's files / new identifiers, how many the summary "
                       "names; `replay view RUN` shows each action trace"])


def _diagnosis(report: Report, instance: str, summarizer: str,
               confirmation: str) -> tuple[str, ...]:
    pre = report.cells.get(CellId(instance, Arm.PRE, "", 0))
    post = report.cells.get(CellId(instance, Arm.POST, summarizer, 0))
    found = [cell.diagnostics if cell else {} for cell in (pre, post)]
    summary = found[1].get("summary") or {}

    def both(key: str) -> str:
        return "/".join(str(part.get(key, "-")) for part in found)

    return (report.run, instance, summarizer, str(confirmation),
            "/".join(map(str, summary.get("target_files") or ["-"])),
            "/".join(map(str, summary.get("gold_tokens") or ["-"])),
            both("repeated_reads"), both("actions"), both("exit_reason"))


def _whole(kept: str) -> bool:
    parts = kept.split("/")
    return len(parts) == 2 and parts[0] == parts[1] and parts[1] != "0"
