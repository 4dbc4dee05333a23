"""`cyclebench variants`' design (and `compare --allocator`'s): variants made from
compilers × flag sets × allocators, built (each its own runner), measured in alternation over
rounds of separate invocations, judged against the first, summarised and stored.

A variant is one (compiler, flag set, target) build of the user's file (docs/method.md §5b).
Native variants are measured in alternation: ``rounds`` times, every variant's runner
is invoked once per benchmark in a freshly shuffled order on the same CPU, so slow drift
of the host spreads over all of them; the per-invocation medians (cycles~ where the add
chain was timed) pair up by round and each variant is compared with the first
(compare.paired, Holm-adjusted). Cross-target variants run under qemu-user for their
verify hooks only: *emulated*, never a time.

For every variant: the size of each benchmark body (its ``cb_body_<group>_<name>``
symbol) and of the binary's .text/.data/.bss (pyelftools), and on request the body's
disassembly (objdump, the target's objdump for cross builds) with instruction counts by
class and a diff against the first variant.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from cyclebench.build import (
    Binary,
    BuildError,
    ToolMissing,
    build,
    cross_cc,
    launcher_for,
)
from cyclebench.build.elf import berkeley_sizes, body_symbol, classify, disassemble, elf_sizes, helper_calls
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.options import BuildOptions, RunnerOptions
from cyclebench.model import (
    CRASHED,
    EMULATED,
    OK,
    SKIPPED,
    TIMEOUT,
    AllocatorInfo,
    BenchEntry,
    Comparison,
    Item,
    Outcome,
    Result,
    VariantEntry,
)
from cyclebench.runner import Runner, RunnerError
from cyclebench.runner.plan import MeasureOptions, plan
from cyclebench.stats import clock
from cyclebench.stats.ab import holm, min_pairs, paired, with_adjusted_p
from cyclebench.stats.repetitions import spread
from cyclebench.stats.result import result_fields, sample_rows

if TYPE_CHECKING:
    from cyclebench.build.allocators import Allocator


class VariantError(ExperimentError):
    """Bad variant specification (no flag sets, unknown target...)."""


@dataclass(frozen=True)
class Variant:
    label: str
    cc: str
    cflags: tuple[str, ...]
    target: str | None = None
    allocator: Allocator | None = None  # linked into this variant's runner (build.allocators)

    @property
    def emulated(self) -> bool:
        return self.target is not None


def make_variants(ccs: Sequence[str], flag_sets: Sequence[Sequence[str]], target: str | None,
                  allocs: Sequence[Allocator] | None = None) -> list[Variant]:
    """Every allocator × compiler × flag set (the first of each = the baseline). A label names
    what varies: the allocator alone when only allocators do."""
    given_flags = bool(flag_sets)
    if not flag_sets:
        flag_sets = [("-O2",)]
    if not ccs:
        ccs = [cross_cc(target)] if target else ["cc"]
    out = []
    for alloc in allocs or [None]:
        for cc in ccs:
            for flags in flag_sets:
                parts = [alloc.name] if alloc else []
                if len(ccs) > 1:
                    parts.append(cc)
                if not alloc or given_flags:
                    parts.append(" ".join(flags) or "(no flags)")
                out.append(Variant(" ".join(parts), cc, tuple(flags), target, alloc))
    if len({v.label for v in out}) != len(out):
        raise VariantError("two variants are the same build: give distinct --flags/--cc")
    return out


@dataclass(frozen=True)
class Built:
    variant: Variant
    binary: Binary
    runner: Runner
    sizes: dict[str, int] = field(default_factory=dict)  # section and body symbol sizes, bytes
    allocator: AllocatorInfo | None = None  # allocators.describe: name, library, package version


def build_all(variants: Sequence[Variant], opts: BuildOptions,
              pin: RunnerOptions) -> tuple[list[Built], list[BuildError], dict[str, str]]:
    """Build every variant (cached; ``opts.cflags`` come before each variant's flags). A variant
    that does not build is returned as its BuildError, naming it, and the others are measured
    (one bad flag set once aborted them all); ToolMissing still ends everything. A variant
    whose allocator is not installed is returned in the third item (label → why, with the
    package), and one whose runner calls another malloc than its allocator's fails."""
    built, failed, skipped = [], [], {}
    for v in variants:
        spec = opts.spec(cc=v.cc, target=v.target, werror=False)
        spec = replace(spec, cflags=(*opts.cflags, *v.cflags))
        if v.allocator is not None:
            from cyclebench.build import allocators  # here: only --allocator needs it

            if why := allocators.missing(v.allocator, v.cc):
                skipped[v.label] = why
                continue
            spec = replace(spec, ldflags=(*spec.ldflags, *v.allocator.ldflags()))
        try:
            b = build(spec)
            runner = Runner(b.path, pin.cpu, fifo=pin.fifo, launcher=launcher_for(v.target), max_rss=pin.max_rss)
            info = _allocator_info(v.allocator, runner)
        except ToolMissing:
            raise
        except BuildError as e:
            failed.append(BuildError(f"variant '{v.label}': {e}", e.output, e.file))
            continue
        built.append(Built(v, b, runner, elf_sizes(b.path), info))
    return built, failed, skipped


def _allocator_info(alloc: Allocator | None, runner: Runner) -> AllocatorInfo | None:
    """The allocator a runner really calls (allocators.describe); BuildError when its malloc
    resolves elsewhere (a link that did not take would measure glibc under another name)."""
    if alloc is None:
        return None
    from cyclebench.build import allocators  # here: only --allocator needs it

    try:
        where = runner.malloc_file()
    except RunnerError as e:
        raise BuildError(f"runner with {alloc.name} does not start: {e}") from None
    if why := allocators.check_resolved(alloc, where):
        raise BuildError(why)
    return allocators.describe(alloc, where)


def _merge(outs: Sequence[Outcome]) -> Outcome:
    """Several invocations of one benchmark as one result (interleave.combine: samples and
    counter reads concatenated, rounds whole, each invocation a process of the two-level CI);
    the first non-ok outcome wins."""
    from cyclebench.runner import interleave

    bad = next((o for o in outs if o.status != OK), None)
    if bad is not None:
        return bad
    merged = interleave.combine(list(outs))
    if merged.result is not None:
        merged = replace(merged, result={**merged.result, "invocations": len(outs)})
    return merged


@dataclass(frozen=True)
class BenchResult:
    item: Item
    outcomes: dict[str, Outcome]  # variant label → merged outcome
    per_invocation: dict[str, list[float]]  # variant label → median per-op per invocation
    unit: str
    comparisons: dict[str, Comparison | None]
    notes: dict[str, str] = field(default_factory=dict)
    simulated: dict[str, dict[str, float] | None] = field(default_factory=dict)  # label → callgrind events/op


def measure(
    built: Sequence[Built], globs: Sequence[str], params: Sequence[int], rounds: int | None, opts: MeasureOptions,
    on_step: Callable[[str], None] = lambda _s: None, seed: int | None = None, simulate_counts: bool = False,
    on_result: Callable[[BenchResult], None] = lambda _r: None, timeout: float | None = None,
    on_plan: Callable[[int], None] = lambda _n: None, events: list[list[Any]] | None = None,
) -> list[BenchResult]:
    """Run every benchmark of the first variant's binary on every variant (see module doc).
    simulate_counts: also run each native variant once under callgrind (callgrind.py) for exact
    per-op instruction, cache-miss and branch counts — the I-cache misses of Molnar's alignment
    study (docs/references.md#icache-alignment-linux-2015) on a machine without a PMU. on_result:
    called with each benchmark's result as soon as all its variants are measured (to store it:
    Ctrl-C later keeps it). timeout: seconds per invocation (default opts.timeout(); under callgrind
    600 s unless given); a variant that hung or crashed on a benchmark is not invoked again for it
    (a hung one cost 6 rounds × 35 s). rounds: None: as few as let every comparison reach a verdict
    after Holm (ab.min_pairs)."""
    from cyclebench.runner import callgrind
    items = plan(built[0].runner.list(), globs, params)
    if not globs:  # the engine's own loop reference is not one of the user's benchmarks
        items = [i for i in items if i.bench != "loop/empty"] or items
    rng = random.Random(seed)
    native_n = sum(1 for b in built if not b.variant.emulated)
    if rounds is None:
        rounds = min_pairs(len(items) * (native_n - 1))
    on_plan(len(items) * (rounds * native_n + (len(built) - native_n) + (native_n if simulate_counts else 0)))
    out: list[BenchResult] = []
    for item in items:
        runs: dict[str, list[Outcome]] = {b.variant.label: [] for b in built}
        native = [b for b in built if not b.variant.emulated]
        for b in built:
            if b.variant.emulated:  # correctness only: a short run, its verify hook, no time
                quick = MeasureOptions(min_time=0.0, repeat=3, warmup=0.0, min_batch_ns=1000)
                on_step(f"{item.label} {b.variant.label} (emulated)")
                runs[b.variant.label].append(b.runner.run(item.bench, item.param, quick, 600))
        dead: set[str] = set()
        for _ in range(rounds if native else 0):
            order = [b for b in native if b.variant.label not in dead]
            rng.shuffle(order)
            for b in order:
                on_step(f"{item.label} {b.variant.label}")
                o = b.runner.run(item.bench, item.param, opts, timeout or opts.timeout(), events)
                runs[b.variant.label].append(o)
                if o.status in (TIMEOUT, CRASHED):
                    dead.add(b.variant.label)
        merged = {k: _merge(v) for k, v in runs.items()}  # counter reads joined too (interleave.merge)
        per_inv: dict[str, list[float]] = {}
        unit = ""
        for b in native:
            vals = []
            for o in runs[b.variant.label]:
                if o.status == OK and o.result:
                    slopes, unit = clock.round_costs(o.result)
                    vals.append(float(np.nanmedian(slopes)) if np.isfinite(slopes).any() else float("nan"))
                else:
                    vals.append(float("nan"))
            # a variant that hung or crashed was not invoked again: its missing rounds pair with nothing
            per_inv[b.variant.label] = vals + [float("nan")] * (rounds - len(vals))
        comps: dict[str, Comparison | None] = {}
        notes: dict[str, str] = {}
        if native:
            base = np.asarray(per_inv[native[0].variant.label])
            for b in native[1:]:
                other = np.asarray(per_inv[b.variant.label])
                ok = np.isfinite(base) & np.isfinite(other)
                try:
                    comps[b.variant.label] = paired(base[ok], other[ok])
                except ValueError as e:
                    comps[b.variant.label] = None
                    notes[b.variant.label] = str(e)
        sims: dict[str, dict[str, float] | None] = {}
        if simulate_counts:
            for b in native:
                on_step(f"{item.label} {b.variant.label} (callgrind)")
                so = callgrind.simulate(b.binary.path, item.bench, item.param, cpu=b.runner.cpu,
                                        timeout=timeout or 600.0)
                sims[b.variant.label] = (so.result or {}).get("events") if so.status == OK else None
                if so.status != OK:
                    notes[b.variant.label] = f"callgrind: {so.status}: {so.reason}"
        out.append(BenchResult(item, merged, per_inv, unit, comps, notes, sims))
        on_result(out[-1])
    # Holm across every comparison of the command, in the order they were made
    adjusted = iter(holm([c.p for r in out for c in r.comparisons.values() if c is not None]))
    return [replace(r, comparisons={k: None if c is None else with_adjusted_p(c, next(adjusted))
                                    for k, c in r.comparisons.items()}) for r in out]


# Ir per op further than this (relative) from the baseline's: not the same work. Codegen alone
# moves it a little (-Os vs -O2 on a 50-add loop: +1.9%, one more loop instruction); work that
# was added or optimised away moves it more (10 more adds: +19%).
DIFFERENT_WORK = 0.05


def different_work(ir: float | None, base: float | None) -> str | None:
    """A note when a variant's simulated instructions per op differ from the baseline's by more
    than codegen alone moves them (DIFFERENT_WORK; callgrind's counts are exact, the two-batch
    difference to 1/sim-iters)."""
    if ir is None or not base:
        return None
    if abs(ir - base) > max(DIFFERENT_WORK * abs(base), 0.2):
        return f"different work: Ir {100 * (ir - base) / base:+.1f}% vs the baseline"
    return None


def summary(built: Sequence[Built], results: Sequence[BenchResult], disasm: bool,
            events: list[list[Any]] | None = None, skipped: dict[str, str] | None = None,
            stored: Mapping[tuple[str, int | None, str], Result] | None = None) -> list[BenchEntry]:
    """JSON-friendly account of every benchmark × variant (what --json writes and the run stores
    as ``summary.variants``: model.BenchEntry, model.VariantEntry): per variant
    its replicates' spread (mean, stddev %, 95% CI, best), the size(1) figures of the
    benchmark file's own object (``size``) and of the whole runner (``binary_size``), a
    different-work note from callgrind's Ir, and the allocator linked in (name, library, package
    version), and the per-op figure of its stored result (``stored``: store_results', by bench,
    param and label), the one every other view reads. ``skipped`` variants (label → why) get a
    row each, last."""
    out = []
    for r in results:
        entry: BenchEntry = {"bench": r.item.bench, "param": r.item.param, "unit": r.unit, "variants": []}
        base_ir = (r.simulated.get(built[0].variant.label) or {}).get("Ir") if built else None
        for i, b in enumerate(built):
            label = b.variant.label
            o = r.outcomes[label]
            c = r.comparisons.get(label)
            v: VariantEntry = {"label": label, "cc": b.variant.cc, "cflags": list(b.variant.cflags),
                               "target": b.variant.target, "emulated": b.variant.emulated, "status": o.status,
                               "reason": o.reason, "body_bytes": b.sizes.get(body_symbol(r.item.bench)),
                               "text_bytes": b.sizes.get(".text"), "data_bytes": b.sizes.get(".data"),
                               "bss_bytes": b.sizes.get(".bss"),
                               "per_invocation": r.per_invocation.get(label),
                               "comparison": c.to_dict() if c else None,
                               "simulated": r.simulated.get(label), "note": r.notes.get(label),
                               "baseline": i == 0, "size": berkeley_sizes(b.binary.objects) if b.binary.objects
                               else None, "binary_size": berkeley_sizes([b.binary.path]),
                               "different_work": None if i == 0 else
                               different_work((r.simulated.get(label) or {}).get("Ir"), base_ir)}
            if not b.variant.emulated:  # the replicates' spread (stats.repetitions.spread)
                s = spread(r.per_invocation.get(label) or [])
                v["mean"], v["stddev_pct"], v["ci_low"], v["ci_high"], v["best"] = (
                    s["mean"], s["stddev_pct"], s["ci_low"], s["ci_high"], s["best"])
            kept = (stored or {}).get((r.item.bench, r.item.param, label))
            if kept is not None and (fig := kept.figure(r.unit)) is not None:
                v["per_op"] = {"value": fig.value, "ci_low": fig.ci_low, "ci_high": fig.ci_high}
            v["counters"] = _counters(o, events)
            v["allocator"] = b.allocator
            if disasm:
                ins = disassemble(b.binary.path, b.variant.target, r.item.bench)
                v["disasm"] = ins
                v["classes"] = classify(ins)
                v["calls"] = helper_calls(ins)
            entry["variants"].append(v)
        for label, why in (skipped or {}).items():
            entry["variants"].append({"label": label, "status": SKIPPED, "reason": why, "emulated": False,
                                      "baseline": False, "mean": None})
        out.append(entry)
    return out


def _counters(o: Outcome, events: list[list[Any]] | None) -> dict[str, float | None] | None:
    """The requested events per op of a variant's merged outcome (stats.result), None without -e."""
    if not events or o.status != OK or o.result is None:
        return None
    fields = result_fields(o, 1.0, "", events)
    got = (fields.counters or {}).get("events") or {}
    return {name: e.get("per_op") for name, e in got.items()}


def store_results(store: Any, run_id: int, rate: float, results: Sequence[BenchResult], built: Sequence[Built],
                  events: list[list[Any]] | None = None, skipped: dict[str, str] | None = None
                  ) -> dict[tuple[str, int | None, str], Result]:
    """One result row per benchmark × variant (variant = its label; the allocator linked in, if
    any, its ``allocator``); emulated rows keep their status and reason but no figure: their unit is
    "emulated"; a skipped variant (label → why) has a skipped row. Returns the measured ones'
    results by (bench, param, label), for summary."""
    kept: dict[tuple[str, int | None, str], Result] = {}

    emulated = {b.variant.label for b in built if b.variant.emulated}
    alloc = {b.variant.label: b.allocator for b in built if b.allocator}
    for r in results:
        for label, why in (skipped or {}).items():
            store.add_result(run_id, {"bench": r.item.bench, "param": r.item.param, "variant": label,
                                      "status": SKIPPED, "reason": why})
        for label, o in r.outcomes.items():
            if label in emulated:
                store.add_result(run_id, Result(kind=EMULATED, bench=o.bench, param=o.param, variant=label,
                                                status=o.status, reason=o.reason, unit="emulated", wall_s=o.wall_s,
                                                emulated={"emulated": True,
                                                          "verified": (o.result or {}).get("verified")}))
                continue
            fields = result_fields(o, rate, label, events)
            got = r.per_invocation.get(label)
            fields = replace(fields, per_invocation=None if got is None else tuple(got), allocator=alloc.get(label))
            store.add_result(run_id, fields, sample_rows(o.result))
            kept[(r.item.bench, r.item.param, label)] = fields
    return kept


@dataclass(frozen=True)
class Sweep:
    """What to measure: the variants (the first is the baseline), which benchmarks, how long."""

    variants: Sequence[Variant]
    globs: Sequence[str] = ()
    params: Sequence[int] = ()
    rounds: int | None = None  # None: _variants.measure picks enough for a verdict
    min_time: float = 0.03
    timeout: float | None = None
    simulate: bool = False  # also count under callgrind
    events: list[list[Any]] | None = None
    disasm: bool = False
    labels: dict[str, str] | None = None
    sort: str = "cycles"  # what the tables are ranked by (stored for `show`)


def verdict_of(v: VariantEntry) -> str:
    """A measured variant's verdict against the baseline (a variant of ``summary``'s data):
    slower, faster, ~, or inconclusive when none could be reached (too few pairs left once
    disturbed rounds were dropped: its note says how many)."""
    c = v.get("comparison")
    return str(c["verdict"]) if c else "inconclusive" + (f" ({v['note']})" if v.get("note") else "")


def fail_on_hits(data: Sequence[BenchEntry], fail_on: Sequence[str]) -> list[str]:
    """``"BENCH LABEL: VERDICT"`` of every measured variant whose verdict --fail-on names
    (slower/faster, different: either; inconclusive: ~ or no verdict at all), sorted."""
    def named(verdict: str) -> bool:
        if verdict in ("slower", "faster"):
            return verdict in fail_on or "different" in fail_on
        return "inconclusive" in fail_on

    return sorted(f"{d['bench']} {v['label']}: {verdict_of(v)}" for d in data for v in d["variants"]
                  if not v.get("baseline") and v.get("status") == "ok" and named(verdict_of(v)))


def allocator_sweep(targets: Sequence[str], params: Sequence[int], repeat: int | None, min_time: float,
                    allocators: Sequence[Allocator], labels: Mapping[str, str]) -> Sweep:
    """`compare --allocator`'s design: each allocator is its own binary, so its rounds cannot be
    interleaved batch by batch with another's; the benchmarks are measured as `variants` measures
    (rounds of one invocation per allocator in shuffled order, paired by round, signed-rank + Holm
    against the first). ``repeat`` gives the rounds (default 60); ``min_time`` (seconds over
    compare's 60 rounds) is shared out over them."""
    return Sweep(make_variants((), (), None, list(allocators)), tuple(targets), list(params), repeat,
                 min_time * 12 / (repeat or 60), labels=dict(labels))
