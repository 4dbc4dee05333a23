"""Builds of different revisions measured paired, in one sitting, with the sequential design
(docs/revisions.md; `compare --rev` and every step of `bisect`).

Two builds cannot share a runner process, so their batches cannot alternate as compare's do:
they are measured as `variants` measures its builds (experiments/variants.py) — rounds of one
invocation of each runner, in a freshly shuffled order every round, on the same CPU, so the
host's slow drift falls on every side alike. Each invocation gives one figure, the median of
its per-round slopes (cycles~ where the add chain was timed: stats.clock.round_costs), and
invocations of the same round pair up. A comparison of side y against side x looks at the
per-round ratios r = y/x − 1: their median Δ, its standard error by the bootstrap
(stats.sequential.median_se) and the repeated confidence interval Δ ± c·SE, c the
O'Brien–Fleming-type boundary of Lan & DeMets' alpha spending at the fraction of the time
budget used (stats/sequential.py, as compare's sequential design). Looks come after
``first_look`` rounds and then after every round; a caller's rule turns the looks into a
verdict or asks for more. Each invocation is a separate process, so a bias that holds for a
whole process (docs/method.md §5) is one pair's noise, not a shift of one side.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from cyclebench.experiments.progress import SILENT, Progress
from cyclebench.model import OK, REVISION, Comparison, ComparisonRow, Item, Outcome, Revisions, Sequential
from cyclebench.runner import Runner
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.ab import anchored
from cyclebench.stats.sequential import Boundaries, median_se

__all__ = ["Design", "PairLook", "Sitting", "measure", "relative_row"]

Pair = tuple[int, int]  # (x, y): side y judged against side x


@dataclass(frozen=True)
class Design:
    """How builds are measured against each other: ``budget`` seconds of measuring per
    benchmark for the sitting; ``alpha`` the false-verdict rate of each comparison (the
    caller splits it); ``min_time`` timed seconds and ``rounds`` rounds of one invocation;
    ``first_look`` rounds (pairs) before the first look; ``cpu`` the runners' CPU."""

    budget: float = 2.0
    alpha: float = 0.002
    min_time: float = 0.02
    rounds: int = 12
    first_look: int = 10
    seed: int | None = None

    def options(self) -> MeasureOptions:
        return MeasureOptions(min_time=self.min_time, repeat=self.rounds, warmup=0.005)


@dataclass(frozen=True)
class PairLook:
    """One look at side y against side x: Δ (relative, median of the per-round y/x − 1), its
    SE, the boundary c, the repeated CI [low, high] (relative), the pairs, the information
    fraction, and the sides' median costs (``unit``)."""

    x: int
    y: int
    diff: float
    se: float
    boundary: float
    low: float
    high: float
    pairs: int
    fraction: float
    median_x: float
    median_y: float

    @property
    def z(self) -> float:
        return self.diff / self.se if self.se > 0 else (math.copysign(math.inf, self.diff) if self.diff else 0.0)

    def p(self) -> float:
        """Nominal two-sided p of this look's Z (not adjusted for the looks)."""
        from scipy import special  # here: ~0.3 s to import, paid only where a distribution is evaluated

        return float(2 * special.ndtr(-abs(self.z))) if math.isfinite(self.z) else 0.0


# A rule: the latest look of every pair (and whether it is the last the budget allows) → a
# verdict, or None to go on measuring.
Rule = Callable[[dict[Pair, PairLook], bool], str | None]


@dataclass(frozen=True)
class Sitting:
    """One benchmark measured on every side: merged outcomes (per side), the per-invocation
    figures (per side, NaN where an invocation gave none), their unit, every look per pair,
    the verdict the rule gave (or why there is none: ``failed``), seconds of measuring."""

    item: Item
    outcomes: list[Outcome]
    costs: list[list[float]]
    unit: str
    looks: dict[Pair, tuple[PairLook, ...]] = field(default_factory=dict)
    verdict: str = "inconclusive"
    failed: str | None = None
    seconds: float = 0.0
    budget: float = 0.0

    def last(self, pair: Pair) -> PairLook | None:
        got = self.looks.get(pair) or []
        return got[-1] if got else None


def _invocation_cost(o: Outcome) -> tuple[float, str]:
    if o.status != OK or not o.result:
        return float("nan"), ""
    slopes, unit = clock.round_costs(o.result)
    return (float(np.nanmedian(slopes)) if np.isfinite(slopes).any() else float("nan")), unit


def look_at(costs: Sequence[Sequence[float]], pair: Pair, fraction: float, boundary: float, seed: int = 0,
            ) -> PairLook | None:
    """The look at ``pair`` over the rounds so far (None with fewer than 6 usable pairs)."""
    x, y = (np.asarray(costs[k], dtype=float) for k in pair)
    n = min(len(x), len(y))
    x, y = x[:n], y[:n]
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0)
    if ok.sum() < 6:
        return None
    r = y[ok] / x[ok] - 1
    diff = float(np.median(r))
    se = median_se(r, None, seed=seed)
    half = boundary * se if math.isfinite(boundary) else math.inf
    return PairLook(pair[0], pair[1], diff, se, boundary, diff - half, diff + half, int(ok.sum()), fraction,
                    float(np.median(x[ok])), float(np.median(y[ok])))


def measure(runners: Sequence[Any], items: Sequence[Item], pairs: Sequence[Pair], design: Design, rule: Rule,
            progress: Progress = SILENT, on_result: Callable[[Sitting], None] = lambda _s: None,
            timeout: float | None = None,
            cost: Callable[[Outcome], tuple[float, str]] | None = None) -> list[Sitting]:
    """Measure every item on every runner (module doc) until ``rule`` gives a verdict or the
    budget ends (the rule is then called with last=True and must give one). A side that does
    not produce a result (crash, hang, failed verify, a skip) ends its item: ``failed`` says
    which side and why. ``on_result`` gets each item's sitting as soon as it is decided (to
    store it: Ctrl-C later keeps it). A runner is anything with Runner.run's signature;
    ``cost`` turns its Outcome into the invocation's figure and unit (default: the engine's
    per-round slopes, cycles~ where the add chain was timed). KeyboardInterrupt propagates."""
    from cyclebench.runner import interleave

    rng = random.Random(design.seed)
    opts = design.options()
    out: list[Sitting] = []
    for item in items:
        t0 = time.monotonic()
        runs: list[list[Outcome]] = [[] for _ in runners]
        costs: list[list[float]] = [[] for _ in runners]
        # the sitting so far (the fields of the Sitting made once it is decided)
        unit, failed, verdict = "", None, "inconclusive"
        looks: dict[Pair, list[PairLook]] = {}
        fractions: list[float] = []
        bounds = Boundaries(design.alpha)
        k = 0
        while True:
            k += 1
            order = list(range(len(runners)))
            rng.shuffle(order)
            for s in order:
                progress.step(f"{item.label} round {k} side {s + 1}")
                o = runners[s].run(item.bench, item.param, opts, timeout or opts.timeout())
                runs[s].append(o)
                c, its_unit = (cost or _invocation_cost)(o)
                costs[s].append(c)
                unit = unit or its_unit
                if o.status != OK:
                    failed = f"side {s + 1}: {o.status}: {o.reason}"
                    break
            if failed:
                verdict = "failed"
                break
            elapsed = time.monotonic() - t0
            last = elapsed + elapsed / k > design.budget
            if k < design.first_look and not last:
                continue
            t = 1.0 if last else min(elapsed / design.budget, 1.0)
            if fractions and t <= fractions[-1]:
                continue
            fractions.append(t)
            c = bounds.add(t)
            latest: dict[Pair, PairLook] = {}
            for p in pairs:
                lk = look_at(costs, p, t, c, seed=k)
                if lk is not None:
                    looks.setdefault(p, []).append(lk)
                    latest[p] = lk
            decided = rule(latest, last) if len(latest) == len(pairs) else ("inconclusive" if last else None)
            if decided is not None:
                verdict = decided
                break
        outcomes = [interleave.combine(r) if all(x.status == OK for x in r) else
                    next(x for x in r if x.status != OK) for r in runs if r]
        sit = Sitting(item, outcomes, costs, unit, {p: tuple(x) for p, x in looks.items()}, verdict, failed,
                      time.monotonic() - t0, design.budget)
        out.append(sit)
        on_result(sit)
    return out


class RuleNote(TypedDict):
    """How a sequential verdict between revisions was reached, stored with its row: the
    equivalence margin (relative) and the rule that set it, in words."""

    equivalence: float
    margin_rule: str


def relative_row(sit: Sitting, pair: Pair, a: str, b: str, verdict: str, alpha: float, margin: float = 0.0,
                 rule: RuleNote | None = None, figures: Sequence[float | None] = ()) -> ComparisonRow:
    """A pair's last look as compare's row (model.ComparisonRow): the sides' stored per-op
    figures (``figures``, store_sitting's, by side; without them the medians over the pairs), Δ
    and its repeated CI converted from relative to the unit at side x's figure (stats.ab.anchored),
    the nominal p; ``margin`` relative, as the rule used it; ``rule`` joins its sequential terms
    (the equivalence margin, how the verdict margin was chosen)."""
    lk = sit.last(pair)
    if lk is None or sit.failed:
        return ComparisonRow(a, b, sit.item.param, sit.unit, None, sit.failed or "too few usable rounds for a look")
    m = lk.median_x
    cmp = Comparison(m, lk.median_y, lk.diff * m, lk.low * m, lk.high * m, lk.diff, lk.p(), lk.pairs, margin * m,
                     verdict)
    x, y = pair
    if len(figures) > max(x, y):
        cmp = anchored(cmp, figures[x], figures[y], relative=True)
    how = "the budget ended it" if lk.fraction >= 1 else f"decided at look {len(sit.looks[pair])}"
    note = (f"sequential over invocations: {how} ({sit.seconds:.2f} s of {sit.budget:.2f} s, "
            f"{lk.pairs} pairs, boundary |Z| ≥ {lk.boundary:.2f}, Z {lk.z:+.2f})")
    seq: Sequential = {"looks": [{"fraction": x.fraction, "diff": x.diff, "se": x.se, "boundary": x.boundary,
                                  "low": x.low, "high": x.high, "pairs": x.pairs} for x in sit.looks[pair]],
                       "seconds": sit.seconds, "budget": sit.budget, "alpha": alpha, **(rule or {})}
    return ComparisonRow(a, b, sit.item.param, sit.unit, cmp, note, seq)


@dataclass(frozen=True)
class Sides:
    """The built revisions of one sitting, in side order, their runners (pinned to ``cpu``) and
    the variant each side's result rows are stored under ("" for the revision the run is
    labelled with: `history` follows it as a plain run)."""

    built: list[Any]  # revisions.Built, each with a binary
    runners: list[Runner]
    variants: list[str]
    cpu: int


def open_sitting(store: Any, sides: Sides, main: int, command: Sequence[str], labels: dict[str, str],
                 revisions: Revisions, timed: bool = True) -> tuple[int, float]:
    """The run of one sitting (session.open_run: identity, environment, calibration), opened with
    side ``main``'s build, labelled ``labels``; ``revisions`` joins its environment. ``timed``
    False (counts under callgrind, no timing): no calibration, the rate 0.0."""
    from cyclebench.experiments.session import open_run

    b = sides.built[main]
    return open_run(store, command, sides.cpu, [Path(s) for s in b.binary.sources], b.binary,
                    sides.runners[main] if timed else None,
                    env_extra={"revisions": revisions}, labels=labels, purpose=REVISION)


def store_sitting(store: Any, run_id: int, rate: float, sit: Sitting, sides: Sides) -> list[float | None]:
    """One result row per side of the sitting (result_fields: samples kept), each with its
    per-invocation figures and its revision. Returns each side's stored per-op figure in the
    sitting's unit (Result.figure; None: it has none), for relative_row."""
    from cyclebench.stats.result import result_fields, sample_rows

    figures: list[float | None] = []
    for s, o in enumerate(sit.outcomes):
        fields = result_fields(o, rate, sides.variants[s])
        fields = replace(fields, per_invocation=tuple(sit.costs[s]), revision=sides.built[s].revision.sha)
        store.add_result(run_id, fields, sample_rows(o.result))
        got = fields.figure(sit.unit)
        figures.append(got.value if got is not None else None)
    return figures
