"""The pages of `cyclebench report`'s site (docs/site.md) from the records experiments.site
gathers: what each page shows as frozen records (a run's summary line, a change point, a
host's line of a history, ...), and the writers that lay them out through :class:`Site`'s
templates. Tables are built by the terminal's own functions (report.history, report.hosts,
report.console) and written as HTML by :mod:`.tables`; every text from the database goes
through report.text.visible.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cyclebench.model import OK, SIMULATED, TIMING, Result, Run, host_of
from cyclebench.report import console as console_report
from cyclebench.report import history as history_report
from cyclebench.report import hosts as hosts_report
from cyclebench.report.site import Capture, Site, argv_text, blocks_of, history_slug, labels_text
from cyclebench.report.site.figures import Figure, Trace, change_text, history_figure
from cyclebench.report.site.tables import HtmlTable, html_table
from cyclebench.report.text import visible
from cyclebench.report.titles import confined, confinement_text, run_confinement
from cyclebench.stats import changepoint

NEWEST = 25  # runs listed on the index
TABLE_RUNS = 30  # a history page's table per host: its last runs (the plot has them all)
HISTORY_KINDS = (TIMING, SIMULATED)  # a benchmark has a history page when it has results of these kinds

Key = tuple[str, "int | None", str]  # bench, param, variant
Link = Callable[[list[str]], "str | None"]  # a table row's cells → the page its first cell links to


def short_time(iso: str | None) -> str:
    """An ISO 8601 time as "YYYY-MM-DD HH:MM" ("" for none)."""
    return str(iso or "")[:16].replace("T", " ")


def command_name(run: Run) -> str:
    """The subcommand that made a run (``run``, ``compare``, ...), from its stored argv; "?" without one."""
    argv = run.command
    if isinstance(argv, list):
        words = [str(a) for a in argv[1:] if not str(a).startswith("-")]
        return words[0] if words else "?"
    return "?"


def _dump(x: object) -> str:
    """Stored JSON (build, calibration, machine) as indented text for a <pre>."""
    return visible(json.dumps(x, indent=1, sort_keys=True, default=str)) if x else "(none stored)"


@dataclass(frozen=True)
class RunLine:
    """A run as one line of the runs tables (runs.html, the index) and the heading of its
    digest: its id, start ("YYYY-MM-DD HH:MM", UTC), host, command, status, labels, and the
    number of its results ("" when not counted)."""

    id: int
    started: str
    host: str
    kind: str
    status: str
    labels: str
    results: int | str

    @classmethod
    def of(cls, run: Run, n_results: int | None = None) -> RunLine:
        return cls(id=int(run.id or 0), started=short_time(run.started_at), host=visible(host_of(run)),
                   kind=visible(command_name(run)), status=str(run.status),
                   labels=visible(labels_text(run.labels), multiline=False),
                   results="" if n_results is None else n_results)


@dataclass(frozen=True)
class RunFacts(RunLine):
    """The facts at the top of a run's page: its line, with its start and end as stored (ISO
    8601), its command line and replicate group; a run of revisions' code (compare --rev,
    bisect, ci), how it ran it (report.titles.confinement_text; "" for any other run) and
    whether that was unconfined."""

    started_at: str | None
    finished_at: str | None
    command: str
    group_id: int | None
    confinement: str = ""
    unconfined: bool = False


@dataclass(frozen=True)
class Digest:
    """A compare, variants or scale run on its kind's page: its line, the tables of its page,
    scale's figure."""

    kind: str  # compare | variants | scale
    run: RunLine
    tables: tuple[HtmlTable, ...]
    figure: Figure | None = None


@dataclass(frozen=True)
class ChangeMark:
    """A change point in a history page's host table: the run where the new level starts, as
    the history table says it (figures.change_text), slower or faster."""

    run: int
    text: str
    slower: bool


@dataclass(frozen=True)
class HostTrace:
    """A host's line on a benchmark's history page and the table of its last runs: its unit,
    number of runs, latest estimate and run-to-run sd (formatted), change points."""

    host: str
    unit: str
    n: int
    latest: str
    sigma: str
    changes: tuple[ChangeMark, ...]
    table: HtmlTable


@dataclass(frozen=True)
class Regression:
    """An open regression on the index: a change point among a host's last ``--window`` runs of
    a benchmark (``at``: the run's start as stored, for the order; ``regression``: slower beyond
    the practical margin)."""

    name: str
    slug: str
    host: str
    run: int
    started: str
    at: str | None
    text: str
    regression: bool
    slower: bool


@dataclass(frozen=True)
class SeriesLine:
    """A benchmark on the benchmarks index: its history page, hosts, runs, change points, and
    those among the recent runs."""

    bench: str
    param: int | str  # "" for none
    variant: str
    slug: str
    hosts: int
    runs: int
    changes: int
    recent: int


@dataclass(frozen=True)
class HostLine:
    """A host on the index: its CPU, kernel, number of runs shown, its newest run and when it started."""

    name: str
    cpu: str
    kernel: str
    runs: int
    last: int
    last_at: str

    @classmethod
    def of(cls, host: str, runs: Sequence[Run]) -> HostLine:
        """``host``'s line from its runs shown, newest first (non-empty)."""
        last = runs[0]
        return cls(name=visible(host), cpu=visible(last.cpu_model or "-"), kernel=visible(last.kernel_release or "-"),
                   runs=len(runs), last=int(last.id or 0), last_at=short_time(last.started_at))


@dataclass(frozen=True)
class Counts:
    """The index's lead: how many runs, hosts, benchmark histories, compare, variants and scale runs."""

    runs: int
    hosts: int
    series: int
    comparisons: int
    variants: int
    scale: int


@dataclass(frozen=True)
class Fleet:
    """compare --by host over each host's newest complete run: the hosts in order with their
    run ids, experiments.stored.host_rows' rows, each host's CPU. Fewer than two hosts: no rows."""

    sides: tuple[tuple[str, tuple[int, ...]], ...]
    rows: Sequence[Any] = ()  # experiments.stored.host_rows', as report.hosts.hosts_table reads them
    cpu: Mapping[str, str | None] | None = None


@dataclass(frozen=True)
class Lab:
    """What the site's lists show (index, runs, benchmarks, comparisons, variants, scale,
    fleet): the runs newest first, the newest compare/variants/scale runs oldest first with how
    many older ones were left off, the open regressions (any order: the index sorts them)."""

    runs: tuple[RunLine, ...]
    hosts: tuple[HostLine, ...]
    series: tuple[SeriesLine, ...]
    regressions: tuple[Regression, ...]
    digests: Mapping[str, tuple[Digest, ...]]  # kind → its newest
    n_kind: Mapping[str, int]  # kind → how many runs of it
    fleet: Fleet
    window: int


def link_of(rows: Sequence[Result], shown: Callable[[str], bool]) -> Link:
    """The results table's names → their history pages: a valid result of a kind that has a
    history (HISTORY_KINDS), of a benchmark the site shows (``shown``)."""
    names: dict[tuple[str, str], str] = {}
    for r in rows:
        if r.status == OK and r.kind in HISTORY_KINDS and shown(r.bench):
            variant = str(r.variant or "")
            text = visible(str(r.bench) + (f" [{variant}]" if variant else ""), multiline=False)
            names[(text, "" if r.param is None else str(r.param))] = history_slug(str(r.bench), r.param, variant)

    def href(cells: list[str]) -> str | None:
        slug = names.get((cells[0], cells[1] if len(cells) > 1 else ""))
        return f"../history/{slug}" if slug else None

    return href


def run_page(site: Site, run: Run, rows: Sequence[Result], shown: Capture, notes: Capture, link: Link,
             figure: Figure | None) -> tuple[RunLine, tuple[HtmlTable, ...]]:
    """Write ``runs/ID.html``: what show printed into ``shown`` and ``notes`` (its tables, the
    names linked by ``link``), scale's ``figure``, a revision run's confinement among its facts,
    the run's environment and calibration.
    Returns the run's line and its tables (for its kind's page)."""
    rid = int(run.id or 0)
    blocks = blocks_of(shown.items, link)
    line = RunLine.of(run, len(rows))
    cal = run.calibration
    recorded = run_confinement(run)
    site.page(f"runs/{rid}.html", "run.html", title=f"run #{rid} · {visible(host_of(run))}",
              plots=figure is not None, figure=figure,
              run=RunFacts(**vars(line), started_at=run.started_at, finished_at=run.finished_at,
                           command=visible(argv_text(run.command)), group_id=run.group_id,
                           confinement="" if recorded is None else visible(confinement_text(recorded),
                                                                           multiline=False),
                           unconfined=confined(recorded) is False),
              notes=[b.text for b in blocks_of(notes.items)], blocks=blocks,
              environment=console_report.environment_lines(list(rows)),
              calibration=visible(console_report.calibration_line(cal)) if isinstance(cal, Mapping) else "",
              build=_dump(run.build), calibration_json=_dump(cal), env=_dump(run.env))
    return line, tuple(b.table for b in blocks if b.table is not None)


def _tail(h: changepoint.History, first: int) -> changepoint.History:
    """``h`` for the runs from position ``first`` on (outliers and change points there, renumbered)."""
    return replace(h, outliers=[i - first for i in h.outliers if i >= first],
                   changes=[replace(c, index=c.index - first) for c in h.changes if c.index >= first])


def history_page(site: Site, key: Key, traces: Sequence[Trace], window: int
                 ) -> tuple[SeriesLine, tuple[Regression, ...]]:
    """Write ``history/SLUG`` of the benchmark ``key`` (bench, param, variant) from its series
    on each host. Returns its line on the benchmarks index and its change points among each
    host's last ``window`` runs."""
    bench, param, variant = key
    name = visible(bench + ("" if param is None else f" [{param}]") + (f" [{variant}]" if variant else ""),
                   multiline=False)
    slug = history_slug(bench, param, variant)
    argv = " ".join([bench] + ([f"-p {param}"] if param is not None else []) +
                    ([f"--variant '{variant}'"] if variant else []))
    hosts: list[HostTrace] = []
    regressions: list[Regression] = []
    for t in traces:
        n = len(t.points)
        changes = []
        for c in t.history.changes:
            point = t.points[c.index]
            changes.append(ChangeMark(run=point["run"], text=change_text(c), slower=c.diff > 0))
            if c.index >= n - window:
                regressions.append(Regression(name=name, slug=slug, host=visible(t.host), run=point["run"],
                                              started=short_time(point.get("started_at")),
                                              at=point.get("started_at"), text=change_text(c),
                                              regression=c.regression, slower=c.diff > 0))
        first = max(0, n - TABLE_RUNS)
        title = (f"history of {name} on {visible(t.host)} · {n} runs · {t.unit}"
                 + (f" · the last {n - first} (all are in the plot)" if first else ""))
        table = html_table(history_report.history_table(title, list(t.points[first:]),
                                                         _tail(t.history, first), t.unit, wide=True),
                           lambda cells: f"../runs/{cells[0]}.html")
        sigma = ("none (one run)" if t.history.sigma_source == "none" else
                 f"replicate sd {console_report.fmt(t.history.sigma)}" if t.history.sigma_source == "host" else
                 f"series sd {console_report.fmt(t.history.sigma)}")  # named as report.history names them
        hosts.append(HostTrace(host=visible(t.host), unit=t.unit, n=n,
                               latest=console_report.fmt(t.points[-1]["estimate"]), sigma=sigma,
                               changes=tuple(changes), table=table))
    figure = history_figure(f"{name} · per op, by host", traces)
    site.page(f"history/{slug}", "history.html", title=f"history of {name}", plots=True, figure=figure,
              traces=hosts, argv=visible(argv, multiline=False))
    line = SeriesLine(bench=visible(bench, multiline=False), param="" if param is None else param,
                      variant=visible(variant, multiline=False), slug=slug, hosts=len(traces),
                      runs=sum(len(t.points) for t in traces),
                      changes=sum(len(t.history.changes) for t in traces), recent=len(regressions))
    return line, tuple(regressions)


def fleet_page(site: Site, fleet: Fleet) -> None:
    """Write fleet.html: compare --by host's table, or why there is none."""
    title = "fleet: per op, by host"
    if len(fleet.sides) < 2:
        site.page("fleet.html", "fleet.html", title=title, table=None, sides=[],
                  message=f"{len(fleet.sides)} host(s) with a complete run among the runs shown: the fleet table "
                  "sets two or more side by side.")
        return
    table = hosts_report.hosts_table([h for h, _ in fleet.sides], list(fleet.rows), fleet.cpu or {}, wide=True)
    site.page("fleet.html", "fleet.html", title=title, table=html_table(table), message="",
              sides=[(visible(h), list(ids)) for h, ids in fleet.sides])


def lab_pages(site: Site, lab: Lab) -> None:
    """Write the site's lists: runs.html, history/index.html, comparisons.html, variants.html,
    scale.html, fleet.html and index.html."""
    compares, variants, scales = (lab.digests.get(k, ()) for k in ("compare", "variants", "scale"))
    n_kind = {k: lab.n_kind.get(k, 0) for k in ("compare", "variants", "scale")}
    site.page("runs.html", "runs.html", title=f"runs ({len(lab.runs)})", runs=lab.runs)
    site.page("history/index.html", "histories.html", title=f"benchmarks ({len(lab.series)})", series=lab.series)
    site.page("comparisons.html", "comparisons.html", title="comparisons", items=compares[::-1],
              omitted=n_kind["compare"] - len(compares))
    site.page("variants.html", "variants.html", title="variant rankings", items=variants[::-1],
              omitted=n_kind["variants"] - len(variants))
    site.page("scale.html", "scale.html", title="scale", items=scales[::-1], plots=bool(scales),
              omitted=n_kind["scale"] - len(scales))
    fleet_page(site, lab.fleet)
    regressions = sorted(lab.regressions, key=lambda g: (g.at or "", g.run), reverse=True)
    counts = Counts(runs=len(lab.runs), hosts=len(lab.hosts), series=len(lab.series),
                    comparisons=n_kind["compare"], variants=n_kind["variants"], scale=n_kind["scale"])
    site.page("index.html", "index.html", title="cyclebench lab", regressions=regressions,
              hosts=sorted(lab.hosts, key=lambda h: h.name), newest=lab.runs[:NEWEST], window=lab.window,
              counts=counts)
