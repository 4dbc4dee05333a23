"""`cyclebench counters list|sweep`: which events count here, and trying them all on a benchmark."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from cyclebench.build import BuildError
from cyclebench.build import build as build_binary
from cyclebench.commands._common import (
    UserError,
    err,
    out,
    write_text,
)
from cyclebench.commands._options import (
    BuildOptions,
    RunnerOptions,
    build_options,
    json_option,
    not_a_file,
    runner_options,
)
from cyclebench.commands._progress import Steps
from cyclebench.commands._record import argument, group, option, takes
from cyclebench.report.listing import events_table, sweep_table
from cyclebench.report.text import visible
from cyclebench.runner.plan import MeasureOptions


@click.group("counters")
def counters_group() -> None:
    """Counter events: which ones this machine can count, and trying them all on a benchmark."""


def _suite_runner(build: BuildOptions | None = None, pin: RunnerOptions | None = None) -> Any:
    from cyclebench.env import sysinfo
    from cyclebench.runner import Runner

    build, pin = build or BuildOptions(), pin or RunnerOptions()
    try:
        binary = build_binary(build.spec())
    except BuildError as e:
        raise UserError(str(e)) from None
    cpu = pin.cpu if pin.cpu is not None else sysinfo.choose_cpu()
    return Runner(binary.path, cpu, fifo=pin.fifo, max_rss=pin.max_rss)


@counters_group.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also list the events that cannot be counted here.")
def counters_list(show_all: bool) -> None:
    """Every event name known here (generic perf names, libpfm4's PMU events), each tried."""
    from cyclebench import counters
    from cyclebench.counters import pfm4

    runner = _suite_runner()
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
    min_per_op: float = option("--min-per-op", type=float, default=0.01, show_default=True,
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
    from cyclebench import counters

    param = a.param
    not_a_file(a.bench, "counters sweep")
    events = _raw_events(a.raw_range, a.umask) if a.raw_range else None  # refused before anything is built
    runner = _suite_runner(a.build, a.pin)
    names = {b.name: b for b in runner.list()}
    if a.bench not in names:
        raise UserError(f"unknown benchmark '{a.bench}' (see cyclebench run --list)")
    if names[a.bench].params and param is None:
        param = names[a.bench].params[0]
    cat = events if events is not None else [e for _, e in counters.catalogue()]
    errors = counters.probe_all(runner, cat)
    countable = [e for e, x in zip(cat, errors, strict=True) if x is None]
    found = _sweep(runner, a.bench, param, countable, a.group_size)
    rows = [{"event": e.name, "encoding": e.encoding, "countable": x is None, "error": x,
             "per_op": found.get(e.name)} for e, x in zip(cat, errors, strict=True)]
    shown = sorted((r for r in rows if r["per_op"] is not None and abs(r["per_op"]) >= a.min_per_op),
                   key=lambda r: -abs(r["per_op"]))
    out.print(sweep_table(shown, f"{a.bench}{'' if param is None else f' [{param}]'}: events per op "
                          f"({len(countable)} of {len(cat)} {'raw codes' if events is not None else 'events'} "
                          "countable here)", raw=events is not None))
    if not countable:
        err.print(f"cyclebench: none of the {len(cat)} events could be opened here: "
                  f"{visible(next((x for x in errors if x), ''))}", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"bench": a.bench, "param": param, "raw": a.raw_range, "events": rows},
                                         indent=1) + "\n")


def _raw_events(text: str, umask: int) -> list[Any]:
    """The --raw codes as events of this CPU's PMU; one line (exit 2) without a PMU or for a bad range."""
    from cyclebench.counters import EventError, raw

    try:
        codes = raw.parse_range(text)
        pmu = raw.core_pmu()
        if pmu is None:
            raise EventError(f"--raw needs the CPU's own PMU, and none is exposed here (no cpu or armv8 PMU "
                             f"under /{raw.DEVICES}: a VM without PMU passthrough); without --raw the named "
                             "software events are swept")
        return raw.raw_events(pmu, codes, umask)
    except EventError as e:
        raise UserError(str(e)) from None


def _sweep(runner: Any, bench: str, param: int | None, events: list[Any], group_size: int) -> dict[str, float]:
    """Run ``bench`` once per group of ``group_size`` events; their counts per op by name."""
    import numpy as np

    from cyclebench.stats.result import counter_fields

    opts = MeasureOptions(min_time=0.02, repeat=8, warmup=0.005)
    found: dict[str, float] = {}
    with Steps(-(-len(events) // group_size), "sweeping events") as steps:
        for i in range(0, len(events), group_size):
            group = events[i : i + group_size]
            o = runner.run(bench, param, opts, opts.timeout(), [group])
            steps.step(",".join(e.name for e in group))
            if o.result is None:
                raise UserError(f"{bench}: {o.status}: {o.reason}")
            n = np.asarray(o.result["n"], dtype=float)
            cf = counter_fields(o.result, [group], n, o.result.get("ladder"), np.ones(len(n), dtype=bool), 0)
            found.update((k, v["per_op"]) for k, v in cf["events"].items() if "per_op" in v)
    return found
