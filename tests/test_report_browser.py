"""``copter report``'s page in a real headless browser (issue #19): Chromium renders it offline, the
screenshot is not blank (pixel variance, share of non-white pixels, the charts' colours present), and the
numbers the browser's DOM holds in the rounds table equal the round log's.

Skips with a reason where no Chromium/Chrome is installed, unless ``COPTER_REQUIRE_BROWSER=1`` (CI installs
one and sets it), which turns the skip into a failure."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import infeasible_delta, small_lp

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

from solver.rounds.report import write_report  # noqa: E402
from tests.report_helpers import assert_page_numbers_are_the_logs, table_rows  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-extensions", "--disable-dev-shm-usage"]


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    msg = f"no headless browser found (looked for {', '.join(BROWSERS)} on PATH)"
    if os.environ.get("COPTER_REQUIRE_BROWSER") == "1":
        pytest.fail(msg + " and COPTER_REQUIRE_BROWSER=1", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    st = root / "st"
    rounds.init(small_lp(), st)
    for i in range(4):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), st)
    rounds.step(infeasible_delta(), st, Settings(tol=1e-6, iteration_limit=20000), force=True)
    write_report(st, root / "report.html")
    return root / "report.html", st


def _run(exe: str, *args: str, cwd) -> subprocess.CompletedProcess:
    # a private profile folder: a parallel test run or a user's browser never shares it
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={cwd / 'profile'}", *args], capture_output=True,
                          timeout=180, cwd=cwd)


def test_the_page_renders_offline_and_is_not_blank(page, tmp_path):
    exe = browser()
    html, _ = page
    shot = tmp_path / "shot.png"
    proc = _run(exe, f"--screenshot={shot}", "--window-size=1200,2400", html.as_uri(), cwd=tmp_path)
    assert shot.exists(), proc.stderr.decode(errors="replace")[-2000:]
    from matplotlib.image import imread

    img = imread(shot)[..., :3]  # (h, w, 3) floats in [0, 1]
    assert img.shape[:2] == (2400, 1200)
    assert img.std() > 0.05  # a blank or single-colour page has none
    non_white = (img.min(axis=2) < 0.9).mean()
    assert 0.02 < non_white < 0.9, non_white
    # the charts drew: the solve-phase blue (#1f77b4) and the failed-round red band are on screen
    blue = np.all(np.abs(img - np.array([0x1F, 0x77, 0xB4]) / 255) < 0.04, axis=2).sum()
    assert blue > 200, blue


def test_the_numbers_in_the_browsers_dom_are_the_logs(page, tmp_path):
    exe = browser()
    html, st = page
    proc = _run(exe, "--dump-dom", html.as_uri(), cwd=tmp_path)
    dom = proc.stdout.decode("utf-8")
    assert "<table" in dom, proc.stderr.decode(errors="replace")[-2000:]
    history = rounds.history(st)
    assert [r["kind"] for r in history] == ["generation"] * 5 + ["failed"]
    assert_page_numbers_are_the_logs(table_rows(dom), history)
