"""`cyclebench report` end to end, without a browser (tests/browser/ opens the pages in
Chromium): the pages a lab's database makes (tests/sitelab.py), a history page's series and
change points are `cyclebench history`'s, every string from the database is escaped, every link
resolves, the figures are valid Plotly figures, bad input is one line and exit 2, the filters and
--jobs, and the same site from PostgreSQL."""

from __future__ import annotations

import html.parser
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from cyclebench.report.site import MARK, history_slug
from cyclebench.store import Store

from pgcluster import pg_cluster, pg_url  # noqa: F401  (fixtures)
from sitelab import HOSTILE, N_HISTORY, STEP, STEP_AT, BuiltSite, cyclebench_cli, cyclebench_in, site_lab  # noqa: F401


class _Parse(html.parser.HTMLParser):
    """Links, scripts and figure JSON of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.json: dict[str, str] = {}
        self.inline_scripts: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for k in ("href", "src"):
            if a.get(k):
                self.refs.append(str(a[k]))
        if tag == "script" and not a.get("src"):
            self._in = (a.get("id") or "") if a.get("type") == "application/json" else "inline"

    def handle_data(self, data: str) -> None:
        if self._in == "inline":
            self.inline_scripts.append(data)
        elif self._in is not None:
            self.json[self._in] = self.json.get(self._in, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in = None


def parse(path: Path) -> _Parse:
    p = _Parse()
    p.feed(path.read_text())
    return p


def figure(path: Path, name: str) -> dict[str, Any]:
    return json.loads(parse(path).json[f"{name}-data"])


def traces(fig: dict[str, Any], role: str) -> dict[str, dict[str, Any]]:
    return {t["meta"]["host"]: t for t in fig["data"] if t["meta"]["role"] == role}


def test_every_page_type_is_written(site_lab: BuiltSite) -> None:  # noqa: F811
    root, lab = site_lab.root, site_lab.lab
    store = Store(lab.url, create=False)
    ids = [r["id"] for r in store.list_runs(None)]
    for page in ("index.html", "runs.html", "history/index.html", "comparisons.html", "variants.html", "scale.html",
                 "fleet.html", "static/plotly.min.js", "static/site.js", "static/site.css", MARK):
        assert (root / page).is_file(), page
    assert sorted(int(p.stem) for p in (root / "runs").glob("*.html")) == sorted(ids)
    assert (root / "history" / history_slug(STEP, None, "")).is_file()
    assert re.search(rf"site: \d+ pages \({len(ids)} runs, \d+ benchmark histories\) in [\d.]+ s; largest page",
                     site_lab.stderr), site_lab.stderr
    index = (root / "index.html").read_text()
    assert "lab-a" in index and "Lab CPU A" in index and "6.1.0-lab" in index  # hosts: CPU, kernel
    comparisons = (root / "comparisons.html").read_text()
    assert "chain/add400" in comparisons and "95% CI of Δ" in comparisons  # compare's own table
    assert "ranked by per op" in (root / "variants.html").read_text()
    scale = figure(root / "scale.html", f"scale-{lab.real_runs['scale']}")
    assert [len(t["x"]) for t in scale["data"] if t["meta"]["role"] == "throughput"] == [2]  # tasks 1, 2
    fleet = (root / "fleet.html").read_text()
    assert "per op, by host" in fleet and "lab/step" in fleet and "max/min" in fleet


def test_a_history_page_is_history_per_host(site_lab: BuiltSite) -> None:  # noqa: F811
    """The page's series and change points are `cyclebench history lab/step --host H`'s: the
    same runs, estimates and change points; the step sits at the run where it was made."""
    lab = site_lab.lab
    fig = figure(site_lab.root / "history" / history_slug(STEP, None, ""), "history")
    runs, changes = traces(fig, "runs"), traces(fig, "change")
    for host in ("lab-a", "lab-b"):
        r = cyclebench_in(lab.url, "history", STEP, "--host", host, "--format", "json")
        assert r.returncode == 0, r.stderr
        told = json.loads(r.stdout)
        assert [c[0] for c in runs[host]["customdata"]] == [p["run"] for p in told["points"]]
        assert runs[host]["y"] == pytest.approx([p["estimate"] for p in told["points"]])
        shown = [c[0] for c in changes[host]["customdata"]] if host in changes else []
        assert shown == [c["run"] for c in told["changes"]]
    assert len(runs["lab-a"]["x"]) == N_HISTORY and len(runs["lab-b"]["x"]) == N_HISTORY - 1  # one disturbed
    assert [c[0] for c in changes["lab-a"]["customdata"]] == [lab.step_run] and "lab-b" not in changes
    step_at = runs["lab-a"]["x"][STEP_AT]
    assert changes["lab-a"]["x"] == [step_at] and "slower +5" in changes["lab-a"]["customdata"][0][1]
    index = (site_lab.root / "index.html").read_text()  # an open regression, linking to its history and run
    row = re.search(r"<tr class=\"c-red\">.*?</tr>", index, re.S)
    assert row and history_slug(STEP, None, "") in row.group(0) and f"runs/{lab.step_run}.html" in row.group(0)


def test_everything_from_the_database_is_text(site_lab: BuiltSite) -> None:  # noqa: F811
    """A benchmark named <script>alert(1)</script> and a label <b>not bold</b> are escaped on every
    page: in HTML, in the figures' JSON, in Plotly's text; no page has an inline script."""
    pages = list(site_lab.root.rglob("*.html"))
    for page in pages:
        text = page.read_text()
        assert HOSTILE not in text and "<b>not bold</b>" not in text, page
        assert not [s for s in parse(page).inline_scripts if s.strip()], page
    hostile = site_lab.root / "history" / history_slug(HOSTILE, None, "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile.read_text()
    fig = figure(hostile, "history")
    assert "&lt;script&gt;" in fig["layout"]["title"]["text"]  # Plotly shows the entities as text
    run = (site_lab.root / "runs" / f"{site_lab.lab.real_runs['run']}.html").read_text()
    assert "note=&lt;b&gt;not bold&lt;/b&gt;" in run


def test_every_link_resolves(site_lab: BuiltSite) -> None:  # noqa: F811
    root = site_lab.root
    checked = 0
    for page in root.rglob("*.html"):
        for ref in parse(page).refs:
            if ref.startswith(("data:", "#")):
                continue
            assert "://" not in ref and not ref.startswith("//"), f"{page}: {ref} leaves the site"
            target = (page.parent / ref.split("#")[0]).resolve()
            assert target.is_file() and root.resolve() in target.parents, f"{page}: {ref}"
            checked += 1
    assert checked > 500


def test_the_figures_are_plotly_figures(site_lab: BuiltSite) -> None:  # noqa: F811
    go = pytest.importorskip("plotly.graph_objects")
    root, lab = site_lab.root, site_lab.lab
    go.Figure(figure(root / "history" / history_slug(STEP, None, ""), "history"))  # raises on a wrong property
    go.Figure(figure(root / "scale.html", f"scale-{lab.real_runs['scale']}"))


def _one_line(r: Any) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, site_lab: BuiltSite) -> None:  # noqa: F811
    url = site_lab.lab.url
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    assert "no cyclebench database" in _one_line(cyclebench_cli(missing, "report", "-o", str(tmp_path / "s")))
    assert not (tmp_path / "none.db").exists()
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(empty).close()
    assert "no runs in" in _one_line(cyclebench_cli(empty, "report", "-o", str(tmp_path / "s")))
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert "not a directory" in _one_line(cyclebench_cli(url, "report", "-o", str(a_file)))
    assert "cannot write the site" in _one_line(cyclebench_cli(url, "report", "-o", str(a_file / "site")))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert "not a cyclebench site" in _one_line(cyclebench_cli(url, "report", "-o", str(mine)))
    assert (mine / "notes.txt").read_text() == "keep me"
    assert "matches --host nosuch" in _one_line(cyclebench_cli(url, "report", "-o", str(tmp_path / "s"), "--host",
                                                                "nosuch"))
    assert not (tmp_path / "s").exists() and not list(tmp_path.glob(".s.*"))  # nothing half-written left
    before = site_lab.lab.path.read_bytes()
    assert "database" in _one_line(cyclebench_cli(url, "report", "-o", str(site_lab.lab.path)))  # never over it
    assert site_lab.lab.path.read_bytes() == before


def _pages(root: Path) -> dict[str, str]:
    """Every page, its footer (time made, database URL) left out."""
    return {str(p.relative_to(root)): re.sub(r"<footer>.*?</footer>", "", p.read_text(), flags=re.S)
            for p in root.rglob("*.html")}


def test_filters_jobs_and_a_site_replaced_whole(tmp_path: Path, site_lab: BuiltSite) -> None:  # noqa: F811
    url, lab = site_lab.lab.url, site_lab.lab
    one = tmp_path / "one"
    r = cyclebench_cli(url, "report", "-o", str(one), "-j", "1")
    assert r.returncode == 0, r.stderr
    assert _pages(one) == _pages(site_lab.root)  # one process or two: the same pages
    (one / "runs" / "999999.html").write_text("not the site's")
    assert "runs/999999.html" in _one_line(cyclebench_cli(url, "report", "-o", str(one)))  # named, kept
    (one / "runs" / "999999.html").unlink()
    r = cyclebench_cli(url, "report", "-o", str(one), "--host", "lab-a", "--since", "2026-01-08")
    assert r.returncode == 0, r.stderr  # replaced whole: the other runs' pages are gone (below)
    shown = sorted(int(p.stem) for p in (one / "runs").glob("*.html"))
    assert shown == lab.step_runs["lab-a"][3:]
    assert "--host lab-a --since 2026-01-08" in (one / "index.html").read_text()
    r = cyclebench_cli(url, "report", "-o", str(one), "--bench", "lab/*", "--label", "host=lab-b")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (one / "history").glob("*.html")) == sorted(
        ["index.html", history_slug(STEP, None, "")])
    assert sorted(int(p.stem) for p in (one / "runs").glob("*.html")) == lab.step_runs["lab-b"]


def test_the_same_site_from_postgresql(tmp_path: Path, site_lab: BuiltSite, pg_url: str) -> None:  # noqa: F811
    """The lab's runs copied into PostgreSQL (the store's own insert_run, in id order) make the
    same pages as from SQLite."""
    src, dst = Store(site_lab.lab.url, create=False), Store(pg_url)
    for run in sorted(src.list_runs(None), key=lambda r: r["id"]):
        rows = [(row, src.samples(row["id"])) for row in src.results(run["id"])]
        assert dst.insert_run(run, rows) == run["id"]
    src.close()
    dst.close()
    out = tmp_path / "pg-site"
    r = cyclebench_cli(pg_url, "report", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert _pages(out) == _pages(site_lab.root)
    shutil.rmtree(out)


@pytest.mark.parametrize("module", ["plotly", "jinja2"])
def test_without_the_site_extra_it_says_what_to_install(module: str, tmp_path: Path,
                                                        site_lab: BuiltSite) -> None:  # noqa: F811
    import os
    import subprocess
    import sys

    code = f"import sys\nsys.modules[{module!r}] = None\nfrom cyclebench.cli import main\nsys.argv[0] = 'cyclebench'\n"
    r = subprocess.run([sys.executable, "-c", code + "main()", "report", "-o", str(tmp_path / "s"), "--db",
                        site_lab.lab.url], text=True, capture_output=True, timeout=120, check=False,
                       env={**os.environ, "COLUMNS": "200"})
    line = _one_line(r)
    assert f"needs the {module} package" in line and "pip install 'cyclebench[site]'" in line
    assert not (tmp_path / "s").exists() and not list(tmp_path.glob(".s.*"))


def test_a_revision_run_s_page_says_how_its_code_ran(tmp_path: Path) -> None:
    """A run of revisions' code (compare --rev, bisect, ci: its environment's ``revisions``) has
    its confinement among its page's facts, unconfined in red with its reason (escaped), and
    show's line among its notes; one stored before it was recorded says so; any other run
    says nothing of it."""
    url = f"sqlite:///{tmp_path / 'rev.db'}"
    store = Store(url)
    ids = {}
    for name, confinement in (("bwrap", "bwrap"), ("off", f"unconfined: bwrap refused ({HOSTILE})"),
                              ("before", None), ("plain", None)):
        env: dict[str, Any] = {}
        if name != "plain":
            env["revisions"] = {"repo": "/src/lib", "a": "a" * 40, "b": "b" * 40, "build": ["make"],
                                **({"confinement": confinement} if confinement else {})}
        rid = store.begin_run(command=["cyclebench", "compare", "--rev", "a", "--rev", "b"], host="lab", cpu=1,
                              env=env, purpose="revision" if env else None)
        store.add_result(rid, {"bench": "lib/work", "status": "ok", "unit": "ref-cycles", "per_op": 300.0,
                               "ci_low": 299.0, "ci_high": 301.0, "min": 298.0})
        store.finish_run(rid, "complete")
        ids[name] = rid
    store.close()
    root = tmp_path / "site"
    r = cyclebench_cli(url, "report", "-o", str(root))
    assert r.returncode == 0, r.stderr
    page = {k: (root / "runs" / f"{rid}.html").read_text() for k, rid in ids.items()}
    assert re.search(r"<dt>confinement</dt><dd>bwrap sandbox \(no network;", page["bwrap"]), page["bwrap"]
    assert "revisions built and run in a bwrap sandbox" in page["bwrap"]  # show's line, a note
    dd = re.search(r'<dt>confinement</dt><dd class="c-red">UNCONFINED, with the user&#39;s rights and the network: '
                   r"bwrap refused \((.*?)\)</dd>", page["off"])
    assert dd and "<script" not in dd.group(1) and "&lt;" in dd.group(1), page["off"]
    assert "<dt>confinement</dt><dd>not recorded (a run stored before it was)</dd>" in page["before"]
    assert "confinement" not in page["plain"] and "built and run" not in page["plain"]
