"""`cyclebench profile`: a gprof-style flat profile with exact call counts and the probe's own cost
subtracted (the design: experiments/profile.py; the method: docs/method.md §10).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import click

from cyclebench.build import BuildError
from cyclebench.env import sysinfo
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.experiments.profile import (
    probe_line,
    scratch_dir,
    simulated_rows,
    store_profile,
    target_argv,
    timed_rows,
    title,
)
from cyclebench.report.profile import profile_table
from cyclebench.runner import RunnerError
from cyclebench.runner import profile as tracer
from cyclebench.store import StoreError
from cyclebench.ui.common import UserError, err, open_store, out, write_text
from cyclebench.ui.options import (
    FloatRange,
    build_options,
    db_option,
    expand_files,
    json_option,
    label_option,
    not_a_file,
    parse_labels,
    runner_options,
    take_c_files,
    wide_option,
)
from cyclebench.ui.progress import Notes
from cyclebench.ui.record import argument, group, option, takes


@dataclass(frozen=True, kw_only=True)
class ProfileArgs:
    """`profile`'s options (--help gives each one's meaning)."""

    args: tuple[str, ...] = argument(nargs=-1, type=click.UNPROCESSED, metavar="[FILE.c...] BENCH | -- CMD [ARGS]")
    backend: str = option("--backend", type=click.Choice(["timing", "callgrind"]), default="timing",
                          show_default=True, help="timing: per-call time with the probe's cost subtracted, "
                          "by cyclebench's own probe in the program's process (a -finstrument-functions build) or "
                          "uftrace (a -pg build); callgrind: exact calls and simulated Ir of any build.")
    timeout: float = option("--timeout", type=FloatRange(1, 86400), default=600, show_default=True,
                            help="Seconds the profiled program may run.")
    limit: int = option("--limit", type=click.IntRange(1), default=30, show_default=True, help="Functions shown.")
    json_path: Path | None = group(json_option)
    db: str | None = group(db_option)
    label_args: tuple[str, ...] = group(label_option)
    wide: bool = group(wide_option)
    pin: RunnerOptions = group(runner_options)
    build: BuildOptions = group(build_options())


@click.command("profile")
@takes(ProfileArgs)
def profile_cmd(a: ProfileArgs) -> None:
    """A flat profile (gprof's): exact calls per function, self and total per call with the
    probe's own cost — measured here — subtracted, % of the time. BENCH profiles a benchmark's
    body and callees; -- CMD a whole program. Stored as a run (`show RUN` prints it again)."""
    args, build, pin = a.args, a.build, a.pin
    labels = parse_labels(a.label_args)
    # BENCH is group/name and names no file; anything else is the command (click drops the "--")
    def bench_like(x: str) -> bool:
        return re.fullmatch(r"[\w.-]+/[\w.-]+", x) is not None and not Path(x).exists()

    c_files, rest = take_c_files(args)
    if c_files and len(rest) == 1 and bench_like(rest[0]):  # FILE.c... BENCH: the files as -f takes them
        build, args = replace(build, files=(*expand_files(c_files), *build.files)), tuple(rest)
    is_bench = bool(args) and bench_like(args[0])
    bench, command = (args[0], args[1:]) if is_bench else (None, args)
    if bench is not None and command:
        raise click.UsageError("give BENCH, or -- CMD [ARGS]: not both")
    if bench is None and not command:
        raise click.UsageError("nothing to profile: cyclebench profile BENCH, or cyclebench profile -- CMD [ARGS]")
    pin = replace(pin, cpu=pin.cpu if pin.cpu is not None else sysinfo.choose_cpu())
    simulated = a.backend == "callgrind"
    # named with this pid: a SIGKILLed profile's traces are removed by the next one (scratch_dir)
    work = scratch_dir()
    if bench is not None:
        not_a_file(bench, "profile")
    try:
        argv, name = target_argv(bench, command, build, pin, simulated)
        if simulated:
            rows = simulated_rows(argv, work, a.timeout)
            unit, how, probe = "Ir", "simulated (callgrind): exact calls, instructions per call", None
        else:
            rows, unit, how, probe = timed_rows(argv, work, a.timeout, pin, ir=bench is None, progress=Notes())
    except (BuildError, RunnerError, tracer.ProfileError) as e:
        raise UserError(str(e)) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    store = open_store(a.db)
    try:
        run_id = store_profile(store, ["cyclebench", *sys.argv[1:]], pin.cpu, build.files if bench else (), labels,
                               name, a.backend, unit, how, probe, rows, a.limit)
    except StoreError as e:
        raise UserError(str(e)) from None
    out.print(profile_table(rows, unit, title(name, how), simulated, a.wide, a.limit))
    if probe is not None:
        err.print(probe_line(probe.to_dict(), unit), highlight=False)
    err.print(f"run #{run_id}: {len(rows)} function(s) stored in {store.url}", highlight=False)
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"format": "cyclebench-profile", "target": name, "backend": a.backend,
                                          "unit": unit, "clock": how, "probe": probe.to_dict() if probe else None,
                                          "functions": [r.to_json() for r in rows]}, indent=1) + "\n")
