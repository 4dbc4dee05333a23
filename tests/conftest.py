"""Shared fixtures: an isolated database and build cache for every test session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

# GNU readline, which an xdist worker loads, exports COLUMNS=80 and LINES=24 when it starts
# without a terminal: the CLI's console then fits 80 columns where a test reads a pipe's natural
# width (ui/common.py). The controller hands its own values to its workers, which take them back.
_TERMINAL = ("COLUMNS", "LINES")
if (_given := os.environ.get("CYCLEBENCH_TEST_TERMINAL")) is None:
    os.environ["CYCLEBENCH_TEST_TERMINAL"] = json.dumps({k: os.environ.get(k) for k in _TERMINAL})
elif os.environ.get("PYTEST_XDIST_WORKER"):
    for _k, _v in json.loads(_given).items():
        if _v is None:
            os.environ.pop(_k, None)
        else:
            os.environ[_k] = _v

DATA = Path(__file__).parent / "data"
FIXTURES = Path(__file__).parent / "fixtures"  # sysfs/procfs trees of real machines
# Short measurements: tests assert orderings and ratios, not precision.
FAST = ["--min-time", "0.01", "--repeat", "12", "--warmup", "0.002"]


# One build cache for the whole test run (the build cache is flock-safe: build/compile.py), so the
# engine, the suite and each test's sources compile once, not once per xdist worker or phase:
# `bash dev.sh test` names it here for both its phases (the parallel one and the timing one).
RUN_CACHE_ENV = "CYCLEBENCH_TEST_CACHE"


def session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's build cache: $CYCLEBENCH_TEST_CACHE when set, else one directory beside
    every xdist worker's own temporary directory (their common parent), else this session's."""
    if given := os.environ.get(RUN_CACHE_ENV):
        cache = Path(given)
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "cache"
    else:
        return tmp_path_factory.mktemp("cache")
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    return cache


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    cache = session_cache(tmp_path_factory)
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


def cli_at(columns: int, *args: str, env: Mapping[str, str] | None = None) -> Result:
    """The CLI in-process, printing as ``COLUMNS=columns python -m cyclebench ARGS`` into pipes
    does (``env`` added to the environment), sys.argv too (a run stores it as its command). A
    process of its own costs ~0.5 s of CPU (start-up, imports), a `show` in-process ~0.015 s.
    ui/common's consoles took their width and colours from COLUMNS and the stream they found
    when imported (a terminal under ``pytest -s``), so for the call they are what a pipe with
    COLUMNS makes: ``columns`` wide, no soft wrap, no colour."""
    from cyclebench.cli import main
    from cyclebench.ui import common

    consoles = (common.out, common.err)
    saved = [(c._width, c.soft_wrap, c._color_system) for c in consoles]
    argv = sys.argv
    for c in consoles:
        c._width, c.soft_wrap, c._color_system = columns, False, None
    sys.argv = ["cyclebench", *args]
    try:
        return CliRunner(env={"COLUMNS": str(columns), **(env or {})}).invoke(main, list(args),
                                                                              catch_exceptions=False)
    finally:
        sys.argv = argv
        for c, (width, soft_wrap, colours) in zip(consoles, saved, strict=True):
            c._width, c.soft_wrap, c._color_system = width, soft_wrap, colours


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers (`bash dev.sh test`: --dist loadfile --no-loadscope-reorder), the files
    holding a `slow` test go first, each file's order kept: will-it-scale's corpus alone took
    90 s, and started last (as when this looked for ``numprocesses``, which xdist's workers
    have as None) it left the other worker idle for the last 37 s of 420."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller schedules in its collection's order
        slow = {item.path for item in items if item.get_closest_marker("slow")}
        items.sort(key=lambda item: item.path not in slow)
