"""`cyclebench show RUN`: every stored kind's table inputs rebuilt — in one place — from what
the run stored, as records report/show.py prints (docs/architecture.md: a design returns
records, a report prints them).

What each command stores, and the record its table is rebuilt as:

========================  =====================================================  ===========================
made by                   stored                                                  rebuilt as (report.show)
========================  =====================================================  ===========================
run                       result rows (timing; their ``counters`` with -e);       RunTables
                          ``summary.display.net``
run --backend callgrind   result rows of kind simulated (``simulated.events``)    RunTables
run FILE.c (will-it-      result rows; ``env.wis``                                CostTables
scale test cases)
run --gbench BIN          result rows (their ``gbench``); ``env.gbench``          CostTables
compare A B               ``summary.compare`` (its rows) and ``summary.display``  ComparisonTables
                          (the title's design, alpha)
a bisect's sitting        as compare; ``summary.bisect`` (id, step, revision,     ComparisonTables, Sitting
                          the bisect's state after it)
variants, compare         ``summary.variants`` (the ranked data) and              VariantsTables
--allocator               ``summary.display.sort``
scale                     result rows of kind scaling; ``env.scale.modes``        ScaleTables
stat                      result rows of kind stat (values per repetition in      StatTables
                          their ``stat``); ``summary.stat`` (argv, repetitions,
                          each metric's status)
profile                   result rows of kind profile (each function's row, its   ProfileTables
                          ``profile``); ``summary.profile`` (target, unit, clock,
                          probe) and ``summary.display.limit``
========================  =====================================================  ===========================

`show --bisect ID` reads every sitting of the bisect (stored_bisect: a StoredBisect). A run
stored before ``summary.display`` existed is shown with the defaults its command has
(net off, ranked by cycles, α 0.002, 30 functions). A variants or compare run interrupted before
its summary was written has only its result rows: they are shown as a run's. No printing here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cyclebench.gate import Gate
from cyclebench.model import (
    PROFILE,
    STAT,
    BenchEntry,
    Comparison,
    ComparisonRow,
    ProfileRow,
    Result,
    Run,
    StatMetric,
)
from cyclebench.report.bisect import Sitting, StoredBisect, StoredRevision, StoredStep
from cyclebench.report.show import (
    DAMAGED,
    ComparisonTables,
    CostTables,
    ProfileTables,
    RunTables,
    ScaleTables,
    ShownRun,
    StatTables,
    Tables,
    VariantsTables,
)
from cyclebench.report.titles import (
    compare_title,
    gbench_cost_lines,
    gbench_run_title,
    run_title,
    wis_cost_lines,
    wis_run_title,
)
from cyclebench.report.variants import sort_keys
from cyclebench.store.predictions import of_run, predictions_of

if TYPE_CHECKING:
    from cyclebench.stats.repetitions import Metric
    from cyclebench.store import Store

DEFAULT_SORT = "cycles"  # variants --sort's default
DEFAULT_LIMIT = 30  # profile --limit's default
_EMPTY: Mapping[str, Any] = {}


def _doc(x: object) -> Mapping[str, Any]:
    """A JSON object of the run (its summary, env, a part of them), {} when it is not one."""
    return x if isinstance(x, Mapping) else _EMPTY


def _summary(run: Run) -> Mapping[str, Any]:
    return _doc(run.summary)


def _display(run: Run) -> Mapping[str, Any]:
    """How the command was asked to print its table (``summary.display``; {} when not stored)."""
    return _doc(_summary(run).get("display"))


def as_run(run: Mapping[str, Any]) -> Run:
    """``run`` as the Run record (a store.get_run / list_runs record as it is; a runs row read as
    a mapping made one)."""
    return run if isinstance(run, Run) else Run.of(run)


# ---------------------------------------------------------------- each kind's table inputs
def variants_data(run: Mapping[str, Any]) -> tuple[BenchEntry, ...] | None:
    """The ranked data `variants` printed (an entry per benchmark: experiments.variants.summary),
    or None when the run stored none (not a variants run, or interrupted before its end)."""
    data = _summary(as_run(run)).get("variants")
    return tuple(data) if isinstance(data, list) and data else None


def variants_sort(data: Sequence[BenchEntry], run: Run) -> str:
    """The --sort the tables were ranked by: as stored, else the default; the default too when
    a benchmark's table has no such column (report.variants.sort_keys)."""
    sort = str(_display(run).get("sort") or DEFAULT_SORT)
    return sort if all(sort in sort_keys(dict(d)) for d in data) else DEFAULT_SORT


def comparison_rows(run: Mapping[str, Any]) -> tuple[ComparisonRow, ...] | None:
    """The rows `compare` printed (its stored verdicts, sequential looks included), or None
    when the run stored none. Raises KeyError, TypeError (a summary an import damaged)."""
    stored = _summary(as_run(run)).get("compare")
    if not isinstance(stored, list):
        return None
    rows = []
    for d in stored:
        c = d.get("comparison")
        rows.append(ComparisonRow(d["a"], d["b"], d.get("param"), d.get("unit") or "",
                                  Comparison(**c) if c else None, d.get("note") or "", d.get("sequential")))
    return tuple(rows)


def comparisons(run: Mapping[str, Any]) -> ComparisonTables | None:
    """`compare`'s table as stored: its rows, its title (the run and its stored design,
    ``summary.display.design``) and α; None when the run stored no comparison."""
    rec = as_run(run)
    rows = comparison_rows(rec)
    if rows is None:
        return None
    rid, display = int(rec.id or 0), _display(rec)
    design, alpha = display.get("design"), display.get("alpha")
    if not isinstance(alpha, (int, float)):  # a run stored before α was: the default (stats.ab: numpy)
        from cyclebench.stats.ab import ALPHA as alpha
    return ComparisonTables(rows, compare_title(rid, str(design)) if design else f"run #{rid}: comparisons",
                            float(alpha))


def stat_metrics(rows: Sequence[Result], run: Run) -> list[Metric]:
    """Stored stat rows back as the Metrics `stat` printed: values per repetition, notes and the
    repetitions that did other work from their ``stat``; not counted / not supported from the run's
    ``summary.stat.metrics`` (a row only says skipped)."""
    from cyclebench.stats.repetitions import Metric  # numpy: a stat run's show only

    known = _doc(_doc(_summary(run).get("stat")).get("metrics"))
    out = []
    for row in rows:
        metric: StatMetric = row.stat or {}
        name = str(metric.get("metric") or row.bench)
        said = _doc(known.get(name)).get("status")
        status = ("derived" if metric.get("derived") else
                  (said if said in ("not counted", "not supported") else "not counted")
                  if row.status == "skipped" else "ok")
        out.append(Metric(name, row.unit or "", list(metric.get("values") or []), status=status,
                          notes=tuple(metric.get("notes") or ()), reason=row.reason,
                          different=tuple(metric.get("different_work") or ())))
    return out


def stat_title(rows: Sequence[Result], run: Run) -> str:
    """`stat`'s title: the command, its repetitions and the backend, from ``summary.stat``
    (else the first row's ``stat``)."""
    info = _doc(_summary(run).get("stat"))
    first: StatMetric = (rows[0].stat or {}) if rows else {}
    argv = info.get("argv") or first.get("command") or []
    reps = info.get("repetitions") if isinstance(info.get("repetitions"), list) else first.get("repetitions") or []
    backend = str(info.get("backend") or first.get("backend") or "timing")
    from cyclebench.experiments import stat as _stat  # where a stat run is shown: ~26 ms

    return _stat.title(int(run.id or 0), list(argv), len(reps), backend)


def profile_rows(rows: Sequence[Result]) -> tuple[ProfileRow, ...]:
    """The flat profile's rows (stats.profile.flat_profile's, each its result's ``profile``:
    experiments.profile.result_row) in the profile's order: as stored (by id), not the suite's."""
    return tuple(r.profile for r in sorted(rows, key=lambda r: r.id or 0) if r.profile is not None)


def profile_tables(rows: Sequence[Result], run: Run) -> ProfileTables:
    """`profile`'s table from its rows and ``summary.profile`` (target, unit, clock, backend,
    probe) with ``summary.display.limit``."""
    from cyclebench.experiments import profile as _profile  # the profiler's design (~120 ms): a profile's show

    info = _doc(_summary(run).get("profile"))
    unit = str(info.get("unit") or rows[0].unit or "")
    limit = _display(run).get("limit")
    probe = info.get("probe")
    return ProfileTables(profile_rows(rows), unit,
                         _profile.title(str(info.get("target") or "?"), str(info.get("clock") or unit)),
                         info.get("backend") == "callgrind", limit if isinstance(limit, int) and limit > 0
                         else DEFAULT_LIMIT, _profile.probe_line(probe, unit) if isinstance(probe, Mapping) else None)


def scale_tables(rows: Sequence[Result], run: Run) -> ScaleTables:
    """`scale`'s tables: the series of its rows, each test case's description, the first mode
    it swept (``env.scale.modes``)."""
    from cyclebench.stats import scaling

    series = scaling.series_from_rows(rows)
    descriptions = {s.bench: s.points[0].get("description") for s in series
                    if s.points and "description" in s.points[0]}
    modes = _doc(_doc(run.env).get("scale")).get("modes") or [series[0].mode]
    return ScaleTables(tuple(series), descriptions, modes[0])


def with_spread(store: Store, run: Run, rows: Sequence[Result]) -> list[Result]:
    """The rows with this host's run-to-run spread (their ``run_to_run``) as `run` printed it:
    from the replicate groups stored before this run (experiments.history.host_spread)."""
    from cyclebench.experiments import history

    rid = int(run.id or 0)
    return history.with_spread(rows, history.host_spread(store, dict(run), {rid}, before=rid))


def _row_tables(store: Store, run: Run, rows: Sequence[Result]) -> list[Tables]:
    """A run of result rows: each kind's tables (a run's, stat's, profile's, scale's)."""
    stat = [r for r in rows if r.kind == STAT]
    prof = [r for r in rows if r.kind == PROFILE]
    scale: list[Result] = []
    if any(r.scale is not None for r in rows):  # stats.scaling (numpy) only for a run that has scaling rows
        from cyclebench.stats import scaling

        scale = [r for r in rows if scaling.is_scale_row(r)]
    others = [r for r in rows if r.kind not in (STAT, PROFILE) and r not in scale]
    rid = int(run.id or 0)
    tables: list[Tables] = []
    if others or not (stat or prof or scale):
        if _doc(_doc(run.env).get("wis")):  # `run FILE.c` of will-it-scale test cases (ui/wis.py)
            from cyclebench.experiments.wis import RUN_MODE

            tables.append(CostTables(tuple(others), wis_run_title(rid, RUN_MODE), tuple(wis_cost_lines(others))))
        elif (gb := _doc(_doc(run.env).get("gbench"))):  # `run --gbench BIN` (ui/gbench.py)
            from pathlib import Path

            title = gbench_run_title(rid, run.cpu, Path(str(gb.get("executable") or "?")).name,
                                     gb.get("library_version"))
            tables.append(CostTables(tuple(others), title, tuple(gbench_cost_lines(others))))
        else:
            build = _doc(run.build)
            title = run_title(rid, run.cpu, build.get("cc_version") or run.compiler)
            tables.append(RunTables(tuple(with_spread(store, run, others)), title, bool(_display(run).get("net"))))
    if stat:
        tables.append(StatTables(tuple(stat_metrics(stat, run)), stat_title(stat, run)))
    if prof:
        tables.append(profile_tables(prof, run))
    if scale:
        tables.append(scale_tables(scale, run))
    return tables


# ---------------------------------------------------------------- a bisect and its sittings
def _state(run: Run) -> Mapping[str, Any]:
    """The bisect's state as it stood after this sitting (experiments.bisect.Bisection.to_dict in
    ``summary.bisect.state``; {} when not stored)."""
    return _doc(_doc(_summary(run).get("bisect")).get("state"))


def sitting_of(run: Run) -> Sitting | None:
    """The bisect ``run`` is a sitting of (``summary.bisect``, else its label ``bisect``), with
    its step and the short shas of GOOD, BAD and the revision it measured; None for any other run."""
    b = _doc(_summary(run).get("bisect"))
    bid = b.get("id") or _doc(run.labels).get("bisect")
    if not bid:
        return None
    state, rev, step = _state(run), str(b.get("revision") or ""), b.get("step")
    shorts = {x.revision.sha: x.revision.short for s in state.get("searches") or [] if isinstance(s, Mapping)
              for x in (StoredStep.of(st) for st in s.get("steps") or [] if isinstance(st, Mapping))}
    good, bad = (StoredRevision.of(state.get(k)).short if state.get(k) else "" for k in ("good", "bad"))
    return Sitting(str(bid), step if isinstance(step, int) and not isinstance(step, bool) else None, good, bad,
                   shorts.get(rev) or rev[:7])


def stored_bisect(store: Store, bisect: str) -> StoredBisect | None:
    """The bisect ``bisect`` as its sittings (the runs labelled bisect=ID: docs/revisions.md)
    stored it — the state of the newest sitting that stored one, as the site's page of the bisect
    reads it (report/site/revisions.py); None when no run is labelled so."""
    runs = sorted(store.list_runs(None, labels={"bisect": bisect}), key=lambda r: int(r.id or 0))
    if not runs:
        return None
    last = next((r for r in reversed(runs) if _state(r)), None)
    state = _state(last) if last is not None else _EMPTY
    b = _doc(_summary(last).get("bisect")) if last is not None else _EMPTY
    t = b.get("threshold")
    searches = tuple(x for x in state.get("searches") or [] if isinstance(x, Mapping))
    counted = b.get("backend") == "callgrind" or any(
        isinstance(st, Mapping) and st.get("unit") for x in searches for st in x.get("steps") or [])
    return StoredBisect(bisect, StoredRevision.of(state.get("good")), StoredRevision.of(state.get("bad")),
                        float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None, counted,
                        searches, tuple(int(r.id or 0) for r in runs), int(last.id or 0) if last is not None else None)


def bisect_ids(store: Store) -> list[str]:
    """Every bisect the store holds a sitting of (their label bisect=ID), for the line that says
    an ID is not there."""
    return sorted({str(lb["bisect"]) for r in store.list_runs(None) if "bisect" in (lb := _doc(r.labels))})


# ---------------------------------------------------------------- the whole
def rebuild(store: Store, run: Mapping[str, Any]) -> ShownRun:
    """The stored run ``run`` (a store.get_run record) as `show` prints it: its result rows and
    the tables its command printed, rebuilt from them and its summary. A summary an import
    damaged is not an error: ShownRun.problem says what it lacks (the rows are shown as they
    are). Reads the store (the run's results, the host's earlier replicate runs)."""
    rec = as_run(run)
    rows = tuple(store.results(int(rec.id or 0)))
    preds = tuple(predictions_of(of_run(store, int(rec.id or 0))))
    try:
        data = variants_data(rec)
        compared = comparisons(rec)
        gated = _summary(rec).get("ci")
        tables: list[Tables]
        if isinstance(gated, Mapping):
            tables = [Gate.from_dict(int(rec.id or 0), gated)]
        elif data is not None:
            tables = [VariantsTables(data, variants_sort(data, rec),
                                     any("disasm" in v for d in data for v in d.get("variants") or []))]
        elif compared is not None:
            sitting = sitting_of(rec)  # a bisect's sitting names its bisect under the table
            tables = [compared] if sitting is None else [compared, sitting]
        else:
            tables = _row_tables(store, rec, rows)
    except DAMAGED as e:
        return ShownRun(rec, rows, problem=f"{type(e).__name__}: {e}", predictions=preds)
    return ShownRun(rec, rows, tuple(tables), predictions=preds)
