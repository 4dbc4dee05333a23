"""will-it-scale test cases as an experiment (docs/will-it-scale.md): which ``-f`` files are test
cases (build.wis.recognise), their runners — one per mode, with ``-DTHREADS`` for threads, each
cached like any runner — and the cost of one operation at one task (stats.scaling.op_cost),
since a test case cannot be driven in batches. `scale` sweeps them as it sweeps any benchmark
(experiments/scale.py)."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cyclebench.build import Binary, BuildError, BuildSpec, ToolMissing, build, kill_compilers
from cyclebench.build import wis as wis_build
from cyclebench.build.wis import TestCase
from cyclebench.env import sysinfo
from cyclebench.experiments.session import open_run
from cyclebench.model import DISTURBED, ERROR, OK, Result, ScaleRun
from cyclebench.runner import Runner
from cyclebench.runner.plan import SelectionError
from cyclebench.runner.scaling import ScaleOptions, run_one
from cyclebench.stats import scaling

BUILD_JOBS = max(1, min(4, os.cpu_count() or 1))  # test cases built at once
RUN_MODE = "processes"  # `run` measures one task in processes mode (will-it-scale's own default build)
RUN_INTERVAL = 0.05  # seconds: `run`'s intervals (each one a cost sample)
RUN_MIN_DURATION = 0.5  # seconds sampled per runner process, at least
RUN_MIN_WARMUP = 0.2


def split_files(files: Sequence[Path]) -> tuple[list[TestCase], list[Path]]:
    """The will-it-scale test cases among ``files`` and the other (cyclebench) files, in order.
    Raises SelectionError, in one line, when two test cases would have the same name
    (wis/<file stem>), or when a C file is neither kind, naming it and why (build.wis.diagnose:
    a testcase whose counter is not 64-bit unsigned, a description without a testcase; or no CB_ macro and
    no cyclebench file beside it to be a helper of): it would otherwise be linked into the
    suite's runner and something else measured in its place."""
    cases, others = [], []
    texts: dict[Path, str] = {}
    for f in files:
        case = wis_build.recognise(f)
        if case is not None:
            cases.append(case)
            continue
        others.append(f)
        if f.suffix == ".c" and (text := wis_build.read_source(f)) is not None:
            texts[f] = text
    helped = any(wis_build.is_cyclebench(t) for t in texts.values())
    bad = [(f, why) for f, t in texts.items()
           if (why := wis_build.diagnose(t) or (None if helped else
               "neither a will-it-scale test case (testcase() and char *testcase_description) nor a cyclebench "
               "benchmark file (#include <cyclebench.h>, CB_BENCH: docs/c-api.md)"))]
    if bad:
        more = f" (also {', '.join(str(f) for f, _ in bad[1:])})" if len(bad) > 1 else ""
        raise SelectionError(f"{bad[0][0]}: {bad[0][1]}{more}")
    seen: dict[str, Path] = {}
    for c in cases:
        if c.name in seen:
            raise SelectionError(f"two will-it-scale test cases named {c.name}: {seen[c.name]} and {c.path} "
                                 "(the name is the file's stem)")
        seen[c.name] = c.path
    return cases, others


def matches(name: str, globs: Sequence[str]) -> bool:
    """Whether benchmark ``name`` is selected by ``globs`` (none: all), as runner.plan selects."""
    return not globs or any(fnmatch.fnmatchcase(name, p) for g in globs for p in ([g, f"{g}/*"] if "/" not in g
                                                                                  else [g]))


@dataclass(frozen=True)
class Built:
    """The runners of test cases: (name, mode) → Binary; ``broken``: (name, mode) → why it has none."""

    binaries: dict[tuple[str, str], Binary] = field(default_factory=dict)
    broken: dict[tuple[str, str], str] = field(default_factory=dict)


def first_error(e: BuildError) -> str:
    """The compiler's first error line, or the linker's first undefined symbol (ld names it on
    its own line, before collect2's "error: ld returned 1"), else the first line, else the
    summary, for a row."""
    lines = [ln.strip() for ln in (e.output or "").splitlines() if ln.strip()]
    hit = next((ln for ln in lines if "error" in ln or "undefined reference" in ln), lines[0] if lines else str(e))
    return hit[:300]


def build_cases(base: BuildSpec, cases: Sequence[TestCase], modes: Sequence[str],
                on_build: Callable[[str], None] = lambda _l: None) -> Built:
    """Build each test case once per mode (build.wis.spec: -DTHREADS for threads) from the
    user's build options ``base``, each on its own: a test case that does not compile or link
    in a mode is ``broken`` there with the compiler's first error, and the other builds go on
    (an ``#ifdef THREADS`` may break one mode only); ToolMissing (no compiler) propagates."""
    binaries: dict[tuple[str, str], Binary] = {}
    broken: dict[tuple[str, str], str] = {}
    todo = [(case, mode) for case in cases for mode in modes]
    # Several at once: with the engine's objects cached a build is a few short compiler processes
    # one after the other (will-it-scale's 120 runners: 40 s at 4 at a load of 4.5 on 2 CPUs, 48 s one by one)
    pool = ThreadPoolExecutor(max_workers=BUILD_JOBS)
    try:
        futures = [pool.submit(build, wis_build.spec(base, case, mode)) for case, mode in todo]
        for (case, mode), fut in zip(todo, futures, strict=True):
            on_build(f"{case.name} ({mode})")
            try:
                binaries[(case.name, mode)] = fut.result()
            except ToolMissing:
                raise
            except BuildError as e:
                flags = "-DTHREADS" if mode == "threads" else "without -DTHREADS"
                what = "does not link" if e.file is None else "does not compile"  # file: the source at fault
                broken[(case.name, mode)] = f"{what} ({mode}, {flags}): {first_error(e)}"
    except BaseException:  # Ctrl-C, SIGTERM, no compiler: no build outlives the command
        pool.shutdown(wait=False, cancel_futures=True)
        kill_compilers()
        raise
    pool.shutdown()
    return Built(binaries, broken)


# ----------------------------------------------------------------------------- run -f FILE.c


@dataclass(frozen=True, kw_only=True)
class OpCostConfig:
    """`run` on test cases: what to measure and where (see run_cases)."""

    cases: Sequence[TestCase]
    spec: BuildSpec
    cpu: int | None = None  # None: sysinfo.choose_cpu()
    processes: int = 3  # runner processes, each sampling ``duration`` seconds
    duration: float = RUN_MIN_DURATION
    warmup: float = RUN_MIN_WARMUP
    command: Sequence[str] = ()
    labels: dict[str, str] = field(default_factory=dict)


def measure_cases(cfg: OpCostConfig, binaries: dict[str, Binary], store: Any,
                  on_step: Callable[[str], None] = lambda _l: None,
                  broken: dict[str, str] | None = None) -> tuple[int, list[Result]]:
    """Open a run and store one row per test case: its cost per operation at one task, from
    ``cfg.processes`` runner processes of 1 pinned task each (a process that does not end OK
    ends the test case's measurement, and gives its row the status); a test case in
    ``broken`` (name → why it has no runner) gets an error row with the reason. Returns
    (run id, rows)."""
    cpu = cfg.cpu if cfg.cpu is not None else sysinfo.choose_cpu()
    broken = broken or {}
    first = next(binaries[c.name] for c in cfg.cases if c.name in binaries)
    run_id, rate = open_run(store, cfg.command, cpu, [c.path for c in cfg.cases], first, Runner(first.path, cpu),
                            env_extra={"wis": {"mode": RUN_MODE, "processes": cfg.processes,
                                               "duration": cfg.duration, "interval": RUN_INTERVAL,
                                               "warmup": cfg.warmup}})
    if cfg.labels:
        store.update_run(run_id, labels=cfg.labels)
    opts = ScaleOptions(duration=cfg.duration, interval=RUN_INTERVAL, warmup=cfg.warmup)
    rows: list[Result] = []
    with store.finishing(run_id):
        for case in cfg.cases:
            runs = [ScaleRun(case.name, None, RUN_MODE, 1, status=ERROR, reason=broken[case.name])] \
                if case.name in broken else []
            for p in range(cfg.processes if not runs else 0):
                on_step(f"{case.name} (process {p + 1}/{cfg.processes})")
                runs.append(run_one(binaries[case.name].path, case.name, None, RUN_MODE, 1, opts, [cpu]))
                if runs[-1].status not in (OK, DISTURBED):  # a starved process: the others still measure
                    break
            fields = scaling.op_cost(runs, rate)
            cost = fields.wis or {}
            fields = replace(fields, wis={**cost, "file": str(case.path),
                                          "description": cost.get("description") or case.description})
            rows.append(store.record(run_id, fields))
    store.finish_run(run_id, "complete")
    return run_id, rows
