"""`cyclebench ci`, the pull request's gate (docs/ci.md), on a real repository: a library of one
latency-bound function (300 dependent register adds, tests/gitlib.py's) and branches off main —
a comment-only change, a planted +6% slowdown (18 more adds), a new benchmark — measured as a CI
job runs it: base from $GITHUB_BASE_REF, the summary, JUnit XML read by a JUnit parser,
$GITHUB_STEP_SUMMARY, the exact counts gate, and a shallow clone without its base."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cyclebench.gate import Gate
from gitlib import HEADER, _chain

NO_VALGRIND = shutil.which("valgrind") is None
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

BENCH = """#include <cyclebench.h>
#include "work.h"

CB_BENCH(lib, work) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = work(x);
    cb_do_not_optimize(x);
}
"""
NEW_BENCH = BENCH + """
CB_BENCH(lib, twice) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = work(work(x));
    cb_do_not_optimize(x);
}
"""
CONFIG = """[ci]
files = ["bench/work_bench.c"]
build = "make libwork.a"
ldflags = ["libwork.a"]
include = ["lib"]
threshold = 2.0
"""
MAKEFILE = "libwork.a: lib/work.c lib/work.h\n\t$(CC) -O2 -c lib/work.c -o work.o\n\tar rcs libwork.a work.o\n"


def _source(adds: int, comment: str = "") -> str:
    return (f"/* work: a dependent chain{comment} */\n#include \"work.h\"\n\n"
            f"__attribute__((noinline)) uint64_t work(uint64_t x) {{\n{_chain(adds)}    return x;\n}}\n\n"
            f"__attribute__((noinline)) uint64_t unused_helper(uint64_t x) {{\n{_chain(10)}    return x;\n}}\n")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main: 300 adds; branches comment (a comment changed), slow (318 adds: +6%), newbench (a
    second benchmark); each with cyclebench.toml."""
    root = tmp_path_factory.mktemp("ci") / "lib"
    (root / "lib").mkdir(parents=True)
    (root / "bench").mkdir()
    _git(root.parent, "init", "-q", "-b", "main", str(root))
    (root / "lib" / "work.h").write_text(HEADER)
    (root / "lib" / "work.c").write_text(_source(300))
    (root / "Makefile").write_text(MAKEFILE)
    (root / "bench" / "work_bench.c").write_text(BENCH)
    (root / "cyclebench.toml").write_text(CONFIG)
    (root / ".gitignore").write_text("*.o\n*.a\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the library")
    for branch, path, text in (("comment", "lib/work.c", _source(300, ", now documented")),
                               ("slow", "lib/work.c", _source(318)),
                               ("newbench", "bench/work_bench.c", NEW_BENCH)):
        _git(root, "checkout", "-q", "-b", branch, "main")
        (root / path).write_text(text)
        _git(root, "commit", "-q", "-am", f"{branch}: a change")
    _git(root, "checkout", "-q", "main")
    return root


def _ci(root: Path, *args: str, db: str, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("GITHUB_BASE_REF", "GITHUB_STEP_SUMMARY")}
    return subprocess.run([sys.executable, "-m", "cyclebench", "ci", "--repo", str(root), "--budget", "3", *args],
                          capture_output=True, text=True, timeout=900, cwd=cwd,
                          env={**base, "COLUMNS": "80", "CYCLEBENCH_DB": db, **(env or {})})


@pytest.mark.timing
def test_a_comment_passes_and_a_planted_slowdown_fails(repo: Path, db: str, tmp_path: Path) -> None:
    """Base from $GITHUB_BASE_REF (main's merge base); the comment-only head passes (exit 0); the
    +6% head fails (exit 1), named first in the summary, in valid JUnit XML as a failed test, and
    in $GITHUB_STEP_SUMMARY."""
    from junitparser import Failure, JUnitXml

    ok = _ci(repo, "--head", "comment", db=db, env={"GITHUB_BASE_REF": "main"})
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS" in ok.stdout and "merge base with GITHUB_BASE_REF=main" in " ".join(ok.stdout.split())
    step = tmp_path / "step.md"
    summary, xml = tmp_path / "s.md", tmp_path / "j.xml"
    bad = _ci(repo, "--head", "slow", "--summary", str(summary), "--junit", str(xml), db=db,
              env={"GITHUB_BASE_REF": "main", "GITHUB_STEP_SUMMARY": str(step)})
    assert bad.returncode == 1, bad.stdout + bad.stderr
    text = summary.read_text()
    assert text.startswith("### cyclebench ci: FAIL") and step.read_text().strip() == text.strip()
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert rows[0].startswith("| `lib/work`") and "fail (> 2%)" in rows[0], text
    assert "<details><summary>the sitting</summary>" in text, text
    # the gate's α and its split: Bonferroni only over more than one judged benchmark
    assert re.search(r"α [\d.]+ for the gate(, [\d.]+ for each of \d+ benchmarks \(Bonferroni\))?: repeated "
                     r"[\d.]+% CIs", text), text
    suites = list(JUnitXml.fromfile(str(xml)))
    cases = [c for s in suites for c in s]
    assert [c.name for c in cases] == ["lib/work"]
    assert any(isinstance(r, Failure) for r in cases[0].result)
    assert suites[0].failures == 1 and suites[0].tests == 1
    assert all(len(ln) <= 80 for ln in bad.stdout.splitlines()), bad.stdout


@pytest.mark.skipif(NO_VALGRIND, reason="valgrind not installed (apt-get install valgrind)")
def test_the_counts_gate_is_exact_and_a_new_benchmark_is_new(repo: Path, db: str, tmp_path: Path) -> None:
    """--gate counts: 318 adds against 300 is +18 instructions a call of ~311, read exactly twice a
    side: fails whatever the machine's speed; a head's new benchmark is "new", never a failure."""
    out = tmp_path / "c.json"
    r = _ci(repo, "--base", "main", "--head", "slow", "--gate", "counts", "--json", str(out), db=db)
    assert r.returncode == 1, r.stdout + r.stderr
    row = json.loads(out.read_text())["rows"][0]
    c = row["counts"]
    assert row["benchmark"] == "lib/work" and row["status"] == "fail" and c["exact"] is True
    assert c["head"] - c["base"] == pytest.approx(18, abs=0.01)  # exactly the 18 adds a call
    r = _ci(repo, "--base", "main", "--head", "newbench", "--gate", "counts", "--json", str(out), db=db)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {x["benchmark"]: x for x in json.loads(out.read_text())["rows"]}
    assert got["lib/twice"]["status"] == "new" and got["lib/work"]["status"] == "pass"
    assert got["lib/work"]["counts"]["change"] == 0.0


def test_an_unconfined_gate_says_so_in_its_summary_junit_show_and_site(repo: Path, db: str, tmp_path: Path) -> None:
    """--no-sandbox: the pull request's code ran with the user's rights and the network, and every
    reader of the gate says so — the summary above its table, JUnit's suite properties, `show` of
    its run and its page on the site (the verdict does not matter: a short budget)."""
    from junitparser import JUnitXml

    summary, xml, out = tmp_path / "s.md", tmp_path / "j.xml", tmp_path / "r.json"
    r = _ci(repo, "--base", "main", "--head", "comment", "--budget", "0.2", "--no-sandbox", "--summary", str(summary),
            "--junit", str(xml), "--json", str(out), db=db)
    assert r.returncode in (0, 1, 3), r.stdout + r.stderr
    text = summary.read_text()
    said = "**Base and head built and run unconfined**, with the user's rights and the network: --no-sandbox."
    assert said in text and text.index(said) < text.index("<details>"), text
    [suite] = list(JUnitXml.fromfile(str(xml)))
    props = {p.name: p.value for p in suite.properties()}
    assert props["confinement"] == "unconfined: --no-sandbox", props
    assert props["confinement_text"].startswith("UNCONFINED"), props
    rid = str(json.loads(out.read_text())["run_id"])
    env = {k: v for k, v in os.environ.items() if k != "CYCLEBENCH_DB"}
    shown = subprocess.run([sys.executable, "-m", "cyclebench", "show", rid], capture_output=True, text=True,
                           timeout=300, env={**env, "COLUMNS": "200", "CYCLEBENCH_DB": db})
    assert shown.returncode == 0, shown.stderr
    assert "revisions built and run UNCONFINED, with the user's rights and the network: --no-sandbox" in shown.stderr
    site = tmp_path / "site"
    made = subprocess.run([sys.executable, "-m", "cyclebench", "report", "-o", str(site)], capture_output=True,
                          text=True, timeout=300, env={**env, "CYCLEBENCH_DB": db})
    assert made.returncode == 0, made.stderr
    page = (site / "runs" / f"{rid}.html").read_text()
    assert ('<dt>confinement</dt><dd class="c-red">UNCONFINED, with the user&#39;s rights and the network: '
            "--no-sandbox</dd>") in page, page


def test_a_shallow_clone_without_its_base_is_exit_2_naming_the_fetch(repo: Path, db: str, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "slow", f"file://{repo}", str(clone)],
                   check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    r = _ci(clone, db=db, env={"GITHUB_BASE_REF": "main"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "git fetch" in r.stderr and "shallow" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_bad_input_is_one_line(repo: Path, db: str, tmp_path: Path) -> None:
    r = _ci(repo, "--base", "no-such-branch", db=db)
    assert r.returncode == 2 and "no-such-branch" in r.stderr and "Traceback" not in r.stderr
    broken = tmp_path / "toml"
    shutil.copytree(repo, broken)
    (broken / "cyclebench.toml").write_text("[ci\nfiles = 3\n")
    _git(broken, "commit", "-q", "-am", "a broken config")
    r = _ci(broken, "--base", "main~0", db=db)
    assert r.returncode == 2 and "cyclebench.toml" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(NO_VALGRIND, reason="valgrind not installed (apt-get install valgrind)")
def test_a_restored_cache_skips_the_builds(repo: Path, db: str, tmp_path: Path) -> None:
    """CYCLEBENCH_CACHE saved by one job and restored by the next (a copy: new mtimes, as a CI
    cache step restores it) passes the cache's own checks: both revisions come from it."""
    first, restored, out = tmp_path / "cache", tmp_path / "restored", tmp_path / "r.json"
    r = _ci(repo, "--base", "main", "--head", "comment", "--gate", "counts", "--json", str(out), db=db,
            env={"CYCLEBENCH_CACHE": str(first)})
    assert r.returncode == 0, r.stdout + r.stderr
    shutil.copytree(first, restored, symlinks=True)  # a copy: every mtime new
    r = _ci(repo, "--base", "main", "--head", "comment", "--gate", "counts", "--summary", str(tmp_path / "s.md"),
            db=db, env={"CYCLEBENCH_CACHE": str(restored)})
    assert r.returncode == 0, r.stdout + r.stderr
    text = (tmp_path / "s.md").read_text()
    assert text.count("(cached)") == 2, text  # base and head: neither built again


LAB = Path(__file__).resolve().parents[1] / "data" / "lab"  # the lab fixture (bench/lab_fixture.py)


def _lab_gate() -> Gate:
    """The lab's `ci --gate both` run (its manifest names it): lib/work +4% fails, lib/flat passes."""
    import sqlite3

    [rid] = next(s["runs"] for s in json.loads((LAB / "manifest.json").read_text())["steps"] if s["kind"] == "ci")
    con = sqlite3.connect(LAB / "lab.db")
    try:
        [(stored,)] = con.execute("select summary from runs where id = ?", (rid,)).fetchall()
    finally:
        con.close()
    return Gate.from_dict(rid, json.loads(stored)["ci"])


def test_the_summary_gives_its_ci_s_level_one_vocabulary_and_the_next_step() -> None:
    """The summary of the lab's failed gate (α 0.01 over 2 benchmarks): Δ%'s interval named with
    its level (each a repeated 99.5% CI), every verdict in one form and case, no "benchmark(s)",
    and docs/ci.md's next step — compare --rev, then bisect — for the benchmark that failed, at
    its revisions; a gate that passed has none. Before, the column read "Δ% [CI]", the verdicts
    "FAIL (> 2%)" beside "pass", and a failure left the reader to find the next step."""
    from cyclebench.report.gate.summary import summary

    g = _lab_gate()
    text = summary(g)
    assert "| Δ% [repeated 99.5% CI] |" in text and "with its repeated 99.5% CI" in text, text
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert rows[0].endswith("| fail (> 2%) |") and rows[1].endswith("| pass (< 2%) |"), rows
    assert text.startswith(f"### cyclebench ci: FAIL — 1 failed, 1 passed · {g.base.short} → {g.head.short}"), text
    assert "(s)" not in text and "0.005 for each of 2 benchmarks (Bonferroni)" in text, text
    compare = f"cyclebench compare --rev {g.base.sha} --rev {g.head.sha} -f FILE -b lib/work\n"
    bisect = f"cyclebench bisect --good {g.base.sha} --bad {g.head.sha} -f FILE -b lib/work\n"
    assert "**Next step**" in text and compare in text and bisect in text, text
    assert text.index(compare) < text.index(bisect) < text.index("<details>")
    passed = replace(g, rows=tuple(replace(r, status="pass", time_status="pass", counts_status="pass")
                                   for r in g.rows))
    assert "Next step" not in summary(passed) and "### cyclebench ci: PASS — 2 passed" in summary(passed)
    # only its counts failed it, at a threshold of its own: the same step under callgrind, at that threshold
    counted = replace(g, gate="counts", counts_threshold=0.01,
                      rows=tuple(replace(r, look=None, time_status=None) for r in g.rows))
    text = summary(counted)
    assert "fail (Ir > 1%)" in text and "repeated" not in text.split("<details>")[0], text
    assert f"--bad {g.head.sha} -f FILE -b lib/work --backend callgrind --counts-threshold 1\n" in text, text

