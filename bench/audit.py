#!/usr/bin/env python3
"""Re-run the reliability audit of 2026-11-23 against the current `cyclebench` CLI.

The audit (/work/shared/audits/reliability-2026-11-23.md) tried 188 bad-input and fault
cases and found 69 FAIL (defects D1–D21). This script re-runs all 69 FAIL cases and most
PASS cases that are cheap, and judges each one by the audit's own "expected" column: it
does not fix anything, it says which cases hold today.

Each case is a data record (`Case`): the audit's number, defect ids, expected text, the
command (argv without `cyclebench`), and declarative checks built from a few helpers
(`rc(2)`, `one_line()`, `says(...)`, `not_running()`, `rss_under(200)`, `then(argv, ...)`,
...). Every case also gets two implicit checks: no Python traceback in any output, and no
process left behind (a process whose environment carries the case's marker variable or
whose argv names the case's directory; such leftovers are listed and SIGKILLed by PID).

Isolation: every case has its own directory TMP/cNNN (the commands' working directory is
TMP/cNNN/cwd, their TMPDIR TMP/cNNN/tmp) and its own database `--db sqlite:///TMP/cNNN.db` (CYCLEBENCH_DB set to the
same); CYCLEBENCH_CACHE=TMP/cache is shared by the cases unless a case asks for a fresh
one. `--cpu 1` and `--timeout 5` are added to the commands that accept them (found by
introspecting the click commands), unless the case sets them. Signal cases start the CLI in
its own session (Popen(start_new_session=True)) and send the signal to its process group,
or to its PID only, N seconds after a condition (the run is stored, cc1 runs, ...), so it
lands in the phase the case is about whatever the build takes. Benchmark sources are in
bench/audit_cases/ (the audit's `b/...` files were not kept). Cases the audit did not try,
or that would harm a shared machine or cannot be judged automatically, are listed as "not
tried" with a reason. A command that cannot even import (the tree being edited) is waited
for and run again; if it still cannot start, the case is ERROR (not judged).

Usage (from the repository root):

    .venv/bin/python bench/audit.py                 # every case tried here (~12 min on 2 cores)
    .venv/bin/python bench/audit.py --only 7,9,156-173
    .venv/bin/python bench/audit.py --fails         # only the audit's 69 FAIL cases (~6 min)
    .venv/bin/python bench/audit.py --list          # the catalogue, nothing run
    .venv/bin/python bench/audit.py --json out.json # also write every outcome as JSON
    .venv/bin/python bench/audit.py --src DIR       # judge another checkout (DIR/src) instead

Exit status: 0 when every case tried held, 1 when some failed (or could not be judged), 2
for bad arguments or a CLI that does not start.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "bench" / "audit_cases"  # {B}; {D}: tests/data, whose files the tests share
VENV_BIN = ROOT / ".venv" / "bin"
AUDIT = "/work/shared/audits/reliability-2026-11-23.md"
BEFORE_HELD, BEFORE_TOTAL, BEFORE_FAILED = 119, 188, 69
MARK_ENV = "CYCLEBENCH_AUDIT_CASE"
SECRET = "S3cretPW"
SUB_GROUPS = ("gen", "counters")  # click groups: their subcommand is part of the command path


class Cli:
    """How to start cyclebench: the venv's console script, or (``--src DIR``) the venv's Python
    on another checkout's sources (``python -m cyclebench.cli`` with PYTHONPATH=DIR/src)."""

    argv: ClassVar[list[str]] = [str(VENV_BIN / "cyclebench")]
    pythonpath: ClassVar[str | None] = None

    @classmethod
    def use_src(cls, src: Path) -> None:
        cls.argv = [str(VENV_BIN / "python"), "-m", "cyclebench.cli"]
        cls.pythonpath = str(src.resolve() / "src")
POLL_S = 0.05
RSS_VALVE_KB = 1_500_000  # the CLI is killed above this (the audit saw 5.6 GB with D2): spare the machine


# ---------------------------------------------------------------- records


@dataclass
class Run:
    """One process started by a case and what it did."""

    name: str
    argv: list[str]
    rc: int | None = None
    out: str = ""
    err: str = ""
    wall: float = 0.0
    peak_rss_kb: int = 0
    events: list[str] = field(default_factory=list)  # signals sent, limits hit
    seen: dict[int, dict[str, Any]] = field(default_factory=dict)  # watched processes of the case
    zombie_samples: dict[int, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.out + "\n" + self.err


@dataclass
class Ctx:
    """Where one case (one trial of it) runs."""

    case: Case
    top: Path
    dir: Path
    db: Path
    url: str
    env: dict[str, str]
    marker: str
    wrap: list[str]
    runs: dict[str, Run] = field(default_factory=dict)
    procs: dict[str, tuple[subprocess.Popen[bytes], float, Path, Path]] = field(default_factory=dict)
    orphans: list[str] = field(default_factory=list)
    before: dict[str, str] = field(default_factory=dict)  # sha256 of the case's files before the command
    tried_cmds: int = 0

    @property
    def cwd(self) -> Path:
        return self.dir / "cwd"

    @property
    def cache(self) -> Path:
        return Path(self.env["CYCLEBENCH_CACHE"])


# A check returns None when it holds, else a short reason.
CheckFn = Callable[[Ctx, "Run | None"], "str | None"]


@dataclass(frozen=True)
class Check:
    desc: str
    fn: CheckFn


@dataclass(frozen=True)
class When:
    """A condition a signal waits for (polled every POLL_S while the command runs)."""

    desc: str
    test: Callable[[Ctx], bool]


@dataclass(frozen=True)
class Sig:
    """Send ``signum`` to the process group (or the PID only) ``after`` seconds after the
    command started, or, with ``when``, ``after`` seconds after that condition first held
    (a build may take 1 s or 10 s: the signal must land in the phase the case is about)."""

    signum: int
    after: float
    group: bool = True
    when: When | None = None


@dataclass(frozen=True)
class Step:
    """A script step: start | wait | run (start + wait) | sleep | signal | until_runs."""

    op: str
    name: str = "main"
    argv: tuple[str, ...] = ()
    secs: float = 0.0
    signum: int = 0


@dataclass(frozen=True)
class Case:
    id: int
    area: str
    title: str
    expected: str  # the audit's "expected" column
    audit: str  # the audit's verdict: PASS | FAIL
    defects: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    steps: tuple[Step, ...] = ()  # instead of argv (+ sig): a script; judged: the runs named main*
    sig: Sig | None = None
    fixtures: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = 5.0  # --timeout for commands that accept it (None: never add)
    cpu: bool = True  # add --cpu 1 where accepted
    db: bool = True  # add --db where accepted
    limit: float = 60.0  # wall seconds before the case's process group is SIGKILLed
    fresh_cache: bool = False
    parallel: int = 1
    trials: int = 1
    wrap_ro: bool = False  # without CAP_DAC_OVERRIDE & co. (setpriv) so file modes apply to root
    watch: bool = False  # sample the case's processes while it runs (scheduling policy, zombies)
    static: bool = False  # no command: the checks look at the source tree
    requires: tuple[str, ...] = ()  # executables, or "overcommit"
    skip: str | None = None  # not tried, and why
    note: str = ""


@dataclass
class Outcome:
    case: Case
    verdict: str  # PASS | FAIL | ERROR (the CLI did not start) | not tried
    observed: str = ""
    why: list[str] = field(default_factory=list)
    wall: float = 0.0
    orphans: list[str] = field(default_factory=list)
    rc: list[int | None] = field(default_factory=list)
    cli_broken: str | None = None  # the CLI died importing itself

    def to_dict(self) -> dict[str, Any]:
        c = self.case
        return {"id": c.id, "area": c.area, "case": c.title, "defects": list(c.defects), "expected": c.expected,
                "audit_verdict": c.audit, "verdict": self.verdict, "observed": self.observed, "why": self.why,
                "rc": self.rc, "wall_s": round(self.wall, 2), "orphans": self.orphans,
                "command": list(c.argv) or [list(s.argv) for s in c.steps if s.argv], "skip": c.skip,
                "note": c.note}


# ---------------------------------------------------------------- checks


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def rc(*codes: int) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        return None if r.rc in codes else f"rc {r.rc} ∉ {{{','.join(map(str, codes))}}}"

    return Check(f"exit {'/'.join(map(str, codes))}", fn)


def one_line() -> Check:
    """One line on stderr; click's usage error (a `Usage:` line, a `Try '…'` line and one
    `Error:` line) counts as one line too: it is one message saying what to do."""

    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        lines = [ln.strip() for ln in _lines(r.err)]
        errors = [ln for ln in lines if not ln.startswith(("Usage:", "Try '"))]
        if len(lines) == 1 or (len(errors) == 1 and errors[0].startswith("Error:")):
            return None
        return f"{len(lines)} lines on stderr"

    return Check("one line on stderr", fn)


def no_traceback() -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        return "Traceback" if "Traceback (most recent call last)" in r.text else None

    return Check("no traceback", fn)


def says(*texts: str) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        missing = [t for t in texts if t not in r.text]
        return f"output lacks {', '.join(map(repr, missing))}" if missing else None

    return Check(f"says {', '.join(map(repr, texts))}", fn)


def silent_on(*texts: str) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        found = [t for t in texts if t in r.text]
        return f"output has {', '.join(map(repr, found))}" if found else None

    return Check(f"does not say {', '.join(map(repr, texts))}", fn)


def matches(pattern: str) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        return None if re.search(pattern, r.text, re.M) else f"no match for /{pattern}/"

    return Check(f"matches /{pattern}/", fn)


def no_esc() -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        n = r.text.count("\x1b") + r.text.count("\x07")
        return f"{n} raw ESC/BEL byte(s) in the output" if n else None

    return Check("no raw ESC/BEL in output", fn)


def wall_under(seconds: float) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        return None if r.wall < seconds else f"took {r.wall:.1f} s (≥ {seconds:g})"

    return Check(f"done in < {seconds:g} s", fn)


def rss_under(mb: float) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        peak = r.peak_rss_kb / 1024
        return None if 0 < peak < mb else f"CLI peak RSS {peak:.0f} MB"

    return Check(f"CLI RSS < {mb:g} MB", fn)


def absent(pattern: str) -> Check:
    """No file matches ``pattern`` (relative to the case directory)."""

    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        found = glob.glob(str(ctx.dir / pattern), recursive=True)
        return f"left: {', '.join(str(Path(f).relative_to(ctx.dir)) for f in found)}" if found else None

    return Check(f"no {pattern}", fn)


def db_unchanged() -> Check:
    """The case's database file has the bytes it had before the command."""

    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        return None if _digest(ctx.db) == ctx.before.get("DB") else f"{ctx.db.name} was modified"

    return Check("DB file unchanged", fn)


def all_of(*checks: Check) -> Check:
    def fn(ctx: Ctx, r: Run | None) -> str | None:
        bad = [w for c in checks if (w := c.fn(ctx, r))]
        return "; ".join(bad) if bad else None

    return Check(" and ".join(c.desc for c in checks), fn)


def either(*checks: Check) -> Check:
    def fn(ctx: Ctx, r: Run | None) -> str | None:
        whys = []
        for c in checks:
            w = c.fn(ctx, r)
            if w is None:
                return None
            whys.append(w)
        return " / ".join(whys)

    return Check(" or ".join(f"({c.desc})" for c in checks), fn)


def then(argv: Iterable[str], *checks: Check, name: str = "then") -> Check:
    """Run another command in the same case (same DB, env, cwd) and judge it too."""
    argv = tuple(argv)

    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        r = run_cli(ctx, f"{name}{ctx.tried_cmds}", argv)
        bad = [w for c in (*checks, no_traceback()) if (w := c.fn(ctx, r))]
        if not bad:
            return None
        return f"then `{' '.join(argv)[:40]}` → rc {r.rc}: {first_line(r)[:60]} ({'; '.join(bad)})"

    return Check(f"then `{' '.join(argv)}`: {', '.join(c.desc for c in checks)}", fn)


def _db_rows(ctx: Ctx, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{ctx.db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def db_count(sql: str, ok: Callable[[int], bool], desc: str) -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        try:
            n = int(_db_rows(ctx, sql)[0][0])
        except (sqlite3.Error, IndexError, TypeError) as e:
            return f"DB not readable ({e})"
        return None if ok(n) else f"{desc}: {n}"

    return Check(desc, fn)


def runs_stored(at_least: int = 1) -> Check:
    return db_count("SELECT count(*) FROM runs", lambda n: n >= at_least, f"≥ {at_least} run(s) stored")


def nothing_stored() -> Check:
    def fn(ctx: Ctx, r: Run | None) -> str | None:
        if not ctx.db.exists():
            return None
        try:
            n = int(_db_rows(ctx, "SELECT count(*) FROM runs")[0][0])
        except sqlite3.Error:
            return None  # no runs table: nothing stored
        return f"{n} run(s) stored" if n else None

    return Check("nothing stored", fn)


def result_status(bench: str, *statuses: str) -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        try:
            got = [s for (s,) in _db_rows(ctx, "SELECT status FROM results WHERE bench = ?", (bench,))]
        except sqlite3.Error as e:
            return f"DB not readable ({e})"
        if any(s in statuses for s in got):
            return None
        return f"{bench}: {', '.join(got) or 'no result'}"

    return Check(f"{bench} {'/'.join(statuses)}", fn)


def no_forged_result() -> Check:
    return db_count("SELECT count(*) FROM results WHERE extra LIKE '%AUDIT71%'", lambda n: n == 0,
                    "forged results stored")


def table_columns(table: str, expected: tuple[str, ...]) -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        cols = tuple(row[1] for row in _db_rows(ctx, f"PRAGMA table_info({table})"))
        return None if cols == expected else f"{table} now has {len(cols)} columns ({', '.join(cols[:4])}, …)"

    return Check(f"{table} columns unchanged", fn)


def not_running() -> Check:
    """No run is left in status 'running', as `cyclebench runs` shows them (sqlite when it cannot)."""

    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        r = run_cli(ctx, f"runs{ctx.tried_cmds}", ("runs", "-n", "1000"))
        statuses: list[str] = []
        if r.rc == 0:
            for ln in r.out.splitlines():
                cells = [c.strip() for c in ln.split("│")]
                if len(cells) > 4 and cells[1].isdigit():
                    statuses.append(cells[3])
            src = "runs"
        else:
            try:
                statuses = [s for (s,) in _db_rows(ctx, "SELECT status FROM runs")]
            except sqlite3.Error as e:
                return f"`runs` rc {r.rc} and DB not readable ({e})"
            src = f"sqlite (runs rc {r.rc})"
        if not statuses:
            return f"no run stored ({src})"
        left = statuses.count("running")
        return f"{left} of {len(statuses)} run(s) still 'running' ({src})" if left else None

    return Check("no run left 'running'", fn)


def no_orphans() -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        return f"{len(ctx.orphans)} process(es) left behind: {'; '.join(ctx.orphans)[:120]}" if ctx.orphans else None

    return Check("no process left behind", fn)


def no_build_debris() -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        tmp = [p.name for p in (ctx.cache / "build").glob(".tmp*")]
        return f"cache/build has {', '.join(tmp)}" if tmp else None

    return Check("no .tmp-* in the build cache", fn)


def swept_on_next_build(argv: tuple[str, ...]) -> Check:
    """Debris a SIGKILLed build left in the cache is removed by a later build. A killed process
    cannot clean up, so a sweep may wait for debris to age: everything in cache/build whose name
    starts with a dot (.tmp-* and any stamp such as .pruned) is backdated 2 days first."""

    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        build = ctx.cache / "build"
        old = time.time() - 2 * 86400
        for p in build.glob(".*"):
            os.utime(p, (old, old))
        r = run_cli(ctx, f"sweep{ctx.tried_cmds}", argv)
        if r.rc != 0:
            return f"follow-up build rc {r.rc}: {first_line(r)[:60]}"
        tmp = [p.name for p in build.glob(".tmp*")]
        return f"cache/build still has {', '.join(tmp)} (backdated 2 days, then built again)" if tmp else None

    return Check("a later build sweeps the debris", fn)


def one_cache_entry() -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        keys = [p.name for p in (ctx.cache / "build").iterdir() if not p.name.startswith(".")]
        return None if len(keys) == 1 else f"{len(keys)} cache entries"

    return Check("one build cache entry", fn)


def cache_private() -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        bad = [f"{p.name} {p.stat().st_mode & 0o777:o}" for p in (ctx.cache / "build").iterdir()
               if p.is_dir() and p.stat().st_mode & 0o077]
        return f"not private: {', '.join(bad)}" if bad else None

    return Check("build cache entries 0700", fn)


def dir_empty(rel: str) -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        left = sorted(str(p.relative_to(ctx.dir)) for p in (ctx.dir / rel).rglob("*"))
        return f"left: {', '.join(left)}" if left else None

    return Check(f"{rel}/ empty", fn)


def same_show(a: int, b: int) -> Check:
    def fn(ctx: Ctx, _r: Run | None) -> str | None:
        ra, rb = (run_cli(ctx, f"show{n}", ("show", str(n))) for n in (a, b))
        norm = [re.sub(r"run #\d+", "run #N", r.out) for r in (ra, rb)]
        if ra.rc != 0 or rb.rc != 0:
            return f"show rc {ra.rc}/{rb.rc}"
        return None if norm[0] == norm[1] and norm[0].strip() else f"`show {a}` and `show {b}` differ"

    return Check(f"show {a} == show {b}", fn)


def fifo_applied(prio: int) -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        runners = [s for s in r.seen.values() if "--run" in s["argv"]]
        if not runners:
            return "no runner seen"
        if any(s["policy"] == 1 and s["rtprio"] == prio for s in runners):
            return None
        got = {(s["policy"], s["rtprio"], s.get("rttime")) for s in runners}
        return f"runner policy/prio/RTTIME: {sorted(got, key=str)} (SCHED_FIFO is 1)"

    return Check(f"runner under SCHED_FIFO {prio}", fn)


def no_zombies() -> Check:
    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        stuck = [pid for pid, n in r.zombie_samples.items() if n >= 4]
        return f"zombie(s) for ≥ 0.2 s: {stuck}" if stuck else None

    return Check("no lasting zombies", fn)


def interrupt_names_run(run_id: int) -> Check:
    """The interrupt message names run #run_id, and no other run."""

    def fn(_ctx: Ctx, r: Run | None) -> str | None:
        assert r is not None
        said = [ln for ln in _lines(r.err) if "interrupted" in ln]
        ids = {int(n) for ln in said for n in re.findall(r"run #(\d+)", ln)}
        return None if ids == {run_id} else f"interrupt message names run(s) {sorted(ids) or 'none'}"

    return Check(f"interrupt message names run #{run_id}", fn)


def help_lists_cleanup() -> Check:
    return then(("--help",), matches(r"^\s+(clean|prune|gc|cache)\b"), name="help")


def no_shell_in_src() -> Check:
    pat = re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(|(?<![\w.])(system|popen)\(")

    def fn(_ctx: Ctx, _r: Run | None) -> str | None:
        hits = []
        for p in sorted((ROOT / "src").rglob("*")):
            if p.suffix in (".py", ".c", ".h") and p.is_file():
                for i, ln in enumerate(p.read_text(errors="replace").splitlines(), 1):
                    if pat.search(ln) and not ln.lstrip().startswith(("#", "*", "/*", "//")):
                        hits.append(f"{p.relative_to(ROOT)}:{i}")
        return f"shell use at {', '.join(hits[:5])}" if hits else None

    return Check("no shell use in src/", fn)


def appears(pattern: str) -> When:
    """A file matching ``pattern`` (relative to the case directory, ** allowed) exists."""
    return When(f"{pattern} appears", lambda ctx: bool(glob.glob(str(ctx.dir / pattern), recursive=True)))


def run_stored() -> When:
    """The command has stored its run row: building is over, measuring has begun."""

    def test(ctx: Ctx) -> bool:
        try:
            return ctx.db.exists() and int(_db_rows(ctx, "SELECT count(*) FROM runs")[0][0]) > 0
        except sqlite3.Error:
            return False

    return When("the run is stored", test)


def proc_running(word: str, as_arg: bool = False) -> When:
    """A process of the case runs the program ``word`` (or, with ``as_arg``, has it as an
    argument: `hang/forever` in a runner's argv, never in the CLI's own)."""

    def test(ctx: Ctx) -> bool:
        for pid in case_procs(ctx):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            except OSError:
                continue
            if argv and (word in argv[1:] if as_arg else Path(argv[0]).name == word):
                return True
        return False

    return When(f"{word} runs", test)


# ---------------------------------------------------------------- processes


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "-"


_OPTS: dict[tuple[str, ...], frozenset[str]] = {}
_DUMP = """
import json, click
from cyclebench.cli import main
out = {}
def walk(cmd, path):
    out[" ".join(path)] = sorted(o for p in cmd.params if isinstance(p, click.Option)
                                 for o in (*p.opts, *p.secondary_opts))
    for name, sub in getattr(cmd, "commands", {}).items():
        walk(sub, (*path, name))
walk(main, ())
print(json.dumps(out))
"""


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    if Cli.pythonpath:
        env["PYTHONPATH"] = Cli.pythonpath
    return env


def options_of(path: tuple[str, ...]) -> frozenset[str]:
    """The option names a command accepts, from the CLI's click objects (one subprocess, so
    this script never imports the package under test); its --help as a fallback."""
    if not _OPTS:
        cp = subprocess.run([str(VENV_BIN / "python"), "-c", _DUMP], capture_output=True, text=True, timeout=60,
                            check=False, env=_cli_env())
        with contextlib.suppress(ValueError):
            _OPTS.update({tuple(k.split()): frozenset(v) for k, v in json.loads(cp.stdout).items()})
    if path not in _OPTS:
        cp = subprocess.run([*Cli.argv, *path, "--help"], capture_output=True, text=True, timeout=60, check=False,
                            env={**_cli_env(), "COLUMNS": "200"})
        names = frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", cp.stdout))
        if cp.returncode != 0 or not names:
            return names  # not cached: the CLI may be mid-edit
        _OPTS[path] = names
    return _OPTS[path]


def expand(ctx: Ctx, token: str) -> str:
    return (token.replace("{B}", str(CASES)).replace("{T}", str(ctx.dir)).replace("{X}", str(ctx.top / "shared"))
            .replace("{E}", str(ROOT / "examples")).replace("{D}", str(ROOT / "tests" / "data")))


def complete_argv(ctx: Ctx, argv: tuple[str, ...]) -> list[str]:
    """The full command: `--db`, `--cpu 1`, `--timeout N` added after the command path where
    the command accepts them and the case did not set them."""
    args = [expand(ctx, a) for a in argv]
    n = 0 if not args or args[0].startswith("-") else 2 if args[0] in SUB_GROUPS and len(args) > 1 else 1
    path, rest = tuple(args[:n]), args[n:]
    opts = options_of(path) if path else frozenset()
    # "@f:FILE": a benchmark file, given as `-f FILE` where the command takes -f/--file, else positionally
    rest = [x for a in rest for x in ((["-f", a[3:]] if "-f" in opts else [a[3:]]) if a.startswith("@f:") else [a])]
    given = set(rest[: rest.index("--")] if "--" in rest else rest)
    extra: list[str] = []
    c = ctx.case
    if c.db and "--db" in opts and "--db" not in given:
        extra += ["--db", ctx.url]
    if c.cpu and "--cpu" in opts and "--cpu" not in given:
        extra += ["--cpu", "1"]
    if c.timeout is not None and "--timeout" in opts and "--timeout" not in given:
        extra += ["--timeout", f"{c.timeout:g}"]
    return [*ctx.wrap, *Cli.argv, *path, *extra, *rest]


def _default_signals() -> None:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)


def start(ctx: Ctx, name: str, argv: tuple[str, ...]) -> None:
    full = complete_argv(ctx, argv)
    out, err = ctx.dir / f"{name}.out", ctx.dir / f"{name}.err"
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, cwd=ctx.cwd, env=ctx.env,
                                start_new_session=True, preexec_fn=_default_signals)
    ctx.procs[name] = (proc, time.monotonic(), out, err)
    ctx.runs[name] = Run(name, full)
    ctx.tried_cmds += 1


def _read(p: Path, cap: int = 1 << 20) -> str:
    with p.open("rb") as f:
        data = f.read(cap)
    return data.decode(errors="replace")


def _proc_stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].decode().split()
    except (OSError, IndexError):
        return None


def _vm_hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def case_procs(ctx: Ctx) -> list[int]:
    """PIDs of live processes that belong to the case: the marker in their environment, or
    the case directory in their argv."""
    me, found = os.getpid(), []
    mark, dirb = f"{MARK_ENV}={ctx.marker}".encode(), str(ctx.dir).encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if mark in environ.split(b"\0") or dirb in cmdline:
            st = _proc_stat(int(entry.name))
            if st and st[0] != "Z":
                found.append(int(entry.name))
    return found


def _describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return f"{pid} (gone)"
    words = [Path(argv[0].decode(errors="replace")).name] + [a.decode(errors="replace") for a in argv[1:4] if a]
    return f"{pid} {' '.join(words)[:60]}"


def _watch(ctx: Ctx, r: Run) -> None:
    """One sample of the case's processes: scheduling policy, RT priority and RLIMIT_RTTIME of
    each, and zombies whose parent belongs to the case (counted over consecutive samples)."""
    mark = f"{MARK_ENV}={ctx.marker}".encode()
    mine: set[int] = set()
    dead: list[tuple[int, int]] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        st = _proc_stat(pid)
        if st is None:
            continue
        if st[0] == "Z":
            dead.append((pid, int(st[1])))
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            with open(f"/proc/{pid}/limits") as f:
                rttime = next((ln.split()[3] for ln in f if ln.startswith("Max realtime timeout")), None)
        except OSError:
            continue
        mine.add(pid)
        r.seen[pid] = {"argv": argv, "policy": int(st[38]), "rtprio": int(st[37]), "rttime": rttime}
    zombies = {pid for pid, ppid in dead if ppid in mine}
    for pid in zombies:
        r.zombie_samples[pid] = r.zombie_samples.get(pid, 0) + 1
    for pid in list(r.zombie_samples):
        if pid not in zombies and r.zombie_samples[pid] < 4:
            del r.zombie_samples[pid]


def _send(proc: subprocess.Popen[bytes], signum: int, group: bool) -> None:
    try:
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def wait(ctx: Ctx, name: str, sig: Sig | None = None, limit: float | None = None) -> Run:
    proc, t0, out, err = ctx.procs[name]
    r = ctx.runs[name]
    limit = limit if limit is not None else ctx.case.limit
    sent, matched_at, valve = sig is None, None, False
    while proc.poll() is None:
        now = time.monotonic() - t0
        r.peak_rss_kb = max(r.peak_rss_kb, _vm_hwm_kb(proc.pid))
        if ctx.case.watch:
            _watch(ctx, r)
        if not sent and sig is not None:
            if matched_at is None and (sig.when is None or sig.when.test(ctx)):
                matched_at = now
            if matched_at is not None and now >= matched_at + sig.after:
                _send(proc, sig.signum, sig.group)
                r.events.append(f"{signal.Signals(sig.signum).name} to {'group' if sig.group else 'pid'} "
                                f"at {now:.1f} s" + (f", {sig.after:g} s after {sig.when.desc}" if sig.when else ""))
                sent = True
        if r.peak_rss_kb > RSS_VALVE_KB and not valve:
            _send(proc, signal.SIGKILL, True)
            r.events.append(f"killed: RSS {r.peak_rss_kb >> 10} MB (safety valve)")
            valve = True
        if now > limit:
            _send(proc, signal.SIGKILL, True)
            r.events.append(f"killed at the {limit:g} s limit")
            proc.wait()
            break
        time.sleep(POLL_S)
    if not sent and sig is not None:
        r.events.append(f"no {signal.Signals(sig.signum).name} sent: "
                        f"{sig.when.desc if sig.when else 'the command ended first'}"
                        f"{' never happened' if sig.when and matched_at is None else ''}")
    r.rc = proc.returncode
    r.peak_rss_kb = max(r.peak_rss_kb, _vm_hwm_kb(proc.pid))
    r.wall = time.monotonic() - t0
    r.out, r.err = _read(out), _read(err)
    del ctx.procs[name]
    return r


def run_cli(ctx: Ctx, name: str, argv: tuple[str, ...], limit: float = 60) -> Run:
    start(ctx, name, argv)
    return wait(ctx, name, None, limit)


def reap_orphans(ctx: Ctx) -> None:
    """List and SIGKILL (by PID) every process of the case still alive."""
    for name in list(ctx.procs):  # a script step left running: the case is over
        proc = ctx.procs[name][0]
        _send(proc, signal.SIGKILL, True)
        wait(ctx, name)
    left = case_procs(ctx)
    if left:
        time.sleep(0.3)  # let a dying runner finish dying
        left = case_procs(ctx)
    if not left:
        return
    ctx.orphans.extend(_describe(p) for p in left)
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and case_procs(ctx):
        time.sleep(0.05)


BOX = set("┏┓┗┛┃━│─┡┩└┘╇┳┻┼├┤┬┴╈ ")
TELLING = re.compile(r"^(cyclebench:|run #|stat #|imported|command:|Error:|plot written|wrote )")


def first_line(r: Run) -> str:
    """The most telling line: a traceback's exception, else cyclebench's own message (error,
    interrupt, 'run #N … stored'), else stderr's first line, else stdout's."""
    err = _lines(r.err)
    if "Traceback (most recent call last)" in r.text:
        exc = [ln for ln in _lines(r.text) if re.match(r"^[\w.]+(Error|Exception|Interrupt|Exit|Expired)\b", ln)]
        return "TB " + (exc[-1] if exc else err[-1] if err else "")
    told = [ln.strip() for ln in err if TELLING.match(ln.strip())]
    if told:
        return told[0]
    for ln in err + _lines(r.out):
        s = ln.strip()
        if s and not set(s) <= BOX and s[0] not in "┏┃┡└├":
            return s
    return ""


# ---------------------------------------------------------------- fixtures


class Shared:
    """Fixtures made once per script run in TMP/shared (lazily)."""

    def __init__(self, top: Path) -> None:
        self.dir = top / "shared"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.top = top

    def _ctx(self) -> Ctx:
        case = Case(0, "fixture", "seed", "", "PASS", timeout=None)
        return make_ctx(case, self.top, self, "seed", self.dir / "seed.db")

    def seed(self) -> tuple[Path, Path]:
        """A database with run #1 (loop/empty, timer/rdtsc), checkpointed, and its export."""
        db, js = self.dir / "seed.db", self.dir / "seed.json"
        if not js.exists():
            ctx = self._ctx()
            r = run_cli(ctx, "seed", ("run", "-b", "timer/rdtsc", "-q", "--min-time", "0.02", "--repeat", "10"))
            if r.rc != 0:
                raise RuntimeError(f"cannot make the seed DB: rc {r.rc}: {first_line(r)}")
            con = sqlite3.connect(db)
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            con.close()
            e = run_cli(ctx, "export", ("export", "1", "--json", str(js)))
            if e.rc != 0:
                raise RuntimeError(f"cannot export the seed DB: rc {e.rc}: {first_line(e)}")
            reap_orphans(ctx)
        return db, js

    def ic20k(self) -> Path:
        p = self.dir / "ic20k.c"
        if not p.exists():
            r = run_cli(self._ctx(), "gen", ("gen", "icache", "--funcs", "20000", "-o", str(p)))
            if r.rc != 0:
                raise RuntimeError(f"cannot generate ic20k.c: {first_line(r)}")
        return p


def _import_variant(kind: str, seed: dict[str, Any]) -> bytes:
    d = json.loads(json.dumps(seed))
    last = d["results"][-1]
    if kind == "trunc":
        text = json.dumps(seed)
        return text[: len(text) // 2].encode()
    if kind == "list":
        return b"[1, 2, 3]\n"
    if kind == "nokeys":
        d = {"format": "cyclebench-run", "version": 1, "results": []}
    elif kind == "ver":
        d["version"] = "abc"
    elif kind == "bin":
        return b"\xff\xfe\x00\x9c" + random.Random(129).randbytes(256)
    elif kind == "mismatch":
        last["samples"]["ticks"] = last["samples"]["ticks"][: len(last["samples"]["ticks"]) // 2]
    elif kind == "nobench":
        del last["bench"]
    elif kind == "nostart":
        d["run"]["started_at"] = None
    elif kind == "bigint":
        last["samples"]["iters"][0] = 2**70
    elif kind == "strfloat":
        last["per_op"] = "not a number"
    elif kind == "evil":
        d["run"]["command"] = ["[/oops]"]
        d["run"]["host"] = "\x1b[31mevil\x1b[0m\x1b]8;;http://example.invalid/\x1b\\host\x1b]8;;\x1b\\"
    else:
        raise ValueError(kind)
    return (json.dumps(d) + "\n").encode()


# The audit's "older schema": cyclebench c7ecbb2's tables (its schema 2) without the columns schema 1
# lacked (20 result columns, samples.cal/pmu, runs.summary), made before Alembic managed the file.
V1_TABLES = {
    "meta": ("key VARCHAR(40) NOT NULL PRIMARY KEY", "value VARCHAR(255)"),
    "runs": ("id INTEGER NOT NULL PRIMARY KEY", "started_at VARCHAR(40) NOT NULL", "finished_at VARCHAR(40)",
             "status VARCHAR(20) NOT NULL", "command JSON", "host VARCHAR(255)", "cpu_model VARCHAR(255)",
             "cpu INTEGER", "tool_version VARCHAR(40)", "code_rev VARCHAR(80)", "build JSON", "calibration JSON",
             "env JSON"),
    "results": ("id INTEGER NOT NULL PRIMARY KEY", "run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE",
                "bench VARCHAR(255) NOT NULL", "param BIGINT", "variant VARCHAR(255) NOT NULL",
                "status VARCHAR(20) NOT NULL", "reason TEXT", "unit VARCHAR(20)", "per_op FLOAT", "ci_low FLOAT",
                "ci_high FLOAT", "intercept FLOAT", "median FLOAT", "median_ci_low FLOAT", "median_ci_high FLOAT",
                "min FLOAT", "mad FLOAT", "mean FLOAT", "cv FLOAT", "rcv FLOAT", "confidence FLOAT",
                "method VARCHAR(20)", "rounds INTEGER", "ns_per_op FLOAT", "n_samples INTEGER", "outliers INTEGER",
                "timer_overhead FLOAT", "wall_s FLOAT", "created_at VARCHAR(40) NOT NULL", "extra JSON"),
    "samples": ("result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE", "idx INTEGER NOT NULL",
                "iters BIGINT NOT NULL", "ticks BIGINT NOT NULL", "disturbed INTEGER"),
}


def _old_schema(seed: Path, db: Path) -> None:
    """A schema-1 database holding the seed's run (the columns both have)."""
    con = sqlite3.connect(db)
    for table, cols in V1_TABLES.items():
        con.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
    con.execute("CREATE INDEX ix_results_run_id ON results (run_id)")
    con.execute("CREATE INDEX ix_results_bench ON results (bench)")
    con.execute("CREATE INDEX ix_samples_result_id ON samples (result_id)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("ATTACH DATABASE ? AS seed", (f"file:{seed}?mode=ro",))
    for table, cols in V1_TABLES.items():
        if table == "meta":
            continue
        have = {row[1] for row in con.execute(f"PRAGMA seed.table_info({table})")}
        names = [c.split()[0] for c in cols if c.split()[0] in have]
        con.execute(f"INSERT INTO main.{table} ({', '.join(names)}) SELECT {', '.join(names)} FROM seed.{table}")
    con.commit()
    con.close()


def _newer_schema(db: Path) -> None:
    """Mark the seed as written by a later cyclebench: a schema version and (if Alembic manages
    the file) a revision no cyclebench knows yet."""
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone():
        con.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    con.commit()
    con.close()


def make_fixture(ctx: Ctx, shared: Shared, name: str) -> None:
    if name == "old":
        _old_schema(shared.seed()[0], ctx.db)
    elif name in ("seed", "mid5", "trunc", "newer", "ro"):
        seed_db, _ = shared.seed()
        shutil.copyfile(seed_db, ctx.db)
        if name == "mid5":  # the audit's pages 5-6: the results table and its index, runs left intact
            con = sqlite3.connect(ctx.db)
            size = int(con.execute("PRAGMA page_size").fetchone()[0])
            pages = sorted({int(p) for (p,) in con.execute(
                "SELECT rootpage FROM sqlite_master WHERE tbl_name = 'results' AND rootpage > 0")})
            con.close()
            with ctx.db.open("r+b") as f:
                for k, page in enumerate(pages[:2]):
                    f.seek((page - 1) * size)
                    f.write(random.Random(5 + k).randbytes(size))
        elif name == "trunc":
            data = ctx.db.read_bytes()
            ctx.db.write_bytes(data[: len(data) // 2])
        elif name == "newer":
            _newer_schema(ctx.db)
        elif name == "ro":
            ctx.db.chmod(0o444)
    elif name == "foreign":
        con = sqlite3.connect(ctx.db)
        con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT)")
        con.execute("INSERT INTO runs (name) VALUES ('not cyclebench')")
        con.commit()
        con.close()
    elif name == "corrupt":
        ctx.db.write_bytes(random.Random(111).randbytes(64 * 1024))
    elif name == "rodir":
        (ctx.dir / "rodir").mkdir()
        (ctx.dir / "rodir").chmod(0o555)
    elif name == "ic20k":
        shared.ic20k()
    elif name.startswith("imp_"):
        _, js = shared.seed()
        kind = name.removeprefix("imp_")
        (ctx.dir / f"{kind}.json").write_bytes(_import_variant(kind, json.loads(js.read_text())))
    else:
        raise ValueError(f"unknown fixture {name}")


def make_ctx(case: Case, top: Path, shared: Shared, label: str, db: Path | None = None) -> Ctx:
    d = top / label
    d.mkdir(parents=True, exist_ok=True)
    (d / "cwd").mkdir(exist_ok=True)
    db = db or top / f"{label}.db"
    url = f"sqlite:///{db}"
    marker = f"{label}-{os.getpid()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CYCLEBENCH_", "FORCE_COLOR"))}
    env.pop("COLUMNS", None)
    if Cli.pythonpath:
        env["PYTHONPATH"] = Cli.pythonpath
    # TMPDIR private to the case: what a killed command leaves there stays in TMP, not in /tmp
    env.update({"CYCLEBENCH_DB": url, "CYCLEBENCH_CACHE": str(d / "cache" if case.fresh_cache else top / "cache"),
                MARK_ENV: marker, "TMPDIR": str(d / "tmp")})
    (d / "tmp").mkdir(exist_ok=True)
    for k, v in case.env:
        env[k] = v.replace("{T}", str(d))
        if k == "TMPDIR":
            Path(env[k]).mkdir(parents=True, exist_ok=True)
    wrap = ["setpriv", "--inh-caps=-dac_override,-dac_read_search,-fowner",
            "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] if case.wrap_ro and os.getuid() == 0 else []
    return Ctx(case, top, d, db, url, env, marker, wrap)


# ---------------------------------------------------------------- executing a case


def gate(case: Case) -> str | None:
    """Why the case cannot be tried on this machine, or None."""
    for need in case.requires:
        if need == "overcommit":
            try:
                mode = int(Path("/proc/sys/vm/overcommit_memory").read_text())
                mem = sum(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                          if ln.startswith(("MemTotal:", "SwapTotal:")))
            except (OSError, ValueError):
                return "cannot read the overcommit policy"
            if mode != 0 or mem * 1024 >= 50 << 30:
                return "the kernel might grant 50 GB here (it would then be touched): not tried"
        elif shutil.which(need) is None:
            return f"{need} is not installed"
    return None


def _steps(case: Case) -> tuple[Step, ...]:
    if case.steps:
        return case.steps
    if case.parallel > 1:
        names = [f"main{i}" for i in range(case.parallel)]
        return (*(Step("start", n, case.argv) for n in names), *(Step("wait", n) for n in names))
    return Step("start", "main", case.argv), Step("wait", "main")


def run_trial(case: Case, top: Path, shared: Shared, label: str) -> tuple[list[str], Ctx]:
    """Run the case once; returns the reasons it failed (empty: held) and its context."""
    ctx = make_ctx(case, top, shared, label)
    for fx in case.fixtures:
        make_fixture(ctx, shared, fx)
    ctx.before = {"DB": _digest(ctx.db)}
    why: list[str] = []
    try:
        if case.static:
            judged: list[Run | None] = [None]
        else:
            for st in _steps(case):
                if st.op == "start":
                    start(ctx, st.name, st.argv)
                elif st.op == "wait":
                    wait(ctx, st.name, case.sig if st.name == "main" else None)
                elif st.op == "run":
                    run_cli(ctx, st.name, st.argv)
                elif st.op == "sleep":
                    time.sleep(st.secs)
                elif st.op == "signal":
                    proc, t0, *_ = ctx.procs[st.name]
                    _send(proc, st.signum, True)
                    ctx.runs[st.name].events.append(f"{signal.Signals(st.signum).name} to group at "
                                                    f"{time.monotonic() - t0:.1f} s")
                elif st.op == "until_runs":
                    deadline = time.monotonic() + (st.secs or 30)
                    while time.monotonic() < deadline:
                        try:
                            if ctx.db.exists() and _db_rows(ctx, "SELECT count(*) FROM runs")[0][0] >= 1:
                                break
                        except sqlite3.Error:
                            pass
                        time.sleep(0.1)
                else:
                    raise ValueError(st.op)
            judged = [r for n, r in ctx.runs.items() if n.startswith("main")]
    finally:
        reap_orphans(ctx)
    for r in judged:
        for chk in (*case.checks, *((no_traceback(),) if r is not None else ()), no_orphans()):
            w = chk.fn(ctx, r)
            if w and w not in why:
                why.append(w)
    reap_orphans(ctx)  # what the checks' own commands (then, runs) may have left
    return why, ctx


def observe(ctx: Ctx) -> tuple[str, list[int | None]]:
    mains = [r for n, r in ctx.runs.items() if n.startswith("main")]
    if not mains:
        return "(static check)", []
    codes = [r.rc for r in mains]
    show = next((r for r in mains if r.rc != 0), mains[0])
    rcs = ",".join(map(str, codes))
    text = f"rc {rcs}: {first_line(show)}"
    extras = [e for r in mains for e in r.events]
    if extras:
        text = f"[{'; '.join(extras)}] " + text
    return text, codes


START_FAILURE = re.compile(r"^(ImportError|ModuleNotFoundError|SyntaxError|IndentationError)\b", re.M)
RETRY_WAIT_S = 15.0


FRAME = re.compile(r'^\s*File "([^"]*)", line \d+, in (\S+)', re.M)


def cli_broken(text: str) -> str | None:
    """The exception line when the CLI died importing itself (a tree being edited: the last
    cyclebench frame is a module body and the error an ImportError/SyntaxError), else None."""
    if "Traceback (most recent call last)" not in text:
        return None
    frames = [(f, fn) for f, fn in FRAME.findall(text) if "cyclebench" in f]
    m = START_FAILURE.search(text)
    if not m or not frames or frames[-1][1] != "<module>":
        return None
    return text[m.start():].splitlines()[0]


def preflight(tries: int = 8) -> str | None:
    """`cyclebench --version` must work; retried for a while (another engineer may be saving files)."""
    why = None
    for k in range(tries):
        cp = subprocess.run([*Cli.argv, "--version"], capture_output=True, text=True, timeout=60, check=False,
                            env=_cli_env())
        if cp.returncode == 0:
            return None
        why = cli_broken(cp.stderr) or f"rc {cp.returncode}: {(_lines(cp.stderr) or [''])[-1]}"
        if k + 1 < tries:
            print(f"audit: CLI does not start ({why}); retrying in {RETRY_WAIT_S:g} s", file=sys.stderr)
            time.sleep(RETRY_WAIT_S)
    return why


def execute(case: Case, top: Path, shared: Shared) -> Outcome:
    """Run a case. When the CLI itself could not start (an ImportError while the tree is being
    edited), wait until `cyclebench --version` works again and run the case once more; if it
    still cannot start, the case is not judged (verdict ERROR)."""
    out = _execute(case, top, shared)
    if out.cli_broken:
        print(f"audit: case {case.id}: the CLI did not start ({_cut(out.cli_broken, 80)}); waiting for it",
              file=sys.stderr)
        preflight()
        out = _execute(case, top, shared)
        out.why.append("(run again: the CLI had failed to start)")
        if out.cli_broken:
            out.verdict = "ERROR"
    return out


def _execute(case: Case, top: Path, shared: Shared) -> Outcome:
    t0 = time.monotonic()
    reason = case.skip or gate(case)
    if reason:
        return Outcome(case, "not tried", why=[reason])
    out = Outcome(case, "PASS")
    for k in range(case.trials):
        label = f"c{case.id:03d}" + (f"_t{k + 1}" if case.trials > 1 else "")
        try:
            why, ctx = run_trial(case, top, shared, label)
        except Exception as e:  # a fixture or the harness itself: say so, judge nothing
            out.verdict, out.observed, out.why = "FAIL", f"harness error: {type(e).__name__}: {e}", [str(e)]
            break
        obs, codes = observe(ctx)
        out.cli_broken = out.cli_broken or next((b for r in ctx.runs.values() if (b := cli_broken(r.text))), None)
        out.rc += codes
        out.orphans += ctx.orphans
        if not out.observed or (why and out.verdict == "PASS"):
            out.observed = obs + (f" (trial {k + 1}/{case.trials})" if case.trials > 1 else "")
        if why:
            out.verdict = "FAIL"
            out.why += [f"trial {k + 1}: {w}" if case.trials > 1 else w for w in why]
        if ctx.orphans and "orphan" not in out.observed:
            out.observed += f"; {len(ctx.orphans)} orphan(s) killed"
    out.wall = time.monotonic() - t0
    return out


# ---------------------------------------------------------------- the cases

INT, TERM, HUP, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL
E2 = (rc(2),)
E2L = (rc(2), one_line())
RUN_T = ("run", "-b", "timer/rdtsc", "-q")
PG = "postgresql://u:p@127.0.0.1:1/x"
PG_SECRET = f"postgresql://benchuser:{SECRET}@127.0.0.1:1/x"
CMP = ("compare", "timer/rdtsc", "timer/rdtscp")
CMP_FAST = ("--repeat", "12", "--min-time", "0.02")
MISSING = "{T}/missing/dir"


def C(id_: int, area: str, title: str, expected: str, audit: str, argv: tuple[str, ...] = (),
      checks: tuple[Check, ...] = (), **kw: Any) -> Case:
    defects = kw.pop("defects", ())
    return Case(id_, area, title, expected, audit, tuple(defects.split(",")) if isinstance(defects, str) else defects,
                argv, checks, **kw)


OPT, FIL, BEN, SHL, DBA = "input/options", "input/files", "input/benchmarks", "input/shell", "input/db"
IMP, STA, MUL = "input/import", "input/stat", "input/multi"
SIG, CON, HYG, SEC = "signals", "concurrency", "hygiene", "security"

CATALOGUE: tuple[Case, ...] = (
    # ---- 1 input/options
    C(1, OPT, "unknown glob", "exit 2, one line", "PASS", ("run", "-b", "nosuch/*"), E2L),
    C(2, OPT, "--repeat 0", "exit 2", "PASS", ("run", "-b", "timer/*", "--repeat", "0"), E2),
    C(3, OPT, "--cpu 999", "exit 2", "PASS", ("run", "-b", "timer/*", "--cpu", "999"), E2),
    C(4, OPT, "--cpu -1", "exit 2", "PASS", ("run", "-b", "timer/*", "--cpu", "-1"), E2),
    C(5, OPT, "--param abc", "exit 2", "PASS", ("run", "-b", "copy/memcpy", "-p", "abc"), E2),
    C(6, OPT, "--param -5", "exit 2 or a failed row", "PASS", ("run", "-b", "copy/memcpy", "-p", "-5", "-q"),
      (rc(1, 2),)),
    C(7, OPT, "--param 1e23", "exit 2, one line", "FAIL", ("run", "-b", "copy/memcpy", "-p", "9" * 23), E2L,
      defects="D9"),
    C(8, OPT, "--param 4e9", "a row (timeout or result)", "PASS",
      skip="memcpy of 4 GB: allocates and touches 2 × 4 GB and runs into the 35 s timeout"),
    C(9, OPT, "--min-time 1e308", "exit 2 (min-time > max-time)", "FAIL",
      ("run", "-b", "timer/rdtsc", "--min-time", "1e308", "-q"), E2, defects="D1,D16", timeout=3, limit=30),
    C(10, OPT, "--min-time nan", "exit 2", "FAIL", ("run", "-b", "timer/rdtsc", "--min-time", "nan", "-q"), E2,
      defects="D16"),
    C(11, OPT, "--max-time inf", "exit 2", "FAIL", ("run", "-b", "timer/rdtsc", "--max-time", "inf", "-q"), E2,
      defects="D9"),
    C(12, OPT, "--seed 1e20", "exit 2", "FAIL", ("run", "-b", "timer/rdtsc", "--seed", "9" * 20, "-q"), E2,
      defects="D16"),
    C(13, OPT, "--warmup 1e9 --timeout 3", "rows time out", "PASS",
      ("run", "-b", "timer/rdtsc", "--warmup", "1e9", "--timeout", "3", "-q"),
      (rc(1), result_status("timer/rdtsc", "timeout"))),
    C(14, OPT, "--min-time 0", "works", "PASS", ("run", "-b", "timer/rdtsc", "--min-time", "0", "-q"), (rc(0),)),
    C(15, OPT, "--tasks 0", "exit 2", "PASS", ("scale", "contend/*", "--tasks", "0"), E2),
    C(16, OPT, "--tasks abc", "exit 2", "PASS", ("scale", "contend/*", "--tasks", "abc"), E2L),
    C(17, OPT, "--tasks 5000", "exit 2", "PASS", ("scale", "contend/*", "--tasks", "5000"), E2),
    C(18, OPT, "--alpha 2", "exit 2", "PASS", (*CMP, "--alpha", "2"), E2),
    C(19, OPT, "--alpha 0", "exit 2", "PASS", (*CMP, "--alpha", "0"), E2),
    C(20, OPT, "scale --cpus 7,9", "exit 2", "PASS", ("scale", "contend/padded", "--tasks", "2", "--cpus", "7,9"), E2),
    C(21, OPT, "scale --cpus a,b", "exit 2", "PASS", ("scale", "contend/padded", "--tasks", "2", "--cpus", "a,b"), E2),
    C(22, OPT, "scale --plot x.txt", "exit 2", "PASS",
      ("scale", "contend/padded", "--tasks", "2", "--plot", "{T}/x.txt"), E2),
    C(23, OPT, "-e unknown event", "exit 2", "PASS", ("run", "-b", "timer/rdtsc", "-e", "nosuch-event"), E2L),
    C(24, OPT, "-e '{cycles'", "exit 2", "PASS", ("run", "-b", "timer/rdtsc", "-e", "{cycles"), E2L),
    C(25, OPT, "-e cycles (no PMU)", "exit 2 with advice", "PASS",
      ("run", "-b", "timer/rdtsc", "-q", "-e", "cycles,instructions"),
      (either(rc(0), all_of(rc(2), says("callgrind"))),),
      note="rc 0 is accepted on a machine with a PMU"),
    C(26, OPT, "--cache I1=abc", "exit 2", "PASS",
      ("run", "-b", "timer/rdtsc", "--backend", "callgrind", "--cache", "I1=abc"), E2L),
    C(27, OPT, "--cache zeros", "exit 2", "FAIL",
      ("run", "-b", "timer/rdtsc", "-q", "--backend", "callgrind", "--cache", "I1=0,0,0;D1=0,0,0;LL=0,0,0"), E2,
      defects="D9", limit=40),
    C(28, OPT, "--cc missing", "exit 2", "PASS", ("run", "{B}/ok.c", "--cc", "{T}/nonexistent/gcc"), E2L),
    C(29, OPT, "--cc false", "exit 2", "PASS", ("run", "{B}/ok.c", "--cc", "false"), E2),
    C(30, OPT, "-I missing dir", "works", "PASS", ("run", "{B}/ok.c", "-q", "-I", "{T}/nonexistent"), (rc(0),)),
    C(31, OPT, "run --cflags unterminated quote", "exit 2", "PASS", ("run", "{B}/ok.c", "--cflags", '"-O2'), E2),
    C(32, OPT, "compare --cflags unterminated quote", "exit 2", "FAIL", (*CMP, "--cflags", '"-O2'), E2,
      defects="D9"),
    C(33, OPT, "scale --cflags unterminated quote", "exit 2", "PASS",
      ("scale", "contend/shared_add", "--tasks", "2", "--cflags", '"-O2'), E2),
    C(34, OPT, "variants --flags unterminated quote", "exit 2", "PASS", ("variants", "{B}/ok.c", "--flags", '"-O2'),
      E2),
    C(35, OPT, "stat --pre unterminated quote", "exit 2", "PASS", ("stat", "--pre", '"x', "--", "true"), E2),
    C(36, OPT, "show 999", "exit 2", "PASS", ("show", "999"), E2),
    C(37, OPT, "show -1", "exit 2", "PASS", ("show", "--", "-1"), E2),
    C(38, OPT, "show 1e23", "exit 2", "FAIL", ("show", "9" * 23), E2, defects="D9", fixtures=("seed",)),
    C(39, OPT, "compare 1 1e23", "exit 2", "FAIL", ("compare", "1", "9" * 23), E2, defects="D9", fixtures=("seed",)),
    C(40, OPT, "runs -n -1", "exit 2 or all", "PASS", ("runs", "-n", "-1"), (rc(0, 2),), fixtures=("seed",)),
    C(41, OPT, "compare stored 1 999", "exit 2", "PASS", ("compare", "1", "999"), E2, fixtures=("seed",)),
    C(42, OPT, "compare 3 run ids", "exit 2", "PASS", ("compare", "1", "2", "3"), E2, fixtures=("seed",)),
    C(43, OPT, "compare one bench", "exit 2", "PASS", ("compare", "timer/rdtsc"), E2),
    C(44, OPT, "compare unknown bench", "exit 2", "PASS", ("compare", "timer/rdtsc", "nosuch/x"), E2),
    C(45, OPT, "compare glob", "exit 2", "PASS", ("compare", "timer/*", "timer/rdtsc"), E2),
    C(46, OPT, "check --cpu 999", "exit 2", "FAIL", ("check", "--cpu", "999"), E2, defects="D18"),
    C(47, OPT, "selftest --cpu 999", "exit 2 (or 1)", "FAIL", ("selftest", "--quick", "--cpu", "999"), (rc(1, 2),),
      defects="D18", limit=90),
    C(48, OPT, "selftest --aa-reps 5", "exit 2", "PASS", ("selftest", "--quick", "--aa-reps", "5"), E2),
    C(49, OPT, "counters sweep unknown", "exit 2", "PASS", ("counters", "sweep", "nosuch/bench"), E2),
    C(50, OPT, "counters sweep --group-size 0", "exit 2", "PASS",
      ("counters", "sweep", "timer/rdtsc", "--group-size", "0"), E2),
    C(51, OPT, "counters list", "works", "PASS", ("counters", "list"), (rc(0),)),
    C(52, OPT, "annotate unknown", "exit 2", "PASS", ("annotate", "nosuch/bench"), E2),
    C(53, OPT, "gen icache huge", "allowed by ranges", "PASS",
      skip="writes a 2.26 GB C file in ~53 s"),
    # ---- 1 input/files
    C(54, FIL, "missing file", "exit 2", "PASS", ("run", "{T}/nonexistent.c"), E2),
    C(55, FIL, "run --json missing dir", "exit 2 (results kept)", "FAIL",
      (*RUN_T, "--json", f"{MISSING}/r.json"), (rc(2), runs_stored(1), not_running()), defects="D9"),
    C(56, FIL, "export --json missing dir", "exit 2", "FAIL", ("export", "--json", f"{MISSING}/r.json"), E2,
      defects="D9", fixtures=("seed",)),
    C(57, FIL, "export unknown run", "exit 2", "PASS", ("export", "999", "--json", "{T}/x.json"), E2,
      fixtures=("seed",)),
    C(58, FIL, "compare --json missing dir", "exit 2", "FAIL", (*CMP, *CMP_FAST, "--json", f"{MISSING}/c.json"), E2,
      defects="D9"),
    C(59, FIL, "scale --csv missing dir", "exit 2", "FAIL",
      ("scale", "contend/padded", "--tasks", "2", "--duration", "0.3", "--passes", "1", "--cpus", "1,0", "--csv",
       f"{MISSING}/s.csv"), E2, defects="D9"),
    C(60, FIL, "scale --plot missing dir", "consistent with --csv", "PASS",
      skip="judged by comparison with case 59 (the audit's own judgement), and it creates the directory"),
    C(61, FIL, "check --json missing dir", "exit 2", "FAIL", ("check", "--cpu", "1", "--json", f"{MISSING}/c.json"),
      E2, defects="D9"),
    C(62, FIL, "gen -o missing dir", "exit 2", "FAIL", ("gen", "icache", "-o", f"{MISSING}/ic.c"), E2, defects="D9"),
    # ---- 1 input/benchmarks
    C(63, BEN, "does not compile", "exit 2 with compiler output", "PASS", ("run", "{B}/nocompile.c"),
      (rc(2), says("does not compile", "error:"))),
    C(64, BEN, "segfault", "crashed row, others measured, exit 1", "PASS", ("run", "{B}/segv.c"),
      (rc(1), result_status("crash/segv", "crashed"), result_status("crash/fine", "ok"), not_running())),
    C(65, BEN, "hang", "timeout row, exit 1", "PASS",
      skip="waits for the default 35 s timeout; case 66 does it in 2 s"),
    C(66, BEN, "hang --timeout 2", "timeout after 2 s", "PASS", ("run", "{B}/hang.c", "--timeout", "2", "-q"),
      (rc(1), wall_under(12), result_status("hang/forever", "timeout"))),
    C(67, BEN, "CB_VERIFY fails", "invalid row, exit 1", "PASS", ("run", "{B}/verify.c"),
      (rc(1), result_status("vf/wrong", "invalid"))),
    C(68, BEN, "exit(0) in body", "error row, exit 1", "PASS", ("run", "{B}/exit0.c"),
      (rc(1), result_status("ex/exit0", "error", "failed"))),
    C(69, BEN, "abort() in body", "crashed row", "PASS", ("run", "{B}/abort.c"),
      (rc(1), result_status("ab/abort", "crashed"))),
    C(70, BEN, "garbage on stdout", "protocol unaffected", "PASS", ("run", "{B}/garbage.c"),
      (rc(0), result_status("gb/stdout", "ok"))),
    C(71, BEN, "forged line on protocol fd 3", "protocol not writable by the body", "FAIL",
      ("run", "{B}/fd3_write.c"), (no_forged_result(),), defects="D21"),
    C(72, BEN, "fork per op", "works", "PASS", ("run", "{B}/fork.c", "-b", "proc/fork_each", "-q"), (rc(0),)),
    C(73, BEN, "fork, child sleeps 600 s holding pipes", "result kept, orphan cleaned", "PASS",
      ("run", "{B}/fork.c", "-b", "proc/fork_orphan", "-q"), (rc(0), result_status("proc/fork_orphan", "ok")),
      defects="D20", note="--timeout 5: the audit waited for the 35 s default"),
    C(74, BEN, "fork, child calls exit()", "no duplicate lines", "PASS",
      ("run", "{B}/fork.c", "-b", "proc/fork_exit", "-q"), (rc(0),)),
    C(75, BEN, "cb_buffer 50 GB in body", "failed row", "PASS", ("run", "{B}/big.c", "-b", "mem/buf", "-q"),
      (rc(1), result_status("mem/buf", "failed", "invalid")), requires=("overcommit",)),
    C(76, BEN, "malloc 50 GB in setup", "failed row", "PASS", ("run", "{B}/big.c", "-b", "mem/huge", "-q"),
      (rc(1), result_status("mem/huge", "failed", "invalid")), requires=("overcommit",)),
    C(77, BEN, "killed by SIGKILL (OOM-killer stand-in)", "crashed row", "PASS", ("run", "{B}/oomsim.c", "-q"),
      (rc(1), result_status("oom/sigkill", "crashed"))),
    C(78, BEN, "30 s per op", "timeout row", "PASS", skip="waits for the default 35 s timeout"),
    C(79, BEN, "constructor crashes", "exit 2", "PASS", ("run", "{B}/ctor_crash.c", "-q"), E2),
    C(80, BEN, "constructor hangs", "exit 2", "PASS", skip="waits for the 30 s `runner --list` timeout"),
    C(81, BEN, "hook for missing bench", "exit 2", "PASS", ("run", "{B}/orphan_hook.c", "-q"), E2),
    C(82, BEN, "stderr flood (infinite write(2))", "bounded memory", "FAIL",
      ("run", "{B}/spew.c", "-b", "spew/stderr", "-q"), (rss_under(200), rc(1)), defects="D2", timeout=2, limit=40,
      note="--timeout 2 only (the audit also ran --timeout 1); the CLI is killed above 1.5 GB"),
    C(83, BEN, "names with space / $(…) / unicode / $", "listed and run", "PASS", ("run", "{B}/names.c"),
      (rc(0), says("weird/sp ace", "weird/$(touch pwned4)", "weird/café", "weird/dol$lar"), absent("cwd/pwned4"))),
    C(84, BEN, "name containing a double quote", "listed and run, or an error", "FAIL",
      ("run", "{D}/name_with_quote.c", "--list"),
      (either(all_of(rc(0), says('weird/qu"ote')), all_of(rc(2), one_line())),
       then(("run", "{D}/name_with_quote.c"), either(all_of(rc(0), says('weird/qu"ote')), rc(2)))), defects="D11"),
    C(85, BEN, "-b exact weird names", "exact selection", "PASS",
      ("run", "{B}/names.c", "-b", "weird/sp ace", "-b", "weird/café", "-b", "weird/$(touch pwned4)"),
      (rc(0), says("weird/sp ace", "weird/café", "weird/$(touch pwned4)"), silent_on("dol$lar"),
       absent("cwd/pwned4"))),
    C(86, BEN, "-b with shell metacharacters / [ / control char", "exit 2, nothing executed", "PASS",
      ("run", "-b", "timer/*; touch pwned6"),
      (rc(2), one_line(), absent("cwd/pwned6"), then(("run", "-b", "timer/[\x01"), rc(2)))),
    C(87, BEN, "cb_fail reason with '[/x]'", "reason printed literally", "FAIL",
      ("run", "{B}/markup.c", "-b", "mk/reason"), (rc(1), says("[/x]")), defects="D3"),
    C(88, BEN, "show of that run", "table", "FAIL", ("show",), (rc(0), says("[/x]")), defects="D3",
      steps=(Step("run", "pre", ("run", "{B}/markup.c", "-b", "mk/reason", "-q")), Step("start", "main", ("show",)),
             Step("wait", "main"))),
    C(89, BEN, "stderr '[/dev/cpu/0/msr-nope]' then abort()", "crashed row", "FAIL", ("run", "{B}/realistic.c"),
      (rc(1), says("msr-nope"), result_status("mk/msr", "crashed"), then(("show",), rc(0), says("msr-nope"))),
      defects="D3"),
    C(90, BEN, "benchmark named '[/x]'", "listed", "FAIL", ("run", "{B}/markup_name.c", "--list"),
      (rc(0), says("mk/[/x]"), then(("run", "{B}/markup_name.c"), rc(0))), defects="D3"),
    C(91, BEN, "ESC sequences in reason", "escaped", "FAIL", ("run", "{B}/markup.c", "-b", "mk/esc"),
      (rc(1), no_esc()), defects="D3"),
    # ---- 1 input/shell
    C(92, SHL, "--cflags '-O2; touch pwned'", "no shell", "PASS",
      ("run", "{B}/ok.c", "--cflags", "-O2; touch pwned", "-q"), (absent("cwd/pwned"),)),
    C(93, SHL, "--cflags '$(touch pwned2)'", "no shell", "PASS", ("run", "{B}/ok.c", "--cflags", "$(touch pwned2)"),
      (absent("cwd/pwned2"),)),
    C(94, SHL, "--cflags with backticks", "no shell", "PASS", ("run", "{B}/ok.c", "--cflags", "-O2 `touch pwned7`"),
      (absent("cwd/pwned7"),)),
    C(95, SHL, "--ldflags '-lm; touch pwned8'", "no shell", "PASS",
      ("run", "{B}/ok.c", "--ldflags", "-lm; touch pwned8"), (absent("cwd/pwned8"),)),
    # ---- 1 input/db
    C(96, DBA, "malformed URL", "exit 2", "PASS", ("runs", "--db", "not a url"), E2),
    C(97, DBA, "sqlite://///", "exit 2", "PASS", ("runs", "--db", "sqlite://///"), E2),
    C(98, DBA, "unknown dialect", "exit 2", "PASS", ("runs", "--db", "foo://bar"), E2),
    C(99, DBA, "postgresql:// (no driver)", "exit 2, install hint", "FAIL", ("runs", "--db", PG), E2L,
      defects="D10"),
    C(100, DBA, "postgresql:// on run", "exit 2", "FAIL", (*RUN_T, "--db", PG), E2, defects="D10"),
    C(101, DBA, "mysql://", "exit 2", "FAIL", ("runs", "--db", "mysql://u:p@127.0.0.1:1/x"), E2, defects="D10"),
    C(102, DBA, "postgresql:// with a password, server down", "exit 2, no secret", "FAIL", ("runs", "--db", PG_SECRET),
      (rc(2), silent_on(SECRET)), defects="D12",
      note="psycopg is not installed here, so this is the driver-missing path, not the audit's server-down one"),
    C(103, DBA, "read-only DB file (runs)", "readable", "PASS", ("runs",), (rc(0),), fixtures=("ro",), wrap_ro=True),
    C(104, DBA, "read-only DB file (show)", "readable", "PASS", ("show",), (rc(0),), fixtures=("ro",), wrap_ro=True),
    C(105, DBA, "read-only DB file (run)", "exit 2 before measuring", "PASS", RUN_T, E2, fixtures=("ro",),
      wrap_ro=True),
    C(106, DBA, "DB in missing dir", "create or error", "PASS", (*RUN_T, "--db", "sqlite:///{T}/missing/sub/x.db"),
      (rc(0, 2),)),
    C(107, DBA, "DB in read-only dir", "exit 2", "PASS", (*RUN_T, "--db", "sqlite:///{T}/rodir/x.db"), E2,
      fixtures=("rodir",), wrap_ro=True),
    C(108, DBA, "DB under read-only dir (mkdir fails)", "exit 2", "PASS", ("runs", "--db", "sqlite:///{T}/rodir/sub/x.db"),
      E2, fixtures=("rodir",), wrap_ro=True),
    C(109, DBA, "DB path is a directory", "exit 2", "PASS", ("runs", "--db", "sqlite:///{T}"), E2),
    C(110, DBA, "relative / typo path", "say there is no DB", "PASS", ("runs", "--db", "sqlite:///rel-relative.db"),
      (rc(0, 2),), note="the audit passed an empty table (rc 0); so does this script"),
    C(111, DBA, "random bytes DB (runs)", "exit 2", "PASS", ("runs",), E2, fixtures=("corrupt",)),
    C(112, DBA, "random bytes DB (run)", "exit 2", "PASS", RUN_T, E2, fixtures=("corrupt",)),
    C(113, DBA, "truncated DB (runs/show/run)", "exit 2", "PASS", ("runs",),
      (rc(2), then(("show", "1"), rc(2)), then(RUN_T, rc(2))), fixtures=("trunc",)),
    C(114, DBA, "pages 5-6 (results) overwritten (show)", "exit 2", "FAIL", ("show", "1"), E2, defects="D9",
      fixtures=("mid5",)),
    C(115, DBA, "pages 5-6 overwritten (export)", "exit 2", "FAIL", ("export", "1", "--json", "{T}/x.json"), E2,
      defects="D9", fixtures=("mid5",)),
    C(116, DBA, "pages 5-6 overwritten (runs)", "works", "PASS", ("runs",), (rc(0),), fixtures=("mid5",)),
    C(117, DBA, "pages 5-6 overwritten (run)", "exit 2", "PASS", RUN_T, E2L, fixtures=("mid5",)),
    C(118, DBA, "older schema (v1: 20 result cols, samples.cal/pmu, runs.summary missing)", "migrates", "PASS",
      ("show", "1"),
      (rc(0), then(RUN_T, rc(0)), then(("compare", "1", "2"), rc(0))), fixtures=("old",)),
    C(119, DBA, "newer schema", "exit 2", "PASS", ("runs",), E2, fixtures=("newer",),
      note="schema_version 99, and an unknown Alembic revision where Alembic manages the file"),
    C(120, DBA, "unrelated SQLite file with a `runs` table (runs)", "exit 2, no change", "FAIL", ("runs",),
      (rc(2), db_unchanged()), defects="D9,D13", fixtures=("foreign",)),
    C(121, DBA, "unrelated SQLite file (run)", "refuse", "FAIL", RUN_T,
      (rc(2), table_columns("runs", ("id", "name"))), defects="D13", fixtures=("foreign",),
      steps=(Step("run", "pre", ("runs",)), Step("start", "main", RUN_T), Step("wait", "main")),
      note="after a `runs` on the same file, as in the audit"),
    C(122, DBA, "disk full mid-run", "exit 2, results kept", "PASS",
      skip="needs a 400 KB tmpfs mounted (a system change on a shared machine)"),
    C(123, DBA, "write lock held 25 s by another process", "wait or exit 2", "PASS",
      skip="needs the lock held past the 10 s busy timeout"),
    # ---- 1 input/import
    C(124, IMP, "export → import round trip", "identical", "PASS", ("import", "{T}/exp1.json"),
      (rc(0), same_show(1, 2)), fixtures=("seed",),
      steps=(Step("run", "pre", ("export", "1", "--json", "{T}/exp1.json")),
             Step("start", "main", ("import", "{T}/exp1.json")), Step("wait", "main"))),
    C(125, IMP, "truncated JSON", "exit 2", "PASS", ("import", "{T}/trunc.json"), E2, fixtures=("imp_trunc",)),
    C(126, IMP, "JSON list", "exit 2", "PASS", ("import", "{T}/list.json"), E2, fixtures=("imp_list",)),
    C(127, IMP, "format ok, no `run`", "exit 2", "FAIL", ("import", "{T}/nokeys.json"), (rc(2), nothing_stored()),
      defects="D8", fixtures=("imp_nokeys",)),
    C(128, IMP, "version 'abc'", "exit 2", "FAIL", ("import", "{T}/ver.json"), E2, defects="D8", fixtures=("imp_ver",)),
    C(129, IMP, "binary bytes", "exit 2", "FAIL", ("import", "{T}/bin.json"), E2, defects="D8", fixtures=("imp_bin",)),
    C(130, IMP, "samples ticks shorter than iters", "exit 2, nothing stored", "FAIL", ("import", "{T}/mismatch.json"),
      (rc(2), nothing_stored()), defects="D8", fixtures=("imp_mismatch",)),
    C(131, IMP, "result without bench", "exit 2, nothing stored", "FAIL", ("import", "{T}/nobench.json"),
      (rc(2), nothing_stored()), defects="D8", fixtures=("imp_nobench",)),
    C(132, IMP, "run.started_at null", "exit 2", "FAIL", ("import", "{T}/nostart.json"), (rc(2), nothing_stored()),
      defects="D8", fixtures=("imp_nostart",)),
    C(133, IMP, "iters 2**70", "exit 2", "FAIL", ("import", "{T}/bigint.json"), (rc(2), nothing_stored()),
      defects="D8", fixtures=("imp_bigint",)),
    C(134, IMP, "per_op 'not a number'", "exit 2", "FAIL", ("import", "{T}/strfloat.json"), (rc(2), nothing_stored()),
      defects="D8", fixtures=("imp_strfloat",)),
    C(135, IMP, "crafted export: command ['[/oops]'], host with ESC codes", "import rejects or runs escapes", "FAIL",
      ("import", "{T}/evil.json"), (either(rc(2), then(("runs",), rc(0), no_esc(), says("[/oops]"))),),
      defects="D3", fixtures=("imp_evil",)),
    # ---- 1 input/stat
    C(136, STA, "stat -- /nonexistent", "exit 2", "PASS", ("stat", "--", "{T}/nonexistent"), E2),
    C(137, STA, "stat -- false", "exit 1, stored", "PASS", ("stat", "--", "false"), (rc(1), runs_stored(1))),
    C(138, STA, "stat -r 3 -- false", "exit 1", "PASS", ("stat", "-r", "3", "--", "false"), (rc(1),)),
    C(139, STA, "stat -r 2 -- true", "exit 0", "PASS", ("stat", "-r", "2", "--", "true"), (rc(0),)),
    C(140, STA, "stat (no command)", "exit 2", "PASS", ("stat",), E2),
    C(141, STA, "stat of a command killed by SIGSEGV", "exit 1", "PASS", ("stat", "--", "sh", "-c", "kill -SEGV $$"),
      (rc(1), says("SIGSEGV"))),
    C(142, STA, "--pre missing", "exit 2", "PASS", ("stat", "--pre", "nosuchcmd", "--", "true"), E2),
    C(143, STA, "--pre false", "exit 2", "PASS", ("stat", "--pre", "false", "-r", "2", "--", "true"), E2),
    C(144, STA, "stat -- a directory", "exit 2", "PASS", ("stat", "--", "{T}"), E2),
    # ---- 1 input/multi
    C(145, MUL, "variants: one flag set does not compile (bad flag)", "good variant measured, bad one reported",
      "FAIL", ("variants", "{B}/ok.c", "--flags", "-O2", "--flags", "-O2 -mno-such-flag", "--rounds", "6"),
      (rc(1, 2), says("-mno-such-flag"), result_status("ok/add", "ok")), defects="D14"),
    C(146, MUL, "variants: one variant has a syntax error (-DBROKEN)", "as above", "FAIL",
      ("variants", "{B}/varcrash.c", "--flags", "-O2", "--flags", "-O2 -DBROKEN", "--rounds", "6"),
      (rc(1, 2), says("-DBROKEN"), result_status("vc/work", "ok")), defects="D14"),
    C(147, MUL, "variants: one variant crashes", "crashed row, exit 1", "PASS",
      ("variants", "{B}/varcrash.c", "--flags", "-O2", "--flags", "-O2 -DCRASH", "--rounds", "6"),
      (rc(1), says("crashed"))),
    C(148, MUL, "variants: one variant hangs", "timeout once", "FAIL",
      ("variants", "{B}/varhang.c", "--flags", "-O2", "--flags", "-O2 -DHANG", "--rounds", "6"),
      (rc(1), wall_under(50)), defects="D14", limit=55,
      note="killed at 55 s: one 35 s timeout plus the rest fits, six do not"),
    C(149, MUL, "scale: one task crashes (threads)", "crashed row, rest kept, exit 1", "PASS",
      ("scale", "sc/*", "-f", "{B}/scalecrash.c", "--tasks", "1..2", "--duration", "0.6", "--passes", "1", "--cpus",
       "1,0", "--warmup", "0.2", "--retries", "0"), (rc(1), says("crashed"), not_running())),
    C(150, MUL, "scale: one task crashes (processes)", "as above", "PASS",
      ("scale", "sc/*", "-f", "{B}/scalecrash.c", "--tasks", "1..2", "--duration", "0.6", "--passes", "1", "--cpus",
       "1,0", "--warmup", "0.2", "--retries", "0", "--mode", "processes"), (rc(1), says("crash"), not_running())),
    C(151, MUL, "compare A vs B, B crashes", "failed row naming B, exit 1", "FAIL",
      ("compare", "cc/good", "cc/bad", "-f", "{B}/cmpcrash.c", *CMP_FAST),
      (rc(1), says("cc/bad"), silent_on("cc/good: crashed")), defects="D5"),
    C(152, MUL, "compare A, A2, B; B crashes", "A vs A2 still judged", "FAIL",
      ("compare", "cc/good", "cc/good2", "cc/bad", "-f", "{B}/cmpcrash.c", *CMP_FAST),
      (rc(1), result_status("cc/good2", "ok"), silent_on("cc/good: crashed")), defects="D5"),
    C(153, MUL, "annotate a crashing benchmark", "says the benchmark crashed", "FAIL",
      ("annotate", "crash/segv", "@f:{B}/segv.c", "--seconds", "0.2"),
      (rc(1, 2), matches(r"(?i)\bcrashed\b|SIGSEGV|segmentation"), silent_on("perf record failed")),
      defects="D19", requires=("perf",)),
    C(154, MUL, "annotate a hanging benchmark", "timeout, clean", "FAIL",
      ("annotate", "hang/forever", "@f:{B}/hang.c", "--seconds", "0.2"), (rc(1, 2), matches(r"(?i)timed out|timeout")),
      defects="D1,D9", requires=("perf",), limit=80, note="annotate's own limit is 64 s for --seconds 0.2"),
    C(155, MUL, "callgrind backend ignores --timeout", "timeout after 2 s", "FAIL",
      ("run", "{B}/hang.c", "--backend", "callgrind", "--timeout", "2", "-q"), (rc(1), wall_under(15)),
      defects="D14", requires=("valgrind",), limit=25),
    # ---- 2 signals (each signal lands in the phase the case is about: see When)
    C(156, SIG, "SIGINT (group) mid `run` (full suite)", "130, interrupted, kept", "PASS", ("run",),
      (rc(130), says("interrupted"), runs_stored(1), not_running()), sig=Sig(INT, 2, when=run_stored())),
    C(157, SIG, "SIGINT mid `compare`", "130, kept", "PASS", ("compare", "copy/memcpy", "copy/rep_movsb"),
      (rc(130), not_running()), sig=Sig(INT, 2, when=run_stored())),
    C(158, SIG, "SIGINT mid `scale`", "130, kept", "PASS",
      ("scale", "contend/padded", "contend/unpadded", "--tasks", "1..2", "--duration", "2", "--cpus", "1,0"),
      (rc(130), not_running()), sig=Sig(INT, 1.5, when=run_stored())),
    C(159, SIG, "SIGINT mid `variants`", "130", "PASS",
      ("variants", "{E}/cas_counter.c", "--flags", "-O2", "--flags", "-O1", "--rounds", "30"), (rc(130),),
      sig=Sig(INT, 1, when=run_stored())),
    C(160, SIG, "SIGINT (group) mid `stat -- sleep 100`", "130, no leftover", "PASS",
      ("stat", "-r", "3", "--", "sleep", "100"), (rc(130),), sig=Sig(INT, 1, when=proc_running("sleep"))),
    C(161, SIG, "SIGINT to the CLI pid only, `stat -- sleep 100`", "child killed", "FAIL",
      ("stat", "-r", "3", "--", "sleep", "100"), (rc(130),),
      sig=Sig(INT, 1, group=False, when=proc_running("sleep")), defects="D1", limit=30),
    C(162, SIG, "SIGINT mid `selftest`", "130", "FAIL", ("selftest", "--quick"), (rc(130),), sig=Sig(INT, 4),
      defects="D17"),
    C(163, SIG, "SIGINT during compile", "130, no temp", "FAIL", ("run", "{X}/ic20k.c", "-q"),
      (rc(130), no_build_debris()), sig=Sig(INT, 1.5, when=proc_running("cc1")), defects="D17",
      fixtures=("ic20k",), fresh_cache=True),
    C(164, SIG, "SIGKILL mid `run` (full suite)", "DB readable", "FAIL", ("run", "-q"),
      (then(("runs",), rc(0)), not_running()), sig=Sig(KILL, 2, when=run_stored()), defects="D6"),
    C(165, SIG, "SIGKILL with a hanging benchmark", "runner dies too", "FAIL", ("run", "{B}/hang.c", "-q"),
      (), sig=Sig(KILL, 1, when=proc_running("hang/forever", as_arg=True)), defects="D1", timeout=None),
    C(166, SIG, "SIGTERM mid `run` (full suite)", "marked interrupted/failed", "FAIL", ("run", "-q"),
      (not_running(),), sig=Sig(TERM, 2, when=run_stored()), defects="D6"),
    C(167, SIG, "SIGTERM with a hanging benchmark", "runner killed", "FAIL", ("run", "{B}/hang.c", "-q"), (),
      sig=Sig(TERM, 1, when=proc_running("hang/forever", as_arg=True)), defects="D1", timeout=None),
    C(168, SIG, "SIGHUP with a hanging benchmark", "runner killed", "FAIL", ("run", "{B}/hang.c", "-q"),
      (not_running(),), sig=Sig(HUP, 1, when=proc_running("hang/forever", as_arg=True)), defects="D1,D6",
      timeout=None),
    C(169, SIG, "SIGTERM mid `scale` (processes)", "marked", "FAIL",
      ("scale", "contend/padded", "--mode", "processes", "--tasks", "1..2", "--duration", "20", "--cpus", "1,0"),
      (not_running(),), sig=Sig(TERM, 2, when=run_stored()), defects="D6"),
    C(170, SIG, "SIGKILL during compile (CLI pid only)", "no debris", "FAIL", ("run", "{X}/ic20k.c", "-q"),
      (swept_on_next_build(("run", "{B}/ok.c", "--list")),),
      sig=Sig(KILL, 1.5, group=False, when=proc_running("cc1")), defects="D15", fixtures=("ic20k",),
      fresh_cache=True, note="a SIGKILLed process cannot clean up: the debris is backdated 2 days, then a "
      "follow-up build in the same cache must remove it"),
    C(171, SIG, "SIGINT during vfs/mix", "temp dir removed", "FAIL", ("run", "-b", "vfs/mix", "--min-time", "2", "-q"),
      (rc(130), dir_empty("tmp")), sig=Sig(INT, 0.5, when=appears("tmp/**/cyclebench-vfs-*")),
      defects="D15", timeout=None, limit=40),
    C(172, SIG, "vfs/mix timed out", "temp dir removed", "FAIL",
      ("run", "-b", "vfs/mix", "--min-time", "20", "--max-time", "30", "--timeout", "2", "-q"),
      (rc(1), result_status("vfs/mix", "timeout"), dir_empty("tmp")), defects="D15"),
    C(173, SIG, "SIGINT under callgrind", "no debris", "FAIL",
      ("run", "{B}/hang.c", "--backend", "callgrind", "--timeout", "2", "-q"),
      (rc(130), dir_empty("tmp")), sig=Sig(INT, 1.5, when=proc_running("--tool=callgrind", as_arg=True)),
      defects="D15", requires=("valgrind",), limit=30),
    # ---- 3 concurrency
    C(174, CON, "2 × run timer/* on a fresh DB (3 trials)", "both stored", "FAIL", ("run", "-b", "timer/*", "-q"),
      (rc(0),), parallel=2, trials=3, defects="D7"),
    C(175, CON, "4 × run on a fresh DB", "all stored", "FAIL", ("run", "-b", "timer/*", "-q"), (rc(0),), parallel=4,
      defects="D7"),
    C(176, CON, "2 × run on an existing DB (3 trials)", "all stored", "PASS",
      skip="budget: 179 runs 4 × run at once on an existing DB (and 174/175 on a fresh one)"),
    C(177, CON, "4 × run + 15 `runs` readers (3 trials)", "no lock errors", "PASS",
      skip="not cheap (12 runs and 45 readers); 176 covers concurrent writers on an existing DB"),
    C(178, CON, "interrupt message under concurrency", "names A's run", "FAIL", (),
      (rc(130), interrupt_names_run(1)), defects="D17",
      steps=(Step("start", "main", ("run", "-b", "copy/*", "-q")), Step("until_runs", secs=30),
             Step("run", "b", RUN_T), Step("sleep", secs=0.5), Step("signal", "main", signum=INT),
             Step("wait", "main"))),
    C(179, CON, "4 × run, cold build cache", "one binary, all ok", "PASS", ("run", "{B}/ok.c", "-q"),
      (rc(0), one_cache_entry()), parallel=4, fresh_cache=True, fixtures=("seed",),
      note="ok.c instead of the suite (cheaper build); an existing DB, so D7 (174/175) does not interfere"),
    # ---- 4 hygiene
    C(180, HYG, "temp/cwd debris after normal commands", "nothing left", "PASS", (),
      (rc(0), dir_empty("tmp"), dir_empty("cwd")),
      steps=(Step("run", "main1", ("run", "-b", "vfs/mix", "-b", "timer/rdtsc", "-q")),
             Step("run", "main2", ("stat", "-r", "2", "--", "true"))),
      note="run and stat only (the audit also ran callgrind, annotate, compare, scale and variants)"),
    C(181, HYG, "zombies", "none", "PASS",
      ("scale", "contend/padded", "--mode", "processes", "--tasks", "1..3", "--duration", "0.6", "--passes", "1",
       "--warmup", "0.2", "--retries", "0"),
      (rc(0), no_zombies()), watch=True),
    C(182, HYG, "/tmp before vs after the whole audit", "only my dirs", "PASS",
      skip="other sessions use /tmp on this machine; the signal cases look at a private TMPDIR instead"),
    C(183, HYG, "build cache growth", "bounded or prunable", "FAIL", (), (help_lists_cleanup(),), static=True,
      defects="D15", note="judged by a clean/prune/cache command in `cyclebench --help`"),
    C(184, HYG, "permissions", "private", "PASS", ("run", "{B}/ok.c", "-q", "--json", "{T}/r.json"),
      (rc(0), cache_private())),
    # ---- 5 security
    C(185, SEC, "shell use", "none", "PASS", (), (no_shell_in_src(),), static=True),
    C(186, SEC, "--fifo applies SCHED_FIFO + RLIMIT_RTTIME", "SCHED_FIFO 10, RTTIME set", "FAIL",
      ("run", "{B}/sleepy.c", "-b", "sl/ms", "--fifo", "10", "-q", "--repeat", "5"),
      (either(fifo_applied(10), all_of(rc(2), one_line())),), defects="D4", watch=True),
    C(187, SEC, "writes outside DB/cache/temp", "none unexpected", "PASS", skip="code review"),
    C(188, SEC, "secrets", "not echoed/stored", "FAIL", ("runs", "--db", PG_SECRET),
      (silent_on(SECRET), then(("runs", "--db", f"sqlite://benchuser:{SECRET}@{{T}}/pw.db"), silent_on(SECRET))),
      defects="D12", note="echo only: storing/exporting a password URL needs a live PostgreSQL"),
)


# ---------------------------------------------------------------- reporting


def _cut(s: str, n: int) -> str:
    s = " ".join(s.split())
    s = "".join(ch if ch.isprintable() else "?" for ch in s)
    return s if len(s) <= n else s[: n - 1] + "…"


HEADER = f"{'#':>4}  {'defects':<8} {'audit':<5} {'expected':<32} {'observed':<64} {'now':<5} {'s':>5}"


def row(o: Outcome) -> str:
    c = o.case
    line = (f"{c.id:>4}  {_cut(','.join(c.defects) or '-', 8):<8} {c.audit:<5} {_cut(c.expected, 32):<32} "
            f"{_cut(o.observed, 64):<64} {o.verdict if o.verdict != 'not tried' else '-':<5} {o.wall:5.1f}")
    if o.verdict in ("FAIL", "ERROR"):
        line += "\n" + " " * 6 + "↳ " + _cut("; ".join(o.why), 150)
    return line


def parse_only(text: str) -> set[int]:
    ids: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise argparse.ArgumentTypeError(f"--only: '{part}' is not a case number or a range a-b")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", type=parse_only, metavar="IDS", help="cases to run: 7,9,11 or ranges 156-173")
    ap.add_argument("--fails", action="store_true", help="only the cases the audit found FAIL")
    ap.add_argument("--list", action="store_true", help="print the catalogue and exit")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every outcome as JSON")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, DBs)")
    ap.add_argument("--src", type=Path, metavar="DIR",
                    help="audit the checkout in DIR (its src/, run by this venv's Python) instead of this one")
    args = ap.parse_args(argv)
    if args.src is not None:
        if not (args.src / "src" / "cyclebench" / "cli.py").is_file():
            ap.error(f"--src: no src/cyclebench/cli.py under {args.src}")
        Cli.use_src(args.src)

    ids = {c.id for c in CATALOGUE}
    assert len(ids) == len(CATALOGUE) == BEFORE_TOTAL, "one record per audit case"
    cases = [c for c in CATALOGUE if (args.only is None or c.id in args.only) and (not args.fails or c.audit == "FAIL")]
    if args.only is not None and (unknown := args.only - ids):
        ap.error(f"--only: no case {sorted(unknown)}")

    if args.list:
        for c in cases:
            what = f"not tried: {c.skip}" if c.skip else " ".join(c.argv) or " ; ".join(
                " ".join(s.argv) for s in c.steps if s.argv) or "(static check)"
            print(f"{c.id:>4}  {c.audit:<4} {','.join(c.defects) or '-':<8} {_cut(c.area, 17):<17} "
                  f"{_cut(c.title, 44):<44} {_cut(c.expected, 30):<30} {_cut(what, 70)}")
        tried = sum(1 for c in cases if not c.skip)
        print(f"{len(cases)} case(s), {tried} tried by this script, {len(cases) - tried} not tried")
        return 0

    if not Path(Cli.argv[0]).exists():
        print(f"audit: {Cli.argv[0]} is missing: run `bash dev.sh setup` in {ROOT} first", file=sys.stderr)
        return 2
    broken = preflight()
    if broken:
        print(f"audit: the CLI does not start ({broken}); the tree may be mid-edit: try again later", file=sys.stderr)
        return 2
    top = Path(tempfile.mkdtemp(prefix="cb-audit-"))
    shared = Shared(top)
    outcomes: list[Outcome] = []
    t0 = time.monotonic()
    print(f"cyclebench reliability audit re-run · {len(cases)} case(s) · audit: {AUDIT} · work dir {top}")
    print(HEADER)
    try:
        for c in cases:
            o = execute(c, top, shared)
            outcomes.append(o)
            if o.verdict != "not tried":
                print(row(o), flush=True)
    except KeyboardInterrupt:
        print("audit: interrupted; the summary covers the cases finished so far", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(top, ignore_errors=True)

    skipped = [o for o in outcomes if o.verdict == "not tried"]
    if skipped:
        print("\nnot tried:")
        for o in skipped:
            print(f"{o.case.id:>4}  {o.case.audit:<4} {_cut(o.case.title, 50):<50} {o.why[0]}")
    tried = [o for o in outcomes if o.verdict != "not tried"]
    held = [o for o in tried if o.verdict == "PASS"]
    failed = [o for o in tried if o.verdict == "FAIL"]
    errors = [o for o in tried if o.verdict == "ERROR"]
    was_fail = [o for o in tried if o.case.audit == "FAIL"]
    fixed = [o for o in was_fail if o.verdict == "PASS"]
    regressed = [o for o in tried if o.case.audit == "PASS" and o.verdict == "FAIL"]
    if errors:
        print("not judged (the CLI did not start, the tree was being edited): "
              + ", ".join(str(o.case.id) for o in errors))
    print(f"\ntried {len(tried)}, held {len(held)}, failed {len(failed)}"
          f"{f', not judged {len(errors)}' if errors else ''} (not tried {len(skipped)}; "
          f"{time.monotonic() - t0:.0f} s) · audit before: {BEFORE_HELD}/{BEFORE_TOTAL} held, {BEFORE_FAILED} FAIL")
    print(f"audit FAIL cases tried: {len(was_fail)}, now holding {len(fixed)}; audit PASS cases now failing: "
          f"{len(regressed)}{' (' + ', '.join(str(o.case.id) for o in regressed) + ')' if regressed else ''}")
    if failed:
        print("still failing: " + ", ".join(f"{o.case.id} [{','.join(o.case.defects) or '-'}]" for o in failed))
    if args.json:
        args.json.write_text(json.dumps({
            "audit": AUDIT, "before": {"held": BEFORE_HELD, "total": BEFORE_TOTAL, "failed": BEFORE_FAILED},
            "summary": {"tried": len(tried), "held": len(held), "failed": len(failed), "not_judged": len(errors),
                        "not_tried": len(skipped),
                        "audit_fail_tried": len(was_fail), "audit_fail_now_held": len(fixed),
                        "audit_pass_now_failing": [o.case.id for o in regressed]},
            "cases": [o.to_dict() for o in outcomes]}, indent=1, ensure_ascii=False) + "\n")
    return 1 if failed or errors else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `--list | head`
        sys.stderr.close()
        sys.exit(0)
