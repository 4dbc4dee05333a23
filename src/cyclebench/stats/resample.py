"""The medians of many bootstrap resamples, fast: the bootstraps' inner loop (estimators' CI of
a median, ab's two-level bootstrap over processes, the sequential design's standard error).

A resample's median is an order statistic of the values it drew, so it is found from the
*ranks* it drew: sorting rows of small integers (radix-sorted by numpy) instead of
partitioning rows of floats. 2,000 resamples of 320 values: 14 → 5.5 ms here (AMD EPYC Zen 4
guest), the same numbers to the bit as ``np.median`` / ``np.nanmedian`` of the drawn values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_medians"]


def draw_medians(x: np.ndarray, idx: np.ndarray, valid: np.ndarray | None = None) -> np.ndarray:
    """The median of each row of ``x[idx]``: shape (rows,), float64.

    ``x``: 1-D values, all finite (else the result is np.median's, computed the slow way);
    ``idx``: 2-D integer indices into ``x``, one resample a row; ``valid``: None (every drawn
    value counts: ``np.median(x[idx], axis=1)``) or a boolean mask the shape of ``idx``
    (only the values it marks count: ``np.nanmedian`` with the others NaN; a row with none
    gives NaN). Even counts give the mean of the two middle values, as numpy's do.
    """
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        vals = x[idx]
        if valid is None:
            return np.median(vals, axis=1)
        vals[~valid] = np.nan
        return np.nanmedian(vals, axis=1)
    n = len(x)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    # n itself is the rank of a value that does not count: it sorts after every real one
    rank = np.empty(n, dtype=np.int16 if n < np.iinfo(np.int16).max else np.int64)
    rank[order] = np.arange(n)
    r = rank[idx]
    if valid is None:
        count = np.full(len(idx), idx.shape[1])
    else:
        r[~valid] = n
        count = valid.sum(axis=1)
    r.sort(axis=1)
    rows = np.arange(len(idx))
    lo, hi = np.maximum(count - 1, 0) // 2, np.maximum(count, 1) // 2
    a, b = xs[np.minimum(r[rows, lo], n - 1)], xs[np.minimum(r[rows, hi], n - 1)]
    out = np.where(lo == hi, a, (a + b) / 2)
    return np.where(count > 0, out, np.nan)
