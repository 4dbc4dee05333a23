"""Shared fixtures: an isolated database and build cache for every test session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

DATA = Path(__file__).parent / "data"
FIXTURES = Path(__file__).parent / "fixtures"  # sysfs/procfs trees of real machines
# Short measurements: tests assert orderings and ratios, not precision.
FAST = ["--min-time", "0.01", "--repeat", "12", "--warmup", "0.002"]


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    cache = tmp_path_factory.mktemp("cache")
    old = os.environ.get("CYCLEBENCH_CACHE")
    os.environ["CYCLEBENCH_CACHE"] = str(cache)
    yield
    if old is None:
        os.environ.pop("CYCLEBENCH_CACHE", None)
    else:
        os.environ["CYCLEBENCH_CACHE"] = old


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    monkeypatch.setenv("CYCLEBENCH_DB", url)
    return url


def cli(*args: str) -> Result:
    """Invoke the CLI in-process (click's runner), capturing output."""
    from cyclebench.cli import main

    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def cli_subprocess(*args: str, **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cyclebench", *args], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]


def write_file(root: Path, rel: str, text: str) -> None:
    """Write one sysfs/procfs file (a line) under a fixture tree, creating its directories."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


@pytest.fixture
def metal(tmp_path: Path) -> Path:
    """A writable copy of the bare-metal fixture tree, for variants."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "sysroot_baremetal", root)
    return root
