"""`cyclebench stat -- CMD ARGS`: a whole command measured like `perf stat --repeat` (the
machinery: experiments/stat.py).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from cyclebench.build import BuildError
from cyclebench.commands._common import UserError, err, open_store, write_text
from cyclebench.commands._options import RunnerOptions, label_option, parse_labels, pin_options
from cyclebench.commands._progress import Steps
from cyclebench.experiments.stat import (
    Stat,
    StatError,
    begin_run,
    hints,
    record_repetition,
    store_results,
    title,
)
from cyclebench.report.stat import stat_table
from cyclebench.runner import callgrind
from cyclebench.runner.exec import LaunchError
from cyclebench.stats.repetitions import (
    exit_summary,
    same_work,
)
from cyclebench.store import StoreError


# allow_interspersed_args=False: options end at the command's name, so `stat ls -la` passes -la to ls;
# an unknown option before it is click's one-line "No such option" (exit 2), never taken for the command.
@click.command("stat", context_settings={"allow_interspersed_args": False})
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
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the table to FILE instead of stderr (as perf stat -o).")
@label_option
@pin_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def stat_cmd(repeat: int, events: str | None, pre: str | None, backend: str, cache_spec: str | None,
             db: str | None, quiet: bool, output: Path | None, pin: RunnerOptions, command: tuple[str, ...],
             label_args: tuple[str, ...]) -> None:
    """Run a whole command like `perf stat -r N`: wall, user, sys and counters (enabled at its exec,
    children included), or simulated counts under callgrind. Usage: cyclebench stat [OPTIONS] -- CMD [ARGS].

    The command's stdin, stdout and stderr are its own; the table and every line of cyclebench's
    go to stderr (or the table to -o FILE), as perf stat does, so `stat -- CMD > file` keeps CMD's output."""
    labels = parse_labels(label_args)
    try:
        cache = callgrind.parse_cache(cache_spec)
        st = Stat(command, events=events, pre=pre, backend=backend, cache=cache, cpu=pin.cpu, fifo=pin.fifo)
    except (StatError, callgrind.SimulationError) as e:
        raise UserError(str(e)) from None
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    argv = ["cyclebench", "stat", "-r", str(repeat), "--backend", backend, *(["-e", events] if events else []),
            *(["--cpu", str(pin.cpu)] if pin.cpu is not None else []), *(["--fifo", str(pin.fifo)] if pin.fifo else []),
            *(["--pre", pre] if pre else []), *(a for k, v in labels.items() for a in ("--label", f"{k}={v}")),
            "--", *command]
    if output is not None and not quiet:
        open_output(output)
    store = open_store(db)
    reps: list[dict[str, Any]] = []
    run_id: int | None = None
    status, failure = "complete", None
    try:
        with Steps(repeat, "stat", quiet=quiet or repeat == 1, plain=True) as steps:
            for k in range(repeat):
                reps.append(st.run_one(k))
                if run_id is None:
                    run_id = begin_run(store, st, argv, labels)
                record_repetition(store, run_id, st, reps)
                steps.step(f"repetition {k + 1}")
    except KeyboardInterrupt:
        status = "interrupted"
    except (StatError, LaunchError) as e:
        status, failure = "failed", e
    except StoreError as e:
        raise UserError(f"{e} ({len(reps)} repetition(s) measured)") from None
    metrics = st.summarize(reps) if reps else []
    findings = same_work(metrics)
    if run_id is not None:
        try:
            store_results(store, run_id, st, reps, metrics, status)
        except StoreError as e:
            raise UserError(str(e)) from None
    if reps and not quiet:
        table = stat_table(metrics, title=title(run_id, command, len(reps), backend))
        if output is None:
            err.print(table)
        else:
            write_table(output, table, f"run #{run_id}")
        for line in hints(st, metrics):
            err.print(line, highlight=False)
    for line in findings:  # quiet or not: a repetition that did other work spoils the means
        err.print(f"cyclebench: {line}", style="yellow", highlight=False)
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


def open_output(path: Path) -> None:
    """Create or empty ``path`` before anything runs, as perf stat -o does: a file that cannot be
    written is one line (UserError, exit 2) before a repetition is spent."""
    try:
        with path.open("w"):
            pass
    except OSError as e:
        raise UserError(f"-o: cannot write {path}: {e.strerror or e}") from None


def write_table(path: Path, table: Any, stored: str) -> None:
    """The table as plain text (no colour, 200 columns as when piped) into ``path``."""
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None, markup=False, force_terminal=False).print(table)
    write_text(path, buf.getvalue(), stored)
