"""`cyclebench bisect`: which commit made a benchmark slower, each step decided by a paired
verdict between builds measured in one sitting (docs/revisions.md).

Anchors: git-bisect(1) with a threshold script (no statistics), asv's ``asv find`` (one stored
measurement per revision), Chromium's Pinpoint (both sides of every step measured again and
compared statistically). Here every step builds the middle revision M and measures it paired
and interleaved with GOOD in one sitting (experiments/revpair.py), so drift between steps
never enters a verdict.

The rule, with T the threshold (relative) and [low, high] the repeated CI of M/GOOD − 1:
  * confirmation first, BAD against GOOD: low > T → a slowdown to bisect; high < T → "no
    slowdown" (BAD is not slower than GOOD by T); else inconclusive;
  * a step: low > T → bad; high < T → good; otherwise measured once more with twice the
    budget, GOOD, M and BAD together, α halved for each of two comparisons: M/GOOD as before,
    and M/BAD − 1 = e: bad when e's low > (1+T)/(1+Δlow) − 1, good when its high <
    (1+T)/(1+Δhigh) − 1, [Δlow, Δhigh] the confirmation's CI of BAD/GOOD − 1 (each implies
    the M/GOOD statement whenever that CI covers); conflicting or still unclear → skip;
  * a revision that does not build, or whose benchmark does not run, is skipped with its reason.
Every verdict holds with probability ≥ 1 − α (the repeated CI's coverage), so a search of s
measured steps names a wrong commit with probability at most (s + 1)·α; a host too noisy
to decide gives skips and, at worst, a range of candidates, never a wrong single commit.
Several benchmarks: the confirmations are judged together with Holm's step-down (α/m, then
α/(m−k) once k are confirmed; Holm 1979), then each confirmed benchmark is bisected alone.

``--backend callgrind`` judges by exact counts instead (experiments/revcounts.py): Ir per op of
GOOD (counted once: exact counts do not drift) against BAD's and each M's, each read twice;
M is bad when its Ir per op exceeds GOOD's by more than T, good otherwise, skipped when its
readings differ ("not exact") or it does not run. No statistics, no retries: the same history
gives the same steps on any machine, a shared CI runner included.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.revcompare import Workspace, must_build
from cyclebench.experiments.revcounts import (
    NOT_EXACT,
    READINGS,
    Count,
    comparison,
    count,
    counts_row,
    need_valgrind,
    store_counts,
)
from cyclebench.experiments.revisions import Built, Revision, RevisionError
from cyclebench.experiments.revpair import Design, PairLook, Sides, Sitting, measure, open_sitting, relative_row
from cyclebench.experiments.revpair import store_sitting as _store
from cyclebench.model import Item
from cyclebench.stats.sequential import boundaries

__all__ = ["Bisection", "Plan", "Search", "Step", "run_bisect"]


@dataclass(frozen=True)
class Plan:
    """What to bisect: GOOD and BAD (as given), the threshold T (relative), the design of each
    sitting (its budget; α per verdict), whether to walk every parent (git's bisect) or the
    first-parent line, and the ``backend``: timing, or callgrind (exact Ir per op; T then
    relative to GOOD's count)."""

    good: str
    bad: str
    threshold: float = 0.02
    design: Design = field(default_factory=lambda: Design(budget=5.0))
    all_parents: bool = False
    backend: str = "timing"

    @property
    def counts(self) -> bool:
        """Steps judged by callgrind's exact counts, not by time."""
        return self.backend == "callgrind"


@dataclass(frozen=True)
class Step:
    """One decided step of one benchmark's search: ``n`` (0: the confirmation of BAD against
    GOOD), the revision, the verdict (bad, good, skip; the confirmation: slower, no slowdown,
    inconclusive, failed), why (a skip's reason), Δ of the revision against GOOD with its repeated
    CI (relative; None when not measured), the sitting's seconds and run, and the attempts. Under
    callgrind also GOOD's and the revision's counts per op (``good_per_op``, ``per_op``, in
    ``unit``: Ir), the CI then Δ itself (low = high = diff) or, not exact, the range over the
    readings."""

    bench: str
    n: int
    revision: Revision
    verdict: str
    reason: str = ""
    diff: float | None = None
    low: float | None = None
    high: float | None = None
    seconds: float = 0.0
    run_id: int | None = None
    attempts: int = 0
    log: str | None = None
    good_per_op: float | None = None
    per_op: float | None = None
    unit: str = ""

    @property
    def measured(self) -> bool:
        return self.run_id is not None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["revision"] = asdict(self.revision)
        return d


@dataclass(frozen=True)
class Search:
    """One benchmark's search as it stands: the last revision known good, the first known bad,
    its steps, and how it ended (running, found, no slowdown, inconclusive, ambiguous: several
    candidates left by skips, failed). Each decided step makes a new one."""

    bench: str
    good: Revision
    bad: Revision
    steps: tuple[Step, ...] = ()
    status: str = "running"
    first_bad: Revision | None = None
    candidates: tuple[Revision, ...] = ()
    confirm: PairLook | None = None  # BAD against GOOD: Δ and its CI

    def measured_steps(self) -> int:
        return sum(1 for s in self.steps if s.n > 0 and s.measured)

    def delta_of(self, rev: Revision) -> Step | None:
        """The measured step that judged ``rev`` bad (its Δ against GOOD), or the confirmation."""
        for s in self.steps:
            if s.revision.sha == rev.sha and s.diff is not None and s.verdict in ("bad", "slower"):
                return s
        return None


@dataclass(frozen=True)
class Bisection:
    """The whole command's state as it stands (what Ctrl-C prints): an id the runs are labelled
    with, GOOD and BAD, every benchmark's search. Each decided step makes a new one (run_bisect
    hands each to its ``on_state``)."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    good: Revision | None = None
    bad: Revision | None = None
    searches: dict[str, Search] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"bisect": self.id, "good": asdict(self.good) if self.good else None,
                "bad": asdict(self.bad) if self.bad else None,
                "searches": [{"bench": s.bench, "status": s.status,
                              "first_bad": asdict(s.first_bad) if s.first_bad else None,
                              "candidates": [asdict(c) for c in s.candidates],
                              "good": asdict(s.good), "bad": asdict(s.bad), "measured_steps": s.measured_steps(),
                              "steps": [x.to_dict() for x in s.steps]} for s in self.searches.values()]}


def _confirm_rule(t: float) -> Callable[[dict[tuple[int, int], PairLook], bool], str | None]:
    def rule(looks: dict[tuple[int, int], PairLook], last: bool) -> str | None:
        lk = looks[(0, 1)]
        return "slower" if lk.low > t else "no slowdown" if lk.high < t else ("inconclusive" if last else None)
    return rule


def _step_rule(t: float) -> Callable[[dict[tuple[int, int], PairLook], bool], str | None]:
    def rule(looks: dict[tuple[int, int], PairLook], last: bool) -> str | None:
        lk = looks[(0, 1)]
        return "bad" if lk.low > t else "good" if lk.high < t else ("inconclusive" if last else None)
    return rule


def _three_way_rule(t: float, confirm: PairLook) -> Callable[[dict[tuple[int, int], PairLook], bool], str | None]:
    """Module doc: M against GOOD (pair (0, 1)) and against BAD (pair (2, 1)), either may decide;
    a conflict is inconclusive."""
    bad_above = (1 + t) / (1 + confirm.low) - 1
    good_below = (1 + t) / (1 + confirm.high) - 1

    def rule(looks: dict[tuple[int, int], PairLook], last: bool) -> str | None:
        g, b = looks[(0, 1)], looks[(2, 1)]
        bad = g.low > t or b.low > bad_above
        good = g.high < t or b.high < good_below
        if bad and good:
            return "conflict"
        return "bad" if bad else "good" if good else ("inconclusive" if last else None)
    return rule


def holm_step_down(sits: Sequence[Sitting], alpha: float, t: float) -> dict[str, str]:
    """Holm's step-down over the confirmations (Holm 1979): each sitting was decided at α/m;
    once k are confirmed slower, the others' last looks are judged again at α/(m−k) (their
    boundaries recomputed for the same information fractions), until no more change.
    Returns item label → slower / no slowdown / inconclusive / failed."""
    verdicts = {s.item.label: s.verdict for s in sits}
    m = len(sits)
    while m > 1:
        k = sum(1 for v in verdicts.values() if v == "slower")
        changed = False
        for s in sits:
            looks = s.looks.get((0, 1)) or []
            if verdicts[s.item.label] != "inconclusive" or not looks:
                continue
            c = boundaries([x.fraction for x in looks], alpha / max(1, m - k))[-1]
            lk = looks[-1]
            low, high = lk.diff - c * lk.se, lk.diff + c * lk.se
            if low > t or high < t:
                verdicts[s.item.label] = "slower" if low > t else "no slowdown"
                changed = True
        if not changed:
            break
    return verdicts


class _Run:
    """One bisect's moving parts: the workspace, the plan, the store, the labels, and the current
    Bisection (working state: replaced, never changed, as each step is decided)."""

    last: tuple[int, dict[str, Any]] | None = None  # the newest sitting's run and its summary

    def __init__(self, ws: Workspace, plan: Plan, store: Any, labels: dict[str, str], command: Sequence[str],
                 state: Bisection, on_step: Callable[[Step], None],
                 on_state: Callable[[Bisection], None] = lambda _b: None) -> None:
        self.ws, self.plan, self.store, self.labels, self.command = ws, plan, store, labels, command
        self.state, self.on_step, self.on_state = state, on_step, on_state
        self.cpu = ws.cpu()
        self.good_counts: dict[str, Count] = {}  # callgrind: GOOD's count per benchmark, read once

    def keep(self, search: Search) -> Search:
        """``search`` becomes its benchmark's in a new current Bisection, handed to ``on_state``
        and stored with the newest sitting's run (its summary's ``bisect.state``), so the
        database holds the search as it stands, and its answer once it ends (the site's bisect
        page reads it)."""
        self.state = replace(self.state, searches={**self.state.searches, search.bench: search})
        self.on_state(self.state)
        if self.last is not None:
            run_id, summary = self.last
            self.store.update_run(run_id, summary={**summary, "bisect": {**summary["bisect"],
                                                                         "state": self.state.to_dict()}})
        return search

    def sitting(self, built: list[Built], variants: list[str], items: list[Item], pairs: list[tuple[int, int]],
                design: Design, rule: Any, main: int, step: int, a_names: list[str]) -> tuple[list[Sitting], int]:
        """Measure and store one sitting as a run labelled bisect=<id>, rev=<side main's sha>."""
        sides = Sides(built, [self.ws.runner(b, self.cpu) for b in built], variants, self.cpu)
        rev = built[main].revision
        labels = {**self.labels, "bisect": self.state.id, "rev": rev.sha, "step": str(step)}
        run_id, rate = open_sitting(self.store, sides, main, self.command, labels,
                                    self.ws.revisions(sides=[b.revision.sha for b in built]))
        rows: list[Any] = []

        def keep(sit: Sitting) -> None:
            figures = _store(self.store, run_id, rate, sit, sides)
            for (x, y) in pairs:
                rows.append(relative_row(sit, (x, y), f"{sit.item.bench} @ {built[x].revision.short} ({a_names[x]})",
                                         f"{sit.item.bench} @ {built[y].revision.short} ({a_names[y]})",
                                         sit.verdict, design.alpha, self.plan.threshold,
                                         {"equivalence": self.plan.threshold,
                                          "margin_rule": f"the threshold, {100 * self.plan.threshold:g}%"},
                                         figures))

        with self.store.finishing(run_id):
            sits = measure(sides.runners, items, pairs, design, rule, self.ws.progress, keep)
        how = (f"bisect {self.state.id} step {step}: {rev.short}, paired invocations · CPU {self.cpu} · sequential "
               f"(budget {design.budget:g} s, repeated CI, threshold {100 * self.plan.threshold:g}%)")
        self.close(run_id, rows, {"design": how, "alpha": design.alpha}, step, rev,
                   {s.item.label: s.verdict for s in sits})
        return sits, run_id

    def close(self, run_id: int, rows: list[Any], display: dict[str, Any], step: int, rev: Revision,
              verdicts: dict[str, str]) -> None:
        """A sitting's run completed: its compare rows, how it was judged, the step's verdicts."""
        summary = {"compare": [r.to_dict() for r in rows], "display": display,
                   "bisect": {"id": self.state.id, "step": step, "revision": rev.sha,
                              "threshold": self.plan.threshold, "backend": self.plan.backend, "verdicts": verdicts}}
        self.store.update_run(run_id, summary=summary)
        self.store.finish_run(run_id, "complete")
        self.last = (run_id, summary)

    def count_sitting(self, good: Built, other: Built, variant: str, items: list[Item], step: int, name: str,
                      verdict: Callable[[Count, Count], str]) -> tuple[dict[str, tuple[Count, Count, float]], int]:
        """Under callgrind: every item counted at ``other`` (GOOD's count read once per bisect and
        reused: exact counts do not drift), stored as a run labelled as ``sitting`` labels one,
        GOOD's rows of variant good beside ``other``'s of ``variant``. Returns label → (GOOD's
        count, other's, seconds), and the run."""
        built = [good, other]
        sides = Sides(built, [self.ws.runner(b, self.cpu) for b in built], ["good", variant], self.cpu)
        rev = other.revision
        labels = {**self.labels, "bisect": self.state.id, "rev": rev.sha, "step": str(step)}
        run_id, _ = open_sitting(self.store, sides, 1, self.command, labels,
                                 self.ws.revisions(sides=[b.revision.sha for b in built]), timed=False)
        got: dict[str, tuple[Count, Count, float]] = {}
        rows: list[Any] = []
        with self.store.finishing(run_id):
            for item in items:
                t0 = time.monotonic()
                self.ws.progress.step(f"{item.label}: counting {rev.short} under callgrind")
                if item.label not in self.good_counts:
                    self.good_counts[item.label] = count(self.ws, good, item, self.cpu)
                pair = (self.good_counts[item.label], count(self.ws, other, item, self.cpu))
                store_counts(self.store, run_id, pair, sides)
                rows.append(counts_row(f"{item.bench} @ {good.revision.short} (GOOD)",
                                       f"{item.bench} @ {rev.short} ({name})", item, *pair, self.plan.threshold))
                got[item.label] = (*pair, time.monotonic() - t0)
        how = (f"bisect {self.state.id} step {step}: {rev.short}, instructions per op counted under callgrind "
               f"(each side read {READINGS}×) · threshold {100 * self.plan.threshold:g}% of GOOD")
        self.close(run_id, rows, {"design": how}, step, rev, {k: verdict(g, m) for k, (g, m, _) in got.items()})
        return got, run_id

    def counted_step(self, label: str, n: int, rev: Revision, g: Count, m: Count, verdict: str, seconds: float,
                     run_id: int) -> Step:
        """The Step of a counted revision: Δ relative to GOOD's Ir per op (its range over the
        readings when not exact), both counts, why it was not judged."""
        cmp = comparison(g, m, self.plan.threshold)
        reason = "" if cmp is not None and cmp.verdict != NOT_EXACT else "; ".join(
            f"{side}: {c.reason}" for side, c in (("GOOD", g), ("M", m)) if c.reason)
        if cmp is None:
            return Step(label, n, rev, verdict, f"the benchmark did not run: {reason}", seconds=seconds,
                        run_id=run_id, attempts=1, unit="Ir")
        a = cmp.median_a
        return Step(label, n, rev, verdict, f"{NOT_EXACT}: {reason}" if reason else "", cmp.rel, cmp.ci_low / a,
                    cmp.ci_high / a, seconds, run_id, 1, good_per_op=a, per_op=cmp.median_b, unit="Ir")

    def confirm_counts(self, good: Built, bad: Built, items: list[Item]) -> dict[str, str]:
        """Under callgrind: BAD's count against GOOD's, each benchmark (exact: no correction over
        them, no second sitting)."""
        got, run_id = self.count_sitting(good, bad, "", items, 0, "BAD", self.confirm_verdict)
        verdicts = {}
        for label, (g, b, seconds) in got.items():
            v = verdicts[label] = self.confirm_verdict(g, b)
            step = self.counted_step(label, 0, bad.revision, g, b, v, seconds, run_id)
            search = self.state.searches[label]
            lk = None if step.diff is None else PairLook(0, 1, step.diff, 0.0, 0.0, step.low or 0.0, step.high or 0.0,
                                                         READINGS, 1.0, step.good_per_op or 0.0, step.per_op or 0.0)
            self.keep(replace(search, confirm=lk, steps=(*(x for x in search.steps if x.n != 0), step)))
            self.on_step(step)
        return verdicts

    def confirm_verdict(self, g: Count, b: Count) -> str:
        """slower (beyond T), no slowdown, inconclusive (not exact), failed (not counted)."""
        cmp = comparison(g, b, self.plan.threshold)
        return ("failed" if cmp is None else "inconclusive" if cmp.verdict == NOT_EXACT
                else "slower" if cmp.verdict == "slower" else "no slowdown")

    @staticmethod
    def step_verdict(g: Count, m: Count, threshold: float) -> str:
        """bad (Ir per op above GOOD's by more than T), good, skip (not exact, not counted)."""
        cmp = comparison(g, m, threshold)
        return "skip" if cmp is None or cmp.verdict == NOT_EXACT else "bad" if cmp.verdict == "slower" else "good"

    def judge_counts(self, item: Item, good: Built, mid: Built, n: int) -> Step:
        """One step under callgrind: M's count against GOOD's."""
        t = self.plan.threshold

        def verdict(g: Count, m: Count) -> str:
            return self.step_verdict(g, m, t)

        got, run_id = self.count_sitting(good, mid, "", [item], n, "M", verdict)
        g, m, seconds = got[item.label]
        return self.counted_step(item.label, n, mid.revision, g, m, verdict(g, m), seconds, run_id)

    def confirm(self, good: Built, bad: Built, items: list[Item]) -> dict[str, str]:
        """BAD against GOOD on every benchmark, Holm across them; once more with twice the
        budget for those still unclear (under callgrind: confirm_counts)."""
        if self.plan.counts:
            return self.confirm_counts(good, bad, items)
        t, d = self.plan.threshold, self.plan.design
        m = len(items)
        verdicts: dict[str, str] = {}
        todo = list(items)
        for attempt in (1, 2):
            k = sum(1 for v in verdicts.values() if v == "slower")
            design = replace(d, budget=d.budget * attempt, alpha=d.alpha / max(1, m - k))
            sits, run_id = self.sitting([good, bad], ["good", ""], todo, [(0, 1)], design, _confirm_rule(t), 1, 0,
                                        ["GOOD", "BAD"])
            got = holm_step_down(sits, d.alpha, t) if attempt == 1 else {s.item.label: s.verdict for s in sits}
            for s in sits:
                search = self.state.searches[s.item.label]
                lk = s.last((0, 1))
                v = got[s.item.label]
                verdicts[s.item.label] = v
                step = Step(s.item.label, 0, bad.revision, "failed" if s.failed else v, s.failed or "",
                            lk.diff if lk else None, lk.low if lk else None, lk.high if lk else None, s.seconds,
                            run_id, attempt)
                self.keep(replace(search, confirm=lk if lk is not None else search.confirm,
                                  steps=(*(x for x in search.steps if x.n != 0), step)))
                if v != "inconclusive" or attempt == 2:
                    self.on_step(step)
            todo = [i for i in todo if verdicts[i.label] == "inconclusive"]
            if not todo:
                break
        return verdicts

    def judge(self, search: Search, item: Item, good: Built, bad: Built, mid: Built, n: int) -> Step:
        """One step: M against GOOD; unclear → GOOD, M and BAD with twice the budget (under
        callgrind: judge_counts)."""
        if self.plan.counts:
            return self.judge_counts(item, good, mid, n)
        t, d = self.plan.threshold, self.plan.design
        sits, run_id = self.sitting([good, mid], ["good", ""], [item], [(0, 1)], d, _step_rule(t), 1, n,
                                    ["GOOD", "M"])
        s, attempts = sits[0], 1
        if s.verdict == "inconclusive" and search.confirm is not None:
            design = replace(d, budget=2 * d.budget, alpha=d.alpha / 2)
            sits, run_id = self.sitting([good, mid, bad], ["good", "", "bad"], [item], [(0, 1), (2, 1)], design,
                                        _three_way_rule(t, search.confirm), 1, n, ["GOOD", "M", "BAD"])
            s, attempts = sits[0], 2
        lk = s.last((0, 1))
        verdict = s.verdict if s.verdict in ("bad", "good") else "skip"
        reason = {"failed": f"the benchmark did not run: {s.failed}",
                  "conflict": "against GOOD and against BAD the verdicts disagree",
                  "inconclusive": f"inconclusive after {attempts} sittings"}.get(s.verdict, "")
        return Step(item.label, n, mid.revision, verdict, reason, lk.diff if lk else None, lk.low if lk else None,
                    lk.high if lk else None, s.seconds, run_id, attempts)

    def search(self, search: Search, item: Item, good: Built, bad: Built) -> Search:
        """Bisect one benchmark's range (first-parent line, or git's bisect over every parent);
        returns the search as it ended (each step's is kept: ``keep``)."""
        repo = self.ws.repo
        skipped: set[str] = set()
        goods = [search.good.sha]
        linear = None if self.plan.all_parents else repo.first_parent(search.good.sha, search.bad.sha)
        n = 0
        while True:
            pick, left = _next(repo, linear, search, goods, skipped)
            if pick is None:
                if len(left) <= 1:
                    return self.keep(replace(search, status="found", first_bad=search.bad))
                return self.keep(replace(search, status="ambiguous",
                                         candidates=tuple(repo.revision(x) for x in left)))
            n += 1
            rev = repo.revision(pick)
            mid = self.ws.build(rev)
            if mid.binary is None:
                step = Step(item.label, n, rev, "skip", f"does not build: {mid.reason}", seconds=mid.seconds,
                            log=str(mid.log))
            else:
                step = self.judge(search, item, good, bad, mid, n)
            search = replace(search, steps=(*search.steps, step))
            if step.verdict == "bad":
                search = replace(search, bad=rev)
            elif step.verdict == "good":
                search = replace(search, good=rev)
                goods.append(rev.sha)
            else:
                skipped.add(rev.sha)
            self.keep(search)
            self.on_step(step)


def _next(repo: Any, linear: list[str] | None, search: Search, goods: list[str], skipped: set[str],
          ) -> tuple[str | None, list[str]]:
    """The next revision to measure (None when none is left) and the commits still in
    question (the first bad is one of them; the current bad last)."""
    if linear is not None:
        lo = linear.index(search.good.sha) if search.good.sha in linear else -1
        hi = linear.index(search.bad.sha)
        left = linear[lo + 1: hi + 1]
        inner = [i for i in range(lo + 1, hi) if linear[i] not in skipped]
        if not inner:
            return None, left
        mid = (lo + hi) / 2
        return linear[min(inner, key=lambda i: (abs(i - mid), i))], left
    candidates = repo.bisect_candidates(search.bad.sha, goods)
    left = list(reversed(candidates))  # not ordered by history: shown as git lists them
    inner = [c for c in candidates if c != search.bad.sha and c not in skipped]
    if not inner:
        return None, left
    return inner[0], left


def run_bisect(ws: Workspace, plan: Plan, store: Any, labels: dict[str, str], command: Sequence[str],
               state: Bisection, on_step: Callable[[Step], None] = lambda _s: None,
               on_state: Callable[[Bisection], None] = lambda _b: None) -> Bisection:
    """Resolve, build GOOD and BAD, confirm the slowdown on every benchmark (Holm), then bisect
    each confirmed one (module doc). ``state`` is where it starts (its id labels the runs);
    ``on_state`` gets each new Bisection as it is made (Ctrl-C: the last one holds what was
    decided), ``on_step`` each step as it is decided. Returns the last Bisection. Raises
    ExperimentError: revisions that do not resolve, GOOD not an ancestor of BAD, GOOD or BAD not
    building, a selection that matches nothing, no valgrind under callgrind."""
    if plan.counts:
        need_valgrind()
    repo = ws.repo
    good, bad = repo.resolve(plan.good), repo.resolve(plan.bad)
    if good.sha == bad.sha:
        raise RevisionError(f"GOOD and BAD are the same commit ({good.short})")
    if not repo.is_ancestor(good.sha, bad.sha):
        raise RevisionError(f"GOOD {good.short} is not an ancestor of BAD {bad.short}")
    if not plan.all_parents:
        repo.first_parent(good.sha, bad.sha)  # GOOD on BAD's first-parent line, or say --all-parents
    state = replace(state, good=good, bad=bad)
    on_state(state)
    gb, bb = must_build(ws, good, "GOOD"), must_build(ws, bad, "BAD")
    run = _Run(ws, plan, store, labels, command, state, on_step, on_state)
    items = ws.items(gb, run.cpu)
    for it in items:
        run.keep(Search(it.label, good, bad))
    verdicts = run.confirm(gb, bb, items)
    for it in items:
        search = run.state.searches[it.label]
        v = verdicts[it.label]
        if v != "slower":
            run.keep(replace(search, status={"no slowdown": "no slowdown", "inconclusive": "inconclusive"}.get(
                v, "failed")))
            continue
        run.search(search, it, gb, bb)
    if not run.state.searches:
        raise ExperimentError("no benchmark selected")
    return run.state


def exit_status(searches: Sequence[Search]) -> int:
    """`bisect`'s exit status: 0 every search ended (found, no slowdown), 3 one could not
    (inconclusive, several candidates left by skips), 1 a benchmark did not run at GOOD or BAD."""
    codes = {0 if s.status in ("found", "no slowdown") else 3 if s.status in ("ambiguous", "inconclusive") else 1
             for s in searches}
    return 1 if 1 in codes else 3 if 3 in codes else 0
