"""The 0.95 rule that chooses the detail types `replay retention --corpus` scores, on a labels
file written here and on the shipped one."""

from __future__ import annotations

from pathlib import Path

from replay.corpus.precision import LABELS, choice, measured, rule_kinds

HEADER = "repository\tcommit\tpath\tposition\tkind\tvalue\tlabel\treason\n"


def _labels(path: Path, counts: dict[str, tuple[int, int]]) -> Path:
    """A labels file with, per kind, (details, noise) rows."""
    lines = [HEADER]
    for kind, (details, noise) in counts.items():
        for index in range(details + noise):
            label = "detail" if index < details else "noise"
            lines.append(f"o/r\tabc\t00/x/0\t1\t{kind}\tv{index}\t{label}\twhy\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_the_rule_keeps_types_at_095_and_names_why(tmp_path: Path) -> None:
    labels = _labels(tmp_path / "labels.tsv", {"identifier": (18, 2), "path": (19, 1),
                                               "command": (3, 0)})
    found = measured(labels)
    assert (found["path"].labelled, found["path"].details) == (20, 19)
    assert rule_kinds(found) == ("path", "command")  # 0.95 exactly passes; 0.90 does not
    chosen = choice(None, labels)
    assert not chosen.named
    assert chosen.reason("path") == "scored (precision >= 0.95)"
    assert chosen.reason("identifier") == "not scored (precision under 0.95)"
    assert chosen.reason("host") == "not scored (no labelled values)"
    named = choice(("identifier",), labels)
    assert named.scored == ("identifier",) and named.named
    assert named.reason("identifier") == "scored (--kinds); the 0.95 rule fails"
    assert named.reason("path") == "not scored (--kinds); the 0.95 rule passes"


def test_the_shipped_labels_are_a_draw_of_400_values_from_40_sessions() -> None:
    rows = LABELS.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == 400
    assert len({tuple(row.split("\t")[:3]) for row in rows}) == 40
    found = measured()
    assert sum(counts.labelled for counts in found.values()) == 400
    assert all(found[kind].precision >= 0.95 for kind in rule_kinds(found))
