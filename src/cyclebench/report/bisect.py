"""`cyclebench bisect`'s output: one line per step as it is decided, the table of every step
(report/fit.py's rule: revision, Δ% against GOOD with its repeated CI and the verdict are the
answer; subject, seconds and run leave first), and each benchmark's answer — printed again from
what the bisect stored by `show --bisect ID` (StoredBisect, print_stored), and named by `show`
of each of its sittings (Sitting, print_sitting)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

if TYPE_CHECKING:
    from rich.console import Console

STYLE = {"bad": "red", "slower": "red", "good": "green", "no slowdown": "green", "skip": "yellow"}
# what the tables' and the sittings' GOOD, BAD and M are: every view of a bisect says it under its table
ROLES = ("GOOD: the revision given by --good, BAD: by --bad, M: the revision a step measured (the "
         "confirmation's is BAD)")


def title(bisect: str, good: str, bad: str, threshold: float | None, counts: bool) -> str:
    """The steps table's title, as `bisect` ends and `show --bisect` prints it (short shas)."""
    t = f" · threshold {100 * threshold:g}%" if threshold is not None else ""
    return f"bisect {bisect} · GOOD {good} · BAD {bad}{t}" + (" of Ir/op (callgrind)" if counts else "")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:+.2f}%"


def ci(low: float | None, high: float | None) -> str:
    """[low, high] in %; "(exact)" for an interval of no width (counts under callgrind: Δ itself)."""
    if low is None or high is None:
        return "-"
    return "(exact)" if low == high else f"[{100 * low:+.2f}, {100 * high:+.2f}]"


def counted(s: Any) -> bool:
    """A step judged by callgrind's counts (experiments.bisect.Step's ``unit`` set)."""
    return bool(getattr(s, "unit", ""))


def step_line(s: Any) -> str:
    """One decided step, as it is printed when decided (``s``: experiments.bisect.Step)."""
    what = "confirm" if s.n == 0 else f"step {s.n}"
    delta = f"Δ {pct(s.diff)} {ci(s.low, s.high)} vs GOOD" if s.diff is not None else "not measured"
    if counted(s) and s.per_op is not None and s.good_per_op is not None:
        delta = f"{s.per_op:.6g} {s.unit}/op, Δ {s.per_op - s.good_per_op:+.6g} ({pct(s.diff)}) vs GOOD"
    why = f" — {s.reason}" if s.reason else ""
    return (f"{s.bench} {what}: {s.revision.short} {s.revision.subject[:40]!s} · {delta} · {s.verdict} "
            f"({s.seconds:.1f} s){why}")


def steps_table(steps: Sequence[Any], title: str, several: bool, wide: bool = False) -> FitTable:
    """Every step (experiments.bisect.Step) of one or several benchmarks' searches. Steps judged
    by callgrind's counts show GOOD's and the revision's Ir per op and Δ in Ir per op in place of
    the repeated CI."""
    if any(counted(s) for s in steps):
        return _counted_table(steps, title, several, wide)
    table = FitTable([
        *([Column("benchmark", justify="left", fold=12)] if several else []),
        Column("step", names=not several),
        Column("revision", justify="left"),
        Column("subject", justify="left", priority=2, fold=16),
        Column("Δ% vs GOOD"),
        Column("repeated CI (%)"),
        Column("verdict", justify="left"),
        Column("s", priority=1),
        Column("run", priority=3),
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide,
        caption=f"{ROLES}. Δ: median of the paired per-invocation ratios M/GOOD − 1; bad when its repeated CI "
                "lies above the threshold, good when below it; skip: neither after a second sitting, or M did not "
                "build or run (docs/revisions.md)")
    for s in steps:
        cells = [safe_text(s.bench, multiline=False)] if several else []
        table.add_row(*cells, "confirm" if s.n == 0 else str(s.n), s.revision.short,
                      safe_text(s.revision.subject, multiline=False), pct(s.diff),
                      ci(s.low, s.high).strip("[]") if s.low is not None else "-",
                      Text(s.verdict, style=STYLE.get(s.verdict, "")), f"{s.seconds:.1f}",
                      "-" if s.run_id is None else str(s.run_id),
                      safe_text(s.reason + (f" (log: {s.log})" if s.log else ""), multiline=False))
    return table


def _counted_table(steps: Sequence[Any], title: str, several: bool, wide: bool) -> FitTable:
    unit = steps[0].unit
    table = FitTable([
        *([Column("benchmark", justify="left", fold=12)] if several else []),
        Column("step", names=not several),
        Column("revision", justify="left"),
        Column("subject", justify="left", priority=2, fold=16),
        Column(f"GOOD ({unit}/op)"),
        Column(f"M ({unit}/op)"),
        Column("Δ"),
        Column("Δ%"),
        Column("verdict", justify="left"),
        Column("s", priority=1),
        Column("run", priority=3),
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide,
        caption=f"{ROLES}. Exact counts (callgrind, each side read twice): M is bad when its {unit}/op exceed GOOD's "
                "by more than the threshold, good otherwise; skipped when its readings differ (docs/revisions.md)")
    for s in steps:
        cells = [safe_text(s.bench, multiline=False)] if several else []
        known = s.per_op is not None and s.good_per_op is not None
        table.add_row(*cells, "confirm" if s.n == 0 else str(s.n), s.revision.short,
                      safe_text(s.revision.subject, multiline=False),
                      f"{s.good_per_op:.6g}" if known else "-", f"{s.per_op:.6g}" if known else "-",
                      f"{s.per_op - s.good_per_op:+.6g}" if known else "-", pct(s.diff),
                      Text(s.verdict, style=STYLE.get(s.verdict, "")), f"{s.seconds:.1f}",
                      "-" if s.run_id is None else str(s.run_id),
                      safe_text(s.reason + (f" (log: {s.log})" if s.log else ""), multiline=False))
    return table


def answer_lines(searches: Sequence[Any], good: Any, bad: Any, threshold: float,
                 message: Callable[[str], str]) -> list[str]:
    """Each benchmark's answer (``searches``: experiments.bisect.Search, as they ended): the first
    bad commit with its Δ against GOOD and its message (``message(sha)``); no slowdown beyond
    ``threshold`` (relative); the candidates left by skips; inconclusive; or why it was not
    measured at GOOD and BAD."""
    lines = []
    for s in searches:
        c = s.confirm
        delta = f"Δ {pct(c.diff)} {ci(c.low, c.high)}" if c is not None else ""
        if s.status == "found":
            at = s.delta_of(s.first_bad)
            d = f"Δ {pct(at.diff)} {ci(at.low, at.high)} vs GOOD" if at and at.diff is not None else delta
            lines += [f"{s.bench}: first bad commit {s.first_bad.sha} ({d}; {s.measured_steps()} measured steps)",
                      message(s.first_bad.sha)]
        elif s.status == "no slowdown":
            less = "; slower, by less than that: a smaller --threshold bisects it" if c and c.low > 0 else ""
            lines.append(f"{s.bench}: no slowdown between GOOD and BAD ({good.short}..{bad.short}) beyond the "
                         f"threshold of {100 * threshold:g}%: {delta}{less}")
        elif s.status == "ambiguous":
            lines.append(f"{s.bench}: the first bad commit is one of {', '.join(r.short for r in s.candidates)} "
                         "(the others were skipped)")
        elif s.status == "inconclusive":
            lines.append(f"{s.bench}: inconclusive: cannot tell whether BAD is slower than GOOD by more than "
                         f"{100 * threshold:g}% ({delta}): raise --budget or quiet the host")
        else:
            reason = next((x.reason for x in s.steps if x.n == 0), "")
            lines.append(f"{s.bench}: not measured at GOOD and BAD: {reason}")
    return lines


@dataclass(frozen=True)
class StoredRevision:
    """A revision as a bisect's stored state holds it (experiments.bisect.Bisection.to_dict)."""

    sha: str
    short: str
    subject: str

    @classmethod
    def of(cls, d: Any) -> StoredRevision:
        d = d if isinstance(d, Mapping) else {}
        sha = str(d.get("sha") or "?")
        return cls(sha=sha, short=str(d.get("short") or sha[:10]), subject=str(d.get("subject") or ""))


@dataclass(frozen=True)
class StoredStep:
    """A step as a bisect's stored state holds it, read as steps_table reads a step."""

    bench: str
    n: int
    revision: StoredRevision
    verdict: str
    reason: str
    diff: float | None
    low: float | None
    high: float | None
    seconds: float
    run_id: int | None
    log: str | None
    good_per_op: float | None = None  # counted under callgrind (unit Ir): GOOD's and M's per op
    per_op: float | None = None
    unit: str = ""

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> StoredStep:
        def num(k: str) -> float | None:
            v = d.get(k)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        run, log, n = d.get("run_id"), d.get("log"), d.get("n")
        return cls(bench=str(d.get("bench") or "?"), n=n if isinstance(n, int) else 0,
                   revision=StoredRevision.of(d.get("revision")), verdict=str(d.get("verdict") or "?"),
                   reason=str(d.get("reason") or ""), diff=num("diff"), low=num("low"), high=num("high"),
                   seconds=num("seconds") or 0.0, run_id=run if isinstance(run, int) else None,
                   log=log if isinstance(log, str) else None, good_per_op=num("good_per_op"), per_op=num("per_op"),
                   unit=str(d.get("unit") or ""))


def stored_answer(search: Mapping[str, Any], threshold: float | None) -> str:
    """One benchmark's answer from a bisect's stored state (a search of Bisection.to_dict), as
    answer_lines says it: the first bad commit and its Δ against GOOD, no slowdown, the candidates
    left by skips, inconclusive, or still running (an interrupted bisect)."""
    bench = str(search.get("bench") or "?")
    steps = [StoredStep.of(s) for s in search.get("steps") or [] if isinstance(s, Mapping)]
    status = str(search.get("status") or "?")
    t = f"{100 * threshold:g}%" if threshold is not None else "the threshold"
    if status == "found":
        bad = StoredRevision.of(search.get("first_bad"))
        at = next((s for s in steps if s.revision.sha == bad.sha and s.diff is not None
                   and s.verdict in ("bad", "slower")), None)
        delta = f"Δ {pct(at.diff)} {ci(at.low, at.high)} vs GOOD; " if at is not None else ""
        return (f"{bench}: first bad commit {bad.sha} {bad.subject} ({delta}"
                f"{sum(1 for s in steps if s.n > 0 and s.run_id is not None)} measured steps)")
    confirm = next((s for s in steps if s.n == 0), None)
    delta = f" (Δ {pct(confirm.diff)} {ci(confirm.low, confirm.high)})" if confirm and confirm.diff is not None else ""
    if status == "no slowdown":
        return f"{bench}: no slowdown between GOOD and BAD beyond {t}{delta}"
    if status == "ambiguous":
        cands = ", ".join(StoredRevision.of(c).short for c in search.get("candidates") or [])
        return f"{bench}: the first bad commit is one of {cands} (the others were skipped)"
    if status == "inconclusive":
        return f"{bench}: inconclusive: cannot tell whether BAD is slower than GOOD by more than {t}{delta}"
    if status == "running":
        return f"{bench}: not finished (the bisect was interrupted){delta}"
    return f"{bench}: {status}{delta}"


@dataclass(frozen=True)
class StoredBisect:
    """A bisect as its sittings stored it, for `show --bisect ID`: its id, GOOD and BAD, the
    threshold (relative; None: not stored) and whether callgrind's counts judged it, each
    benchmark's search (Bisection.to_dict's, as it stood after ``state_run``: the newest sitting
    that stored one; () when none did), and every sitting's run, oldest first."""

    id: str
    good: StoredRevision
    bad: StoredRevision
    threshold: float | None
    counts: bool
    searches: tuple[Mapping[str, Any], ...]
    runs: tuple[int, ...]
    state_run: int | None


def print_stored(b: StoredBisect, wide: bool, console: Console, notes: Console) -> None:
    """`show --bisect ID`: the table of every step and each benchmark's answer to ``console``, as
    `bisect` ended (its answers from the stored state: stored_answer); its sittings on ``notes``."""
    steps = [StoredStep.of(x) for s in b.searches for x in s.get("steps") or [] if isinstance(x, Mapping)]
    if steps:
        console.print(steps_table(steps, title(b.id, b.good.short, b.bad.short, b.threshold, b.counts),
                                  len({s.bench for s in steps}) > 1, wide))
    for search in b.searches:
        console.print(safe_text(stored_answer(search, b.threshold), multiline=False), highlight=False)
    if not b.searches:  # a sitting stored by a version that kept no state: its runs are all there is
        console.print(safe_text(f"bisect {b.id}: no stored state (a bisect stored before it was kept): each "
                                "sitting's table is its run's", multiline=False), highlight=False)
    runs = ", ".join(f"#{r}" for r in b.runs)
    notes.print(safe_text(f"bisect {b.id}: sittings {runs} (`cyclebench show RUN` prints one; `history BENCH "
                          f"--label bisect={b.id}` follows them)", multiline=False), highlight=False)


@dataclass(frozen=True)
class Sitting:
    """A run that is a sitting of a bisect (its summary's ``bisect``): the bisect's id, the step
    (0: the confirmation; None: not stored) and the revisions of GOOD, BAD and M (short shas;
    "" where not stored)."""

    bisect: str
    step: int | None
    good: str = ""
    bad: str = ""
    revision: str = ""


def print_sitting(s: Sitting, console: Console, notes: Console) -> None:
    """Under a sitting's compare table: what its GOOD, BAD and M are (ROLES, with their shas), on
    ``console`` as the table's legend; then on ``notes`` how to see the whole bisect."""
    def sha(x: str) -> str:
        return f" ({x})" if x else ""

    what = (f"the confirmation of bisect {s.bisect}, BAD against GOOD" if s.step == 0 else
            f"step {s.step} of bisect {s.bisect}, M against GOOD" if s.step is not None
            else f"a step of bisect {s.bisect}")
    console.print(safe_text(f"{what}: GOOD is the revision given by --good{sha(s.good)}, "
                            f"BAD by --bad{sha(s.bad)}"
                            + (f", M the revision this step measured{sha(s.revision)}" if s.step != 0 else ""),
                            multiline=False), highlight=False)
    notes.print(safe_text(f"`cyclebench show --bisect {s.bisect}` prints every step of it and its answer",
                          multiline=False), highlight=False)
