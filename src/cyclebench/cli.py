"""Command line (click). Thin: parses arguments, calls the modules, prints.

Every error a user can cause ends in one line saying what to do (exit 2 for usage and
input errors), never a traceback; results already measured stay in the database.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from cyclebench import __version__
from cyclebench.build import DEFAULT_CFLAGS, BuildError, BuildSpec, ToolMissing, suite_sources
from cyclebench.build import build as build_binary
from cyclebench.commands.run import RunConfig, execute, prepare
from cyclebench.model import Item
from cyclebench.report import check as check_report
from cyclebench.report import console as console_report
from cyclebench.runner import RunnerError
from cyclebench.runner.plan import MeasureOptions, SelectionError
from cyclebench.store import Store, StoreError
from cyclebench.store import runfile as json_report

FAILED_STATUSES = ("invalid", "failed", "crashed", "timeout", "error")


def _width(stream: Any) -> int | None:
    """Terminal width on a terminal; wide when piped, so notes are not folded away."""
    if "COLUMNS" in os.environ or stream.isatty():
        return None
    return 200


out = Console(width=_width(sys.stdout))
err = Console(stderr=True, width=_width(sys.stderr))


class UserError(click.ClickException):
    """One line on stderr, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        err.print(f"[bold red]cyclebench: error:[/] {self.message}", highlight=False, soft_wrap=True)


def _params(values: tuple[str, ...]) -> list[int]:
    out_: list[int] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out_.append(int(part, 0))
            except ValueError:
                raise click.BadParameter(f"'{part}' is not an integer", param_hint="-p/--param") from None
    return out_


def _open_store(db: str | None) -> Store:
    try:
        return Store(db)
    except StoreError as e:
        raise UserError(str(e)) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what `timeout`, a CI cancel or a closed terminal send), raised where
    Ctrl-C would be, so every command kills its runners and keeps what it stored (audit D1)."""


def _terminated(signum: int, _frame: Any) -> None:
    raise Terminated(signal.Signals(signum).name)


class _Cli(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _terminated)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # one not handled by the command itself (e.g. during a build)
            err.print("cyclebench: interrupted", highlight=False)
            sys.exit(130)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cyclebench")
def main() -> None:
    """Measure low-level code in cycles per operation."""


@main.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-b", "--bench", "globs", multiple=True, metavar="GLOB",
              help="Benchmarks to run: group/name glob or group (repeatable). Default: all.")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]",
              help="Only these parameters (sizes, counts); with an exact -b name, any value.")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin the runner to (default: not CPU 0).")
@click.option("--repeat", type=click.IntRange(1, 100000), default=MeasureOptions.repeat, show_default=True,
              help="Rounds over the batch-size ladder (samples per batch size).")
@click.option("--min-time", type=click.FloatRange(min=0), default=MeasureOptions.min_time, show_default=True,
              help="Seconds of timed samples per benchmark (sizes the batches).")
@click.option("--max-time", type=click.FloatRange(min=0.001), default=MeasureOptions.max_time,
              show_default=True, help="Cap in seconds for slow operations (fewer rounds, at least 3).")
@click.option("--warmup", type=click.FloatRange(min=0), default=MeasureOptions.warmup, show_default=True,
              help="Seconds of untimed warm-up batches.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds before a benchmark is declared hung and killed (default from --max-time).")
@click.option("--seed", type=int, default=0, help="Seed of the ladder shuffling (0: random, recorded).")
@click.option("--list", "list_only", is_flag=True, help="List the benchmarks and exit.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the run as lossless JSON to this file.")
@click.option("--db", metavar="URL", help="Database URL (default: $CYCLEBENCH_DB or the user data dir).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no table.")
@click.option("--net", is_flag=True, help="Show costs net of the loop's own cost (loop/empty, measured first).")
@click.option("-e", "--events", "events_spec", default=None, metavar="EVENTS",
              help="Counters read around every batch, perf syntax: 'task-clock,{cycles,instructions}'.")
@click.option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing", show_default=True,
              help="callgrind: exact simulated counts per op (Ir, cache and branch misses) instead of timing.")
@click.option("--sim-iters", type=click.IntRange(1), default=10, show_default=True,
              help="callgrind: operations in the first collected batch (the second has twice as many).")
@click.option("--cache", "cache_spec", default=None, metavar="'I1=S,A,L;D1=...;LL=...'",
              help="callgrind cache geometry (bytes, ways, line); default I1=D1=32768,8,64 LL=8388608,16,64.")
@click.option("--fifo", "fifo", type=click.IntRange(1, 99), default=None, metavar="PRIO",
              help="Run the runner under SCHED_FIFO at PRIO (root/CAP_SYS_NICE), bounded by RLIMIT_RTTIME.")
@click.option("--max-rss", type=click.IntRange(1, 1 << 30), default=None, metavar="MiB",
              help="Kill a runner whose resident memory (with what it forked) passes this; its row says so.")
@click.option("--cc", default="cc", show_default=True, help="C compiler.")
@click.option("--cflags", default=" ".join(DEFAULT_CFLAGS), show_default=True,
              help="Flags for the benchmark sources (split like a shell would, passed as argv).")
@click.option("-I", "include_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="Include directory for the benchmark sources.")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]", help="Preprocessor definition.")
@click.option("--ldflags", default="", help="Extra link flags/libraries (e.g. '-ljemalloc').")
def run(files: tuple[Path, ...], globs: tuple[str, ...], params: tuple[str, ...], cpu: int | None, repeat: int,
        min_time: float, max_time: float, warmup: float, timeout: float | None, seed: int, list_only: bool,
        json_path: Path | None, db: str | None, quiet: bool, net: bool, events_spec: str | None, backend: str,
        sim_iters: int,
        cache_spec: str | None, fifo: int | None, max_rss: int | None, cc: str, cflags: str,
        include_dirs: tuple[Path, ...], defines: tuple[str, ...], ldflags: str) -> None:
    """Run the built-in suite, or the benchmarks in FILES (C files using cyclebench.h)."""
    try:
        split_cflags, split_ldflags = tuple(shlex.split(cflags)), tuple(shlex.split(ldflags))
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--cflags/--ldflags") from None
    sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
    spec = BuildSpec(sources=sources, cc=cc, cflags=split_cflags, include_dirs=tuple(d.resolve() for d in include_dirs),
                     defines=defines, ldflags=split_ldflags, werror=not files)
    opts = MeasureOptions(min_time=min_time, repeat=repeat, max_time=max_time, warmup=warmup, seed=seed)
    from cyclebench import counters
    from cyclebench.runner import callgrind

    try:
        groups = counters.parse_events(events_spec) if events_spec else None
    except counters.EventError as e:
        raise UserError(str(e)) from None
    try:
        cache = callgrind.parse_cache(cache_spec)
        if backend == "callgrind":
            callgrind.valgrind_argv(Path("x"), cache)  # fails early, in one line, without valgrind
    except callgrind.SimulationError as e:
        raise UserError(str(e)) from None
    cfg = RunConfig(spec=spec, globs=globs, params=_params(params), cpu=cpu, options=opts, timeout=timeout,
                    command=["cyclebench", *sys.argv[1:]], fifo=fifo, backend=backend, sim_iters=sim_iters,
                    cache=cache, events=groups, max_rss=max_rss << 20 if max_rss else None)
    try:
        with err.status("building", spinner="dots") if not quiet else _null():
            prepared = prepare(cfg)
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e) if isinstance(e, ToolMissing) else f"{e} (compiler output above)") from None
    except (FileNotFoundError, RunnerError, SelectionError) as e:
        raise UserError(str(e)) from None

    if list_only:
        _print_list(prepared.runner.list())
        return
    if groups:
        _check_events(prepared.runner, groups)

    store = _open_store(db)
    rows: list[dict[str, Any]] = []
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=err, transient=True, disable=quiet)
    run_id: int | None = None
    try:
        with progress:
            task = progress.add_task("measuring", total=len(prepared.items))

            def on_start(item: Item) -> None:
                progress.update(task, description=f"{item.label:<32.32}")

            def on_done(_item: Item, row: dict[str, Any]) -> None:
                rows.append(row)
                progress.advance(task)

            run_id, _ = execute(cfg, prepared, store, on_start, on_done)
    except KeyboardInterrupt:
        if not quiet and rows:
            console_report.print_results(rows, out, net=net)
        last = store.last_run_id()
        err.print(f"cyclebench: interrupted: {len(rows)} result(s) kept in run #{last} ({store.url})")
        sys.exit(130)
    except RunnerError as e:
        raise UserError(str(e)) from None
    except StoreError as e:
        raise UserError(f"{e} ({len(rows)} result(s) stored before it are kept)") from None

    if not quiet:
        title = f"run #{run_id} · CPU {prepared.cpu} · {prepared.binary.cc_version}"
        if backend == "callgrind":
            console_report.print_simulated(rows, out, title=title + " · simulated (callgrind)")
        else:
            console_report.print_results(rows, out, title=title, net=net)
            if groups:
                console_report.print_counters(rows, out)
        run_row = store.get_run(run_id) or {}
        if backend == "timing":
            err.print(console_report.calibration_line(run_row.get("calibration")), highlight=False)
        for line in console_report.environment_lines(rows):
            err.print(line, highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    bad = [r for r in rows if r.get("status") in FAILED_STATUSES]
    if not quiet:
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if bad:
        err.print(f"cyclebench: {len(bad)} benchmark(s) did not produce a valid result (see notes)", style="red")
        sys.exit(1)


def _check_events(runner: Any, groups: list[list[Any]]) -> None:
    """Open the requested groups once before measuring: a machine that cannot count them
    gets one line now, not a table of holes later."""
    errors = runner.probe(groups)
    failed = [(g, e) for g, e in zip(groups, errors, strict=True) if e]
    if not failed:
        return
    hw = [g for g, _ in failed if any(ev.is_hardware for ev in g)]
    names = ", ".join(ev.name for g, _ in failed for ev in g)
    if len(failed) == len(groups) and hw:
        raise UserError(f"hardware events are not available here ({names}: {failed[0][1]}; no PMU exposed, "
                        "as in most VMs): use --backend callgrind for simulated counts, or software events "
                        "(task-clock, context-switches, page-faults)")
    err.print(f"[yellow]cyclebench: not countable here, left out of the table: {names} ({failed[0][1]})[/]")


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


def _print_list(benches: list[Any]) -> None:
    table = Table(header_style="bold")
    for col in ("benchmark", "params", "requires", "verify", "source"):
        table.add_column(col)
    for b in benches:
        table.add_row(b.name, ",".join(map(str, b.params)) if b.params else "", b.require or "",
                      "yes" if b.has_verify else "", f"{Path(b.file).name}:{b.line}")
    out.print(table)


@main.command("compare")
@click.argument("targets", nargs=-1, required=True)
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]",
              help="Parameters to compare at (default: every parameter the benchmarks share).")
@click.option("-f", "--file", "files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="C file(s) holding the benchmarks (default: the built-in suite).")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin the runner to (default: not CPU 0).")
@click.option("--repeat", type=click.IntRange(6, 100000), default=60, show_default=True,
              help="Rounds (pairs) per comparison.")
@click.option("--min-time", type=click.FloatRange(min=0), default=0.2, show_default=True,
              help="Seconds of timed samples per benchmark.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True), default=0.002, show_default=True,
              help="Significance level (after Holm correction).")
@click.option("--processes", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Runner processes the rounds are spread over (order reversed in every other one; "
                   "the CI is bootstrapped over them).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("--cflags", default=" ".join(DEFAULT_CFLAGS), show_default=True, help="Flags for the C files.")
def compare_cmd(targets: tuple[str, ...], params: tuple[str, ...], files: tuple[Path, ...], cpu: int | None,
                repeat: int, min_time: float, alpha: float, processes: int, json_path: Path | None, db: str | None,
                cflags: str) -> None:
    """Compare benchmarks A B [C...] (paired, interleaved batch by batch, rounds spread over
    several processes; each against A), or two stored runs RUN_A RUN_B (unpaired), with a
    verdict only for real differences."""
    import json

    from cyclebench.commands import compare as comparing
    from cyclebench.runner import interleave

    store = _open_store(db)
    if all(t.isdigit() for t in targets):
        if len(targets) != 2:
            raise UserError("compare of stored runs takes exactly two run ids")
        try:
            rows = comparing.compare_runs(store, int(targets[0]), int(targets[1]), alpha)
        except comparing.CompareError as e:
            raise UserError(str(e)) from None
        title = f"run #{targets[1]} vs run #{targets[0]} (unpaired: Mann–Whitney, Holm)"
    else:
        if len(targets) < 2:
            raise UserError("compare needs at least two benchmarks (or two run ids)")
        sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
        spec = BuildSpec(sources=sources, cflags=tuple(shlex.split(cflags)), werror=not files)
        opts = MeasureOptions(min_time=min_time, repeat=repeat)
        plan = interleave.split(repeat, processes)
        if len(plan) > 1 and plan[0] < interleave.SAFE_ROUNDS:
            err.print(f"cyclebench: warning: {plan[0]} rounds per process; fewer than {interleave.SAFE_ROUNDS} make "
                      "the CI over processes too coarse (false positives seen): raise --repeat", highlight=False)
        cfg = RunConfig(spec=spec, globs=targets, cpu=cpu, options=opts, command=["cyclebench", *sys.argv[1:]])
        try:
            with err.status("building", spinner="dots"):
                prepared = prepare(cfg)
            with err.status("measuring (interleaved)", spinner="dots"):
                run_id, rows, measured = comparing.execute(cfg, prepared, store, targets, _params(params), alpha,
                                                      processes=processes)
        except BuildError as e:
            if e.output:
                err.print(e.output, markup=False, highlight=False)
            raise UserError(str(e)) from None
        except (RunnerError, SelectionError, StoreError) as e:
            raise UserError(str(e)) from None
        except KeyboardInterrupt:
            err.print("cyclebench: interrupted: measured results are kept in the database")
            sys.exit(130)
        procs = max(((r.get("extra") or {}).get("processes") or 1 for r in measured), default=1)
        title = (f"run #{run_id} · paired, interleaved, rounds over {procs} process{'es' if procs > 1 else ''} · "
                 f"CPU {prepared.cpu} · Wilcoxon signed-rank, Holm, CI bootstrapped over processes")
    console_report.print_comparisons(rows, out, title=title, alpha=alpha)
    if json_path is not None:
        json_path.write_text(json.dumps([r.to_dict() for r in rows], indent=1) + "\n")


@main.command("variants")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--flags", "flag_sets", multiple=True, metavar='"FLAGS"',
              help="One variant's compiler flags (repeatable; split like a shell would). Default: -O2.")
@click.option("--cc", "ccs", multiple=True, help="Compiler (repeatable: every compiler × every flag set).")
@click.option("--target", type=click.Choice(["aarch64"]), default=None,
              help="Cross-build for this target and run under qemu-user: correctness only (emulated), no times.")
@click.option("-b", "--bench", "globs", multiple=True, metavar="GLOB", help="Benchmarks to run (default: all).")
@click.option("-p", "--param", "params", multiple=True, metavar="N[,N...]", help="Only these parameters.")
@click.option("--disasm", is_flag=True, help="Show each variant's body disassembly, instruction classes and diff.")
@click.option("--callgrind", "sim", is_flag=True,
              help="Also count each variant under callgrind: exact Ir, I1/D1/LL misses, branch misses per op.")
@click.option("--rounds", type=click.IntRange(6, 1000), default=8, show_default=True,
              help="Invocations per variant and benchmark, alternated in shuffled order (pairs for the verdict).")
@click.option("--min-time", type=click.FloatRange(min=0), default=0.03, show_default=True,
              help="Seconds of timed samples per invocation.")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin to (default: not CPU 0).")
@click.option("-I", "include_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
@click.option("--db", metavar="URL", help="Database URL.")
def variants_cmd(files: tuple[Path, ...], flag_sets: tuple[str, ...], ccs: tuple[str, ...], target: str | None,
                 globs: tuple[str, ...], params: tuple[str, ...], disasm: bool, sim: bool, rounds: int,
                 min_time: float,
                 cpu: int | None, include_dirs: tuple[Path, ...], defines: tuple[str, ...], json_path: Path | None,
                 db: str | None) -> None:
    """Build FILES once per flag set / compiler / target and measure the builds side by side."""
    import json

    from cyclebench.commands import variants
    from cyclebench.commands.run import Prepared, begin
    from cyclebench.env import sysinfo

    try:
        sets = [tuple(shlex.split(f)) for f in flag_sets]
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--flags") from None
    cpu = cpu if cpu is not None else sysinfo.choose_cpu()
    store = _open_store(db)
    run_id: int | None = None
    stored: list[int] = []  # one entry per benchmark stored
    try:
        vs = variants.make_variants(ccs, sets, target)
        with err.status("building variants", spinner="dots"):
            built = variants.build_all(vs, [f.resolve() for f in files], [d.resolve() for d in include_dirs],
                                       defines, cpu)
        opts = MeasureOptions(min_time=min_time, repeat=12, warmup=0.005)
        spec = BuildSpec(sources=tuple(f.resolve() for f in files), cc=vs[0].cc, cflags=vs[0].cflags,
                         target=target)
        cfg = RunConfig(spec=spec, cpu=cpu, options=opts, command=["cyclebench", *sys.argv[1:]])
        rid, rate = begin(cfg, Prepared(built[0].binary, built[0].runner, [], cpu), store)
        run_id = rid

        def keep(r: variants.BenchResult) -> None:  # stored as each benchmark completes: Ctrl-C keeps it
            variants.store_results(store, rid, rate, [r], built)
            stored.append(1)

        with err.status("measuring", spinner="dots") as status, store.finishing(rid):
            results = variants.measure(built, globs, _params(params), rounds, opts,
                                       on_step=lambda s: status.update(f"measuring {s}"), simulate_counts=sim,
                                       on_result=keep)
        data = variants.summary(built, results, disasm)
        store.update_run(rid, summary={"variants": data})
        store.finish_run(rid, "complete")
    except (BuildError, RunnerError, SelectionError, StoreError, variants.VariantError) as e:
        if isinstance(e, BuildError) and e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        if run_id is None:
            err.print("cyclebench: interrupted")
        else:
            err.print(f"cyclebench: interrupted: {len(stored)} benchmark(s) measured on every variant are kept in "
                      f"run #{run_id} ({store.url})")
        sys.exit(130)
    console_report.print_variants(data, out, run_id=run_id, disasm=disasm)
    if json_path is not None:
        json_path.write_text(json.dumps(data, indent=1) + "\n")
    if any(v["status"] != "ok" for d in data for v in d["variants"] if v["status"] != "skipped"):
        sys.exit(1)


@main.group("counters")
def counters_group() -> None:
    """Counter events: which ones this machine can count, and trying them all on a benchmark."""


def _suite_runner(cpu: int | None = None) -> Any:
    from cyclebench.env import sysinfo
    from cyclebench.runner import Runner

    try:
        binary = build_binary(BuildSpec(sources=tuple(suite_sources()), werror=True))
    except BuildError as e:
        raise UserError(str(e)) from None
    return Runner(binary.path, cpu if cpu is not None else sysinfo.choose_cpu())


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
    table = Table(header_style="bold", title="counter events" + ("" if pfm4.available() else
                                                                 " (libpfm4 not installed: generic names only)"))
    for col in ("source", "event", "encoding", "countable here"):
        table.add_column(col)
    shown = 0
    for (src, ev), e in zip(cat, errors, strict=True):
        if e and not show_all and not src.startswith("generic"):
            continue
        shown += 1
        table.add_row(src, ev.name, ev.encoding, "[green]yes[/]" if not e else f"[red]no[/] ({e})")
    out.print(table)
    ok = sum(e is None for e in errors)
    err.print(f"{ok} of {len(cat)} events countable here; {len(cat) - shown} PMU events not countable not shown "
              "(--all shows them)" if not show_all else f"{ok} of {len(cat)} events countable here")


@counters_group.command("sweep")
@click.argument("bench")
@click.option("-p", "--param", type=int, default=None, help="Parameter of the benchmark.")
@click.option("--group-size", type=click.IntRange(1, 8), default=1, show_default=True,
              help="Events read together per run (fewer: no multiplexing).")
@click.option("--min-per-op", type=float, default=0.01, show_default=True,
              help="Hide events below this count per op.")
def counters_sweep(bench: str, param: int | None, group_size: int, min_per_op: float) -> None:
    """Run BENCH once per group of countable events, over every event here, and list the
    events with a non-negligible count per op, largest first (seed 004's "try all counters")."""
    from cyclebench import counters
    from cyclebench.commands.run import counter_fields

    runner = _suite_runner()
    names = {b.name: b for b in runner.list()}
    if bench not in names:
        raise UserError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
    if names[bench].params and param is None:
        param = names[bench].params[0]
    cat = [e for _, e in counters.catalogue()]
    errors = counters.probe_all(runner, cat)
    countable = [e for e, x in zip(cat, errors, strict=True) if x is None]
    opts = MeasureOptions(min_time=0.02, repeat=8, warmup=0.005)
    found: list[tuple[str, float]] = []
    with err.status("sweeping", spinner="dots") as status:
        for i in range(0, len(countable), group_size):
            group = countable[i : i + group_size]
            status.update(f"sweeping {i + len(group)}/{len(countable)} events")
            o = runner.run(bench, param, opts, opts.timeout(), [group])
            if o.result is None:
                raise UserError(f"{bench}: {o.status}: {o.reason}")
            import numpy as np

            n = np.asarray(o.result["n"], dtype=float)
            keep = np.ones(len(n), dtype=bool)
            cf = counter_fields(o.result, [group], n, o.result.get("ladder"), keep, 0)
            found += [(k, v["per_op"]) for k, v in cf["events"].items() if "per_op" in v]
    table = Table(title=f"{bench}{'' if param is None else f' [{param}]'}: events per op "
                  f"({len(countable)} of {len(cat)} countable here)", header_style="bold")
    table.add_column("event")
    table.add_column("per op", justify="right")
    for name, v in sorted(found, key=lambda x: -abs(x[1])):
        if abs(v) >= min_per_op:
            table.add_row(name, console_report.fmt(v))
    out.print(table)


@main.command("annotate")
@click.argument("bench")
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-p", "--param", type=int, default=None, help="Parameter of the benchmark.")
@click.option("--seconds", type=click.FloatRange(0.05, 60), default=1.0, show_default=True,
              help="About how long to sample.")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin to (default: not CPU 0).")
def annotate_cmd(bench: str, files: tuple[Path, ...], param: int | None, seconds: float, cpu: int | None) -> None:
    """Hot symbols and the benchmark body's hot instructions (perf record -e cpu-clock + perf annotate)."""
    from cyclebench.env import sysinfo
    from cyclebench.runner import Runner
    from cyclebench.runner import perf_record as annotate

    sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
    try:
        binary = build_binary(BuildSpec(sources=sources, werror=not files))
        runner = Runner(binary.path)
        names = {b.name: b for b in runner.list()}
        if bench not in names:
            raise UserError(f"unknown benchmark '{bench}' (see cyclebench run --list)")
        if names[bench].params and param is None:
            param = names[bench].params[0]
        cpu = cpu if cpu is not None else sysinfo.choose_cpu()
        with err.status(f"sampling {bench} for ~{seconds:g} s", spinner="dots"):
            a = annotate.annotate(binary.path, bench, param, cpu, seconds)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    label = bench + ("" if param is None else f" [{param}]")
    out.rule(f"{label}: hottest symbols ({a.samples} cpu-clock samples; kernel included)")
    out.print(a.top, markup=False, highlight=False)
    out.rule(f"{label}: body, share of its samples per instruction (skid: charged to the next one)")
    out.print(a.body, markup=False, highlight=False)


@main.group("gen")
def gen_group() -> None:
    """Generate benchmark sources."""


@gen_group.command("icache")
@click.option("--funcs", type=click.IntRange(2, 100000), default=1024, show_default=True,
              help="Number of small functions.")
@click.option("--size", type=click.IntRange(1, 1000), default=8, show_default=True,
              help="Operations per function (about that many instructions).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the call order.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
def gen_icache(funcs: int, size: int, seed: int, output: Path) -> None:
    """The I-cache workload of seed 001: many small functions called in a fixed shuffled order.

    Then: cyclebench variants FILE --backend callgrind --flags "-O2 -falign-functions=1" ...
    """
    from cyclebench.build import icache

    output.write_text(icache.generate(funcs, size, seed))
    err.print(f"wrote {output} (icache/calls{funcs}x{size})")


@main.command("stat", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
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
    from cyclebench.commands import stat as statcmd
    from cyclebench.runner import callgrind

    try:
        cache = callgrind.parse_cache(cache_spec)
        st = statcmd.Stat(command, events=events, pre=pre, backend=backend, cache=cache)
    except (statcmd.StatError, callgrind.SimulationError) as e:
        raise UserError(str(e)) from None
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    argv = ["cyclebench", "stat", "-r", str(repeat), "--backend", backend, *(["-e", events] if events else []),
            *(["--pre", pre] if pre else []), "--", *command]
    store = _open_store(db)
    reps: list[dict[str, Any]] = []
    run_id: int | None = None
    status, failure = "complete", None
    try:
        for k in range(repeat):
            reps.append(st.run_one(k))
            if run_id is None:
                run_id = statcmd.begin_run(store, st, argv)
            statcmd.record_repetition(store, run_id, st, reps)
    except KeyboardInterrupt:
        status = "interrupted"
    except statcmd.StatError as e:
        status, failure = "failed", e
    except StoreError as e:
        raise UserError(f"{e} ({len(reps)} repetition(s) measured)") from None
    metrics = st.summarize(reps) if reps else []
    if run_id is not None:
        try:
            statcmd.store_results(store, run_id, st, reps, metrics, status)
        except StoreError as e:
            raise UserError(str(e)) from None
    if reps and not quiet:
        what = "simulated (callgrind)" if backend == "callgrind" else "counters enabled at exec"
        out.print(statcmd.stat_table(metrics, title=f"stat #{run_id} · '{shlex.join(command)}' · {len(reps)} "
                                     f"run{'s' if len(reps) > 1 else ''} · {what}"))
        for line in statcmd.hints(st, metrics):
            err.print(line, highlight=False)
    text, all_zero = statcmd.exit_summary(reps) if reps else ("", True)
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


@main.command("check")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to check (default: the one `run` would pin to).")
@click.option("--fix", is_flag=True, help="Apply the safe, reversible fixes (root only); prints how to revert.")
@click.option("--strict", is_flag=True, help="Exit 1 when anything is WARN.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def check_cmd(cpu: int | None, fix: bool, strict: bool, json_path: Path | None) -> None:
    """What spoils measurements on this machine, and the command that fixes each (like pyperf system show)."""
    import json

    from cyclebench.env import check, sysinfo

    cpu = cpu if cpu is not None else sysinfo.choose_cpu()
    findings = check.run_checks(cpu)
    check_report.render(findings, out)
    if fix:
        try:
            applied = check.apply_fixes(findings)
        except PermissionError as e:
            raise UserError(str(e)) from None
        for finding, error in applied:
            if error:
                err.print(f"[red]{finding.name}: not fixed: {error}[/]", highlight=False)
            else:
                undo = "; ".join(f"echo {v} > {p}" for p, v in finding.revert_writes)
                err.print(f"{finding.name}: fixed (revert: {undo})", highlight=False)
        if not applied:
            err.print("nothing that --fix may change needs changing", highlight=False)
    if json_path is not None:
        json_path.write_text(json.dumps([f.to_dict() for f in findings], indent=1) + "\n")
    sys.exit(check.summary_exit_code(findings, strict=strict))


@main.command("selftest")
@click.option("--quick", is_flag=True, help="Fewer rounds (what the test suite runs).")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to pin to (default: not CPU 0).")
@click.option("--aa-reps", type=click.IntRange(min=20), default=None,
              help="Repetitions of the A/A test (default 40; 20 with --quick).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def selftest_cmd(quick: bool, cpu: int | None, aa_reps: int | None, json_path: Path | None) -> None:
    """Check cyclebench's own precision here with known effects (A/A, +1 cycle, linearity, timer)."""
    import json

    from cyclebench.commands import selftest

    try:
        with err.status("self-test", spinner="dots"):
            report = selftest.run_selftest(quick=quick, cpu=cpu, aa_reps=aa_reps)
    except (BuildError, RunnerError, RuntimeError) as e:
        raise UserError(str(e)) from None
    table = Table(title=f"cyclebench selftest · CPU {report.cpu} · {report.seconds:.1f} s", header_style="bold")
    for col in ("check", "expected", "measured", "result"):
        table.add_column(col)
    for c in report.checks:
        verdict = "[green]PASS[/]" if c.passed else "[dim]n/a[/]" if c.passed is None else "[red]FAIL[/]"
        table.add_row(c.name, c.expected, c.measured + (f" ({c.detail})" if c.detail else ""), verdict)
    out.print(table)
    if json_path is not None:
        json_path.write_text(json.dumps(selftest.to_dict(report), indent=1) + "\n")
    if not report.passed:
        err.print("cyclebench: selftest FAILED: numbers from this machine are not to be trusted as they are",
                  style="red")
        sys.exit(1)


@main.command("scale")
@click.argument("benches", nargs=-1, required=True)
@click.option("-f", "--file", "files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="C file(s) holding the benchmarks (default: the built-in suite).")
@click.option("--tasks", "tasks_text", metavar="1..N|1,2,4",
              help="Task counts to sweep (N alone: 1..N; 1 is always added). Default: powers of two up to the "
                   "CPU count, the CPU count and one more.")
@click.option("--mode", type=click.Choice(["threads", "processes", "both"]), default="threads", show_default=True)
@click.option("--duration", type=click.FloatRange(min=0.01), default=2.0, show_default=True,
              help="Seconds sampled per task count, after the warm-ups (split over the passes).")
@click.option("--passes", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Alternating passes over the task counts (1..N, N..1, ...); speed-up = median of the passes' "
                   "own ratios, so clock drift between task counts cancels.")
@click.option("--interval", type=click.FloatRange(min=0.001), default=0.1, show_default=True,
              help="Seconds between two reads of the counters.")
@click.option("--warmup", type=click.FloatRange(min=0), default=0.5, show_default=True,
              help="Seconds of intervals dropped at the start.")
@click.option("--cpus", "cpus_text", metavar="LIST",
              help="CPUs for the tasks, in order (task i → i-th, wrapping). Default: distinct cores first, then "
                   "SMT siblings, CPU 0's core last.")
@click.option("--retries", type=click.IntRange(0, 20), default=2, show_default=True,
              help="Measure a task count again while other programs kept its tasks waiting for their CPUs.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write throughput and efficiency vs tasks to FILE.png|svg|pdf.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the run as lossless JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write one CSV row per benchmark × mode × task count.")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("--cflags", default=" ".join(DEFAULT_CFLAGS), show_default=True, help="Flags for the C files.")
def scale_cmd(benches: tuple[str, ...], files: tuple[Path, ...], tasks_text: str | None, mode: str,
              duration: float, passes: int, interval: float, warmup: float, cpus_text: str | None, retries: int,
              plot_path: Path | None, json_path: Path | None, csv_path: Path | None, db: str | None,
              cflags: str) -> None:
    """Throughput of BENCH (globs; several allowed) run by 1..N tasks at once: speed-up,
    efficiency, per-task fairness (will-it-scale done right)."""
    import csv

    from cyclebench.commands import scale
    from cyclebench.report import plots

    if plot_path is not None and plot_path.suffix.lower() not in plots.FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(plots.FORMATS)}")
    try:
        cpus = scale.parse_cpus(cpus_text) if cpus_text else None
        modes = scale.parse_modes(mode)
        ncpus = len(cpus) if cpus else len(os.sched_getaffinity(0))
        tasks = scale.parse_tasks(tasks_text) if tasks_text else scale.default_tasks(ncpus)
        sources = tuple(f.resolve() for f in files) if files else tuple(suite_sources())
        spec = BuildSpec(sources=sources, cflags=tuple(shlex.split(cflags)), werror=not files)
    except (scale.ScaleError, ValueError) as e:
        raise UserError(str(e)) from None
    cfg = scale.ScaleConfig(spec=spec, globs=benches, tasks=tasks, modes=modes, duration=duration,
                            interval=interval, warmup=warmup, cpus=cpus, retries=retries, passes=passes,
                            command=["cyclebench", *sys.argv[1:]])
    store = _open_store(db)
    try:
        with err.status("building", spinner="dots"):
            prepared = scale.prepare(cfg)
        with err.status("scaling", spinner="dots") as status:
            run_id, series = scale.execute(cfg, prepared, store, lambda label: status.update(f"scaling: {label}"))
    except BuildError as e:
        if e.output:
            err.print(e.output, markup=False, highlight=False)
        raise UserError(str(e)) from None
    except (FileNotFoundError, RunnerError, SelectionError, StoreError) as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        err.print(f"cyclebench: interrupted: task counts measured so far are kept ({store.url})")
        sys.exit(130)
    used = len(set(prepared.cpus))
    for s in series:
        out.print(plots.scale_table(s))
    chart = plots.text_chart(series)
    if chart:
        out.print("\n".join(chart), highlight=False, markup=False)
    pct = scale.sampler_cpu_pct(series)
    err.print(f"run #{run_id} · tasks on CPUs {','.join(map(str, prepared.cpus))} ({used} CPUs) · sampler used "
              f"{'-' if pct is None else f'{pct:.3f}'}% of one CPU at most · stored in {store.url}", highlight=False)
    if plot_path is not None:
        w, h = plots.plot_scaling(series, plot_path, ncpus=used, title=f"cyclebench scale · run #{run_id}")
        err.print(f"plot written to {plot_path} ({w}×{h} px)", highlight=False)
    if json_path is not None:
        json_report.dump(json_report.run_to_dict(store, run_id), json_path)
    if csv_path is not None:
        rows = scale.csv_rows(series)
        with csv_path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["bench"])
            writer.writeheader()
            writer.writerows(rows)
    bad = [(s.label, p) for s in series for p in s.points if p.get("status") in FAILED_STATUSES]
    for label, p in bad:
        err.print(f"cyclebench: {label} with {p['tasks']} task(s): {p.get('reason')}", style="red", highlight=False)
    if bad:
        sys.exit(1)


@main.command("export")
@click.argument("run_id", type=int, required=False)
@click.option("--json", "json_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output file.")
@click.option("--db", metavar="URL", help="Database URL.")
def export_cmd(run_id: int | None, json_path: Path, db: str | None) -> None:
    """Write a stored run (default: the last) as lossless JSON."""
    store = _open_store(db)
    rid = run_id if run_id is not None else store.last_run_id()
    if rid is None:
        raise UserError(f"no runs in {store.url}")
    try:
        json_report.dump(json_report.run_to_dict(store, rid), json_path)
    except json_report.ExportError as e:
        raise UserError(str(e)) from None
    err.print(f"run #{rid} written to {json_path}")


@main.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--db", metavar="URL", help="Database URL.")
def import_cmd(path: Path, db: str | None) -> None:
    """Load a run exported with --json into the database."""
    store = _open_store(db)
    try:
        rid = json_report.import_run(store, json_report.load(path))
    except json_report.ExportError as e:
        raise UserError(str(e)) from None
    err.print(f"imported as run #{rid}")


@main.command("show")
@click.argument("run_id", type=int, required=False)
@click.option("--db", metavar="URL", help="Database URL.")
def show_cmd(run_id: int | None, db: str | None) -> None:
    """Print the table of a stored run (default: the last)."""
    store = _open_store(db)
    rid = run_id if run_id is not None else store.last_run_id()
    run = store.get_run(rid) if rid is not None else None
    if run is None:
        raise UserError(f"no run {'#' + str(rid) if rid is not None else ''} in {store.url}".replace("  ", " "))
    from cyclebench.commands import scale
    from cyclebench.report import plots

    rows = store.results(rid)
    series = scale.series_from_rows(rows)
    others = [r for r in rows if not scale.is_scale_row(r)]
    if others or not series:
        console_report.print_results(others, out, title=f"run #{rid} · {run['status']} · {run['started_at']}")
    for ser in series:  # a scaling run: its own table and chart, as `scale` printed them
        out.print(plots.scale_table(ser))
    chart = plots.text_chart(series)
    if chart:
        out.print("\n".join(chart), highlight=False, markup=False)
    if run.get("calibration"):
        err.print(console_report.calibration_line(run.get("calibration")), highlight=False)


@main.command("runs")
@click.option("--db", metavar="URL", help="Database URL.")
@click.option("-n", "limit", type=int, default=20, show_default=True)
def runs_cmd(db: str | None, limit: int) -> None:
    """List stored runs, newest first."""
    store = _open_store(db)
    table = Table(header_style="bold")
    for col in ("run", "started", "status", "host", "cpu model", "CPU", "command"):
        table.add_column(col)
    for r in store.list_runs(limit):
        table.add_row(str(r["id"]), r["started_at"], r["status"], r["host"] or "", r["cpu_model"] or "",
                      str(r["cpu"]), " ".join(r["command"] or []))
    out.print(table)


if __name__ == "__main__":
    main()
