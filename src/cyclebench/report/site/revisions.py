"""The site's pages of revisions measured from a repository's history (docs/revisions.md,
docs/site.md): ``revisions.html`` lists every bisect and `compare --rev` run; ``bisect/ID.html``
is one bisect's page — each benchmark's answer (the first bad commit, its Δ against GOOD with
the repeated CI), every step as `bisect` prints it, the runs of its sittings. These runs have
no place in a benchmark's ordinary history (model.series_key: their purpose is ``revision``);
here is where they are read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cyclebench.model import REVISION, Run, purpose_of
from cyclebench.report.bisect import StoredStep, steps_table, stored_answer
from cyclebench.report.site import Site
from cyclebench.report.site.pages import RunLine
from cyclebench.report.site.tables import html_table
from cyclebench.report.text import visible


@dataclass(frozen=True)
class RevisionRun:
    """A run that measured revisions (purpose ``revision``): its line; the bisect it is a sitting
    of (None: a `compare --rev`) and that sitting's step (0: the confirmation); the bisect's
    state as it stood after the sitting (experiments.bisect.Bisection.to_dict, stored in the
    run's summary; None: stored by a version that kept none) and its threshold; the revisions its
    labels name (``base``, ``rev``)."""

    line: RunLine
    bisect: str | None
    step: int | None
    state: Mapping[str, Any] | None
    threshold: float | None
    base: str | None
    rev: str | None

    @classmethod
    def of(cls, run: Run, n_results: int | None = None) -> RevisionRun | None:
        """The record of ``run`` when it measured revisions, else None."""
        if purpose_of(run) != REVISION:
            return None
        summary = run.summary if isinstance(run.summary, Mapping) else {}
        b = summary.get("bisect")
        b = b if isinstance(b, Mapping) else {}
        labels = run.labels if isinstance(run.labels, Mapping) else {}
        step, state, t = b.get("step"), b.get("state"), b.get("threshold")
        return cls(line=RunLine.of(run, n_results), bisect=str(b.get("id") or labels.get("bisect") or "") or None,
                   step=step if isinstance(step, int) else None,
                   state=state if isinstance(state, Mapping) else None,
                   threshold=float(t) if isinstance(t, (int, float)) else None,
                   base=labels.get("base"), rev=labels.get("rev"))


@dataclass(frozen=True)
class BisectLine:
    """A bisect on revisions.html and the top of its page: its id, GOOD and BAD (short sha), the
    start of its first sitting and its host, its sittings, each benchmark's answer."""

    id: str
    good: str
    bad: str
    started: str
    host: str
    runs: tuple[RunLine, ...]
    answers: tuple[str, ...]


def _rev(d: Any) -> str:
    return str(d.get("short") or str(d.get("sha") or "?")[:10]) if isinstance(d, Mapping) else "?"


def bisect_lines(runs: Sequence[RevisionRun]) -> list[tuple[BisectLine, RevisionRun | None]]:
    """Every bisect among ``runs``, newest first: its line, and the sitting whose stored state is
    the newest (the bisect as it ended; None when none stored one)."""
    by_id: dict[str, list[RevisionRun]] = {}
    for r in runs:
        if r.bisect is not None:
            by_id.setdefault(r.bisect, []).append(r)
    out = []
    for bid, got in by_id.items():
        got = sorted(got, key=lambda r: r.line.id)
        last = next((r for r in reversed(got) if r.state is not None), None)
        state = last.state if last is not None else {}
        assert state is not None
        answers = tuple(visible(stored_answer(s, last.threshold if last else None), multiline=False)
                        for s in state.get("searches") or [] if isinstance(s, Mapping))
        out.append((BisectLine(id=visible(bid, multiline=False), good=visible(_rev(state.get("good"))),
                               bad=visible(_rev(state.get("bad"))), started=got[0].line.started,
                               host=got[0].line.host, runs=tuple(r.line for r in got), answers=answers), last))
    return sorted(out, key=lambda bl: bl[0].runs[-1].id, reverse=True)


def revision_pages(site: Site, runs: Sequence[RevisionRun]) -> None:
    """Write revisions.html and every bisect's page from the runs that measured revisions."""
    bisects = bisect_lines(runs)
    for line, last in bisects:
        tables = []
        if last is not None and last.state is not None:
            steps = [StoredStep.of(x) for s in last.state.get("searches") or [] if isinstance(s, Mapping)
                     for x in s.get("steps") or [] if isinstance(x, Mapping)]
            title = (f"bisect {line.id} · GOOD {line.good} · BAD {line.bad}"
                     + (f" · threshold {100 * last.threshold:g}%" if last.threshold is not None else ""))
            several = len({s.bench for s in steps}) > 1
            tables.append(html_table(steps_table(steps, title, several, wide=True),
                                     lambda cells: None if not cells[-2].isdigit() else f"../runs/{cells[-2]}.html"))
        site.page(f"bisect/{line.id}.html", "bisect.html", title=f"bisect {line.id}", bisect=line, tables=tables)
    compares = sorted((r for r in runs if r.bisect is None), key=lambda r: r.line.id, reverse=True)
    site.page("revisions.html", "revisions.html", title="revisions", bisects=[b for b, _ in bisects],
              compares=[(r.line, visible(r.base or "?"), visible(r.rev or "?")) for r in compares])
