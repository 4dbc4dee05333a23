"""The machinery of `cyclebench stat -- CMD ARGS`: a whole command measured like `perf stat --repeat`.

The recipe: check the command and options up front (StatError), then run the repetitions
one by one — ``--pre`` first (not measured), then the command under the launcher
(build.statexec builds it, runner.exec runs it: counters enabled at exec, children counted;
or under callgrind with ``backend="callgrind"``: simulated Ir, cache and branch misses,
identical from run to run for a deterministic command) — summarise them (stats.repetitions),
store one run with one result row per metric, and print the table (report.stat).

The run's ``summary`` is updated after every repetition, so an interrupted stat keeps
what it measured.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from cyclebench import counters
from cyclebench.build.statexec import build_statexec
from cyclebench.counters.events import per_run_counts
from cyclebench.env import sysinfo
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.session import open_run
from cyclebench.model import Repetition
from cyclebench.runner import callgrind
from cyclebench.runner.exec import launch, launch_callgrind, run_pre, valgrind_tmpdir_problem
from cyclebench.stats.repetitions import (
    Metric,
    aggregate,
    aggregate_callgrind,
    exit_summary,
    result_rows,
    same_work,
)
from cyclebench.stats.result import derived

DEFAULT_EVENTS = "task-clock,context-switches,cpu-migrations,page-faults"


class StatConfig(TypedDict):
    """``summary["stat"]`` of a `stat` run, beside its repetitions (JSON, as stored): the
    command's ``argv``, the ``backend`` (timing | callgrind), the perf ``events`` as given and
    their perf_event_attr ``encodings`` per group, the ``pre`` command, the ``launcher``'s path
    and, under callgrind, the simulated ``cache`` geometry (level → [size, associativity, line
    size], bytes)."""

    argv: list[str]
    backend: str
    events: str
    encodings: list[list[str]]
    pre: list[str] | None
    launcher: str
    cache: dict[str, list[int]] | None


class StatError(ExperimentError):
    """Something the user can fix (command not found, bad --pre, bad -e): one line, exit 2."""


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
                 cc: str = "cc", cpu: int | None = None, fifo: int | None = None) -> None:
        self.argv = list(argv)
        self.cpu, self.fifo = cpu, fifo
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
            problem = valgrind_tmpdir_problem()
            if problem is not None:
                raise StatError(problem)
        self.exe = build_statexec(cc)

    def _pre(self, k: int) -> None:
        if self.pre is None:
            return
        try:
            rc = run_pre(self.pre)
        except OSError as e:
            raise StatError(f"--pre: cannot run {self.pre[0]}: {e.strerror}") from None
        if rc != 0:
            raise StatError(f"--pre command exited {rc} before repetition {k + 1}")

    def run_one(self, k: int) -> Repetition:
        """Repetition k (0-based): --pre, then the command. Returns the raw record
        (the launcher's JSON; under callgrind plus its simulated ``events``)."""
        self._pre(k)
        if self.backend == "callgrind":
            rec = launch_callgrind(self.exe, self.argv, self.cache)
        else:
            rec = launch(self.exe, self.argv, self.groups, cpu=self.cpu, fifo=self.fifo)
        if rec.get("type") == "exec_error":
            raise StatError(f"cannot execute {self.argv[0]}: {rec.get('error')}")
        rec["rep"] = k
        return rec

    def summarize(self, reps: Sequence[Repetition]) -> list[Metric]:
        """The metrics of the repetitions ``reps`` (raw records of run_one); no process is run."""
        if self.backend == "callgrind":
            return aggregate_callgrind(reps, callgrind.EVENT_NAMES)
        return aggregate(reps, per_run_counts(reps, self.groups), derive=derived,
                         paranoid=sysinfo.read(sysinfo.ROOT, "proc/sys/kernel/perf_event_paranoid"))

    def describe(self) -> StatConfig:
        """What this `stat` runs, as stored in its run's summary (StatConfig)."""
        return {"argv": self.argv, "backend": self.backend, "events": self.events,
                "encodings": [[e.encoding for e in g] for g in self.groups], "pre": self.pre,
                "launcher": str(self.exe),
                "cache": {k: list(v) for k, v in self.cache.items()} if self.backend == "callgrind" else None}


# ---------------------------------------------------------------- storing
def begin_run(store: Any, stat: Stat, command: Sequence[str], labels: dict[str, str] | None = None) -> int:
    """The run, opened as every command opens one (topology and frequency of the CPU it ran on),
    with the user's ``labels``."""
    cpu = stat.cpu if stat.cpu is not None else sysinfo.choose_cpu()
    run_id, _ = open_run(store, command, cpu, [], None, None, pinned=stat.cpu is not None, labels=labels)
    store.update_run(run_id, summary={"stat": {**stat.describe(), "repetitions": []}})
    return run_id


def record_repetition(store: Any, run_id: int, stat: Stat, reps: Sequence[Repetition]) -> None:
    """Commit the raw repetitions so far with the run (nothing measured is lost)."""
    store.update_run(run_id, summary={"stat": {**stat.describe(), "repetitions": list(reps)}})


def store_results(store: Any, run_id: int, stat: Stat, reps: Sequence[Repetition],
                  metrics: Sequence[Metric], status: str) -> None:
    for row in result_rows(stat.argv, stat.backend, reps, metrics):
        store.add_result(run_id, row)
    text, _ = exit_summary(reps)
    store.update_run(run_id, summary={"stat": {**stat.describe(), "repetitions": list(reps), "exit": text,
                                               "metrics": {m.name: {**m.summary(), "unit": m.unit, "notes": m.notes,
                                                                    "status": m.status} for m in metrics}}})
    store.finish_run(run_id, status)


@dataclass(frozen=True)
class Repeated:
    """What the repetitions of one `stat` gave: the raw repetitions (stats.repetitions' dicts),
    their metrics, the run they are stored in (None: none finished), how the run ended
    (complete | interrupted | failed) and, when failed, why (StatError or LaunchError)."""

    reps: tuple[Repetition, ...]
    metrics: tuple[Metric, ...]
    run_id: int | None
    status: str
    failure: Exception | None = None
    findings: tuple[str, ...] = ()  # repetitions that did other work (stats.repetitions.same_work)


def repeat(stat: Stat, store: Any, argv: Sequence[str], labels: dict[str, str], times: int,
           on_step: Callable[[str], None]) -> Repeated:
    """Run the command ``times`` times, the run opened after the first repetition and each one
    committed as it ends (record_repetition), then the metrics (repetitions that did other work
    flagged) stored. Ctrl-C ends the loop
    (status interrupted, what ran is kept); a command that cannot be launched ends it failed.
    Raises StoreError (with how many repetitions ran in its message) when the store fails."""
    from cyclebench.runner.exec import LaunchError
    from cyclebench.store import StoreError

    reps: list[Repetition] = []
    run_id: int | None = None
    status, failure = "complete", None
    try:
        for k in range(times):
            reps.append(stat.run_one(k))
            if run_id is None:
                run_id = begin_run(store, stat, argv, labels)
            record_repetition(store, run_id, stat, reps)
            on_step(f"repetition {k + 1}")
    except KeyboardInterrupt:
        status = "interrupted"
    except (StatError, LaunchError) as e:
        status, failure = "failed", e
    except StoreError as e:
        raise StoreError(f"{e} ({len(reps)} repetition(s) measured)") from None
    metrics = stat.summarize(reps) if reps else []
    metrics, findings = same_work(metrics)  # the metrics it flags say so: before they are stored
    if run_id is not None:
        store_results(store, run_id, stat, reps, metrics, status)
    return Repeated(tuple(reps), tuple(metrics), run_id, status, failure, tuple(findings))


def title(run_id: int | None, argv: Sequence[str], repetitions: int, backend: str) -> str:
    """The table's title (printed by `stat`, and by `show` of the run it stored)."""
    what = "simulated (callgrind)" if backend == "callgrind" else "counters enabled at exec"
    return f"stat #{run_id} · '{shlex.join(argv)}' · {repetitions} repetition{'s' if repetitions > 1 else ''} · {what}"


def hints(stat: Stat, metrics: Sequence[Metric]) -> list[str]:
    """One line when hardware events could not be opened here (no PMU)."""
    hw = {e.name for g in stat.groups for e in g if e.is_hardware}
    missing = [m for m in metrics if m.status == "not supported" and m.name in hw]
    if not missing:
        return []
    why = (missing[0].reason or "").removeprefix("not supported: ")
    return [f"hardware events are not available here ({', '.join(m.name for m in missing)}: {why}; no PMU "
            "exposed, as in most VMs): use --backend callgrind for simulated counts"]
