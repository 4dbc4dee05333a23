"""Cells every format of the gate shares: Δ% with its CI, the counts' change, a row's verdict."""

from __future__ import annotations

from cyclebench.gate import BROKEN, FAIL, NEW, PASS, REMOVED, UNDECIDED, Gate, GateRow

WORD = {FAIL: "FAIL", PASS: "pass", UNDECIDED: "undecided", NEW: "new", REMOVED: "removed", BROKEN: "broken"}


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


def verdict(r: GateRow) -> str:
    """The row's status and, for a failure, what it was held to."""
    word = WORD[r.status]
    if r.status == FAIL and r.time_status == FAIL:
        return f"{word} (> {100 * r.threshold:g}%)"
    return word


def headline(g: Gate) -> str:
    """One line: the gate's verdict, how many of each, base → head."""
    n = {s: sum(1 for r in g.rows if r.status == s) for s in WORD}
    parts = [f"{n[s]} {WORD[s]}" for s in (FAIL, BROKEN, UNDECIDED, PASS, NEW, REMOVED) if n[s]]
    return (f"cyclebench ci: {WORD[g.status].upper()} — {', '.join(parts) or 'no benchmark'} · "
            f"{g.base.short} → {g.head.short}")
