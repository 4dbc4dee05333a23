"""compare's sequential design: processes of interleaved rounds, one at a time, looked at
after each until every pair is decided or the time budget ends (stats/sequential.py says how a
look decides and why the false-verdict rate stays at α)."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from cyclebench.model import Comparison, Outcome
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.ab import MARGIN_ABS, MARGIN_REL
from cyclebench.stats.result import usable_for_verdict
from cyclebench.stats.sequential import Boundaries, Look, decide, median_se

ROUNDS = 10  # rounds per process: fewer made the process-level CI too coarse (interleave.SAFE_ROUNDS)


@dataclass(frozen=True)
class Sequential:
    """What one set (benchmarks at one parameter) came to: the merged outcomes, the process
    of each round, and per compared pair (index of B in the set) its deciding look and every
    look's decision; ``seconds`` of measuring; ``budget`` in seconds for the set."""

    outs: list[Outcome]
    procs: np.ndarray
    looks: dict[int, tuple[Look, ...]] = field(default_factory=dict)
    final: dict[int, Look] = field(default_factory=dict)
    a_median: dict[int, float] = field(default_factory=dict)
    b_median: dict[int, float] = field(default_factory=dict)
    pairs: dict[int, int] = field(default_factory=dict)
    margin: dict[int, float] = field(default_factory=dict)
    decided_s: dict[int, float] = field(default_factory=dict)  # seconds of measuring when each pair ended
    seconds: float = 0.0
    budget: float = 0.0

    def comparison(self, j: int) -> Comparison | None:
        """The pair's result as a Comparison: its deciding look's RCI as the CI, the nominal
        two-sided p of that look's Z, and the decision as the verdict."""
        look = self.final.get(j)
        if look is None:
            return None
        p = math.erfc(abs(look.z) / math.sqrt(2)) if math.isfinite(look.z) else 0.0  # 2Φ(−|z|), no scipy
        a = self.a_median[j]
        return Comparison(a, self.b_median[j], look.diff, look.low, look.high, look.diff / a if a else float("nan"),
                          p, self.pairs[j], self.margin[j], look.decision)

    def note(self, j: int) -> str:
        looks = self.looks.get(j) or []
        look = self.final.get(j)
        if look is None:
            return ""
        how = "the budget ended it" if look.decision == "inconclusive" else f"decided at look {len(looks)}"
        spent = self.decided_s.get(j, self.seconds)
        return (f"sequential: {how} ({spent:.2f} s of {self.budget:.2f} s, {len(looks)} look{'s' * (len(looks) != 1)}, "
                f"boundary |Z| ≥ {look.boundary:.2f}, Z {look.z:+.2f})")


def pair_rounds(outs: list[Outcome], procs: np.ndarray, include_disturbed: bool,
                ) -> tuple[list[np.ndarray | None], str]:
    """Per-round costs of every item on one shared clock per round (cycles~ where the chain
    was timed), None for an item that cannot enter a verdict; and their unit."""
    good = [o.result for o in outs if usable_for_verdict(o, include_disturbed) and o.result]
    shared = iter(clock.shared_round_ratio(good))
    costs: list[np.ndarray | None] = []
    unit = ""
    for o in outs:
        if usable_for_verdict(o, include_disturbed) and o.result:
            c, unit = clock.round_costs(o.result, next(shared))
            costs.append(c)
        else:
            costs.append(None)
    return costs, unit


def measure_until_known(runner: Runner, items: list[tuple[str, int | None]], opts: MeasureOptions, budget: float,
                        alpha: float, equivalence: float, first_look: int, include_disturbed: bool = False,
                        on_process: Callable[[int], None] = lambda _i: None) -> Sequential:
    """Measure ``items`` (item 0 is A, each other one a B compared with it) one process of
    ROUNDS rounds at a time (batches sized as ``opts`` sizes them for ``opts.repeat``
    rounds); from process ``first_look`` on, look after each. ``budget``: seconds of
    measuring for the whole set (the caller multiplies by the pairs); ``alpha``: the
    false-verdict rate of each pair (the caller divides by the pairs: Bonferroni);
    ``equivalence``: relative margin of A's median inside which a difference is ruled out."""
    t0 = time.monotonic()
    pending = set(range(1, len(items)))
    outs: list[Outcome] = []
    procs = np.empty(0, dtype=int)
    # what the looks found so far, per pair (the fields of the Sequential returned)
    looks: dict[int, list[Look]] = {}
    final: dict[int, Look] = {}
    a_median: dict[int, float] = {}
    b_median: dict[int, float] = {}
    pairs: dict[int, int] = {}
    margins: dict[int, float] = {}
    decided_s: dict[int, float] = {}
    fractions: list[float] = []
    bounds = Boundaries(alpha)
    for k, (outs, procs) in enumerate(interleave.stages(runner, items, opts, itertools.repeat(ROUNDS))):
        on_process(k)
        elapsed = time.monotonic() - t0
        per_process = elapsed / (k + 1)
        last = elapsed + per_process > budget
        if k + 1 < first_look and not last:
            continue
        costs, _unit = pair_rounds(outs, procs, include_disturbed)
        if costs[0] is None or all(costs[j] is None for j in pending):
            break  # A (or every B) failed or is disturbed: nothing left to look at
        t = 1.0 if last else min(elapsed / budget, 1.0)
        if fractions and t <= fractions[-1]:
            continue
        fractions.append(t)
        c = bounds.add(t)
        for j in sorted(pending):
            if costs[j] is None:
                pending.discard(j)
                continue
            a, b = costs[0], costs[j]
            n = min(len(a), len(b))
            ok = np.isfinite(a[:n]) & np.isfinite(b[:n])
            d = b[:n][ok] - a[:n][ok]
            g = procs[:n][ok] if len(procs) >= n else None
            if len(d) < 6:
                continue
            med_a = float(np.median(a[:n][ok]))
            margin = min(MARGIN_ABS, MARGIN_REL * abs(med_a))
            look = decide(float(np.median(d)), median_se(d, g, seed=k), c, margin, equivalence * abs(med_a), t,
                          last=last)
            looks.setdefault(j, []).append(look)
            final[j] = look
            a_median[j], b_median[j] = med_a, float(np.median(b[:n][ok]))
            pairs[j], margins[j] = len(d), margin
            if look.decision != "continue":
                pending.discard(j)
                decided_s[j] = time.monotonic() - t0
        if not pending or last:
            break
    for j in pending:  # a failure ended the stages before the budget: what was seen decides nothing
        if j in final and final[j].decision == "continue":
            final[j] = replace(final[j], decision="inconclusive")
    return Sequential(outs, procs, {j: tuple(x) for j, x in looks.items()}, final, a_median, b_median, pairs,
                      margins, decided_s, time.monotonic() - t0, budget)
