"""No shell anywhere, --fifo that really reaches the runner, and passwords never echoed."""

from __future__ import annotations

import re

import pytest

from .conftest import NewLab
from .harness import CASES, ROOT, Lab, one_line

pytestmark = pytest.mark.audit

SECRET = "S3cretPW"


def test_the_sources_never_use_a_shell() -> None:
    """Subprocesses get argv lists, never a shell (docs/design.md, conventions): no shell=True,
    os.system, os.popen, system(3) or popen(3) in src/."""
    pat = re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(|(?<![\w.])(system|popen)\(")
    hits = []
    for p in sorted((ROOT / "src").rglob("*")):
        if p.suffix in (".py", ".c", ".h") and p.is_file():
            for i, ln in enumerate(p.read_text(errors="replace").splitlines(), 1):
                if pat.search(ln) and not ln.lstrip().startswith(("#", "*", "/*", "//")):
                    hits.append(f"{p.relative_to(ROOT)}:{i}")
    assert not hits, hits


@pytest.mark.timing  # SCHED_FIFO takes the CPU whole: another test's runner there would stop
def test_fifo_puts_the_runner_under_sched_fifo_or_says_why_not(new_lab: NewLab) -> None:
    """--fifo was dropped before it reached the runner (sched(7): policy 1 is SCHED_FIFO)."""
    lab = new_lab(watch=True)
    r = lab.run("run", f"{CASES}/sleepy.c", "-b", "sl/ms", "--fifo", "10", "-q", "--repeat", "5")
    runners = [s for s in r.seen.values() if "--run" in s["argv"]]
    applied = any(s["policy"] == 1 and s["rtprio"] == 10 for s in runners)
    refused = r.rc == 2 and one_line(r)
    assert applied or refused, (r, sorted({(s["policy"], s["rtprio"], s["rttime"]) for s in runners}, key=str))


def test_a_password_in_a_database_url_is_never_echoed(lab: Lab) -> None:
    for url in (f"postgresql://benchuser:{SECRET}@127.0.0.1:1/x", f"sqlite://benchuser:{SECRET}@{lab.dir}/pw.db"):
        r = lab.run("runs", "--db", url)
        assert SECRET not in r.text, r
