"""How throughput grows with the number of tasks: `cyclebench scale`'s design (README
"Scaling", docs/method.md §8).

The recipe: build the runner, then for each benchmark and mode sweep the task counts in
``passes`` alternating passes (1, 2, …, N, then N, …, 1, …), each task count measured again
while other programs kept its tasks waiting (``retries``), and store one result row per task
count as it comes. Starting the runner and reading its lines: runner.scaling; where the
tasks go: env.cpus; the statistics (why passes, what is disturbed): stats.scaling.

will-it-scale test cases given with -f (experiments.wis) are benchmarks like the others,
``wis/<file stem>``, each with a runner per mode; one that does not compile costs its rows.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from cyclebench.build import Binary, BuildError, BuildSpec, build
from cyclebench.build.wis import TestCase
from cyclebench.env.cpus import cpu_order
from cyclebench.experiments import wis as _wis
from cyclebench.experiments.session import open_run
from cyclebench.model import DISTURBED, ERROR, OK, SKIPPED, AllocatorInfo, Item, ScaleRecord, ScaleRun, Series
from cyclebench.runner import Runner, RunnerError
from cyclebench.runner.plan import SelectionError, plan
from cyclebench.runner.scaling import ScaleOptions, run_one
from cyclebench.stats import scaling

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator
    from cyclebench.store import Store


@dataclass(frozen=True, kw_only=True)
class ScaleConfig(ScaleOptions):
    """Everything `cyclebench scale` was asked to do (the runner's own options: ScaleOptions)."""

    spec: BuildSpec
    globs: Sequence[str] = ()
    params: Sequence[int] = ()  # -p: only these parameters (sizes, counts) of the benchmarks; () all
    tasks: Sequence[int] = (1, 2)
    modes: Sequence[str] = ("threads",)
    cpus: Sequence[int] | None = None  # None: cpu_order()
    retries: int = 2  # a disturbed task count is measured again up to this many times
    passes: int = 3  # alternating passes over the task counts, each lasting duration / passes
    command: Sequence[str] = ()
    labels: dict[str, str] | None = None  # --label KEY=VALUE: stored with the run
    cases: Sequence[TestCase] = ()  # will-it-scale test cases (their files may be in spec.sources too)
    allocators: Sequence[Allocator] = ()  # --allocator: every benchmark swept once per allocator


Point = tuple[ScaleRun, scaling.Summary]


def measure(binary: Path, bench: str, param: int | None, mode: str, n: int, cfg: ScaleConfig,
            cpus: Sequence[int]) -> Point:
    """One task count, measured again (up to cfg.retries times) while disturbed; the attempt
    with the least waiting for CPUs is kept, and ``attempts`` says how many were made."""
    ncpus = scaling.cpus_used(cpus, n)
    best: Point | None = None
    for attempt in range(1, cfg.retries + 2):
        run = run_one(binary, bench, param, mode, n, cfg, cpus)
        s = dataclasses.replace(scaling.summarize(run, ncpus), attempts=attempt)
        if best is None or (run.status == OK and (best[0].status != OK or (s.wait_pct or 0) < (best[1].wait_pct or 0))):
            best = (run, s)
        # a task the host starved (runner.scaling: DISTURBED) is measured again, as a disturbed summary is
        if run.status not in (OK, DISTURBED) or (run.status == OK and not scaling.disturbed(s)):
            break
    assert best is not None
    return best[0], dataclasses.replace(best[1], attempts=attempt)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; ``done`` holds what sweep() would have returned for the passes
    finished so far (task counts with no finished pass are absent)."""

    def __init__(self, done: list[Point]) -> None:
        super().__init__()
        self.done = done


def sweep(binary: Path, bench: str, param: int | None, mode: str, cfg: ScaleConfig, cpus: Sequence[int],
          on_start: Callable[[str], None] = lambda _l: None) -> list[Point]:
    """Every task count of one benchmark and mode, in cfg.passes alternating passes (see
    stats.scaling). Returns (merged run, summary) per task count measured, in task order;
    a run that does not end OK ends the sweep (its intervals are kept). Ctrl-C raises
    SweepInterrupted carrying the summaries of the runs finished before it."""
    counts = sorted(cfg.tasks)
    passes = max(1, cfg.passes)
    sub = dataclasses.replace(cfg, duration=cfg.duration / passes)
    got: dict[int, list[Point]] = {n: [] for n in counts}
    stop = interrupted = False
    try:
        for p in range(passes):
            for n in counts if p % 2 == 0 else counts[::-1]:
                on_start(f"{bench} {mode} ×{n}" + (f" (pass {p + 1}/{passes})" if passes > 1 else ""))
                run, s = measure(binary, bench, param, mode, n, sub, cpus)
                got[n].append((run, s))
                if run.status not in (OK, DISTURBED):  # disturbed: measured, said so, the sweep goes on
                    stop = True
                    break
            if stop:
                break
    except KeyboardInterrupt:
        interrupted = True
    done = scaling.combine(got, counts, cpus)
    if interrupted:
        raise SweepInterrupted(done)
    return done


@dataclass(frozen=True)
class Prepared:
    binary: Binary | None  # the cyclebench benchmarks' runner (without any: a test case's, for the run's record)
    runner: Runner | None  # None: only test cases
    items: list[Item]
    cpus: list[int]
    wis: _wis.Built = dataclasses.field(default_factory=_wis.Built)  # test cases' runners, by (name, mode)
    descriptions: dict[str, str | None] = dataclasses.field(default_factory=dict)  # test case → description
    # --allocator: name → (its runner, allocators.describe) or why it is skipped (the package to install)
    allocated: dict[str, tuple[Binary, AllocatorInfo] | str] = dataclasses.field(default_factory=dict)

    def binary_for(self, bench: str, mode: str) -> Path:
        """The runner that measures ``bench`` in ``mode``."""
        b = self.wis.binaries.get((bench, mode)) or self.binary
        if b is None:
            raise RunnerError(f"no runner for {bench} ({mode})")
        return b.path


def prepare(cfg: ScaleConfig, on_build: Callable[[str], None] = lambda _l: None) -> Prepared:
    """Build the runners (the cyclebench benchmarks' and, per mode, each test case's) and expand
    the selection: globs pick among both (none: all; the suite alone defaults to contend). A
    test case that does not compile stays in the items, its reason in ``wis.broken``. Raises
    BuildError, ToolMissing, FileNotFoundError, RunnerError, SelectionError."""
    case_files = {c.path for c in cfg.cases}
    sources = [s for s in cfg.spec.sources if s not in case_files]
    cases = [c for c in cfg.cases if _wis.matches(c.name, cfg.globs)]
    binary, runner, items = None, None, []
    if sources:
        binary = build(dataclasses.replace(cfg.spec, sources=tuple(sources)))
        runner = Runner(binary.path)
        globs = [g for g in cfg.globs if not any(_wis.matches(c.name, [g]) for c in cfg.cases)]
        if globs or not cfg.globs:
            listed = runner.list()
            if cfg.cases and not globs:  # beside test cases, no glob: the files' own benchmarks, not the
                mine = {str(Path(s).resolve()) for s in sources}  # engine's loop/empty every runner has
                listed = [b for b in listed if str(Path(b.file).resolve()) in mine]
            items = plan(listed, globs or ([] if cfg.cases else ["contend"]), cfg.params) if listed else []
    if cfg.globs and not items and not cases:
        raise SelectionError(f"no benchmark or test case matches {', '.join(cfg.globs)}")
    built = _wis.build_cases(cfg.spec, cases, cfg.modes, on_build)
    items += [Item(c.name, None) for c in cases]
    cpus = list(cfg.cpus) if cfg.cpus else cpu_order()
    if not cpus:
        raise SelectionError("no CPU to run tasks on")
    if binary is None and built.binaries:
        binary = next(iter(built.binaries.values()))
    allocated: dict[str, tuple[Binary, AllocatorInfo] | str] = {}
    for alloc in cfg.allocators:  # the same sources linked with each allocator, its malloc checked
        from cyclebench.build import allocators  # here: only --allocator needs it

        if why := allocators.missing(alloc, cfg.spec.cc):
            allocated[alloc.name] = why
            continue
        b = build(dataclasses.replace(cfg.spec, sources=tuple(sources), ldflags=(*cfg.spec.ldflags,
                                                                                 *alloc.ldflags())))
        where = Runner(b.path).malloc_file()
        if why := allocators.check_resolved(alloc, where):
            raise BuildError(why)
        allocated[alloc.name] = (b, allocators.describe(alloc, where))
    return Prepared(binary, runner, items, cpus, built, {c.name: c.description for c in cases}, allocated)


def execute(cfg: ScaleConfig, prepared: Prepared, store: Store,
            on_start: Callable[[str], None] = lambda _l: None) -> tuple[int, list[Series]]:
    """Run the sweep; each task count is stored as it comes. Returns (run id, series).
    KeyboardInterrupt marks the run interrupted and propagates (stored rows stay)."""

    cpus, b = prepared.cpus, prepared.binary
    settings = {"tasks": list(cfg.tasks), "modes": list(cfg.modes), "duration": cfg.duration, "interval": cfg.interval,
                "warmup": cfg.warmup, "cpus": cpus, "batch_ns": cfg.batch_ns, "wait_limit": scaling.WAIT_LIMIT,
                "retries": cfg.retries, "passes": cfg.passes}
    # one environment capture for every command (stat and scale runs stored no topology or
    # frequency before): the first task CPU's, no timer calibration (throughput needs none)
    run_id, _ = open_run(store, cfg.command, cpus[0], cfg.spec.sources, b, None, env_extra={"scale": settings},
                         pinned=False, labels=cfg.labels)
    series: list[Series] = []
    with store.finishing(run_id):
        for item in prepared.items:
            facts: PointFacts = ({"description": prepared.descriptions[item.bench]}
                                 if item.bench in prepared.descriptions else {})
            for mode, variant in itertools.product(cfg.modes, prepared.allocated or [""]):
                ser = Series(item.bench, item.param, mode, variant=variant)
                got = prepared.allocated.get(variant)
                why = prepared.wis.broken.get((item.bench, mode)) or (got if isinstance(got, str) else None)
                if why:  # one row says why (a test case that does not build, an allocator not installed)
                    run = ScaleRun(item.bench, None, mode, 1, status=ERROR if got is None else SKIPPED, reason=why)
                    series.append(_store_points(store, run_id, ser, [(run, scaling.summarize(run, 0))], facts=facts))
                    continue
                binary = got[0].path if isinstance(got, tuple) else prepared.binary_for(item.bench, mode)
                known: PointFacts = {**facts, "allocator": got[1]} if isinstance(got, tuple) else facts
                try:
                    done = sweep(binary, item.bench, item.param, mode, cfg, cpus, on_start)
                except SweepInterrupted as e:  # keep the passes finished before Ctrl-C
                    _store_points(store, run_id, ser, e.done, interrupted=True, facts=known)
                    raise
                series.append(_store_points(store, run_id, ser, done, facts=known))
    store.update_run(run_id, summary={"scale": [
        {"bench": s.bench, "param": s.param, "mode": s.mode, "variant": s.variant,
         "speedup": {str(p["tasks"]): p.get("speedup") for p in s.points}} for s in series]})
    store.finish_run(run_id, "complete")
    return run_id, series


class PointFacts(TypedDict, total=False):
    """What every stored point of a series carries beside its figures: the test case's own
    description (will-it-scale's ``testcase_description``; in the result's ``scale``) and the
    allocator linked in (build.allocators.describe; its ``allocator``)."""

    description: str
    allocator: AllocatorInfo


def _store_points(store: Store, run_id: int, ser: Series, done: list[Point], interrupted: bool = False,
                  facts: PointFacts | None = None) -> Series:
    """Store a result row per task count of ``done``; ``ser`` with their points added."""
    facts = facts or {}
    points = []
    for run, s in done:
        fields = scaling.row_fields(run, s)
        point: ScaleRecord = {**(fields.scale or {}), **({"description": facts["description"]}
                                                         if "description" in facts else {})}
        if interrupted:
            point["notes"] = [*point.get("notes", []), f"interrupted after {s.passes} pass(es)"]
        # mode[:param=N] and the allocator: one row per (mode, allocator, tasks)
        variant = fields.variant + (f":alloc={ser.variant}" if ser.variant else "")
        fields = dataclasses.replace(fields, scale=point, allocator=facts.get("allocator"), variant=variant)
        store.add_result(run_id, fields)
        points.append({**s, "status": fields.status, "reason": fields.reason, "notes": point.get("notes", [])})
    return dataclasses.replace(ser, points=(*ser.points, *points))
