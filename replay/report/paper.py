"""A study's runs as the paper prints them: the validation counts, Table 6 (first-round outcomes
per backbone x instance), Table 7 (three-run confirmation), the stable-damage range, Figure 2
(which backbones damage which repairs), Table 3 (POST passes per prompt), Table 13 (outcomes by
prompt) and the diagnostics of §4.4, each with the paper's published figures beside it.

Codes: P preserved, D damaged, X excluded by validation, E error, and `-` for a cell outside the
PRE-pass comparison (PRE failed or has not run), as the paper's dashes. Figure 2 marks damage
`D!` stable, `D~` seed-variable, `D?` not confirmed yet.
"""

from __future__ import annotations

from replay.core.vocab import PRE_PASS, Label
from replay.report.contents import Report
from replay.report.paper_figures import (
    NOT_RUN,
    Beside,
    list_beside,
    published,
    rate_beside,
    share_beside,
)
from replay.report.paper_study import PaperTable, Study, first_code, missing, pre_verdicts
from replay.report.paper_tables import (
    confirmation_table,
    diagnostics_table,
    figure2_table,
    stable_table,
)


def validation_table(study: Study) -> PaperTable:
    """The validation counts: instances, valid, excluded, PRE pass and PRE fail."""
    report, paper = study.backbones, published()["validation"]
    instances = report.plan.instances
    excluded = sorted({i for (i, _), o in report.outcomes.items() if o.label == Label.EXCLUDED})
    pres = pre_verdicts(report)
    passing = [i for i in instances if pres[i] and i not in excluded]
    failing = [i for i in instances if pres[i] is False and i not in excluded]
    unrun = [i for i in instances if pres[i] is None and i not in excluded]
    rows = [("instances in the suite", str(len(instances)), ""),
            ("excluded by validation", str(len(excluded)), ", ".join(excluded)),
            ("PRE pass (the comparison set)", str(len(passing)), ""),
            ("PRE fail (outside the comparison)", str(len(failing)), ", ".join(failing)),
            ("PRE not run (or could not run)", str(len(unrun)), ", ".join(unrun))]
    section = paper["section"]
    named = [i for i in paper["pre_failing"] if i in instances]
    beside = [
        rate_beside("PRE pass of the repairs", section, (len(passing), len(instances)),
                    (paper["pre_pass"], paper["repairs"])),
        list_beside("excluded as PRE-failing", section,
                    [i for i in failing if i in named] if named else None, paper["pre_failing"]),
        Beside("separate-directory pilot: path mismatches", section,
               f"{paper['pilot_mismatches']} of {paper['pilot_cases']}", NOT_RUN, "-"),
    ]
    return PaperTable("validation", "Validation and the PRE-pass set",
                      ("count", "n", "instances"), rows, beside,
                      ["replay runs only the shared-directory setting, so the pilot of separate "
                       "directories is not run"])


def grid_table(report: Report, slug: str, title: str, columns: dict[str, str]) -> PaperTable:
    """First-round codes per instance (rows) and column (`columns`: summarizer -> its name),
    with the PRE verdict and each column's damaged / PRE-pass under it."""
    pres = pre_verdicts(report)
    rows = []
    for instance in report.plan.instances:
        pre = {True: "pass", False: "fail", None: "-"}[pres[instance]]
        rows.append((instance, pre, *(first_code(report.outcomes[(instance, s)])
                                      for s in columns)))
    counts = []
    for summarizer in columns:
        found = [o for (_, s), o in report.outcomes.items() if s == summarizer]
        inside = [o for o in found if o.label in PRE_PASS]
        counts.append(f"{sum(o.label == Label.DAMAGED for o in inside)}/{len(inside)}")
    rows.append(("damaged / PRE-pass", "", *counts))
    return PaperTable(slug, title, ("instance", "PRE", *columns.values()), rows,
                      notes=["P preserved  D damaged  X excluded by validation  E error  "
                             "- outside the PRE-pass comparison"])


def table6(study: Study) -> PaperTable:
    """Table 6: first-round outcomes per backbone x instance."""
    columns = {s: study.column(s) for s in study.backbones.plan.summarizers}
    found = grid_table(study.backbones, "table6", "Table 6: first-round outcomes per backbone",
                       columns)
    found.notes.append(f"paper: {published()['stable_damage']['backbones']} backbones "
                       "(Appendix A); backbones the paper names that were not run: "
                       + (", ".join(missing(study)) or "none"))
    return found


def table3(study: Study) -> PaperTable:
    """Table 3: POST passes per prompt (the summarizer fixed, single run)."""
    report, paper = study.prompts, published()["prompts"]
    rows, beside = [], []
    runs = {}
    for row in report.prompts:
        runs[row.prompt] = (row.post_pass, row.pre_pass)
        rows.append((row.prompt, f"{row.post_pass}/{row.pre_pass}"))
    for name, passes in paper["post_pass"].items():
        beside.append(rate_beside(f"POST pass, {name}", paper["section"], runs.get(name),
                                  (passes, paper["n"])))
    return PaperTable("table3", "Table 3: POST passes per prompt", ("prompt", "POST pass"),
                      rows, beside)


def table13(study: Study) -> PaperTable:
    """Table 13: first-round outcomes by prompt, and the instances each prompt fails."""
    report = study.prompts
    columns = {s: s.rsplit(":", 1)[-1] for s in report.plan.summarizers}
    found = grid_table(report, "table13", "Table 13: outcomes by prompt", columns)
    paper = published()["prompt_failures"]
    for name, failures in paper.items():
        if name == "section":
            continue
        summarizer = next((s for s, shown in columns.items() if shown == name), None)
        compared = [(i, o) for (i, s), o in report.outcomes.items()
                    if s == summarizer and o.label in PRE_PASS]
        run = sorted(i for i, o in compared if o.label == Label.DAMAGED) if compared else None
        found.beside.append(list_beside(f"{name}: damaged instances", paper["section"], run,
                                        failures))
    return found


def range_beside(study: Study) -> list[Beside]:
    """The stable-damage range across the run's backbones beside the paper's 5-64%."""
    paper = published()["stable_damage"]
    rates = [r for r in study.backbones.rates if r.pre_pass and not r.unconfirmed]
    section = paper["section"]
    if not rates:
        return [Beside(f"stable damage, lowest of {paper['backbones']} backbones", section,
                       f"{100 * paper['low']:.0f}%", NOT_RUN, "-")]
    low = min(rates, key=lambda r: r.stable / r.pre_pass)
    high = max(rates, key=lambda r: r.stable / r.pre_pass)
    return [share_beside(f"stable damage, lowest ({study.column(low.summarizer)})", section,
                         (low.stable, low.pre_pass), paper["low"], f"{100 * paper['low']:.0f}%"),
            share_beside(f"stable damage, highest ({study.column(high.summarizer)})", section,
                         (high.stable, high.pre_pass), paper["high"],
                         f"{100 * paper['high']:.0f}%")]


def study_tables(study: Study) -> list[PaperTable]:
    """Every table of the study, in the order the paper's argument reads."""
    stable = stable_table(study)
    stable.beside[:0] = range_beside(study)
    return [validation_table(study), table6(study), confirmation_table(study), stable,
            figure2_table(study), table3(study), table13(study), diagnostics_table(study)]
