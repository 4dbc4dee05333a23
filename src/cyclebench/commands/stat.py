"""`cyclebench stat -- CMD ARGS`: a whole command measured like `perf stat --repeat`.

Each repetition runs ``--pre`` first (not measured), then the command under the launcher
``engine/statexec.c`` (its own small binary, built once and cached): it forks, opens the
counter groups on the child's pid with ``enable_on_exec`` (nothing of the harness is
counted) and ``inherit`` (the command's children are), releases the child into
``execvp``, times it with CLOCK_MONOTONIC, takes user/sys time from ``wait4`` and prints
the raw group reads as one JSON line on a pipe of its own, so the command's output never
mixes with it. Python parses the reads (``counters.parse_group_read``: scaled when
multiplexed, *not counted* when the group never ran) and summarises the repetitions:
mean, sample standard deviation, min, max, CV per metric. perf stat's "± x.xx%" is the
standard error of the mean (stddev/√n) relative to the mean; the table here shows the
sample stddev relative to the mean (the CV), the spread of one run, and the JSON/DB hold both.

``backend="callgrind"`` runs the command under ``valgrind --tool=callgrind`` instrumented
from the start (no client requests: the whole program, its children too) with the fixed
cache geometry of callgrind.py: Ir, cache and branch misses, identical from run to run for
a deterministic command — labelled *simulated*. Limitation (valgrind 3.19, seen here): a
process that calls execve loses the instructions it ran before the exec (callgrind dumps at
exit only, and the new image writes the same per-pid file): ``sh -c 'a; exec b'`` reports a
and b, not the shell.

Stored as one run with one result row per metric (bench ``stat:<command>/<metric>``, the
mean as per_op, min/median/CV columns filled), so ``cyclebench show`` lists them; each
row's ``extra`` holds its per-repetition values and the wall-time row's ``extra`` every
repetition's raw launcher output. The run's ``summary`` is updated after every repetition,
so an interrupted stat keeps what it measured.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from cyclebench import __version__, counters
from cyclebench.build import (
    BuildError,
    cache_root,
    compiler_version,
    engine_dir,
)
from cyclebench.build.compile import _run
from cyclebench.commands._common import (
    UserError,
    err,
    open_store,
    out,
)
from cyclebench.counters import Event
from cyclebench.runner import callgrind, die_with_parent
from cyclebench.stats.result import derived
from cyclebench.store import StoreError

DEFAULT_EVENTS = "task-clock,context-switches,cpu-migrations,page-faults"
LAUNCHER_SOURCE = "statexec.c"
LAUNCHER_FLAGS = ("-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror")
CALLGRIND_EVENTS = callgrind.EVENT_NAMES


class StatError(Exception):
    """Something the user can fix (command not found, bad --pre, bad -e): one line, exit 2."""


# ---------------------------------------------------------------- launcher
def build_statexec(cc: str = "cc") -> Path:
    """The launcher binary, compiled once per source and compiler into
    ``cache_root()/statexec-<hash>/statexec``. Raises ToolMissing / BuildError."""
    src = engine_dir() / LAUNCHER_SOURCE
    version = compiler_version(cc)
    h = hashlib.sha256(src.read_bytes() + f"\0{version}\0{' '.join(LAUNCHER_FLAGS)}".encode()).hexdigest()[:16]
    out_dir = cache_root() / f"statexec-{h}"
    exe = out_dir / "statexec"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".tmp-statexec-"))
    try:
        proc = _run([cc, *LAUNCHER_FLAGS, str(src), "-o", str(tmp / "statexec")])
        if proc.returncode != 0:
            raise BuildError(f"{src}: does not compile", proc.stderr.strip(), file=str(src))
        try:
            tmp.rename(out_dir)  # atomic publish
        except OSError:
            if not exe.is_file():  # not a concurrent builder that won
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return exe


def launch(exe: Path, argv: Sequence[str], groups: Sequence[Sequence[Event]] = (),
           inherit: bool = True) -> dict[str, Any]:
    """One run of ``argv`` under the launcher: its JSON line as a dict (type "stat" or
    "exec_error"). The command's stdin/stdout/stderr are ours."""
    cmd = [str(exe)]
    if groups:
        cmd += counters.groups_argv(groups)
    if not inherit:
        cmd.append("--no-inherit")
    r, w = os.pipe()
    try:
        proc = subprocess.Popen([*cmd, "--json-fd", str(w), "--", *argv], pass_fds=(w,),
                                preexec_fn=die_with_parent())
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    try:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        rc = proc.wait()
    except BaseException:  # Ctrl-C or SIGTERM reaching only us: statexec and the command go too (D1)
        proc.kill()
        proc.wait()
        raise
    if rc != 0 or not data.strip():
        raise StatError(f"the stat launcher failed (exit {rc}) running {shlex.join(argv)}")
    return json.loads(data.decode())


# ---------------------------------------------------------------- statistics
@dataclass
class Metric:
    """One line of the table: a metric's value in every repetition (None: not counted there)."""

    name: str
    unit: str
    values: list[float | None]
    status: str = "ok"  # ok | not counted | not supported | derived
    notes: list[str] = field(default_factory=list)
    reason: str | None = None  # why there is no number (not counted / not supported: ...)

    @property
    def counted(self) -> list[float]:
        return [v for v in self.values if v is not None]

    def summary(self) -> dict[str, Any]:
        """n, mean, stddev (sample), sem (stddev/√n), min, max, cv, median, mad, rcv,
        ci95 (t interval of the mean); None where undefined."""
        x = self.counted
        n = len(x)
        out: dict[str, Any] = {k: None for k in ("mean", "stddev", "sem", "min", "max", "cv", "median", "mad",
                                                 "rcv", "ci95")}
        out["n"] = n
        if not n:
            return out
        mean = sum(x) / n
        srt = sorted(x)
        med = srt[n // 2] if n % 2 else (srt[n // 2 - 1] + srt[n // 2]) / 2
        mad = sorted(abs(v - med) for v in x)
        mad_v = mad[n // 2] if n % 2 else (mad[n // 2 - 1] + mad[n // 2]) / 2
        out.update(mean=mean, min=srt[0], max=srt[-1], median=med, mad=mad_v,
                   rcv=1.4826 * mad_v / med if med else None)
        if n >= 2:
            sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1))
            from scipy.stats import t

            out.update(stddev=sd, sem=sd / math.sqrt(n), cv=sd / mean if mean else None,
                       ci95=float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n))
        return out


def _paranoid_hint(err: str) -> str:
    if "ermission" not in err:
        return err
    try:
        level = Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
    except OSError:
        return err
    return f"{err}, perf_event_paranoid={level}"


def aggregate(reps: Sequence[dict[str, Any]], groups: Sequence[Sequence[Event]]) -> list[Metric]:
    """Metrics of the launcher's outputs ``reps`` (type "stat") for the event ``groups``:
    wall/user/sys ms, max RSS, every event (scaled when multiplexed, None when not counted),
    then derived metrics (counters.derived) on the means. No process is run here."""
    n = len(reps)
    metrics = [
        Metric("wall", "ms", [r["wall_ns"] / 1e6 for r in reps]),
        Metric("user", "ms", [r["user_us"] / 1e3 for r in reps]),
        Metric("sys", "ms", [r["sys_us"] / 1e3 for r in reps]),
        Metric("max-rss", "KiB", [float(r["maxrss_kb"]) for r in reps]),
    ]
    means: dict[str, float] = {}
    for gi, group in enumerate(groups):
        vals: list[list[float | None]] = [[] for _ in group]
        errors: list[str] = []
        enabled = running = 0
        user_only = False
        for r in reps:
            err = (r.get("open_errors") or [None] * len(groups))[gi]
            words = r["groups"][gi] if gi < len(r.get("groups", [])) else []
            if err or not words:
                errors.append(err or "no group read")
                for v in vals:
                    v.append(None)
                continue
            g = counters.parse_group_read(words, len(group))
            user_only |= bool((r.get("user_only") or [False] * len(groups))[gi])
            enabled += g.enabled
            running += g.running
            scaled = g.scaled()
            for ei in range(len(group)):
                vals[ei].append(None if scaled is None else scaled[ei])
        for ei, ev in enumerate(group):
            values = vals[ei]
            unit = "count"
            if ev.name in counters.TIME_EVENTS:  # nanoseconds
                values = [None if v is None else v / 1e6 for v in values]
                unit = "ms"
            m = Metric(ev.name, unit, values)
            k = len(m.counted)
            if k == 0:
                if errors and len(errors) == n:
                    m.status, m.reason = "not supported", f"not supported: {_paranoid_hint(errors[0])}"
                else:
                    m.status, m.reason = "not counted", "not counted"
            else:
                if k < n:
                    m.notes.append(f"not counted in {n - k}/{n} runs")
                if enabled and running < enabled:
                    m.notes.append(f"multiplexed {100 * running / enabled:.0f}%")
                if user_only:
                    m.notes.append("user space only (perf_event_paranoid)")
                means[ev.name] = sum(m.counted) / k
            metrics.append(m)
    wall = metrics[0].summary()["mean"]
    for m in metrics:
        if m.name in counters.TIME_EVENTS and m.counted and wall:
            m.notes.insert(0, f"{m.summary()['mean'] / wall:.2f} CPUs utilized")
    if reps and not all(r.get("inherit", True) for r in reps):
        for m in metrics[4:]:
            m.notes.append("children not counted (kernel refused inherit with group reads)")
    for name, value in derived(means).items():
        metrics.append(Metric(name, "", [value], status="derived", notes=["derived from the means"]))
    return metrics


def aggregate_callgrind(reps: Sequence[dict[str, Any]]) -> list[Metric]:
    """Metrics of callgrind repetitions: wall/user/sys of the command *under valgrind*,
    then every simulated event."""
    metrics = [
        Metric("wall", "ms", [r["wall_ns"] / 1e6 for r in reps], notes=["under valgrind"]),
        Metric("user", "ms", [r["user_us"] / 1e3 for r in reps], notes=["under valgrind"]),
        Metric("sys", "ms", [r["sys_us"] / 1e3 for r in reps], notes=["under valgrind"]),
    ]
    names = [e for e in CALLGRIND_EVENTS if any(e in (r.get("events") or {}) for r in reps)]
    for e in names:
        vals = [None if (r.get("events") or {}).get(e) is None else float(r["events"][e]) for r in reps]
        metrics.append(Metric(e, "count", vals, notes=["simulated"]))
    return metrics


def exit_summary(reps: Sequence[dict[str, Any]]) -> tuple[str, bool]:
    """('exit 0 in 5/5 runs', all zero?) — or 'exit 3 in 2/5 runs, exit 0 in 3/5, killed by SIGSEGV in …'."""
    n = len(reps)
    counts: dict[str, int] = {}
    for r in reps:
        key = f"killed by {r['signal']}" if r.get("signal") else f"exit {r.get('exit')}"
        counts[key] = counts.get(key, 0) + 1
    text = ", ".join(f"{k} in {c}/{n} runs" for k, c in sorted(counts.items(), key=lambda kv: -kv[1]))
    return text, set(counts) <= {"exit 0"}


# ---------------------------------------------------------------- running
def _check_command(argv: Sequence[str]) -> None:
    if not argv:
        raise StatError("no command: usage: cyclebench stat [OPTIONS] -- CMD [ARGS]")
    if shutil.which(argv[0]) is None:
        what = "not found" if "/" not in argv[0] or not os.path.exists(argv[0]) else "not executable"
        raise StatError(f"command {what}: {argv[0]}")


class Stat:
    """One ``cyclebench stat`` invocation: validated up front (StatError), then run
    repetition by repetition with :meth:`run_one`."""

    def __init__(self, argv: Sequence[str], events: str | None = None, pre: str | None = None,
                 backend: str = "timing", cache: dict[str, tuple[int, int, int]] | None = None,
                 cc: str = "cc") -> None:
        self.argv = list(argv)
        self.backend = backend
        self.cache = cache or callgrind.DEFAULT_CACHE
        _check_command(self.argv)
        try:
            self.pre = shlex.split(pre) if pre else None
        except ValueError as e:
            raise StatError(f"--pre: {e}") from None
        if self.pre is not None:
            if not self.pre:
                raise StatError("--pre: empty command")
            if shutil.which(self.pre[0]) is None:
                raise StatError(f"--pre: command not found: {self.pre[0]}")
        if backend == "callgrind" and events:
            raise StatError("-e applies to the timing backend; callgrind reports its own simulated events")
        try:
            self.events = events or (DEFAULT_EVENTS if backend == "timing" else "")
            self.groups = counters.parse_events(self.events) if self.events else []
        except counters.EventError as e:
            raise StatError(str(e)) from None
        if backend == "callgrind":
            try:
                callgrind.valgrind_argv(Path("x"), self.cache)
            except callgrind.SimulationError as e:
                raise StatError(str(e)) from None
        self.exe = build_statexec(cc)

    def _pre(self, k: int) -> None:
        if self.pre is None:
            return
        try:
            proc = subprocess.run(self.pre, check=False)
        except OSError as e:
            raise StatError(f"--pre: cannot run {self.pre[0]}: {e.strerror}") from None
        if proc.returncode != 0:
            raise StatError(f"--pre command exited {proc.returncode} before repetition {k + 1}")

    def run_one(self, k: int) -> dict[str, Any]:
        """Repetition k (0-based): --pre, then the command. Returns the raw record
        (the launcher's JSON; under callgrind plus its simulated ``events``)."""
        self._pre(k)
        rec = self._callgrind_once() if self.backend == "callgrind" else launch(self.exe, self.argv, self.groups)
        if rec.get("type") == "exec_error":
            raise StatError(f"cannot execute {self.argv[0]}: {rec.get('error')}")
        rec["rep"] = k
        return rec

    def _callgrind_once(self) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="cb-stat-cg-") as tmp:
            out = Path(tmp) / "cg.out"
            vg = callgrind.valgrind_argv(out, self.cache)
            vg = [a.replace("--instr-atstart=no", "--instr-atstart=yes").replace("--collect-atstart=no",
                                                                                  "--collect-atstart=yes")
                  for a in vg]
            vg += ["--trace-children=yes", f"--log-file={Path(tmp) / 'vg.log'}.%p"]
            rec = launch(self.exe, [*vg, *self.argv])
            events: dict[str, int] = {}
            files = sorted(Path(tmp).glob("cg.out.*"))
            for f in files:
                for ev, v in callgrind.parse_dump(f)[1].items():
                    events[ev] = events.get(ev, 0) + v
            rec["events"] = events
            rec["processes"] = len(files)
            if rec.get("type") == "stat" and not files:
                logs = [ln for f in sorted(Path(tmp).glob("vg.log.*")) for ln in f.read_text(errors="replace")
                        .splitlines() if ln.strip()]
                if any("cannot find" in ln or "No such file" in ln or "Permission denied" in ln for ln in logs):
                    rec = {"type": "exec_error", "error": logs[-1].split("valgrind: ")[-1]}
                else:
                    rec["valgrind_log"] = logs[-5:]
            return rec

    def summarize(self, reps: Sequence[dict[str, Any]]) -> list[Metric]:
        return aggregate_callgrind(reps) if self.backend == "callgrind" else aggregate(reps, self.groups)

    def describe(self) -> dict[str, Any]:
        return {"argv": self.argv, "backend": self.backend, "events": self.events,
                "encodings": [[e.encoding for e in g] for g in self.groups], "pre": self.pre,
                "launcher": str(self.exe),
                "cache": {k: list(v) for k, v in self.cache.items()} if self.backend == "callgrind" else None}


# ---------------------------------------------------------------- storing
def bench_name(argv: Sequence[str]) -> str:
    return "stat:" + os.path.basename(argv[0])


def result_rows(stat: Stat, reps: Sequence[dict[str, Any]], metrics: Sequence[Metric]) -> list[dict[str, Any]]:
    """Results-table rows, one per metric: per_op = mean (min, median, CV, 95% CI of the mean)."""
    text, all_zero = exit_summary(reps)
    base = bench_name(stat.argv)
    simulated = stat.backend == "callgrind"
    rows = []
    for i, m in enumerate(metrics):
        s = m.summary()
        row: dict[str, Any] = {"bench": f"{base}/{m.name}", "param": None, "variant": "",
                               "unit": m.unit or None, "status": "ok", "reason": None}
        if m.status in ("not counted", "not supported"):
            row.update(status="skipped", reason=m.reason)
        else:
            if not all_zero:
                row.update(status="invalid", reason=f"command: {text}")
            half = s["ci95"]
            row.update(per_op=s["mean"], mean=s["mean"], median=s["median"], min=s["min"], mad=s["mad"],
                       cv=s["cv"], rcv=s["rcv"], n_samples=s["n"], method="mean",
                       ci_low=None if half is None else s["mean"] - half,
                       ci_high=None if half is None else s["mean"] + half)
            if m.name == "wall" and s["mean"] is not None:
                row["ns_per_op"] = s["mean"] * 1e6
        row["extra"] = {"stat": True, "backend": stat.backend, "simulated": simulated and m.notes == ["simulated"],
                        "metric": m.name, "values": m.values, "max": s["max"], "stddev": s["stddev"],
                        "sem": s["sem"], "notes": m.notes, "derived": m.status == "derived",
                        "command": stat.argv}
        if i == 0:
            row["wall_s"] = sum(r.get("wall_ns", 0) for r in reps) / 1e9
            row["extra"]["repetitions"] = list(reps)
            row["extra"]["exit"] = text
        rows.append(row)
    return rows


def begin_run(store: Any, stat: Stat, command: Sequence[str]) -> int:
    from cyclebench.env import sysinfo

    cpu = sysinfo.cpu_info()
    env = {"kernel": sysinfo.kernel_info(), "pmu": sysinfo.pmu_info(), "cpu_info": cpu}
    return store.begin_run(command=list(command), host=socket.gethostname(), cpu_model=cpu.get("model_name"),
                           tool_version=__version__, env=env, summary={"stat": {**stat.describe(), "repetitions": []}})


def record_repetition(store: Any, run_id: int, stat: Stat, reps: Sequence[dict[str, Any]]) -> None:
    """Commit the raw repetitions so far with the run (nothing measured is lost)."""
    store.update_run(run_id, summary={"stat": {**stat.describe(), "repetitions": list(reps)}})


def store_results(store: Any, run_id: int, stat: Stat, reps: Sequence[dict[str, Any]],
                  metrics: Sequence[Metric], status: str) -> None:
    for row in result_rows(stat, reps, metrics):
        store.add_result(run_id, row)
    text, _ = exit_summary(reps)
    store.update_run(run_id, summary={"stat": {**stat.describe(), "repetitions": list(reps), "exit": text,
                                               "metrics": {m.name: {**m.summary(), "unit": m.unit, "notes": m.notes,
                                                                    "status": m.status} for m in metrics}}})
    store.finish_run(run_id, status)


# ---------------------------------------------------------------- reporting
def _fmt(x: float | None) -> str:
    from cyclebench.report.console import fmt

    return fmt(x)


def stat_table(metrics: Sequence[Metric], title: str | None = None) -> Any:
    """perf-stat-like rich table: metric, mean, ± stddev (% of the mean), min, max, unit, notes."""

    table = Table(title=title, header_style="bold")
    table.add_column("metric", no_wrap=True)
    for col in ("mean", "± stddev", "min", "max"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    table.add_column("notes", overflow="fold", min_width=12)
    for m in metrics:
        s = m.summary()
        if m.status in ("not counted", "not supported"):
            table.add_row(m.name, f"<{m.status}>", "", "", "", m.unit, m.reason or "", style="yellow")
            continue
        if m.status == "derived":
            table.add_row(m.name, f"{s['mean']:.3f}", "", "", "", m.unit, ", ".join(m.notes), style="dim")
            continue
        sd = "-" if s["cv"] is None else f"± {100 * s['cv']:.2f}%"
        table.add_row(m.name, _fmt(s["mean"]), sd, _fmt(s["min"]), _fmt(s["max"]), m.unit, ", ".join(m.notes))
    return table


def hints(stat: Stat, metrics: Sequence[Metric]) -> list[str]:
    """One line when hardware events could not be opened here (no PMU)."""
    hw = {e.name for g in stat.groups for e in g if e.is_hardware}
    missing = [m for m in metrics if m.status == "not supported" and m.name in hw]
    if not missing:
        return []
    why = (missing[0].reason or "").removeprefix("not supported: ")
    return [f"hardware events are not available here ({', '.join(m.name for m in missing)}: {why}; no PMU "
            "exposed, as in most VMs): use --backend callgrind for simulated counts"]


@click.command("stat", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-r", "--repeat", type=click.IntRange(1, 100000), default=1, show_default=True,
              help="Run the command this many times; mean ± stddev, min, max over the runs.")
@click.option("-e", "--events", default=None, metavar="EVENTS",
              help="perf events (comma list, {a,b} groups); default task-clock,context-switches,cpu-migrations,"
                   "page-faults.")
@click.option("--pre", default=None, metavar="CMD", help="Run CMD before each repetition (not measured).")
@click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing", show_default=True,
              help="callgrind: the whole command under valgrind callgrind: simulated Ir, cache and branch misses.")
@click.option("--cache", "cache_spec", default=None, metavar="'I1=S,A,L;D1=...;LL=...'",
              help="callgrind cache geometry (default as for run).")
@click.option("--db", metavar="URL", help="Database URL (default: $CYCLEBENCH_DB or the user data dir).")
@click.option("-q", "--quiet", is_flag=True, help="No table.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def stat_cmd(repeat: int, events: str | None, pre: str | None, backend: str, cache_spec: str | None,
             db: str | None, quiet: bool, command: tuple[str, ...]) -> None:
    """Run a whole command like `perf stat -r N`: wall, user, sys and counters (enabled at its exec,
    children included), or simulated counts under callgrind. Usage: cyclebench stat [OPTIONS] -- CMD [ARGS]."""
    from cyclebench.runner import callgrind

    try:
        cache = callgrind.parse_cache(cache_spec)
        st = Stat(command, events=events, pre=pre, backend=backend, cache=cache)
    except (StatError, callgrind.SimulationError) as e:
        raise UserError(str(e)) from None
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    argv = ["cyclebench", "stat", "-r", str(repeat), "--backend", backend, *(["-e", events] if events else []),
            *(["--pre", pre] if pre else []), "--", *command]
    store = open_store(db)
    reps: list[dict[str, Any]] = []
    run_id: int | None = None
    status, failure = "complete", None
    try:
        for k in range(repeat):
            reps.append(st.run_one(k))
            if run_id is None:
                run_id = begin_run(store, st, argv)
            record_repetition(store, run_id, st, reps)
    except KeyboardInterrupt:
        status = "interrupted"
    except StatError as e:
        status, failure = "failed", e
    except StoreError as e:
        raise UserError(f"{e} ({len(reps)} repetition(s) measured)") from None
    metrics = st.summarize(reps) if reps else []
    if run_id is not None:
        try:
            store_results(store, run_id, st, reps, metrics, status)
        except StoreError as e:
            raise UserError(str(e)) from None
    if reps and not quiet:
        what = "simulated (callgrind)" if backend == "callgrind" else "counters enabled at exec"
        out.print(stat_table(metrics, title=f"stat #{run_id} · '{shlex.join(command)}' · {len(reps)} "
                                     f"run{'s' if len(reps) > 1 else ''} · {what}"))
        for line in hints(st, metrics):
            err.print(line, highlight=False)
    text, all_zero = exit_summary(reps) if reps else ("", True)
    if failure is not None:
        kept = f" ({len(reps)} repetition(s) kept in run #{run_id})" if reps else ""
        raise UserError(f"{failure}{kept}")
    if reps:
        err.print(f"command: {text}; run #{run_id} stored in {store.url}", highlight=False,
                  style=None if all_zero else "red")
    if status == "interrupted":
        err.print(f"cyclebench: interrupted after {len(reps)} repetition(s)")
        sys.exit(130)
    if not all_zero:
        sys.exit(1)
