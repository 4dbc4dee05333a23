"""Cells every format of the gate shares: Δ% with its CI, the counts' change, a row's verdict,
the headline, the CI's level — one vocabulary for the console, the summary and JUnit."""

from __future__ import annotations

from cyclebench.gate import BROKEN, COUNTS, FAIL, NEW, PASS, REMOVED, UNDECIDED, Gate, GateRow

# a row's verdict, lower case everywhere; only the gate's own verdict, heading its headline, is upper case
WORD = {FAIL: "fail", PASS: "pass", UNDECIDED: "undecided", NEW: "new", REMOVED: "removed", BROKEN: "broken"}
COUNTED = {FAIL: "failed", PASS: "passed", UNDECIDED: "undecided", NEW: "new", REMOVED: "removed",
           BROKEN: "broken"}  # the headline's tally: "1 failed, 1 passed"


def pct(x: float) -> str:
    return f"{100 * x:+.2f}%"


def delta(r: GateRow) -> str:
    """Δ% of time with its repeated CI, ``-`` without a time comparison."""
    lk = r.look
    return "-" if lk is None else f"{pct(lk.diff)} [{pct(lk.low)}, {pct(lk.high)}]"


def counts(r: GateRow) -> str:
    """Δ% of instructions per op (exact), or why not."""
    c = r.counts
    if c is None:
        return "-"
    ch = c.change
    if ch is None:
        return "not counted"
    return pct(ch) + ("" if c.exact else " (not exact)")


def verdict(r: GateRow, counts_threshold: float | None = None) -> str:
    """The row's status and what decided it, time's judgement first: ``fail (> 2%)`` (Δ%'s CI
    above the threshold), ``pass (< 2%)`` (below it), ``fail (Ir > 0.5%)`` when the counts
    decided (with ``counts_threshold``); the bare word otherwise (undecided, new, removed, broken:
    the row's why says more)."""
    word = WORD[r.status]
    if r.status not in (FAIL, PASS):
        return word
    if r.time_status == r.status:
        return f"{word} ({'>' if r.status == FAIL else '<'} {100 * r.threshold:g}%)"
    if r.counts_status == r.status and counts_threshold is not None:
        return f"{word} (Ir {'>' if r.status == FAIL else '≤'} {100 * counts_threshold:g}%)"
    return word


def benchmarks(n: int) -> str:
    return f"{n} benchmark{'s' * (n != 1)}"


def judged(g: Gate) -> int:
    """How many benchmarks the gate judged (both sides have them): its α is split over these."""
    return max(1, sum(1 for r in g.rows if r.status not in (NEW, REMOVED)))


def level(g: Gate) -> str | None:
    """The confidence level of each benchmark's repeated CI of Δ%: 1 − α/m (experiments/ci.py
    splits the gate's α over its m benchmarks, Bonferroni), as ``99.5%``; None without a time
    comparison (--gate counts) or an α stored."""
    alpha = g.facts.get("alpha")
    if g.gate == COUNTS or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        return None
    return f"{100 * (1 - alpha / judged(g)):.4g}%"


def correction(g: Gate) -> str:
    """α for the whole gate and how it was split, in words: "α 0.01 for the gate, 0.005 for each
    of 2 benchmarks (Bonferroni): repeated 99.5% CIs"."""
    alpha, m = g.facts.get("alpha"), judged(g)
    if not isinstance(alpha, (int, float)):
        return "α not recorded"
    each = f", {alpha / m:g} for each of {benchmarks(m)} (Bonferroni)" if m > 1 else ""
    return f"α {alpha:g} for the gate{each}" + (f": repeated {level(g)} CIs" if level(g) else "")


def headline(g: Gate) -> str:
    """One line: the gate's verdict, how many of each, base → head."""
    n = {s: sum(1 for r in g.rows if r.status == s) for s in WORD}
    parts = [f"{n[s]} {COUNTED[s]}" for s in (FAIL, BROKEN, UNDECIDED, PASS, NEW, REMOVED) if n[s]]
    return (f"cyclebench ci: {WORD[g.status].upper()} — {', '.join(parts) or 'no benchmark'} · "
            f"{g.base.short} → {g.head.short}")
