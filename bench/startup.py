"""How fast the command line starts: figures, not pass/fail.

    .venv/bin/python bench/startup.py [--repeat 10] [--top 5]

Prints, as the median and the range over ``--repeat`` runs (one untimed run first, so every
.pyc is written):

* ``python -c pass``: the interpreter's own start, which no import order can remove;
* per command (run, compare, history, runs): the cumulative import time of its module,
  ``cyclebench.commands.NAME``, as ``python -X importtime -c "import cyclebench.commands.NAME"``
  reports it (the module's own line), the wall time of that ``python -c`` over
  ``python -c pass``, and its ``--top`` costliest imports by cumulative time (each with the
  module that imported it: the chain reads upwards);
* the wall time of ``cyclebench --help``, and of ``cyclebench runs -n 100`` on a database of
  100 stored runs (made once, in a temporary directory);
* the wall time of ``cyclebench compare`` of +30 and +1 cycle on a 300-add chain (the selftest
  chains), with its verdicts: start-up, build (cached), measuring and storing together.

Beside each wall time, the CPU seconds (user + sys) the process used: a busy host stretches the
wall by the time a process waits for a CPU, the CPU time much less.

Targets (median, quiet machine; docs/architecture.md, "Imports where used"): ``--help``
≤ 0.1 s; importing ``cyclebench.commands.compare`` ≤ 0.2 s over ``python -c pass`` (and
``run``, ``history``, ``runs`` alike); ``runs`` on 100 runs ≤ 0.3 s; ``compare`` of +30 cycles
≤ 0.6 s, every time "slower"; of +1 cycle ≤ 1.0 s, "slower" at least 19 times in 20. The host's
load moves every figure, the interpreter's too: the load average is printed before and after,
and the rows of one invocation compare, not figures across days.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# the console script a user runs (no runpy: ~5 ms less than python -m cyclebench), where installed
_SCRIPT = Path(sys.executable).with_name("cyclebench")
CB = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "cyclebench"]
COMMANDS = ("run", "compare", "history", "runs")


@dataclass(frozen=True)
class Timed:
    """Seconds per run: wall, and the CPU (user + sys) the process used, which a busy host
    moves less than the wall (it waits less for the CPU, not the work it does)."""

    wall: list[float]
    cpu: list[float]


def timed(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> Timed:
    """``argv`` run ``repeat`` times (after one untimed run)."""
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall, cpu = [], []
    for _ in range(repeat):
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        wall.append(t1 - t0)
        cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return Timed(wall, cpu)


@dataclass(frozen=True)
class Imported:
    """One line of ``-X importtime``: the module, the one that imported it (None at the top) and
    its cumulative microseconds."""

    name: str
    parent: str | None
    cumulative_us: int


def importtime(module: str) -> list[Imported]:
    """The modules a fresh ``import module`` imports, from ``python -X importtime``'s lines
    (docs.python.org/3/using/cmdline.html#cmdoption-X: a module's line follows its children's,
    indented two spaces a level)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], check=True,
                       capture_output=True, text=True)
    rows: list[tuple[int, str, int]] = []
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _self, cumulative, name = line.split(":", 1)[1].split("|")
        rows.append(((len(name) - len(name.lstrip()) - 1) // 2, name.strip(), int(cumulative)))
    out = []
    for i, (level, name, cumulative) in enumerate(rows):
        parent = next((n for lv, n, _c in rows[i + 1:] if lv < level), None)
        out.append(Imported(name, parent, cumulative))
    return out


@dataclass(frozen=True)
class ImportCost:
    """A command module's import: its cumulative seconds per run, and per module imported on
    the way (module → (importer, seconds per run))."""

    total: list[float]
    modules: dict[str, tuple[str | None, list[float]]]

    def top(self, n: int, module: str) -> list[tuple[str, str | None, float]]:
        """The ``n`` costliest imports by median cumulative seconds, ``module`` itself left out,
        and so is a module whose cost is ≥ 90% one child's (``cyclebench.build`` is its
        ``compile``): the child is shown, with its importer."""
        med = {name: statistics.median(ts) for name, (_parent, ts) in self.modules.items()}
        biggest: dict[str, float] = {}
        for name, (parent, _ts) in self.modules.items():
            if parent is not None:
                biggest[parent] = max(biggest.get(parent, 0.0), med[name])
        shown = [(name, parent, med[name]) for name, (parent, _ts) in self.modules.items()
                 if name != module and biggest.get(name, 0.0) < 0.9 * med[name]]
        return sorted(shown, key=lambda m: -m[2])[:n]


def import_cost(module: str, repeat: int) -> ImportCost:
    importtime(module)  # untimed: .pyc written
    total: list[float] = []
    modules: dict[str, tuple[str | None, list[float]]] = {}
    for _ in range(repeat):
        for m in importtime(module):
            if m.name == module:
                total.append(m.cumulative_us / 1e6)
            modules.setdefault(m.name, (m.parent, []))[1].append(m.cumulative_us / 1e6)
    return ImportCost(total, modules)


def fill(db: Path, runs: int = 100) -> None:
    """``runs`` complete runs of a few results each, written through the store (no measuring)."""
    from cyclebench.store import Store

    store = Store(f"sqlite:///{db}")
    for i in range(runs):
        rid = store.begin_run(command=["cyclebench", "run"], host="bench-host", cpu_model="bench CPU",
                              labels={"i": str(i)})
        for b in ("syscall/getpid", "copy/memcpy", "loop/empty"):
            store.add_result(rid, {"bench": b, "status": "ok", "unit": "ref-cycles", "per_op": 100.0 + i,
                                   "ci_low": 99.0 + i, "ci_high": 101.0 + i})
        store.finish_run(rid, "complete")
    store.close()


def row(name: str, t: Sequence[float], extra: str = "") -> str:
    return f"{name:<48} {statistics.median(t):9.3f} {min(t):7.3f}–{max(t):<7.3f}{extra}"


def wall_row(name: str, t: Timed) -> str:
    return row(name, t.wall, f"  cpu {statistics.median(t.cpu):.3f} s")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--top", type=int, default=5, help="costliest imports shown per command")
    args = ap.parse_args()
    print(f"before: {load()}")
    base = timed([sys.executable, "-c", "pass"], args.repeat)
    lines = [f"{'':<48} {'median s':>9} {'min–max s':>15}   ({args.repeat} runs each)",
             wall_row("python -c pass", base)]
    for cmd in COMMANDS:
        module = f"cyclebench.commands.{cmd}"
        cost = import_cost(module, args.repeat)
        t = timed([sys.executable, "-c", f"import {module}"], args.repeat)
        over = statistics.median(t.wall) - statistics.median(base.wall)
        over_cpu = statistics.median(t.cpu) - statistics.median(base.cpu)
        lines.append(row(f"import {module} (importtime)", cost.total,
                         f"  wall {over:+.3f} s over pass, cpu {over_cpu:+.3f} s"))
        lines += [f"    {s:7.3f}  {name}" + (f"  (imported by {parent})" if parent else "")
                  for name, parent, s in cost.top(args.top, module)]
    lines.append(wall_row("cyclebench --help", timed([*CB, "--help"], args.repeat)))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        fill(db)
        lines.append(wall_row("cyclebench runs -n 100 (100 runs)",
                              timed([*CB, "runs", "--db", f"sqlite:///{db}", "-n", "100"], args.repeat)))
        lines += compare_rows(Path(tmp), args.repeat)
    print("\n".join(lines))
    print(f"after: {load()}")


def compare_rows(tmp: Path, repeat: int) -> list[str]:
    """`compare` of known steps, as a user runs it: the selftest chains (300 adds against 330 and
    301: +30 and +1 cycle, docs/method.md §5a), a database already made (its first, untimed run
    made it and built the runner), each command ``repeat`` times; beside the wall, its verdicts."""
    from importlib import resources

    src = str(resources.files("cyclebench") / "suite" / "selftest" / "chains.c")
    out = []
    for k in (30, 1):
        argv = [*CB, "compare", "-f", src, "selftest/add300", f"selftest/add{300 + k}", "--db",
                f"sqlite:///{tmp}/c.db", "--json", str(tmp / "c.json")]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall, cpu, verdicts = [], [], []
        for _ in range(repeat):
            r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            wall.append(t1 - t0)
            cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            comparison = json.loads((tmp / "c.json").read_text())[0]["comparison"] or {}
            verdicts.append(comparison.get("verdict", "none"))
        said = ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
        out.append(row(f"cyclebench compare +{k} cycle{'s' if k > 1 else ''} on 300", wall,
                       f"  cpu {statistics.median(cpu):.3f} s · {said}"))
    return out


if __name__ == "__main__":
    main()
