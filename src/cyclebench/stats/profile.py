"""A flat profile with the probe's own cost subtracted (Evans: "Profiling has subtracted its
own overheads", docs/references.md#malloc-profiling-freebsd-2008; gprof's flat profile, Graham, Kessler &
McKusick 1982). Pure: numbers in, rows out.

A tracing probe (uftrace's mcount hooks) costs, per call of an instrumented function, ``inner``
between the call's own entry and exit timestamps and ``outer`` in its caller's span. Both are
measured on this machine from a trace of suite/profile/probe.c (docs/method.md §10). ``inner``
depends on the body: out of order, the probe's instructions overlap a latency-bound body's
dependent chain, so it is measured on two kinds — an empty body (``inner_hi``: 129 cycles~ on
this Xeon VM) and a 300-add chain (``inner_lo``: 117) — and a body's own overlap is taken to lie
between them: the midpoint is subtracted and the half-range is part of the ±. A child call
that makes calls of its own costs its caller less than a leaf (``outer_branch``: 132 cycles~
against ``outer``: 152 here). So for one call with c child calls, b of them making calls:

    self  = raw self − inner − (c − b) · outer − b · outer_branch
    total = max(self, 0) + Σ over callees (calls per call) × their total     (up the call graph)

gprof's propagation of the children's time along the arcs, with the median per call for the
mean: a parent's total is never below its children's, by construction, and one interrupted or
noisy call moves no total (a function called once has no median of its own to protect it).

Every median is read on the trace's clock grid (``grid_median``): uftrace's timestamps come from
CLOCK_MONOTONIC, which advances in 10 ns steps on an AMD EPYC (Zen 4) guest (36.7 cycles~: 88% of
a trace's steps are multiples of 10 ns) and 1 ns steps on Xeon; a plain median of a few thousand
such durations lands on a grid point, and moved chain300's self by a whole tick between runs.

Limits: the probe is measured in the best case (hot caches, a loop); a real
program's probe also evicts its lines. A caller's per-child cost moved with the caller here by
up to 6% (leaf children: 151–152 cycles~ in three callers; children with children: 132.5–140
in three): ``CONTEXT`` of it per child call is part of the ±.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

from cyclebench.model import TimedProfileRow

UFTRACE, IN_PROCESS = "uftrace", "in-process"  # Probe.source: uftrace's mcount hooks, or engine/probe.c
CONTEXT = 0.06  # share of the per-child-call cost a caller's context may move (132.5–140 in three callers)
COMPENSATION_NOTE = 0.5  # a figure whose compensation exceeds this share of its raw value is marked
STEADY_CALLS = 20  # calls a function needs for its two halves to be compared (steadiness)


class CallsLike(Protocol):  # runner.profile.Calls
    total: list[float]
    self: list[float]
    children: list[int]
    descendants: list[int]
    branches: list[int]
    id: list[int]
    parent: list[int]
    depth: list[int]


@dataclass(frozen=True)
class Probe:
    """The probe's cost per call, in the profile's unit: inside the call's span around a
    latency-bound body (``inner_lo``) and an empty one (``inner_hi``), in the caller's span per
    child call that is a leaf (``outer``) or makes calls (``outer_branch``, = ``outer`` if not
    given), what the inner midpoint and the outer parts may be off by in another process
    (``u_inner``, ``u_outer``: combine), and the trace's clock resolution in the same unit
    (``tick``: its medians are read on that grid, grid_median)."""

    inner_lo: float
    inner_hi: float
    outer: float
    outer_branch: float | None = None
    u_inner: float = 0.0
    u_outer: float = 0.0
    tick: float = 0.0
    u_scale: float = 0.0  # relative: what the clock's conversion (ticks → cycles~) may be off by
    source: str = UFTRACE

    @property
    def inner(self) -> float:
        """What is subtracted inside each call's own span: the midpoint of the two bodies."""
        return (self.inner_lo + self.inner_hi) / 2

    @property
    def inner_pm(self) -> float:
        """± of ``inner``: half the range between the bodies (what out-of-order overlap can
        hide) and its drift between processes (which holds what is left of the clock's grid
        once medians are read on it: grid_median)."""
        return abs(self.inner_hi - self.inner_lo) / 2 + self.u_inner

    @property
    def branch(self) -> float:
        return self.outer if self.outer_branch is None else self.outer_branch

    @property
    def outer_pm(self) -> float:
        """± of an outer part per child call: its drift between processes and the caller's context."""
        return self.u_outer + CONTEXT * max(abs(self.outer), abs(self.branch))

    @property
    def whole(self) -> float:
        return self.inner + self.outer

    def to_dict(self) -> dict[str, float | str]:
        return {"inner_lo": self.inner_lo, "inner_hi": self.inner_hi, "inner": self.inner,
                "inner_pm": self.inner_pm, "outer": self.outer, "outer_branch": self.branch,
                "outer_pm": self.outer_pm, "tick": self.tick, "whole": self.whole, "u_scale": self.u_scale,
                "source": self.source}


GRID_SHARE = 0.7  # of a trace's timestamp steps on a clock's grid: 88% on a 10 ns clock here, ~1/t off it


def resolution(steps: Sequence[int], largest: int = 100) -> int:
    """The clock resolution of a trace, in ns: the largest step t ≤ ``largest`` of which at least
    GRID_SHARE of the non-zero ``steps`` (differences between consecutive timestamps, ns) are
    exact multiples; 1 when none is (a clock with 1 ns steps, or too few steps to tell)."""
    x = np.asarray([v for v in steps if v > 0], dtype=np.int64)
    if len(x) < 100:
        return 1
    return next((t for t in range(largest, 1, -1) if np.mean(x % t == 0) >= GRID_SHARE), 1)


def grid_median(x: ArrayLike, w: float) -> float:
    """The median of values read on a grid of width ``w`` (a clock's tick), interpolated within
    the cell around the plain median: L + w · (n/2 − F) / f, L the cell's lower edge, F the values
    below it, f those in it — the grouped-data median (statistics.median_grouped, which wants
    values exactly on the grid; these are off it by what is subtracted per call). The plain
    median when ``w`` ≤ 0. NaN for no values."""
    a = np.asarray(x, dtype=float)
    if len(a) == 0:
        return float("nan")
    m = float(np.median(a))
    if w <= 0:
        return m
    lo = m - w / 2
    # Where the two middle values of an even count lie a tick apart, the cell's edges fall on values:
    # which side of an edge a value lies must not depend on the rounding of what was subtracted from it
    # (grid_median(x − c) read 0.66 cycles~ off grid_median(x) − c in 84 of 5,000 draws of such x).
    tol = 1e-9 * max(w, abs(m))
    below, inside = int(np.sum(a < lo - tol)), int(np.sum((a >= lo - tol) & (a < m + w / 2 - tol)))
    return lo + w * (len(a) / 2 - below) / inside if inside else m


def combine(draws: list[tuple[float, float, float, float]], tick: float = 0.0, u_scale: float = 0.0,
            source: str = UFTRACE) -> Probe:
    """Probe measurements in k processes, each (inner_lo, inner_hi, outer, outer_branch), as one:
    the means, and as u_inner (of the inner midpoint) and u_outer (the larger of the two outer
    parts') what one more process may differ by — the profiled program's, whose own probe is never
    measured: a 95% prediction interval for one new draw, t(0.975, k−1) · sd · √(1 + 1/k). The probe
    cost moves between processes by up to a tick of a 10 ns clock, the same in every function of
    the process (an AMD EPYC guest: chain300's raw self 101–117 ns over 12 processes, chain300 less
    the empty leaf 72.6–77.1 ns), and 1 sd of 4 processes covered it in 5 runs of 10.
    ``tick``: the trace's resolution; ``u_scale``, ``source``: as Probe's."""
    lo, hi, outer, branch = (np.asarray(x, dtype=float) for x in zip(*draws, strict=True))
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    k = len(lo)
    widen = 0.0
    if k > 1:
        from scipy.stats import t as student_t  # where it is used (docs/architecture.md: imports)

        widen = float(student_t.ppf(0.975, k - 1)) * float(np.sqrt(1 + 1 / k))

    def sd(x: np.ndarray) -> float:
        return widen * float(np.std(x, ddof=1)) if k > 1 else 0.0
    return Probe(inner_lo=float(lo.mean()), inner_hi=float(hi.mean()), outer=float(outer.mean()),
                 outer_branch=float(branch.mean()), u_inner=sd((lo + hi) / 2), u_outer=max(sd(outer), sd(branch)),
                 tick=tick, u_scale=u_scale, source=source)


def _totals(own: np.ndarray, ids: np.ndarray, parent: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Per call: max(own, 0) plus the totals of its child calls, deepest calls first."""
    total = np.clip(own, 0, None)
    pos = np.full(int(ids.max(initial=-1)) + 2, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    up = np.where(parent >= 0, pos[np.clip(parent, 0, None)], -1)  # a parent not recorded: a root
    for d in range(int(depth.max(initial=0)), 0, -1):
        at = (depth == d) & (up >= 0)
        np.add.at(total, up[at], total[at])
    return total


def _totals_shown(fn: np.ndarray, ids: np.ndarray, parent: np.ndarray, depth: np.ndarray, total: np.ndarray,
                  own: np.ndarray, n: int, tick: float = 0.0) -> tuple[list[float], np.ndarray]:
    """Per function, deepest first (by mean depth): its median self (at least 0) plus the sum
    over the functions it calls of (their calls per call of it) × (their total shown) — gprof's
    propagation along the call graph's arcs, with medians for means. A function that calls
    itself keeps the median of its calls' own totals (its recursion is in them, not in the
    arcs), raised to that sum. Not the median of its calls' totals: a function called once
    (main) has no median to protect it, and its one total summed every child call's outliers
    and clipped noise — 4,099,269 and 30,587,802 cycles~ for main in two identical runs whose
    children added up to ~0.53M. Returns the totals and the arcs: [f, g] = calls of g per call of f."""
    pos = np.full(int(ids.max(initial=-1)) + 2, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    up = np.where(parent >= 0, pos[np.clip(parent, 0, None)], -1)
    caller = np.where(up >= 0, fn[np.clip(up, 0, None)], -1)
    calls = np.bincount(fn, minlength=n).astype(float)
    edges = np.zeros((n, n))  # edges[f, g]: calls of g made by calls of f
    np.add.at(edges, (caller[caller >= 0], fn[caller >= 0]), 1.0)
    recursive = np.diag(edges) > 0
    np.fill_diagonal(edges, 0.0)
    shown = [0.0] * n
    mean_depth = [float(depth[fn == f].mean()) if calls[f] else 0.0 for f in range(n)]
    for f in sorted(range(n), key=lambda f: -mean_depth[f]):
        if calls[f]:
            below = float(sum(edges[f, g] / calls[f] * shown[g] for g in np.nonzero(edges[f])[0]))
            if recursive[f]:
                shown[f] = max(grid_median(total[fn == f], tick), below)
            else:
                shown[f] = max(grid_median(own[fn == f], tick), 0.0) + below
    per_call = edges / np.maximum(calls, 1)[:, None]
    return shown, per_call


def _unsteady(own: np.ndarray, ids: np.ndarray, tick: float, pm: float | None) -> str | None:
    """Why a function's figure is not to be trusted, or None: the first and the second half of its
    calls (in the order they began) have medians further apart than its ± and the clock's tick
    — the host changed under it (a state the calibration blocks before, during and after the
    program did not see: chain3000 at 2,823 cycles~ in one of 10 runs with both CPUs loaded on an
    AMD EPYC Zen 4 guest). Not judged below STEADY_CALLS calls."""
    if len(own) < STEADY_CALLS or pm is None:
        return None
    order = np.argsort(ids, kind="stable")
    half = len(order) // 2
    a, b = grid_median(own[order[:half]], tick), grid_median(own[order[half:]], tick)
    if abs(a - b) <= pm + tick:
        return None
    return f"its first and second half of calls read {a:,.4g} and {b:,.4g}: the host changed under it"


def flat_profile(calls: Mapping[str, CallsLike], scale: float = 1.0,
                 probe: Probe | None = None) -> list[TimedProfileRow]:
    """One row (model.TimedProfileRow) per function, the largest share first: calls; raw and compensated self and
    total per call — medians over the calls (a call the host interrupted without a schedule
    event, a VM exit, moves a mean by its whole length: 3,560 against a median of 2,992 on a
    3000-add function here), the compensated mean self beside them (gprof's time/calls); the
    ± of self and total per call (the probe's, once per probe they subtract: a systematic
    error, so it adds up linearly); ``comp_share``, the compensation's share of the raw self
    (``compensated`` when over COMPENSATION_NOTE); ``pct``, the function's share of the
    profile from the figures shown: calls × max(self, 0). Durations are multiplied by ``scale``;
    without ``probe`` the compensated figures equal the raw ones."""
    names = list(calls)
    if not names:
        return []
    cat = {k: np.concatenate([np.asarray(getattr(calls[n], k), dtype=float) for n in names])
           for k in ("total", "self", "children", "descendants", "branches", "id", "parent", "depth")}
    fn = np.concatenate([np.full(len(calls[n].total), i) for i, n in enumerate(names)])
    raw_total, raw_self = cat["total"] * scale, cat["self"] * scale
    kids, desc, br = cat["children"], cat["descendants"], cat["branches"]
    own = raw_self - probe.inner - (kids - br) * probe.outer - br * probe.branch if probe is not None else raw_self
    total = _totals(own, cat["id"].astype(np.int64), cat["parent"].astype(np.int64), cat["depth"].astype(np.int64))
    tick = probe.tick if probe is not None else 0.0
    shown, arcs = _totals_shown(fn, cat["id"].astype(np.int64), cat["parent"].astype(np.int64), cat["depth"], total,
                          own, len(names), tick)
    rows: list[TimedProfileRow] = []
    for i, name in enumerate(names):
        at = fn == i
        s, t = grid_median(own[at], tick), shown[i]
        raw_s = grid_median(raw_self[at], tick)
        if probe is not None:  # the probe's parts, and the clock's conversion of the figure itself
            self_pm = probe.inner_pm + float(kids[at].mean()) * probe.outer_pm + abs(s) * probe.u_scale
            total_pm = ((1 + float(desc[at].mean())) * probe.inner_pm + float(desc[at].mean()) * probe.outer_pm
                        + abs(t) * probe.u_scale)
        else:
            self_pm = total_pm = None
        share = (raw_s - s) / raw_s if raw_s > 0 else (1.0 if raw_s != s else 0.0)
        unsteady = _unsteady(own[at], cat["id"][at], tick, self_pm) if probe is not None else None
        rows.append(TimedProfileRow(name, int(at.sum()), raw_s, s, float(own[at].mean()), self_pm,
                                    grid_median(raw_total[at], tick), t, total_pm, share,
                                    probe is not None and share > COMPENSATION_NOTE,
                                    callees={names[g]: float(arcs[i, g]) for g in np.nonzero(arcs[i])[0]},
                                    untrustworthy=unsteady))
    whole = sum(r.calls * max(r.self, 0.0) for r in rows) or 1.0
    rows = [replace(r, pct=100.0 * r.calls * max(r.self, 0.0) / whole) for r in rows]
    return sorted(rows, key=lambda r: (-r.pct, -r.total))


FAN = 10  # child calls of a calibration fan (CBP_FAN, engine/probe.h)


def block_draw(calls: Mapping[str, CallsLike], plain_chain: float, tick: float) -> tuple[float, float, float, float]:
    """One calibration block of the in-process probe (engine/probe.c), in ticks: (inner_lo,
    inner_hi, outer, outer_branch) as combine takes them. The inner part is read three ways —
    an empty body called from a loop, the same called from a caller's loop (a fan's: ~10 cycles~
    more on an AMD EPYC Zen 4 guest, 98.7 against 89), a 300-add chain's span less the same chain's
    ticks per call uninstrumented in a loop (``plain_chain``, whose call the chain hides: 300.8
    cycles~ a call) — and inner_lo/inner_hi are the least and the most of them:
    the probe's cost moves with the calling context more than with the body once its stamps are
    fenced. outer/outer_branch as the uftrace probe's (experiments/profile.py): a fan of FAN
    instrumented leaves against one of plain leaves, and a caller of fans. Medians read on the
    clock's grid (``tick``, grid_median). NaN where a part is missing."""
    def med(name: str, what: str = "total", root: bool | None = None) -> float:
        c = calls.get(name)
        if c is None:
            return float("nan")
        x = np.asarray(getattr(c, what), dtype=float)
        if root is not None:
            x = x[(np.asarray(c.parent) < 0) == root]
        return grid_median(x, tick) if len(x) else float("nan")

    chain = med("chain") - plain_chain
    inner = [med("empty", root=True), med("empty", root=False), chain]
    outer = (med("fan", "self") - med("fan_plain")) / FAN
    branch = outer + (med("top", "self") - med("fan", "self")) / FAN
    return float(np.min(inner)), float(np.max(inner)), outer, branch


def clock_of(before: Sequence[float], after: Sequence[float],
             during: Sequence[float] = ()) -> tuple[float, float, float, float]:
    """Core cycles per tick from the calibration blocks' add chains before, after and during the
    program: (scale, the before side's median, the after side's, u_scale). scale is the median
    over every block (the interleaved ones are the program's own moments); u_scale, relative, the
    larger of half the difference between the sides and a 95% prediction interval for one more
    block, t(0.975, k−1) · sd · √(1 + 1/k): a function's calls may all fall in one short stretch
    (chain3000's 100 calls take ~80 µs), whose clock is one moment's, not the mean's — the clock
    moved by 1.4–4% between blocks of one process on an AMD EPYC Zen 4 guest, and the 95% interval
    of the mean covered chain3000 in 12 of 20 runs. NaN scale where no block has a ratio."""
    b = np.asarray([r for r in before if r > 0], dtype=float)
    a = np.asarray([r for r in after if r > 0], dtype=float)
    every = np.concatenate([b, a, np.asarray([r for r in during if r > 0], dtype=float)])
    if not len(every):
        return float("nan"), float("nan"), float("nan"), 0.0
    rb = float(np.median(b)) if len(b) else float(np.median(every))
    ra = float(np.median(a)) if len(a) else rb
    scale = float(np.median(every))
    spread = 0.0
    if len(every) > 1:
        from scipy.stats import t as student_t  # where it is used (docs/architecture.md: imports)

        k = len(every)
        spread = float(student_t.ppf(0.975, k - 1)) * float(np.std(every, ddof=1)) * float(np.sqrt(1 + 1 / k))
    return scale, rb, ra, max(abs(rb - ra) / 2, spread) / scale
