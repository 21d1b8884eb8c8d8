"""`replay view` on the session's scripted demo sweep (demo_sweep.py, run `backbones`, its
retention scored), looked at in headless Chromium.

Stockroom is damaged under summ-b, whose POST starts from a LOST summary and fixes tally only.
That POST's reply and command output hold a `<script>`, which must show as text.

Screenshots of the grid and of the damaged cell go to REPLAY_SCREENSHOTS (default
runs/screenshots/ in the repository, which git ignores).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replay.core.paths import PROJECT_ROOT
from replay.report.web.pages import page_name

from conftest import REPLAY, run_replay
from demo_sweep import DemoSweep
from sweep_scripts import STOCKROOM

DAMAGED = page_name(STOCKROOM, "summ-b:claude-code", 0)


def chromium() -> str:
    """The browser to use, or a skip saying how to get one."""
    found = shutil.which(os.environ.get("REPLAY_CHROMIUM") or "chromium")
    if found is None:
        pytest.skip("no chromium: `bash scripts/chromium.sh` installs Debian's package (as root "
                    "with apt-get), or set REPLAY_CHROMIUM to a Chromium binary")
    return found


def browse(browser: str, profile: Path, *args: str) -> str:
    """Run headless Chromium once; its stdout (the DOM with --dump-dom)."""
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshots() -> Path:
    folder = Path(os.environ.get("REPLAY_SCREENSHOTS") or PROJECT_ROOT / "runs" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def serve(store: Path) -> tuple[subprocess.Popen[str], str]:
    """`replay view` on any free port, and the address it printed."""
    process = subprocess.Popen([*REPLAY, "view", "backbones", "--store", str(store), "--port",
                                "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "COLUMNS": "200"})
    line = process.stdout.readline()
    found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
    if found is None:
        process.kill()
        pytest.fail(f"replay view printed {line!r}: {process.communicate()[1]}")
    return process, found.group(1)


def test_view_in_chromium_shows_the_grid_a_damaged_cell_and_traces_as_text(
        demo_sweep: DemoSweep, tmp_path: Path) -> None:
    browser = chromium()
    process, url = serve(demo_sweep.store)
    try:
        grid = browse(browser, tmp_path / "profile", "--dump-dom", url)
        cell = browse(browser, tmp_path / "profile", "--dump-dom", url + DAMAGED)
        shots = screenshots()
        browse(browser, tmp_path / "profile", "--window-size=1280,800",
               f"--screenshot={shots / 'grid.png'}", url)
        browse(browser, tmp_path / "profile", "--window-size=1400,2200",
               f"--screenshot={shots / 'cell.png'}", url + DAMAGED)
        browse(browser, tmp_path / "profile", "--window-size=1280,3000",
               f"--screenshot={shots / 'page.png'}", url)
    finally:
        process.terminate()
        process.wait(timeout=30)

    assert '<table class="grid" id="grid">' in grid
    labels = {href: label for label, href in
              re.findall(r'data-label="(\w+)"[^>]*>\s*<a href="([^"]+)"', grid)}
    assert len(labels) == 9  # 3 instances x summ-a, summ-b, summ-c
    assert labels[DAMAGED] == "damaged"
    assert list(labels.values()).count("preserved") == 4
    assert "1/2 (50.0%, 9.5-90.5%)" in grid  # summ-b's task damage with its Wilson interval
    assert "no summarizer differs from another at 95%: n=2" in grid
    assert '<img id="plot-damage"' in grid and '<img id="plot-retention"' in grid

    assert re.search(r'<span class="label label-damaged badge" id="label">'
                     r'damaged \(stable\)</span>', cell)  # confirmed at three seeds
    assert re.search(r'id="divergence">First divergence at step 1: <b>different action</b>', cell)
    assert re.search(r'<tr class="step diverges" id="step-1">\s*<th>1<div class="marker"', cell)
    assert "LOST: nothing found" in cell  # the summary beside the history it replaced
    assert re.search(r"this cell spent: \d+ tokens in \(0 cached\), \d+ out, \$0\.\d{4}, "
                     r"\d+\.\d s \(estimated at most \$0\.\d{4}\)", cell)
    assert "tests/test_inventory.py::test_unknown_unit_raises_unknown_unit_error" in cell
    assert '<td class="s-PASSED">PASSED</td><td class="s-FAILED">FAILED</td>' in cell
    # the <script> of the trace is text: escaped in the DOM, never an element, never run
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in cell
    assert "<script" not in cell and "pwned" not in cell.split("</title>")[0]
    # the model calls of the cell were found: PRE's step, the summary, POST's step
    calls = cell[cell.index('id="calls"'):]
    assert len(re.findall(r"<td>(?:PRE|POST)</td><td>(?:step 1|summary)</td>", calls)) == 3
    assert len(re.findall(r"<td>\d+\.\d\d s</td>", calls)) == 3  # each call's latency
    for name in ("grid.png", "cell.png", "page.png"):
        assert (shots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the browser drew both plots: the damage points' red and the retention points' blue
    assert colour_share(shots / "page.png", (0xE5, 0x39, 0x35)) > 0
    assert colour_share(shots / "page.png", (0x1F, 0x77, 0xB4)) > 0
    print(f"screenshots: {shots / 'grid.png'} {shots / 'cell.png'} {shots / 'page.png'}",
          file=sys.stderr)


def colour_share(path: Path, rgb: tuple[int, int, int]) -> float:
    """The share of a screenshot's pixels within a few levels of colour `rgb`."""
    from matplotlib.image import imread

    pixels = (imread(path)[..., :3] * 255).round()
    close = (abs(pixels - rgb) <= 6).all(axis=-1)
    return float(close.mean())


def test_report_html_writes_pages_that_open_from_disk(demo_sweep: DemoSweep,
                                                      tmp_path: Path) -> None:
    browser = chromium()
    site = tmp_path / "site"
    done = run_replay("report", "backbones", "--store", str(demo_sweep.store), "--out",
                      str(tmp_path / "exports"), "--html", str(site))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"open {site / 'index.html'}" in done.stdout
    cell = browse(browser, tmp_path / "profile", "--dump-dom", (site / DAMAGED).as_uri())
    assert 'id="divergence">First divergence at step 1' in cell
    assert "&lt;script&gt;" in cell and "<script" not in cell
    grid = browse(browser, tmp_path / "profile", "--dump-dom", (site / "index.html").as_uri())
    assert f'href="{DAMAGED}"' in grid
