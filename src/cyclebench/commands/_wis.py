"""will-it-scale test cases in the commands (docs/will-it-scale.md).

Which ``-f`` files are test cases (build.wis.recognise), their runners — one per mode, with
``-DTHREADS`` for threads, each cached like any runner — and `run -f FILE.c` on test cases:
the cost of one operation at one task (stats.scaling.op_cost), since a test case cannot be
driven in batches. `scale` runs them through its own sweep (commands/scale.py).
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cyclebench.build import Binary, BuildError, BuildSpec, ToolMissing, build
from cyclebench.build import wis as wis_build
from cyclebench.build.wis import TestCase
from cyclebench.commands._common import FAILED_STATUSES, UserError, err, null_context, open_store, out
from cyclebench.commands._options import BuildOptions, RunnerOptions
from cyclebench.commands._progress import Steps
from cyclebench.env import sysinfo
from cyclebench.experiments.session import open_run
from cyclebench.model import ERROR, OK, ScaleRun
from cyclebench.report import console as console_report
from cyclebench.report.text import safe_text
from cyclebench.runner import Runner, RunnerError
from cyclebench.runner.plan import SelectionError
from cyclebench.runner.scaling import ScaleOptions, run_one
from cyclebench.stats import scaling
from cyclebench.store import StoreError
from cyclebench.store import runfile as json_report

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


@dataclass
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
    built = Built()
    for case in cases:
        for mode in modes:
            on_build(f"{case.name} ({mode})")
            try:
                built.binaries[(case.name, mode)] = build(wis_build.spec(base, case, mode))
            except ToolMissing:
                raise
            except BuildError as e:
                flags = "-DTHREADS" if mode == "threads" else "without -DTHREADS"
                what = "does not link" if e.file is None else "does not compile"  # file: the source at fault
                built.broken[(case.name, mode)] = f"{what} ({mode}, {flags}): {first_error(e)}"
    return built


# ----------------------------------------------------------------------------- run -f FILE.c


@dataclass(kw_only=True)
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
                  broken: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]]]:
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
    rows: list[dict[str, Any]] = []
    with store.finishing(run_id):
        for case in cfg.cases:
            runs = [ScaleRun(case.name, None, RUN_MODE, 1, status=ERROR, reason=broken[case.name])] \
                if case.name in broken else []
            for p in range(cfg.processes if not runs else 0):
                on_step(f"{case.name} (process {p + 1}/{cfg.processes})")
                runs.append(run_one(binaries[case.name].path, case.name, None, RUN_MODE, 1, opts, [cpu]))
                if runs[-1].status != OK:
                    break
            fields = scaling.op_cost(runs, rate)
            fields["extra"]["file"] = str(case.path)
            if not fields["extra"].get("description"):
                fields["extra"]["description"] = case.description
            fields["id"] = store.add_result(run_id, dict(fields))
            rows.append(dict(fields))
    store.finish_run(run_id, "complete")
    return run_id, rows


def _print_list(cases: Sequence[TestCase]) -> None:
    from cyclebench.report.listing import cases_table

    out.print(cases_table(cases))


def run_title(run_id: int) -> str:
    """The table's title of `run` on test cases (and of `show` of its run)."""
    return f"run #{run_id} · 1 task, {RUN_MODE} mode · interval ticks / operations"


def cost_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Under the table, per row: its description, the 1-task throughput and where cycles~ come
    from (the add chain before and after the run, not during it), and when they are doubtful."""
    lines = []
    for r in rows:
        e = r.get("extra") or {}
        parts = [f"{r['bench']}: {e.get('description') or '(no description)'}"]
        if e.get("ops_per_s"):
            parts.append(f"{e['ops_per_s']:.4g} ops/s at 1 task")
        if e.get("cycles_source"):
            parts.append(f"cycles~ from the {e['cycles_source']}")
        lines.append(" · ".join(parts))
        if e.get("cycles_doubtful"):
            lines.append(f"  {r['bench']}: {e['cycles_doubtful']}")
    return lines


def run_cases(cases: Sequence[TestCase], others: Sequence[Path], build_opts: BuildOptions, pin: RunnerOptions, *,
              globs: Sequence[str], min_time: float, warmup: float, processes: int, json_path: Path | None,
              db: str | None, wide: bool, quiet: bool, list_only: bool, labels: dict[str, str],
              refused: dict[str, bool]) -> None:
    """`cyclebench run -f FILE.c...` where the files are will-it-scale test cases: build each
    (processes mode), measure and store its cost per operation at one task, print the table.
    Exits 1 when a test case crashed, hung, failed or never bumped its counter (its row says
    why); UserError (exit 2) for what cannot apply to a test case or does not compile."""
    if others:
        raise UserError(f"will-it-scale test cases ({cases[0].path.name}) and cyclebench files "
                        f"({others[0].name}) in one run: run them separately")
    given = [opt for opt, on in refused.items() if on]
    if given:
        raise UserError(f"{given[0]} does not apply to will-it-scale test cases (run measures them by intervals)")
    cases = [c for c in cases if matches(c.name, globs)]
    if not cases:
        raise UserError(f"no will-it-scale test case matches {', '.join(globs)}")
    if list_only:
        _print_list(cases)
        return
    cfg = OpCostConfig(cases=cases, spec=build_opts.spec(), cpu=pin.cpu, processes=processes,
                       duration=max(min_time, RUN_MIN_DURATION), warmup=max(warmup, RUN_MIN_WARMUP),
                       command=["cyclebench", *sys.argv[1:]], labels=labels)
    try:  # each test case on its own: one that does not compile or link costs its row
        with err.status("building", spinner="dots") if not quiet else null_context():
            built = build_cases(cfg.spec, cases, [RUN_MODE])
    except BuildError as e:  # no compiler
        raise UserError(str(e)) from None
    except FileNotFoundError as e:
        raise UserError(str(e)) from None
    binaries = {name: b for (name, _mode), b in built.binaries.items()}
    broken = {name: why for (name, _mode), why in built.broken.items()}
    if not binaries:
        raise UserError(f"no test case builds: {cases[0].name}: {broken[cases[0].name]}")
    store = open_store(db)
    try:
        with Steps(len(cases) * processes, "measuring", quiet=quiet) as steps:
            run_id, rows = measure_cases(cfg, binaries, store, steps.step, broken)
    except (RunnerError, StoreError) as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        err.print(f"cyclebench: interrupted: test cases measured so far are kept ({store.url})")
        sys.exit(130)
    if not quiet:
        console_report.print_results(rows, out, title=run_title(run_id), wide=wide)
        for line in cost_lines(rows):
            out.print(safe_text(line), highlight=False)
        err.print(f"run #{run_id}: {len(rows)} result(s) stored in {store.url}", highlight=False)
    if json_path is not None:
        try:
            json_report.dump(json_report.run_to_dict(store, run_id), json_path)
        except OSError as e:
            raise UserError(f"cannot write {json_path}: {e.strerror or e}; the results are stored "
                            f"(run #{run_id})") from None
    bad = [r for r in rows if r.get("status") in FAILED_STATUSES]
    if bad:
        err.print(f"cyclebench: {len(bad)} test case(s) did not produce a valid result (see notes)", style="red")
        sys.exit(1)

