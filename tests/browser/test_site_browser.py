"""The site of `cyclebench report` in a real browser: Debian's chromium, headless, driven by
Selenium through Debian's chromedriver (no browser download). Each page type is opened from
disk (file://) and from `report --serve` (http://127.0.0.1): no console error and no failed
request; the history plot has a point per run and host and its change point marker at the
run where the lab's +5% step was made; clicking a point opens the run; links lead to pages;
a benchmark named <script>alert(1)</script> is text; a disturbed row is dimmed; a column
sorts. Screenshots of the index, a history page and a run page go to the test's tmp directory
(and to $CYCLEBENCH_SCREENSHOTS when set)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import cyclebench
from cyclebench.report.site import history_slug

from sitelab import HOSTILE, N_HISTORY, STEP, STEP_AT, BuiltSite, site_lab  # noqa: F401  (fixture)

CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists() or not DRIVER.exists():
        pytest.skip("no Debian chromium here (apt-get install chromium chromium-driver; dev.sh does as root)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1000",
              "--disable-extensions", "--no-first-run"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _open(driver: Any, url: str) -> list[dict[str, Any]]:
    """Load ``url``, wait for its plots, and return what the console said meanwhile (errors,
    failed requests: Chrome logs a failed load as a SEVERE "Failed to load resource")."""
    driver.get_log("browser")  # what an earlier page said
    driver.get(url)
    driver.execute_async_script(
        "const done = arguments[0]; const t0 = Date.now();"
        "(function wait() { const plots = [...document.querySelectorAll('div.plot')];"
        "  if (plots.every(p => p.querySelector('.main-svg')) || Date.now() - t0 > 20000) done();"
        "  else setTimeout(wait, 50); })();")
    return [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]


def _shot(driver: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    driver.save_screenshot(str(path))
    keep = os.environ.get("CYCLEBENCH_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def _no_alert(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert  # noqa: B018  (raises when no alert() ran)


def _history_url(root: Path, bench: str) -> str:
    return (root / "history" / history_slug(bench, None, "")).as_uri()


def test_each_page_type_opens_without_an_error(browser: Any, site_lab: BuiltSite, tmp_path: Path) -> None:  # noqa: F811
    root, lab = site_lab.root, site_lab.lab
    pages = {"index": root / "index.html", "runs": root / "runs.html", "benchmarks": root / "history" / "index.html",
             "history": root / "history" / history_slug(STEP, None, ""),
             "run": root / "runs" / f"{lab.disturbed_run}.html",
             "run of a run": root / "runs" / f"{lab.real_runs['run']}.html",
             "comparisons": root / "comparisons.html", "variants": root / "variants.html", "scale": root / "scale.html",
             "fleet": root / "fleet.html"}
    for name, page in pages.items():
        said = _open(browser, page.as_uri())
        assert said == [], f"{name}: {said}"
        assert browser.find_element("tag name", "h1").text, name
        _no_alert(browser)
        if name in ("index", "history", "run"):
            shot = _shot(browser, tmp_path, name)
            assert shot.stat().st_size > 10_000
    browser.get(pages["scale"].as_uri())
    counts = browser.execute_script(
        "return [...document.querySelectorAll('div.plot')].map(d => d.data.filter(t => t.meta.role === 'throughput')"
        ".map(t => t.x.length))")
    assert counts == [[2]]  # tasks 1 and 2


def test_the_history_plot_has_every_run_and_the_step(browser: Any, site_lab: BuiltSite) -> None:  # noqa: F811
    lab = site_lab.lab
    assert _open(browser, _history_url(site_lab.root, STEP)) == []
    got = browser.execute_script("""
        const gd = document.getElementById('history');
        const of = role => Object.fromEntries(gd.data.filter(t => t.meta.role === role).map(t => [t.meta.host, t]));
        const runs = of('runs'), change = of('change');
        return {points: Object.fromEntries(Object.entries(runs).map(([h, t]) => [h, t.x.length])),
                drawn: gd.querySelectorAll('.scatterlayer .trace .points path').length,
                change: Object.fromEntries(Object.entries(change).map(([h, t]) => [h, t.customdata.map(c => c[0])])),
                change_x: change['lab-a'] && change['lab-a'].x[0], step_x: runs['lab-a'].x[arguments[0]],
                shapes: gd.layout.shapes.length};""", STEP_AT)
    assert got["points"] == {"lab-a": N_HISTORY, "lab-b": N_HISTORY - 1}  # lab-b's disturbed run is no point
    assert got["drawn"] >= 2 * N_HISTORY - 1  # every point is drawn (and the change marker)
    assert got["change"] == {"lab-a": [lab.step_run]} and got["change_x"] == got["step_x"] and got["shapes"] == 1
    browser.execute_script("document.getElementById('history').emit('plotly_click', "
                           "{points: [{customdata: [arguments[0], 'x']}]})", lab.step_run)
    time.sleep(0.3)
    assert browser.current_url.endswith(f"/runs/{lab.step_run}.html") and f"run #{lab.step_run}" in browser.title


def test_links_lead_to_pages(browser: Any, site_lab: BuiltSite) -> None:  # noqa: F811
    """From the index: the open regression to its history, its change point to the run, the run's
    benchmark name back to the history; every link of the index to a page with a title."""
    from selenium.webdriver.common.by import By

    lab = site_lab.lab
    _open(browser, (site_lab.root / "index.html").as_uri())
    hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "main a")]
    browser.find_element(By.CSS_SELECTOR, "#regressions tbody tr td a").click()
    assert browser.title.startswith(f"history of {STEP}")
    browser.find_element(By.CSS_SELECTOR, f"#hosts a[href$='runs/{lab.step_run}.html']").click()
    assert browser.title.startswith(f"run #{lab.step_run}")
    browser.find_element(By.LINK_TEXT, STEP).click()
    assert browser.title.startswith(f"history of {STEP}")
    for href in hrefs[:40]:
        assert _open(browser, href) == [], href
        assert browser.find_element(By.TAG_NAME, "h1").text, href


def test_the_hostile_name_is_text(browser: Any, site_lab: BuiltSite) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    assert _open(browser, _history_url(site_lab.root, HOSTILE)) == []
    _no_alert(browser)
    assert browser.find_element(By.TAG_NAME, "h1").text == f"history of {HOSTILE}"
    title = browser.execute_script("return document.querySelector('#history .gtitle').textContent")
    assert HOSTILE in title  # Plotly shows it as the characters, not as a tag
    assert browser.execute_script("return document.querySelectorAll('script:not([src]):not([type])').length") == 0
    assert _open(browser, (site_lab.root / "runs" / f"{site_lab.lab.step_run}.html").as_uri()) == []
    _no_alert(browser)
    assert HOSTILE in [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.sortable td a")]


def test_disturbed_rows_are_dimmed_and_columns_sort(browser: Any, site_lab: BuiltSite) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    lab = site_lab.lab
    _open(browser, (site_lab.root / "runs" / f"{lab.disturbed_run}.html").as_uri())
    row = browser.find_element(By.XPATH, "//table[contains(@class,'sortable')]//tr[td[1][normalize-space()='lab/step']]"
                               .replace("'lab/step'", f"'{STEP}'"))
    opacity = [float(td.value_of_css_property("opacity")) for td in row.find_elements(By.TAG_NAME, "td")[2:6]]
    assert all(o < 0.6 for o in opacity), opacity  # the figures, dimmed as the terminal dims them
    assert "disturbed" in row.text
    _open(browser, (site_lab.root / "runs.html").as_uri())
    header = browser.find_element(By.XPATH, "//th[normalize-space()='run']")

    def first_column() -> list[int]:
        return [int(td.text) for td in browser.find_elements(By.CSS_SELECTOR, "table.sortable tbody tr td:first-child")]

    assert first_column() == sorted(first_column(), reverse=True)  # newest first
    header.click()
    assert first_column() == sorted(first_column()) and header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert first_column() == sorted(first_column(), reverse=True)


def test_the_served_site_has_no_failed_request(browser: Any, site_lab: BuiltSite, tmp_path: Path) -> None:  # noqa: F811
    """`report --serve 0`: the URL it prints serves every page type, nothing missing."""
    src = str(Path(cyclebench.__file__).resolve().parents[1])
    env = {**os.environ, "CYCLEBENCH_DB": site_lab.lab.url, "PYTHONPATH": src, "COLUMNS": "200"}
    # SIGINT stops it: a shell running the tests in the background may have set it to SIG_IGN, which
    # children inherit and Python then honours — give the child the default disposition back
    p = subprocess.Popen([sys.executable, "-m", "cyclebench", "report", "-o", str(tmp_path / "served"), "--serve", "0"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        url = ""
        assert p.stdout is not None
        for line in p.stdout:
            if line.startswith("serving "):
                url = line.split(" at ", 1)[1].split()[0]
                break
        assert url.startswith("http://127.0.0.1:"), p.stderr.read() if p.stderr else ""
        lab = site_lab.lab
        for page in ("", "runs.html", "history/index.html", f"history/{history_slug(STEP, None, '')}",
                     f"runs/{lab.step_run}.html", "comparisons.html", "variants.html", "scale.html", "fleet.html"):
            said = _open(browser, url + page)
            assert said == [], f"{page}: {said}"
            failed = browser.execute_script(
                "return performance.getEntriesByType('resource').filter(e => e.responseStatus >= 400)"
                ".map(e => e.name)")
            assert failed == [], page
    finally:
        p.send_signal(signal.SIGINT)
        _out, err = p.communicate(timeout=30)
    assert p.returncode == 0 and "stopped serving" in err, err
