"""The audit's laboratory: the real `cyclebench` program started as a user starts it, one case
at a time, each in its own directory, database and $TMPDIR, and everything it leaves behind found.

A :class:`Lab` runs the CLI as a subprocess in its own session (``start_new_session``, as a
shell's job), optionally sends it a signal a given time after a condition holds (a build has
begun, the run is stored: a signal must land in the phase a case is about, however long the
build takes here), samples the CLI's peak RSS (``VmHWM``, proc(5)) and, when asked, the
scheduling policy of the case's processes. Every process a case starts carries a marker in its
environment; :meth:`Lab.reap` finds those still alive (or any process naming the case's directory)
and SIGKILLs them by pid, saying which they were. The ``lab`` fixture (tests/audit/conftest.py)
fails a test whose case left a process behind, and :meth:`Lab.run` fails one whose output holds
a Python traceback: the two checks every case makes.

``--db``, ``--cpu 1`` and ``--timeout 5`` are added to the commands that accept them (read from
the click commands themselves), unless the case gives them.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
CASES = TESTS / "data" / "audit"  # the misbehaving benchmarks of these cases
DATA = TESTS / "data"
EXAMPLES = ROOT / "examples"
MARK_ENV = "CYCLEBENCH_AUDIT_CASE"
POLL_S = 0.05
RSS_VALVE_KB = 1_500_000  # a CLI above this is killed, to spare the shared machine
SUB_GROUPS = ("gen", "counters", "cache", "fleet")  # click groups: their subcommand is part of the command path

# the program as a user starts it: the console script pyproject installs (cyclebench.entry)
_SCRIPT = Path(sys.executable).with_name("cyclebench")
PROGRAM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "cyclebench"]


@dataclass
class Run:
    """One process a case started, and what it did."""

    name: str
    argv: list[str]
    rc: int | None = None
    out: str = ""
    err: str = ""
    wall: float = 0.0
    peak_rss_kb: int = 0
    events: list[str] = field(default_factory=list)  # signals sent, limits hit
    seen: dict[int, dict[str, Any]] = field(default_factory=dict)  # the case's processes, when watched
    zombie_samples: dict[int, int] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.out + "\n" + self.err

    def __str__(self) -> str:  # what an assertion message shows
        tail = "\n".join((self.err or self.out).strip().splitlines()[-6:])
        return f"`{' '.join(self.argv[len(PROGRAM):])[:120]}` → rc {self.rc} {self.events or ''}\n{tail}"


@dataclass(frozen=True)
class When:
    """A condition a signal waits for, polled every POLL_S while the command runs."""

    desc: str
    test: Callable[[Lab], bool]


@dataclass(frozen=True)
class Sig:
    """Send ``signum`` to the CLI's process group (or its pid only) ``after`` seconds after the
    command started or, with ``when``, after that condition first held."""

    signum: int
    after: float
    group: bool = True
    when: When | None = None


def lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def one_line(r: Run) -> bool:
    """One line on stderr; click's usage error (a `Usage:` line, a `Try '…'` line and one
    `Error:` line) counts as one: it is one message saying what to do."""
    ls = [ln.strip() for ln in lines(r.err)]
    errors = [ln for ln in ls if not ln.startswith(("Usage:", "Try '"))]
    return len(ls) == 1 or (len(errors) == 1 and errors[0].startswith("Error:"))


def escapes(text: str) -> int:
    """Raw ESC and BEL bytes: a terminal would act on them."""
    return text.count("\x1b") + text.count("\x07")


def _options() -> dict[tuple[str, ...], frozenset[str]]:
    import click

    from cyclebench.cli import main

    out: dict[tuple[str, ...], frozenset[str]] = {}

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        out[path] = frozenset(o for p in cmd.params if isinstance(p, click.Option)
                              for o in (*p.opts, *p.secondary_opts))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(main, ())
    return out


_OPTS: dict[tuple[str, ...], frozenset[str]] = {}


def options_of(path: tuple[str, ...]) -> frozenset[str]:
    """The option names a command accepts, from cyclebench's own click commands."""
    if not _OPTS:
        _OPTS.update(_options())
    return _OPTS.get(path, frozenset())


def _default_signals() -> None:
    # a shell running the tests in the background may have set SIGINT to SIG_IGN, which children
    # inherit and Python then honours: give the CLI the default dispositions back
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_DFL)


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


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def _send(proc: subprocess.Popen[bytes], signum: int, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)


class Lab:
    """Where one case runs: its directory (``dir``; the commands' working directory is
    ``dir/cwd`` and their $TMPDIR ``dir/tmp``), its SQLite database (``db``, also in
    $CYCLEBENCH_DB) and the build cache (the session's, or a fresh one)."""

    def __init__(self, root: Path, cache: Path, *, timeout: float | None = 5.0, cpu: bool = True,
                 add_db: bool = True, limit: float = 60.0, watch: bool = False, wrap_ro: bool = False,
                 env: Iterable[tuple[str, str]] = ()) -> None:
        self.dir = root
        (root / "cwd").mkdir(parents=True, exist_ok=True)
        (root / "tmp").mkdir(exist_ok=True)
        self.db = root / "case.db"
        self.url = f"sqlite:///{self.db}"
        self.timeout, self.cpu, self.add_db, self.limit, self.watch = timeout, cpu, add_db, limit, watch
        self.marker = f"{root.name}-{os.getpid()}-{id(self)}"
        env_ = {k: v for k, v in os.environ.items() if not k.startswith(("CYCLEBENCH_", "FORCE_COLOR"))}
        env_.pop("COLUMNS", None)
        # $TMPDIR private to the case: what a killed command leaves there stays where a check sees it
        env_.update({"CYCLEBENCH_DB": self.url, "CYCLEBENCH_CACHE": str(cache), MARK_ENV: self.marker,
                     "TMPDIR": str(root / "tmp")})
        for k, v in env:
            env_[k] = self.expand(v)
        self.env = env_
        # without CAP_DAC_OVERRIDE & co. (setpriv), so that file modes apply to root as to anyone
        self.wrap = ["setpriv", "--inh-caps=-dac_override,-dac_read_search,-fowner",
                     "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] if wrap_ro and os.getuid() == 0 \
            else []
        self.runs: dict[str, Run] = {}
        self._procs: dict[str, tuple[subprocess.Popen[bytes], float, Path, Path]] = {}
        self.orphans: list[str] = []
        self._n = 0

    @property
    def cwd(self) -> Path:
        return self.dir / "cwd"

    @property
    def cache(self) -> Path:
        return Path(self.env["CYCLEBENCH_CACHE"])

    def expand(self, token: str) -> str:
        """``{T}``: the case's directory (the other paths are module constants)."""
        return token.replace("{T}", str(self.dir))

    def argv(self, args: Iterable[str]) -> list[str]:
        """The full command line: `--db`, `--cpu 1`, `--timeout N` after the command path where
        the command takes them and the case did not give them. ``@f:FILE`` is a benchmark file,
        given as ``-f FILE`` where the command takes -f, else as an argument."""
        a = [self.expand(x) for x in args]
        n = 0 if not a or a[0].startswith("-") else 2 if a[0] in SUB_GROUPS and len(a) > 1 else 1
        path, rest = tuple(a[:n]), a[n:]
        opts = options_of(path) if path else frozenset()
        rest = [x for y in rest for x in ((["-f", y[3:]] if "-f" in opts else [y[3:]]) if y.startswith("@f:") else [y])]
        given = set(rest[: rest.index("--")] if "--" in rest else rest)
        extra: list[str] = []
        if self.add_db and "--db" in opts and "--db" not in given:
            extra += ["--db", self.url]
        if self.cpu and "--cpu" in opts and "--cpu" not in given:
            extra += ["--cpu", "1"]
        if self.timeout is not None and "--timeout" in opts and "--timeout" not in given:
            extra += ["--timeout", f"{self.timeout:g}"]
        return [*self.wrap, *PROGRAM, *path, *extra, *rest]

    # ---- processes

    def start(self, *args: str, name: str | None = None) -> str:
        name = name or f"cmd{self._n}"
        self._n += 1
        full = self.argv(args)
        out, err = self.dir / f"{name}.out", self.dir / f"{name}.err"
        with out.open("wb") as fo, err.open("wb") as fe:
            proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, cwd=self.cwd, env=self.env,
                                    start_new_session=True, preexec_fn=_default_signals)
        self._procs[name] = (proc, time.monotonic(), out, err)
        self.runs[name] = Run(name, full)
        return name

    def wait(self, name: str, sig: Sig | None = None, limit: float | None = None) -> Run:
        """Wait for the command (SIGKILLed at ``limit`` seconds); a traceback in its output
        fails the test."""
        proc, t0, out, err = self._procs[name]
        r = self.runs[name]
        limit = self.limit if limit is None else limit
        sent, matched_at, valve = sig is None, None, False
        while proc.poll() is None:
            now = time.monotonic() - t0
            r.peak_rss_kb = max(r.peak_rss_kb, _vm_hwm_kb(proc.pid))
            if self.watch:
                self._watch(r)
            if not sent and sig is not None:
                if matched_at is None and (sig.when is None or sig.when.test(self)):
                    matched_at = now
                if matched_at is not None and now >= matched_at + sig.after:
                    _send(proc, sig.signum, sig.group)
                    r.events.append(f"{signal.Signals(sig.signum).name} at {now:.1f} s")
                    sent = True
            if r.peak_rss_kb > RSS_VALVE_KB and not valve:
                _send(proc, signal.SIGKILL, True)
                r.events.append(f"killed: RSS {r.peak_rss_kb >> 10} MB")
                valve = True
            if now > limit:
                _send(proc, signal.SIGKILL, True)
                r.events.append(f"killed at the {limit:g} s limit")
                proc.wait()
                break
            time.sleep(POLL_S)
        if not sent and sig is not None:
            r.events.append(f"no {signal.Signals(sig.signum).name} sent: "
                            + (f"{sig.when.desc} never happened" if sig.when and matched_at is None
                               else "the command ended first"))
        r.rc = proc.returncode
        r.peak_rss_kb = max(r.peak_rss_kb, _vm_hwm_kb(proc.pid))
        r.wall = time.monotonic() - t0
        r.out, r.err = (p.read_bytes()[: 1 << 20].decode(errors="replace") for p in (out, err))
        del self._procs[name]
        assert "Traceback (most recent call last)" not in r.text, f"a traceback:\n{r.text[-3000:]}"
        return r

    def run(self, *args: str, sig: Sig | None = None, limit: float | None = None, name: str | None = None) -> Run:
        return self.wait(self.start(*args, name=name), sig, limit)

    def signal(self, name: str, signum: int) -> None:
        proc, t0, *_ = self._procs[name]
        _send(proc, signum, True)
        self.runs[name].events.append(f"{signal.Signals(signum).name} at {time.monotonic() - t0:.1f} s")

    def procs(self) -> list[int]:
        """Live processes of the case: its marker in their environment, or its directory in
        their argv (zombies excluded)."""
        me, found = os.getpid(), []
        mark, dirb = f"{MARK_ENV}={self.marker}".encode(), str(self.dir).encode()
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

    def reap(self) -> list[str]:
        """SIGKILL (by pid) every process of the case still alive; returns what they were, and
        remembers them in ``orphans``."""
        for name in list(self._procs):  # a command still running: the case is over
            _send(self._procs[name][0], signal.SIGKILL, True)
            with contextlib.suppress(AssertionError):
                self.wait(name)
        left = self.procs()
        if left:
            time.sleep(0.3)  # let a dying runner finish dying
            left = self.procs()
        found = []
        for pid in left:
            argv = _cmdline(pid)
            found.append(f"{pid} {' '.join([Path(argv[0]).name, *argv[1:4]]) if argv else '(gone)'}"[:80])
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 3
        while left and time.monotonic() < deadline and self.procs():
            time.sleep(0.05)
        self.orphans += found
        return found

    def _watch(self, r: Run) -> None:
        """One sample of the case's processes: policy, RT priority and RLIMIT_RTTIME of each,
        and zombies whose parent is the case's (counted over consecutive samples)."""
        mark = f"{MARK_ENV}={self.marker}".encode()
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
                with open(f"/proc/{pid}/limits") as f:
                    rttime = next((ln.split()[3] for ln in f if ln.startswith("Max realtime timeout")), None)
            except OSError:
                continue
            mine.add(pid)
            r.seen[pid] = {"argv": _cmdline(pid), "policy": int(st[38]), "rtprio": int(st[37]), "rttime": rttime}
        zombies = {pid for pid, ppid in dead if ppid in mine}
        for pid in zombies:
            r.zombie_samples[pid] = r.zombie_samples.get(pid, 0) + 1
        for pid in list(r.zombie_samples):
            if pid not in zombies and r.zombie_samples[pid] < 4:
                del r.zombie_samples[pid]

    # ---- the case's database and files

    def rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def n_runs(self) -> int:
        """Runs stored (0 when there is no database or no runs table)."""
        if not self.db.exists():
            return 0
        try:
            return int(self.rows("SELECT count(*) FROM runs")[0][0])
        except sqlite3.Error:
            return 0

    def statuses(self, bench: str) -> list[str]:
        return [s for (s,) in self.rows("SELECT status FROM results WHERE bench = ?", (bench,))]

    def run_statuses(self) -> list[str]:
        """Every run's status as `cyclebench runs` shows it (it reconciles runs whose process
        died), or as stored when `runs` cannot read the file."""
        r = self.run("runs", "-n", "1000")
        if r.rc == 0:
            statuses = []
            for ln in r.out.splitlines():
                cells = ln.split()  # run, started, status, …: a run's first line (others continue its cells)
                if len(cells) > 3 and cells[0].isdigit() and cells[1][:4].isdigit() and "T" in cells[1]:
                    statuses.append(cells[2])
            return statuses
        return [s for (s,) in self.rows("SELECT status FROM runs")]

    def left(self, pattern: str) -> list[str]:
        """Files matching ``pattern`` under the case's directory (** allowed)."""
        return [str(Path(f).relative_to(self.dir)) for f in glob.glob(str(self.dir / pattern), recursive=True)]

    def tree(self, rel: str) -> list[str]:
        return sorted(str(p.relative_to(self.dir)) for p in (self.dir / rel).rglob("*"))


# ---- conditions a signal waits for


def appears(pattern: str) -> When:
    """A file matching ``pattern`` (under the case's directory, ** allowed) exists."""
    return When(f"{pattern} appears", lambda lab: bool(lab.left(pattern)))


def run_stored() -> When:
    """The command has stored its run row: building is over, measuring has begun."""
    return When("the run is stored", lambda lab: lab.n_runs() > 0)


def proc_running(word: str, as_arg: bool = False) -> When:
    """A process of the case runs the program ``word`` (or, with ``as_arg``, has it as an
    argument: `hang/forever` in a runner's argv, never in the CLI's own)."""

    def test(lab: Lab) -> bool:
        for pid in lab.procs():
            argv = _cmdline(pid)
            if argv and (word in argv[1:] if as_arg else Path(argv[0]).name == word):
                return True
        return False

    return When(f"{word} runs", test)


def interrupted_run_ids(r: Run) -> set[int]:
    """The run numbers the interrupt message names."""
    said = [ln for ln in lines(r.err) if "interrupted" in ln]
    return {int(n) for ln in said for n in re.findall(r"run #(\d+)", ln)}
