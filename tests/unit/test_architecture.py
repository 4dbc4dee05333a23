"""The house's arrows (pyproject.toml [tool.importlinter]) hold, and a wrong one is caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(src: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT), "--no-cache", "--config", str(ROOT / "pyproject.toml")],
                          capture_output=True, text=True, cwd=src, timeout=120, check=False,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})


pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter not installed (pip install '.[test]')")


def test_contracts_kept() -> None:
    r = lint(ROOT / "src")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BROKEN" not in r.stdout and "Contracts: " in r.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("stats/estimators.py", "import cyclebench.store", "stats is pure"),
    ("stats/ab.py", "import rich", "stats is pure"),
    ("runner/engine.py", "from cyclebench.stats import estimate", "runner starts processes"),
    ("model.py", "import cyclebench.runner", "import nothing of the project"),
    ("report/console.py", "import cyclebench.store", "store and report"),
    ("stats/scaling.py", "import cyclebench.runner.scaling", "stats is pure"),
    ("stats/repetitions.py", "import cyclebench.counters", "stats is pure"),
    ("runner/scaling.py", "from cyclebench.stats import scaling", "runner starts processes"),
])
def test_a_forbidden_import_breaks_a_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "cyclebench", src / "cyclebench",
                    ignore=shutil.ignore_patterns("__pycache__", "*.c", "*.h"))
    path = src / "cyclebench" / module
    path.write_text(path.read_text() + f"\n{line}  # injected by the test\n")
    r = lint(src)
    assert r.returncode != 0
    broken = r.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, r.stdout
