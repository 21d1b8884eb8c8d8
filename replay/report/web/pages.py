"""The view's pages as HTML: the grid of a run and one page per cell, from Jinja templates.

Pages link to each other by relative paths (`index.html`, `cells/<name>.html`,
`static/view.css`), so the same pages work served (`replay view`) and as files opened from disk
(`replay report --html DIR`). Templates escape every value (autoescaping is always on) and the
pages carry no script; their Content-Security-Policy forbids any.
"""

from __future__ import annotations

import functools
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from replay.core.digest import digest
from replay.core.files import write_atomic
from replay.core.vocab import Arm
from replay.measures.statistics import rate_text
from replay.records.cell import CellId, CellResult
from replay.report.contents import Report, retention_interval
from replay.report.histories import HISTORY_COLUMNS, history_rows
from replay.report.marks import CODES, NOT_RUN_LEGEND, TRUNCATED_LEGEND, code
from replay.report.names import legend_lines
from replay.report.tables import (
    RATE_NOTE,
    RETENTION_NOTE,
    retention_text,
    verdict,
)
from replay.report.web.data import GridView, cell_view, grid_view, seeds_of
from replay.report.web.highlight import marked, values
from replay.store import Store

CSP = "script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
STYLESHEET = "view.css"
CLIP_CHARS = 60_000
LEGEND = {"preserved": "PRE and POST pass", "damaged": "PRE passes, POST fails",
          "rescued": "PRE fails, POST passes", "unsolved": "both fail",
          "excluded": "validation excluded it", "unevaluated": "not run yet",
          "error": "a harness fault (retried)"}


def page_name(instance: str, summarizer: str, seed: int) -> str:
    """The path of a cell page relative to the grid: readable, and unique by its digest."""
    short = digest([instance, summarizer, seed], spaced=True)[:8]
    return f"cells/{_slug(instance)}.{_slug(summarizer)}.s{seed}.{short}.html"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text)[:60]


def cell_pages(report: Report) -> dict[str, tuple[str, str, int]]:
    """Every cell page of a run: its path -> (instance, summarizer, seed)."""
    pages = {}
    for instance, summarizer in report.outcomes:
        for seed in seeds_of(report, instance, summarizer):
            pages[page_name(instance, summarizer, seed)] = (instance, summarizer, seed)
    return pages


def _clip(text: Any, limit: int = CLIP_CHARS) -> str:
    text = "" if text is None else str(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit:,} more characters]"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _verdict(result: CellResult | None) -> str:
    return "-" if result is None else verdict(result)


def _arguments(raw: Any) -> str:
    """Tool-call arguments as readable text (they are stored as a JSON string)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    if isinstance(raw, dict) and set(raw) == {"command"}:
        return str(raw["command"])
    return json.dumps(raw, indent=1, ensure_ascii=False)


@functools.cache
def environment() -> jinja2.Environment:
    """The templates, with autoescaping on for every one of them."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("replay.report.web", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(clip=_clip, percent=_percent, arguments=_arguments, marked=marked,
                       code=code)
    env.globals.update(csp=CSP, codes=CODES, legend=LEGEND, page_name=page_name,
                       sibling=lambda *cell: page_name(*cell).split("/", 1)[1],
                       pre_cell=lambda instance: CellId(instance, Arm.PRE, "", 0),
                       verdict=_verdict, values=values,
                       history_rows=history_rows, history_columns=HISTORY_COLUMNS,
                       rate_text=rate_text, legend_lines=legend_lines, rate_note=RATE_NOTE,
                       retention_note=RETENTION_NOTE, retention_text=retention_text,
                       not_run_legend=NOT_RUN_LEGEND, truncated_legend=TRUNCATED_LEGEND,
                       retention_interval=retention_interval)
    return env


def render_grid(view: GridView) -> str:
    """The grid page of a run."""
    return environment().get_template("grid.html").render(view=view, report=view.report,
                                                          root="")


def render_cell(store: Store, report: Report, instance: str, summarizer: str, seed: int) -> str:
    """The page of one cell of a run."""
    view = cell_view(store, report, instance, summarizer, seed)
    return environment().get_template("cell.html").render(view=view, report=report, root="../")


def render_missing(path: str) -> str:
    """The page for a path the view does not have."""
    return environment().get_template("missing.html").render(path=path, root="")


def stylesheet() -> bytes:
    """The pages' one stylesheet."""
    return resources.files("replay.report.web").joinpath("static", STYLESHEET).read_bytes()


def write_site(store: Store, run: str, folder: Path) -> list[Path]:
    """Write the grid, every cell page and the stylesheet of run `run` under `folder`."""
    grid = grid_view(store, run)
    report = grid.report
    files = {"index.html": render_grid(grid).encode(), f"static/{STYLESHEET}": stylesheet()}
    for name, (instance, summarizer, seed) in cell_pages(report).items():
        files[name] = render_cell(store, report, instance, summarizer, seed).encode()
    written = []
    for name, data in files.items():
        written.append(write_atomic(folder / name, data))
    return written
