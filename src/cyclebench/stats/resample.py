"""Medians of many rows at once, fast and to numpy's bit: of bootstrap resamples (the inner loop
of estimators' CI of a median, ab's two-level bootstrap over processes, the sequential design's
standard error), and of rows with gaps (each round's Theil–Sen slopes, history's neighbourhoods).

A resample's median is an order statistic of the values it drew, so it is found from the
*ranks* it drew: rows of small integers partitioned around the middle (sorted, radix-sorted
by numpy, where the rows' counts differ) instead of rows of floats partitioned. 2,000 resamples
of 320 values: 14 → 5.5 ms sorting ranks (AMD EPYC Zen 4 guest); of 880, 60 → 17 ms partitioning
them instead of sorting (Zen 3 guest). The same numbers to the bit as ``np.median`` /
``np.nanmedian`` of the drawn values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_medians", "row_nanmedians"]


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
    lo, hi = np.maximum(count - 1, 0) // 2, np.maximum(count, 1) // 2
    if valid is None and r.shape[1]:
        # every row has the same middle: partitioning the ranks around it is enough, 3.5x faster
        # than sorting them (2,000 rows of 880: 60 -> 17 ms, AMD EPYC Zen 3 guest)
        r.partition(sorted({int(lo[0]), int(hi[0])}), axis=1)
    else:
        r.sort(axis=1)
    rows = np.arange(len(idx))
    a, b = xs[np.minimum(r[rows, lo], n - 1)], xs[np.minimum(r[rows, hi], n - 1)]
    out = np.where(lo == hi, a, (a + b) / 2)
    return np.where(count > 0, out, np.nan)


def row_nanmedians(a: np.ndarray) -> np.ndarray:
    """``np.nanmedian(a, axis=1)`` of a 2-D array, to the bit, without its warning for a row of
    NaN only (NaN there): one sort of the rows (NaN sorts last) instead of np.nanmedian's path for
    small rows through numpy.ma, 0.38 → 0.08 ms on a 40×64 matrix of round slopes here."""
    s = np.sort(np.asarray(a, dtype=float), axis=1)
    if s.shape[1] == 0:
        return np.full(len(s), np.nan)
    count = np.sum(~np.isnan(s), axis=1)
    rows = np.arange(len(s))
    lo, hi = np.maximum(count - 1, 0) // 2, np.maximum(count, 1) // 2
    x, y = s[rows, lo], s[rows, hi]
    out = np.where(lo == hi, x, (x + y) / 2)
    return np.where(count > 0, out, np.nan)
