"""`cyclebench stat -- CMD ARGS`: a whole command measured like `perf stat --repeat` (the
machinery: experiments/stat.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench.experiments.options import RunnerOptions
from cyclebench.experiments.stat import (
    Stat,
    StatError,
    hints,
    repeat,
    title,
)
from cyclebench.report.stat import stat_table
from cyclebench.runner import callgrind
from cyclebench.stats.repetitions import (
    exit_summary,
)
from cyclebench.ui.common import UserError, err, open_output, open_store, write_table
from cyclebench.ui.finish import finishing
from cyclebench.ui.options import label_option, parse_labels, pin_options
from cyclebench.ui.progress import Steps
from cyclebench.ui.record import argument, group, option, takes


# allow_interspersed_args=False: options end at the command's name, so `stat ls -la` passes -la to ls;
# an unknown option before it is click's one-line "No such option" (exit 2), never taken for the command.
@dataclass(frozen=True, kw_only=True)
class StatArgs:
    """`stat`'s options (--help gives each one's meaning)."""

    repeat: int = option("-r", "--repeat", type=click.IntRange(1, 100000), default=1, show_default=True,
                         help="Run the command this many times; mean ± stddev, min, max over the runs.")
    events: str | None = option("-e", "--events", metavar="EVENTS", help="perf events (comma list, {a,b} groups); "
                                "default task-clock,context-switches,cpu-migrations,page-faults.")
    pre: str | None = option("--pre", metavar="CMD", help="Run CMD before each repetition (not measured).")
    backend: str = option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing",
                          show_default=True, help="callgrind: the whole command under valgrind callgrind: simulated "
                          "Ir, cache and branch misses.")
    cache_spec: str | None = option("--cache", metavar="'I1=S,A,L;D1=...;LL=...'",
                                    help="callgrind cache geometry (default as for run).")
    db: str | None = option("--db", metavar="URL", help="Database URL (default: $CYCLEBENCH_DB or the user data "
                            "dir).")
    quiet: bool = option("-q", "--quiet", is_flag=True, help="No table.")
    output: Path | None = option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                                 help="Write the table to FILE instead of stderr (as perf stat -o).")
    label_args: tuple[str, ...] = group(label_option)
    pin: RunnerOptions = group(pin_options)
    command: tuple[str, ...] = argument(nargs=-1, type=click.UNPROCESSED)

    def argv(self, labels: dict[str, str]) -> list[str]:
        """The command line stored with the run: every option spelled out, as `runs` shows it."""
        cpu, fifo = self.pin.cpu, self.pin.fifo
        return ["cyclebench", "stat", "-r", str(self.repeat), "--backend", self.backend,
                *(["-e", self.events] if self.events else []), *(["--cpu", str(cpu)] if cpu is not None else []),
                *(["--fifo", str(fifo)] if fifo else []), *(["--pre", self.pre] if self.pre else []),
                *(x for k, v in labels.items() for x in ("--label", f"{k}={v}")), "--", *self.command]


# allow_interspersed_args=False: options end at the command's name, so `stat ls -la` passes -la to ls;
# an unknown option before it is click's one-line "No such option" (exit 2), never taken for the command.
@click.command("stat", context_settings={"allow_interspersed_args": False})
@takes(StatArgs)
def stat_cmd(a: StatArgs) -> None:
    """Run a whole command like `perf stat -r N`: wall, user, sys and counters (enabled at its exec,
    children included), or simulated counts under callgrind. Usage: cyclebench stat [OPTIONS] -- CMD [ARGS].

    The command's stdin, stdout and stderr are its own; the table and every line of cyclebench's
    go to stderr (or the table to -o FILE), as perf stat does, so `stat -- CMD > file` keeps CMD's output."""
    labels = parse_labels(a.label_args)
    with finishing(interrupt=False):  # a bad command, -e, --pre or --cache; the probe's build; the store
        try:
            cache = callgrind.parse_cache(a.cache_spec)
        except callgrind.SimulationError as e:
            raise StatError(str(e)) from None
        st = Stat(a.command, events=a.events, pre=a.pre, backend=a.backend, cache=cache, cpu=a.pin.cpu,
                  fifo=a.pin.fifo)
        if a.output is not None and not a.quiet:
            open_output(a.output)
        store = open_store(a.db)
        with Steps(a.repeat, "stat", quiet=a.quiet or a.repeat == 1, plain=True) as steps:
            done = repeat(st, store, a.argv(labels), labels, a.repeat, steps.step)
    reps, metrics, run_id = done.reps, done.metrics, done.run_id
    if reps and not a.quiet:
        table = stat_table(metrics, title=title(run_id, a.command, len(reps), a.backend))
        if a.output is None:
            err.print(table)
        else:
            write_table(a.output, table, f"run #{run_id}")
        for line in hints(st, metrics):
            err.print(line, highlight=False)
    for line in done.findings:  # quiet or not: a repetition that did other work spoils the means
        err.print(f"cyclebench: {line}", style="yellow", highlight=False)
    text, all_zero = exit_summary(reps) if reps else ("", True)
    if done.failure is not None:
        kept = f" ({len(reps)} repetition(s) kept in run #{run_id})" if reps else ""
        raise UserError(f"{done.failure}{kept}")
    if reps:
        err.print(f"command: {text}; run #{run_id} stored in {store.url}", highlight=False,
                  style=None if all_zero else "red")
    if done.status == "interrupted":
        err.print(f"cyclebench: interrupted after {len(reps)} repetition(s)")
        sys.exit(130)
    if not all_zero:
        sys.exit(1)

