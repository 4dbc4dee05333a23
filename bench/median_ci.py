"""The CI of a median, two ways: coverage and cost. Figures, not pass/fail.

    .venv/bin/python bench/median_ci.py [--reps 2000] [--seed 1]

For samples of known median drawn from shapes a benchmark's costs take, prints how often each
95% interval holds the true median, and its width and cost:

* ``order``: ``stats.estimators.median_ci``, the distribution-free interval of order
  statistics (Conover 1999 §3.2), what cyclebench uses;
* ``boot``: the 2,000-resample percentile bootstrap of the median (Efron & Tibshirani 1993
  §13.3) it replaced, run here for the comparison.

The shapes: ``normal``; ``lognormal`` (σ 0.5: a long slow side); ``slow-third`` (a third of the
values 1–40% slow, as on the project's AMD guest, docs/method.md §2's trim); ``ticks`` (whole
ticks of a batch of 16, so many ties: per-sample costs are whole timer ticks over n). Sizes:
rounds of a run (3–30) up to a compare's per-sample count (~2,000). Coverage is a binomial
proportion over ``--reps`` draws: ±0.5% at 2,000 draws (one standard error at 95%); the bootstrap
at n ≥ 1000 is drawn a fifth as often (its 70 ms an interval).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from cyclebench.stats.estimators import median_ci
from cyclebench.stats.resample import draw_medians

Shape = Callable[[np.random.Generator, int], np.ndarray]
SHAPES: dict[str, tuple[Shape, float]] = {  # draw, true median
    "normal": (lambda g, n: g.normal(300.0, 3.0, n), 300.0),
    "lognormal": (lambda g, n: 300.0 * g.lognormal(0.0, 0.5, n), 300.0),
    "slow-third": (lambda g, n: 300.0 * np.where(g.random(n) < 1 / 3, 1 + g.uniform(0.01, 0.4, n),
                                                 1 + g.uniform(-0.005, 0.005, n)), float("nan")),
    "ticks": (lambda g, n: np.round(g.normal(4800.0, 6.0, n)) / 16, 300.0),
}
SIZES = (3, 5, 10, 30, 100, 300, 2000)


def boot_ci(x: np.ndarray, rng: np.random.Generator, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap of the median, 2,000 resamples (cyclebench's interval before
    median_ci)."""
    if np.ptp(x) == 0:
        return float(x[0]), float(x[0])
    meds = draw_medians(x, rng.integers(0, len(x), size=(2000, len(x))))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(meds, [tail, 100 - tail])
    return float(low), float(high)


def true_median(shape: Shape, seed: int) -> float:
    """The median of a shape with no closed form, from 4 million draws (its standard error is
    ~0.0005% of the value here)."""
    return float(np.median(shape(np.random.default_rng(seed + 99), 4_000_000)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000, help="samples drawn per shape and size")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    se = 100 * (0.95 * 0.05 / args.reps) ** 0.5
    print(f"95% CIs of the median: coverage over {args.reps} samples (±{se:.1f}% at one standard error; boot at "
          f"n ≥ 1000 over {args.reps // 5}: ±{se * 5 ** 0.5:.1f}%), median width relative to the median, time per "
          "interval")
    print(f"{'shape':<11} {'n':>5}  {'order cover':>11} {'width':>7} {'time':>8}  {'boot cover':>10} {'width':>7} "
          f"{'time':>8}")
    for name, (shape, m) in SHAPES.items():
        truth = m if np.isfinite(m) else true_median(shape, args.seed)
        for n in SIZES:
            g = np.random.default_rng([args.seed, n])
            figures = []
            for method in ("order", "boot"):
                hits, widths, spent = 0, [], 0.0
                reps = args.reps if method == "order" or n < 1000 else args.reps // 5
                for _ in range(reps):
                    x = shape(g, n)
                    t0 = time.perf_counter()
                    lo, hi = median_ci(x) if method == "order" else boot_ci(x, g)
                    spent += time.perf_counter() - t0
                    hits += lo <= truth <= hi
                    widths.append((hi - lo) / truth)
                figures.append(f"{100 * hits / reps:10.1f}% {100 * float(np.median(widths)):6.2f}% "
                               f"{1e3 * spent / reps:6.2f}ms")
            print(f"{name:<11} {n:>5}  {figures[0]}  {figures[1]}")


if __name__ == "__main__":
    main()
