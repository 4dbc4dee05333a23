"""dev.sh's marker expressions: `-m EXPR` narrows the default run (the slow audit cases stay out),
`--audit` lets them in, and `--audit -m audit_slow` — what .ci/run adds — is exactly the cases the
default run leaves out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _expr(*args: str) -> str:
    r = subprocess.run(["bash", str(REPO / "dev.sh"), "test-expr", *args], capture_output=True, text=True,
                       timeout=60, check=True)
    return r.stdout.strip()


def _collect(expr: str) -> set[str]:
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", expr,
                        str(REPO / "tests/audit")], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return {line for line in r.stdout.splitlines() if "::" in line}


def test_m_narrows_the_default_and_audit_lets_the_slow_cases_in() -> None:
    assert _expr() == "not audit_slow"
    assert _expr("-m", "audit") == _expr("-maudit") == "(audit) and not audit_slow"
    assert _expr("--audit") == "audit"
    assert _expr("--audit", "-m", "audit_slow") == "audit and (audit_slow)"
    fast, slow, every = _collect(_expr("-m", "audit")), _collect(_expr("--audit", "-m", "audit_slow")), \
        _collect(_expr("--audit"))
    assert fast and slow and not fast & slow, (len(fast), len(slow))
    assert fast | slow == every
    # the slow ones are what pyproject's default leaves out (its addopts: -m 'not audit_slow')
    assert _collect("not audit_slow") == fast
    ci = (REPO / ".ci/run").read_text()
    assert "bash dev.sh test\n" in ci and "bash dev.sh test --audit -m audit_slow" in ci
