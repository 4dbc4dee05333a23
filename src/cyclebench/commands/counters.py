"""`cyclebench counters list|sweep`: which events count here, and trying them all on a benchmark."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench.experiments.counters import suite_runner
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.report.listing import events_table, sweep_table
from cyclebench.report.text import visible
from cyclebench.ui.common import err, out, write_text
from cyclebench.ui.options import FloatRange, build_options, json_option, not_a_file, runner_options
from cyclebench.ui.progress import Steps
from cyclebench.ui.record import argument, group, option, takes


@click.group("counters")
def counters_group() -> None:
    """Counter events: which ones this machine can count, and trying them all on a benchmark."""


@counters_group.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also list the events that cannot be counted here.")
def counters_list(show_all: bool) -> None:
    """Every event name known here (generic perf names, libpfm4's PMU events), each tried."""
    from cyclebench import counters
    from cyclebench.counters import pfm4

    runner = suite_runner()
    cat = counters.catalogue()
    with err.status(f"trying {len(cat)} events", spinner="dots"):
        errors = counters.probe_all(runner, [e for _, e in cat])
    listed = [(src, ev, e) for (src, ev), e in zip(cat, errors, strict=True)
              if show_all or not e or src.startswith("generic")]
    shown = len(listed)
    out.print(events_table(listed, "counter events" + ("" if pfm4.available()
                                                       else " (libpfm4 not installed: generic names only)")))
    ok = sum(e is None for e in errors)
    err.print(f"{ok} of {len(cat)} events countable here; {len(cat) - shown} PMU events not countable not shown "
              "(--all shows them)" if not show_all else f"{ok} of {len(cat)} events countable here")


@dataclass(frozen=True, kw_only=True)
class SweepArgs:
    """`counters sweep`'s options (--help gives each one's meaning)."""

    bench: str = argument(nargs=-1, metavar="[FILE.c...] BENCH")
    param: int | None = option("-p", "--param", type=int, help="Parameter of the benchmark.")
    raw_range: str | None = option("--raw", metavar="RANGE", help="Instead of the named events: every raw event code "
                                   "of RANGE (e.g. 0x00-0xff) of the CPU's PMU, one at a time, encoded from its sysfs "
                                   "format (Intel, AMD, arm64 alike).")
    umask: int = option("--umask", type=click.IntRange(0, 0xFF), default=0, show_default=True,
                        help="--raw: the unit mask set with every code, where the PMU has one (Intel, AMD).")
    group_size: int = option("--group-size", type=click.IntRange(1, 8), default=1, show_default=True,
                             help="Events read together per run (fewer: no multiplexing).")
    min_per_op: float = option("--min-per-op", type=FloatRange(), default=0.01, show_default=True,
                               help="Hide events below this count per op.")
    json_path: Path | None = group(json_option)
    pin: RunnerOptions = group(runner_options)
    build: BuildOptions = group(build_options(files_in="bench", one="BENCH"))


@counters_group.command("sweep")
@takes(SweepArgs)
def counters_sweep(a: SweepArgs) -> None:
    """Run BENCH once per group of countable events, over every event here (or every raw code of
    --raw), and list the events with a non-negligible count per op, largest first (Evans's
    "try all counters", docs/references.md#malloc-profiling-freebsd-2008)."""
    from cyclebench.experiments import counters as design

    not_a_file(a.bench, "counters sweep")
    events = design.raw_events(a.raw_range, a.umask) if a.raw_range else None  # refused before anything is built
    runner = suite_runner(a.build, a.pin)
    probed = design.probe(runner, a.bench, a.param, events)
    with Steps(probed.invocations(a.group_size), "sweeping events") as steps:
        swept = design.sweep(runner, probed, a.group_size, steps)
    what = "raw codes" if swept.raw else "events"
    out.print(sweep_table(swept.shown(a.min_per_op), f"{a.bench}{'' if swept.param is None else f' [{swept.param}]'}: "
                          f"events per op ({swept.countable} of {len(swept.events)} {what} countable here)",
                          raw=swept.raw))
    if not swept.countable:
        first = next((e.error for e in swept.events if e.error), "")
        err.print(f"cyclebench: none of the {len(swept.events)} events could be opened here: {visible(first)}",
                  highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"bench": a.bench, "param": swept.param, "raw": a.raw_range,
                                            "events": [e.to_json() for e in swept.events]}, indent=1) + "\n")
