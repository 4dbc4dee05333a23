"""The house's arrows (pyproject.toml [tool.importlinter]) hold, and a wrong one is caught."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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
    ("stats/clock.py", "import cyclebench.runner", "the layers"),
    ("ui/common.py", "import cyclebench.cli", "the layers"),
    ("ui/run.py", "import cyclebench.commands.run", "the layers"),
    ("experiments/run.py", "import cyclebench.ui.progress", "experiments design and run"),
    ("report/fit.py", "import cyclebench.counters", "report reads the model"),
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


def import_cycles(graph: object) -> list[list[str]]:
    """The strongly connected components of more than one module in a grimp import graph
    (Tarjan 1972): each is an import cycle. Every import counts, a function's own included."""
    g: Any = graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # recursive: the house is ~150 modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for m in sorted(g.modules):
        if m not in index:
            visit(m)
    return found


def test_no_import_cycle_anywhere() -> None:
    """No module of src/ imports one that imports it back, directly or round a longer loop —
    lazily inside a function included: a cycle is two rooms that cannot be read apart."""
    import grimp

    assert import_cycles(grimp.build_graph("cyclebench", cache_dir=None)) == []


def test_an_injected_cycle_is_found() -> None:
    import grimp

    graph = grimp.build_graph("cyclebench", cache_dir=None)
    graph.add_import(importer="cyclebench.model", imported="cyclebench.report.console")  # console imports model
    assert ["cyclebench.model", "cyclebench.report.console"] in import_cycles(graph)
