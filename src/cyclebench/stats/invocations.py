"""Figures of a benchmark measured as whole invocations of a program, each giving one figure per
operation in its own process: a Google Benchmark executable's benchmark under `run --gbench`
(experiments.gbench), where the library's own timing loop is the batch and the invocation the
replicate. No batch samples exist to fit, so the estimate is over invocations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import numpy as np

from cyclebench.model import PerProcess, Result
from cyclebench.stats.estimators import median_ci
from cyclebench.stats.result import Z_QUARTILE, with_calibration

MIN_INVOCATIONS = 3  # fewer give no spread to speak of: the row says so instead of a CI


def invocation_fields(row: Result, ns: Sequence[float], ghz: Sequence[float | None]) -> Result:
    """``row`` (kind timing, unit ns) with its figures over invocations: ``ns`` (one per
    invocation, ns per iteration as the program measured it: experiments.gbench.figures says
    which of its times) and ``ghz`` (that invocation's core clock in GHz, None where it was not
    measured).

    per_op = median = the median invocation; its 95% CI the distribution-free one of the median
    (stats.estimators.median_ci: order statistics, ≥ 95% for i.i.d. invocations of any
    continuous distribution; (min, max) below 6 invocations); min, MAD, robust CV, mean, CV over
    the invocations; each invocation's figure in ``per_invocation`` and ``per_process`` (the
    exports' replicates). cycles~, only when every invocation has its clock: each invocation's
    ns × its own GHz, summarised the same way, the CI widened by the calibration's floor
    (stats.result.with_calibration: the probe's add chains give no fixed part to estimate);
    ``core_ghz`` their median. Fewer than MIN_INVOCATIONS finite figures: status error, no
    figure, the reason said."""
    use = [np.isfinite(v) and v > 0 for v in ns]
    ghz = [g for g, u in zip(ghz, use, strict=True) if u]
    x = np.asarray([v for v, u in zip(ns, use, strict=True) if u], dtype=float)
    row = replace(row, unit="ns", n_samples=len(ns), rounds=len(x))
    if len(x) < MIN_INVOCATIONS:
        if row.status == "ok":
            row = replace(row, status="error", reason=f"{len(x)} invocation(s) gave a time: at least "
                                                      f"{MIN_INVOCATIONS} needed")
        return row
    per_op = float(np.median(x))
    lo, hi = median_ci(x)
    mad = float(np.median(np.abs(x - per_op)))
    row = replace(row, per_op=per_op, ci_low=lo, ci_high=hi, median=per_op, median_ci_low=lo, median_ci_high=hi,
                  min=float(x.min()), mad=mad, rcv=mad / Z_QUARTILE / per_op, mean=float(x.mean()),
                  cv=float(x.std(ddof=1) / x.mean()), confidence=0.95, method="invocations", ns_per_op=per_op,
                  per_invocation=tuple(float(v) for v in x))
    per_process: dict[str, list[float]] = {"per_op": [float(v) for v in x]}
    if all(g is not None and g > 0 for g in ghz):
        g = np.asarray(ghz, dtype=float)
        c = x * g
        cyc = float(np.median(c))
        clo, chi = median_ci(c)
        cmad = float(np.median(np.abs(c - cyc)))
        row = replace(row, cycles_per_op=cyc, cycles_ci_low=clo, cycles_ci_high=chi, cycles_min=float(c.min()),
                      cycles_rcv=cmad / Z_QUARTILE / cyc, core_ghz=float(np.median(g)))
        row = with_calibration(row, 0.0)
        per_process["cycles_per_op"] = [float(v) for v in c]
    return replace(row, per_process=cast(PerProcess, per_process))
