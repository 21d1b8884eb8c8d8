"""A study's paper tables printed, written as CSV, and drawn (Figure 2 and Table 3 as PNG)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from rich.console import Console
from rich.table import Table

from replay.core.files import write_atomic
from replay.report.paper_figures import BESIDE_HEADER
from replay.report.paper_study import PaperTable
from replay.report.plots import _figure, png

FIGURE2_COLOURS = {"D!": 2, "D~": 1, "D?": 1, "P": 0, "-": -1}


def render(tables: list[PaperTable], out: Console) -> None:
    """Print each table, then the paper's figures beside it."""
    for table in tables:
        grid = Table(title=table.title, title_justify="left")
        for name in table.header:
            grid.add_column(name, overflow="fold")
        for row in table.rows:
            grid.add_row(*row)
        out.print(grid)
        for note in table.notes:
            out.print(f"  {note}", style="dim")
        if table.beside:
            beside = Table(title=f"{table.title}: beside the paper", title_justify="left")
            for name in BESIDE_HEADER:
                beside.add_column(name, overflow="fold")
            for found in table.beside:
                beside.add_row(*found.row())
            out.print(beside)


def _csv(path: Path, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Path:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return write_atomic(path, text.getvalue())


def write(tables: list[PaperTable], folder: Path) -> list[Path]:
    """Write each table as `SLUG.csv`, every published figure beside the run's as `paper.csv`,
    and the figures as PNG; return the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [_csv(folder / f"{t.slug}.csv", t.header, t.rows) for t in tables]
    written.append(_csv(folder / "paper.csv", ("table", *BESIDE_HEADER),
                        [(t.title, *b.row()) for t in tables for b in t.beside]))
    by_slug = {t.slug: t for t in tables}
    for slug, draw in (("figure2", figure2_png), ("table3", table3_png)):
        if slug in by_slug:
            path = folder / f"{slug}.png"
            write_atomic(path, draw(by_slug[slug]))
            written.append(path)
    return written


def figure2_png(table: PaperTable) -> bytes:
    """Figure 2 as a heat map: backbones (rows, least damage first) x repairs (most damaged
    first); dark red stable damage, light red seed-variable or unconfirmed, green preserved."""
    from matplotlib.colors import ListedColormap

    rows = table.rows[:-1]  # the last row counts the backbones
    repairs = list(table.header[1:])
    values = [[FIGURE2_COLOURS.get(code, -1) for code in row[1:]] for row in rows]
    figure = _figure(max(5.5, 2.5 + 0.45 * len(repairs)), 1.8 + 0.4 * max(1, len(rows)))
    axes = figure.add_subplot()
    colours = ListedColormap(["#eeeeee", "#66bb6a", "#ef9a9a", "#c62828"])
    if rows and repairs:
        axes.imshow(values, cmap=colours, vmin=-1, vmax=2, aspect="auto")
        for y, row in enumerate(rows):
            for x, code in enumerate(row[1:]):
                axes.text(x, y, code, ha="center", va="center", fontsize=7)
    else:
        axes.text(0.5, 0.5, "no repair passed PRE: nothing to compare", ha="center",
                  va="center", fontsize=9, transform=axes.transAxes)
    axes.set_xticks(range(len(repairs)), repairs, rotation=45, ha="right",
                    rotation_mode="anchor", fontsize=7)
    axes.set_yticks(range(len(rows)), [row[0] for row in rows], fontsize=8)
    axes.set_title("Figure 2: which backbones damage which repairs\n(D! stable, D~ "
                   "seed-variable, D? unconfirmed, P preserved)", fontsize=9)
    return png(figure)


def table3_png(table: PaperTable) -> bytes:
    """Table 3 as bars: POST passes per prompt, with the paper's as points (k/22)."""
    runs = {row[0]: row[1] for row in table.rows}
    paper = {b.figure.removeprefix("POST pass, "): b.paper for b in table.beside}
    names = list(dict.fromkeys([*runs, *paper]))
    figure = _figure(2.5 + 0.8 * max(1, len(names)), 3.4)
    axes = figure.add_subplot()
    for x, name in enumerate(names):
        if name in runs:
            passed, whole = (int(part) for part in runs[name].split("/"))
            if whole:
                axes.bar([x], [100 * passed / whole], color="#64b5f6")
        if name in paper:
            passed, whole = (int(part) for part in paper[name].split(" ")[0].split("/"))
            axes.plot([x], [100 * passed / whole], "kD", markersize=5)
    axes.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    axes.set_ylim(0, 105)
    axes.set_ylabel("POST pass, % of PRE-pass", fontsize=9)
    axes.set_title("Table 3: POST passes per prompt (bars: this run; diamonds: paper)",
                   fontsize=9)
    return png(figure)
