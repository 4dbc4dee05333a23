"""Records of `cyclebench ci`, the pull request's gate, that cross rooms: what each benchmark came
to and the gate as a whole (experiments/ci → report/ci, report/junit; docs/ci.md says how each is
judged).

Imports nothing of the project but model (import-linter checks it), like prediction.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cyclebench.model import ComparisonRow

TIME, COUNTS, BOTH = "time", "counts", "both"  # --gate
# a benchmark's outcome: over its threshold, below it, the budget ended with the threshold in its
# CI, only in head, only in base, a side that did not run (crashed, failed to verify, timed out)
FAIL, PASS, UNDECIDED, NEW, REMOVED, BROKEN = "fail", "pass", "undecided", "new", "removed", "broken"
_ORDER = {BROKEN: 0, FAIL: 1, UNDECIDED: 2, PASS: 3, NEW: 4, REMOVED: 5}


@dataclass(frozen=True)
class Ref:
    """A revision: full sha, short sha, subject line."""

    sha: str
    short: str
    subject: str


@dataclass(frozen=True)
class Relative:
    """The time comparison's last look, relative: Δ the median of the pairs' head/base − 1, its
    repeated CI [low, high], the pairs of invocations; ``base`` the base's per-op figure (its
    stored result's, in the rows' unit) and ``head`` = base × (1 + Δ), the head that Δ implies
    (not head's own figure, which history gives: the median of ratios is not the ratio of medians)."""

    diff: float
    low: float
    high: float
    pairs: int
    base: float
    head: float


@dataclass(frozen=True)
class Counted:
    """A benchmark's instructions per op on each side under callgrind, read twice each:
    ``base``/``head`` the first reading, ``exact`` whether each side's two readings agreed
    (or why not: ``reason``)."""

    base: float | None
    head: float | None
    exact: bool
    reason: str | None = None

    @property
    def change(self) -> float | None:
        """head/base − 1 (None without both)."""
        if self.base is None or self.head is None or self.base <= 0:
            return None
        return self.head / self.base - 1


@dataclass(frozen=True)
class GateRow:
    """One benchmark's outcome: its label, status (FAIL, PASS, UNDECIDED, NEW, REMOVED, BROKEN),
    the threshold it was held to (relative), compare's row of its time comparison, the relative
    look, the counts, each gate's own verdict, and why (one line)."""

    label: str
    status: str
    threshold: float
    row: ComparisonRow | None = None
    look: Relative | None = None
    counts: Counted | None = None
    time_status: str | None = None
    counts_status: str | None = None
    why: str = ""

    def change(self) -> float:
        """Δ for ordering: time's, else the counts', else 0."""
        if self.look is not None:
            return self.look.diff
        c = self.counts.change if self.counts is not None else None
        return c if c is not None else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The row as stored in the run's summary and written by --json."""
        lk, c = self.look, self.counts
        return {"benchmark": self.label, "status": self.status, "threshold": self.threshold, "why": self.why,
                "time": None if lk is None else {"change": lk.diff, "low": lk.low, "high": lk.high,
                                                 "pairs": lk.pairs, "base": lk.base, "head": lk.head,
                                                 "verdict": self.time_status},
                "counts": None if c is None else {"base": c.base, "head": c.head, "change": c.change,
                                                  "exact": c.exact, "verdict": self.counts_status}}


@dataclass(frozen=True)
class Gate:
    """The gate's run: its id, the two revisions and how the base was chosen, the rows, which gate
    judged (TIME, COUNTS, BOTH) and the counts threshold, the sitting's facts (host, CPU, load
    before and after, disturbed batches, builds, ``confinement``: ``bwrap`` or ``unconfined:
    REASON`` as model.Revisions has it, α and its correction, budget)."""

    run_id: int
    base: Ref
    head: Ref
    base_how: str
    rows: tuple[GateRow, ...]
    gate: str
    counts_threshold: float
    facts: Mapping[str, Any]

    @property
    def status(self) -> str:
        """FAIL when a benchmark fails or broke, else UNDECIDED when one is, else PASS."""
        got = {r.status for r in self.rows}
        return FAIL if got & {FAIL, BROKEN} else UNDECIDED if UNDECIDED in got else PASS

    def ranked(self) -> list[GateRow]:
        """Broken and failed first, then undecided, then passed, each slowest first; new and
        removed last."""
        return sorted(self.rows, key=lambda r: (_ORDER[r.status], -r.change()))

    def to_dict(self) -> dict[str, Any]:
        """The gate as stored in its run's summary (``summary["ci"]``) and read back by from_dict."""
        unit = next((r.row.unit for r in self.rows if r.row is not None), "")
        return {"status": self.status, "base": vars(self.base), "head": vars(self.head), "base_how": self.base_how,
                "gate": self.gate, "counts_threshold": self.counts_threshold, "unit": unit, "facts": dict(self.facts),
                "rows": [r.to_dict() for r in self.ranked()]}

    @classmethod
    def from_dict(cls, run_id: int, d: Mapping[str, Any]) -> Gate:
        """The gate a run's ``summary["ci"]`` holds (to_dict's). Raises KeyError, TypeError,
        ValueError on a summary that is not one."""
        unit = str(d.get("unit") or "")
        rows = []
        for r in d["rows"]:
            t, c = r.get("time"), r.get("counts")
            look = None if not t else Relative(float(t["change"]), float(t["low"]), float(t["high"]),
                                               int(t["pairs"]), float(t["base"]), float(t["head"]))
            counted = None if not c else Counted(c.get("base"), c.get("head"), bool(c.get("exact")))
            row = ComparisonRow(r["benchmark"], r["benchmark"], None, unit, None, "") if look and unit else None
            rows.append(GateRow(str(r["benchmark"]), str(r["status"]), float(r["threshold"]), row, look, counted,
                                t.get("verdict") if t else None, c.get("verdict") if c else None,
                                str(r.get("why") or "")))
        return cls(run_id, Ref(**d["base"]), Ref(**d["head"]), str(d.get("base_how") or ""), tuple(rows),
                   str(d.get("gate") or TIME), float(d.get("counts_threshold") or 0.0), dict(d.get("facts") or {}))
