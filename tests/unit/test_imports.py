"""Imports where used (docs/architecture.md): the CLI's group and a command's module import no heavy
library; the command imports what it runs, when it runs it. Each case in a fresh interpreter,
judged by the modules it holds (``sys.modules``), never by time (bench/startup.py has the
figures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cyclebench.store import Store

# what each costs to import, on a quiet 2-vCPU VM (bench/startup.py, python -X importtime): the
# libraries a verdict, a database, a plot or a prediction needs, and the project's modules that
# bring them
HEAVY = (
    "scipy",  # scipy.special ~0.3 s, scipy.stats ~0.9 s
    "sqlalchemy", "alembic", "cyclebench.store.db",  # ~0.2 s
    "matplotlib", "plotly", "jinja2",  # plots, the site
    "jsonschema",  # the run file's schema: ~0.1 s
    "elftools", "cyclebench.predict",  # --predict, explain
    "cyclebench.build.allocators",  # --allocator
)
MARK = "MODULES:"


def modules_after(code: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules a fresh interpreter holds after running ``code`` (a SystemExit in it
    included), and what it printed before."""
    wrapped = ("import json, sys\ntry:\n" + "".join(f"    {line}\n" for line in code.splitlines())
               + f"except SystemExit:\n    pass\nprint({MARK!r} + json.dumps(sorted(sys.modules)))\n")
    p = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **(env or {})})
    assert p.returncode == 0, p.stderr
    out, _, mods = p.stdout.rpartition(MARK)
    return set(json.loads(mods)), out


def heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if any(m == h or m.startswith(h + ".") for h in HEAVY))


def cli_code(*args: str) -> str:
    return f"from cyclebench.cli import main\nmain({list(args)!r}, standalone_mode=False)"


@pytest.mark.parametrize("module", ["cyclebench.cli", "cyclebench.commands.compare", "cyclebench.commands.run",
                                    "cyclebench.commands.runs", "cyclebench.commands.history"])
def test_a_command_module_imports_no_heavy_library(module: str) -> None:
    mods, _ = modules_after(f"import {module}")
    assert heavy(mods) == []
    if module != "cyclebench.commands.history":  # history's --alpha default is the change points' (numpy)
        assert "numpy" not in mods


def test_help_imports_no_command_and_no_heavy_library() -> None:
    mods, out = modules_after(cli_code("--help"))
    assert "compare" in out and "history" in out
    assert heavy(mods) == [] and "numpy" not in mods and not any(m.startswith("cyclebench.commands.") for m in mods)


def _history(db: str, values: list[float]) -> list[int]:
    s = Store(db)
    ids = []
    for v in values:
        rid = s.begin_run(command=["cyclebench", "run"], host="h", cpu=1)
        s.add_result(rid, {"bench": "hist/op", "status": "ok", "unit": "ref-cycles", "per_op": v,
                           "ci_low": v - 0.5, "ci_high": v + 0.5})
        s.finish_run(rid, "complete")
        ids.append(rid)
    s.close()
    return ids


def test_commands_that_need_them_import_them_and_work(tmp_path: Path) -> None:
    """runs reads a SQLite file at the newest schema with sqlite3 alone (store/reads.py: no SQLAlchemy)
    and needs no numpy; compare of one run a side judges with no runner, prediction, scipy (no
    spread: no t) or SQLAlchemy (its runs and results read with sqlite3); history finds a 10% step with scipy's
    t distribution, and draws nothing without --plot."""
    db = f"sqlite:///{tmp_path / 'results.db'}"
    values = list(300 + np.random.default_rng(1).normal(0, 1.5, 10))
    values[5:] = [v * 1.10 for v in values[5:]]
    ids = _history(db, values)
    env = {"CYCLEBENCH_DB": db, "COLUMNS": "200"}

    mods, out = modules_after(cli_code("runs", "-n", "100"), env)
    assert f"{ids[-1]}" in out and "sqlalchemy" not in mods and "cyclebench.store.reads" in mods
    assert "numpy" not in mods and "scipy" not in mods and "jsonschema" not in mods

    mods, out = modules_after(cli_code("compare", str(ids[0]), str(ids[-1])), env)
    assert "hist/op" in out
    assert not {"scipy", "sqlalchemy", "cyclebench.runner", "cyclebench.predict", "cyclebench.build.allocators"} & mods

    # show of a timed run reprints its table: neither the profiler's design, nor scaling's or a
    # stat run's statistics, nor scipy (each for the runs that have such rows: 1.23 → 0.58 s under load)
    mods, out = modules_after(cli_code("show"), env)
    assert "hist/op" in out
    assert not {"scipy", "cyclebench.experiments.profile", "cyclebench.stats.scaling", "cyclebench.stats.repetitions",
                "cyclebench.experiments.wis"} & mods

    mods, out = modules_after(cli_code("history", "hist/op"), env)
    assert "▲ slower +10" in out and "scipy.special" in mods
    assert "matplotlib" not in mods and "cyclebench.predict" not in mods


def test_the_standard_librarys_normal_quantiles_are_scipys() -> None:
    """stats.result takes Φ⁻¹(0.75) and Φ⁻¹(0.975) from statistics.NormalDist (AS241) instead of
    scipy.special.ndtri: the same to the last bits or two."""
    from scipy import special

    from cyclebench.stats.result import Z_95, Z_QUARTILE

    for z, p in ((Z_QUARTILE, 0.75), (Z_95, 0.975)):
        assert abs(z - float(special.ndtri(p))) <= 1e-15 * z


def test_a_measuring_compare_stores_its_run_without_sqlalchemy(tmp_path: Path) -> None:
    """compare's output guard reads a plain sqlite:/// URL without SQLAlchemy, and its store, on a
    file at the newest schema, sweeps, begins, records, sums up and finishes its run through
    sqlite3 (store/writes.py): what the command does to the database, none of it SQLAlchemy's."""
    db = f"sqlite:///{tmp_path / 'results.db'}"
    Store(db).close()
    code = (f"from cyclebench.ui import outputs\nfrom cyclebench.ui.common import open_store\n"
            f"files = list(outputs._database_files({db!r}))\nstore = open_store({db!r})\n"
            "rid = store.begin_run(command=['cyclebench', 'compare'], host='h')\n"
            "r = store.record(rid, {'bench': 'a', 'status': 'ok', 'unit': 'ref-cycles', 'per_op': 2.5}, [(10, 25)])\n"
            "store.update_run(rid, summary={'compare': []})\nstore.finish_run(rid, 'complete')\nstore.close()\n"
            "print('stored', r.id, r.per_op, len(files))")
    mods, out = modules_after(code)
    assert "stored 1 2.5 4" in out and "sqlalchemy" not in mods, out
    run = Store(db, create=False).get_run(1)
    assert run is not None and run["status"] == "complete" and run["summary"] == {"compare": []}


def test_a_measuring_compare_in_a_pipe_loads_no_progress_bar_and_no_emoji_table() -> None:
    """compare's modules, its spinner while building and its progress in a pipe (none, and lines,
    no bar) import neither rich.progress, rich.status nor rich's emoji table (33 ms together beside
    a busy loop, bench/startup.py), nor importlib.metadata (14 ms: the version a run records is the
    package's), nor concurrent.futures (5 ms: a build's pool, when it compiles), and a str printed
    keeps its emoji codes as written: nothing printed is rich markup or an emoji code."""
    code = ("import cyclebench.commands.compare, cyclebench.ui.compare, cyclebench.experiments.compare\n"
            "from cyclebench.ui.common import out, spinner\nfrom cyclebench.ui.progress import Steps\n"
            "with spinner('building'):\n    pass\n"
            "with Steps(2, 'measuring') as s:\n    s.step('a/b process 1')\n    s.step('a/b process 2')\n"
            "out.print('note=:fire: :thumbs_up:')")
    mods, printed = modules_after(code, {"COLUMNS": "80"})
    assert "note=:fire: :thumbs_up:" in printed, printed
    heavy = {"rich.progress", "rich.status", "rich._emoji_codes", "importlib.metadata", "concurrent.futures"}
    assert not heavy & mods, sorted(heavy & mods)


ONE_BLAS_PROBE = """\
import os, subprocess, sys
import cyclebench.cli as c
from cyclebench import entry
assert "numpy" not in sys.modules
def probe(**_):
    import numpy  # noqa: F401
    child = subprocess.run(["printenv", "OPENBLAS_NUM_THREADS"], capture_output=True, text=True).stdout.strip()
    print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS", "-"), child or "-")
c.main = probe
entry.main()
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts one thread on one CPU with or without it")
def test_the_cli_loads_numpy_with_one_blas_thread_and_its_children_see_the_users_environment() -> None:
    """numpy's OpenBLAS starts a spinning thread per CPU as it loads (0.08 s of CPU per command
    here): the program loads it with one, and neither it nor a child (a runner, a command `stat`
    times) sees the variable that did it. A value the user set is theirs: kept, and passed on."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    p = subprocess.run([sys.executable, "-c", ONE_BLAS_PROBE], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0 and p.stdout.split() == ["1", "-", "-"], (p.stdout, p.stderr)
    p = subprocess.run([sys.executable, "-c", ONE_BLAS_PROBE], capture_output=True, text=True, timeout=120,
                       env={**env, "OPENBLAS_NUM_THREADS": "2"})
    assert p.returncode == 0 and p.stdout.split() == ["2", "2", "2"], (p.stdout, p.stderr)


def test_the_records_field_types_are_evaluated_not_compiled_from_strings() -> None:
    """model.py is imported by every command; a TypedDict compiles each string annotation into a
    ForwardRef (its import 50 → 38 ms without, median of 50, AMD EPYC Zen 3 guest). Only the names
    used before their class is defined stay strings, and no TypedDict has one."""
    import typing

    from cyclebench import model

    records = [v for v in vars(model).values() if isinstance(v, type) and typing.is_typeddict(v)]
    assert len(records) > 40
    refs = sorted({f"{r.__name__}.{k}" for r in records for k, v in r.__annotations__.items()
                   if isinstance(v, typing.ForwardRef)})
    assert refs == [], refs
