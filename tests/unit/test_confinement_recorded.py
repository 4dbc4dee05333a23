"""Confinement is never silently absent (docs/revisions.md, "Sandbox"): the workspace of `compare
--rev`, `bisect` and `ci` records how the revisions' code runs — ``bwrap`` or ``unconfined:
REASON`` — in what every sitting's run stores (model.Revisions' ``confinement``), and the gate's
Markdown summary and JUnit XML say it, confined or not, and "not recorded" for a gate stored
before it was. No compiler, no measurement: the CLI end to end is tests/commands/test_ci.py's,
test_sandbox.py's and test_report_show.py's."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.revcompare import workspace
from cyclebench.gate import PASS, Gate, GateRow, Ref
from cyclebench.report.gate.junit import junit
from cyclebench.report.gate.summary import summary
from cyclebench.runner.sandbox import unavailable

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "bench.c").write_text("/* never built here */\n")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "one")):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    return root


@pytest.mark.parametrize("sandbox", ["off", "auto"])
def test_every_sitting_records_how_the_revisions_ran(repo: Path, sandbox: str) -> None:
    """--no-sandbox (off): unconfined, naming the option; auto: bwrap where this machine can make
    the sandbox, else unconfined with the reason runner.sandbox gives (both are this machine's)."""
    ws = workspace(repo, ["make"], BuildOptions(files=(repo / "bench.c",)), RunnerOptions(), (), (), sandbox=sandbox)
    why = "--no-sandbox" if sandbox == "off" else unavailable()
    want = "bwrap" if why is None else f"unconfined: {why}"
    assert ws.recipe.confine.on is (why is None)
    assert ws.revisions(a="1" * 40, b="2" * 40) == {"repo": str(repo.resolve()), "a": "1" * 40, "b": "2" * 40,
                                                     "build": ["make"], "confinement": want}
    assert ws.revisions(sides=["1" * 40])["confinement"] == want  # bisect's sittings


def test_a_sitting_stores_its_commits_depths(repo: Path) -> None:
    """Each side's commit depth (git rev-list --count), the order history sorts a revision series
    by; a sha the repository lacks has none (and no sitting fails for it)."""
    git = ["git", "-C", str(repo)]
    (repo / "bench.c").write_text("/* two */\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    one, two = (subprocess.run([*git, "rev-parse", r], check=True, capture_output=True, text=True).stdout.strip()
                for r in ("HEAD~1", "HEAD"))
    ws = workspace(repo, ["make"], BuildOptions(files=(repo / "bench.c",)), RunnerOptions(), (), (), sandbox="off")
    assert ws.revisions(a=one, b=two)["depths"] == {one: 1, two: 2}
    assert ws.revisions(sides=[two, "1" * 40])["depths"] == {two: 2}


def _gate(**facts: object) -> Gate:
    return Gate(7, Ref("a" * 40, "aaaaaaa", "base"), Ref("b" * 40, "bbbbbbb", "head"), "--base main",
                (GateRow("lib/work", PASS, 0.02, why="time: pass"),), "time", 0.005,
                {"alpha": 0.01, "correction": "Bonferroni over 1 benchmark(s)", "budget": 1.0, **facts})


def _properties(xml: str) -> dict[str, str]:
    from junitparser import JUnitXml

    [suite] = list(JUnitXml.fromstring(xml))
    return {p.name: p.value for p in suite.properties()}


@pytest.mark.parametrize(("recorded", "said", "prop"), [
    ("bwrap", "Base and head built and run in a bwrap sandbox (no network;", "bwrap"),
    ("unconfined: --no-sandbox", "**Base and head built and run unconfined**, with the user's rights and the network: "
     "--no-sandbox.", "unconfined: --no-sandbox"),
    ("unconfined: bwrap refused (setting up uid map: Permission denied; user namespaces may be disabled | x)",
     "network: bwrap refused (setting up uid map: Permission denied; user namespaces may be disabled \\| x).",
     "unconfined: bwrap refused (setting up uid map: Permission denied; user namespaces may be disabled | x)"),
    (None, "Base and head: confinement not recorded", "not recorded"),  # a gate stored before it was
])
def test_the_summary_and_junit_say_how_base_and_head_ran(recorded: str | None, said: str, prop: str) -> None:
    g = _gate(**({} if recorded is None else {"confinement": recorded}))
    text = summary(g)
    # above the table, outside the collapsed facts: read without opening anything
    assert said in text and text.index(said) < text.index("| benchmark") < text.index("<details>"), text
    assert Gate.from_dict(7, g.to_dict()).facts.get("confinement") == recorded  # as `show` rebuilds it
    props = _properties(junit(g))
    assert props["confinement"] == prop
    assert ("UNCONFINED" in props["confinement_text"]) is prop.startswith("unconfined"), props
