"""The machinery of `cyclebench show RUN`: every stored kind's own table, as the command that
made the run printed it, rebuilt here — in one place — from what the run stored.

What each command stores, and what its table is built from:

========================  =====================================================  ===========================
made by                   stored                                                  printed with
========================  =====================================================  ===========================
run                       result rows (timing; ``extra.counters`` with -e);       console.print_results,
                          ``summary.display.net``                                 print_counters
run --backend callgrind   result rows of kind simulated (``extra.events``)        console.print_simulated
run FILE.c (will-it-      result rows; ``env.wis``                                console.print_results and
scale test cases)                                                                 _wis.cost_lines
compare A B               ``summary.compare`` (its rows) and ``summary.display``  console.comparisons_table
                          (the title's design, alpha)
variants, compare         ``summary.variants`` (the ranked data) and              variants.print_variants
--allocator               ``summary.display.sort``                                (report.variants)
scale                     result rows of kind scaling; ``env.scale.modes``        report.plots.scale_table,
                                                                                  text_chart
stat                      result rows of kind stat (values per repetition in      report.stat.stat_table
                          ``extra``); ``summary.stat`` (argv, repetitions,
                          each metric's status)
profile                   result rows of kind profile (each function's row in     report.profile.profile_table
                          ``extra``); ``summary.profile`` (target, unit, clock,
                          probe) and ``summary.display.limit``
========================  =====================================================  ===========================

A run stored before ``summary.display`` existed is shown with the defaults its command has
(net off, ranked by cycles, α 0.002, 30 functions). A variants or compare run interrupted before
its summary was written has only its result rows: they are shown as a run's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from cyclebench.commands import _compare, _run, _scale, _wis
from cyclebench.commands._export import export_comparisons, export_runs
from cyclebench.experiments import history
from cyclebench.experiments import profile as _profile
from cyclebench.experiments import stat as _stat
from cyclebench.experiments.comparison import Row
from cyclebench.experiments.history import host_spread
from cyclebench.model import PROFILE, STAT, Comparison, Result
from cyclebench.report import console as console_report
from cyclebench.report import variants as variants_report
from cyclebench.report.export import TABLE_FORMATS, Exported
from cyclebench.report.profile import profile_table
from cyclebench.report.stat import stat_table
from cyclebench.report.text import safe_text
from cyclebench.report.variants import sort_keys
from cyclebench.stats import scaling
from cyclebench.stats.ab import ALPHA
from cyclebench.stats.repetitions import Metric
from cyclebench.store import Store

DEFAULT_SORT = "cycles"  # variants --sort's default
DEFAULT_LIMIT = 30  # profile --limit's default


def _dict(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def summary(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run's summary (a dict; {} when it has none)."""
    return _dict(run.get("summary"))


def display(run: Mapping[str, Any]) -> dict[str, Any]:
    """How the command was asked to print its table (``summary.display``; {} when not stored)."""
    return _dict(summary(run).get("display"))


# ---------------------------------------------------------------- each kind's table inputs
def variants_data(run: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The ranked data `variants` printed (an entry per benchmark: experiments.variants.summary),
    or None when the run stored none (not a variants run, or interrupted before its end)."""
    data = summary(run).get("variants")
    return data if isinstance(data, list) and data else None


def variants_sort(data: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> str:
    """The --sort the tables were ranked by: as stored, else the default; the default too when
    a benchmark's table has no such column (report.variants.sort_keys)."""
    sort = str(display(run).get("sort") or DEFAULT_SORT)
    return sort if all(sort in sort_keys(dict(d)) for d in data) else DEFAULT_SORT


def comparison_rows(run: Mapping[str, Any]) -> list[Row] | None:
    """The rows `compare` printed (its stored verdicts, sequential looks included), or None
    when the run stored none."""
    stored = summary(run).get("compare")
    if not isinstance(stored, list):
        return None
    rows = []
    for d in stored:
        c = d.get("comparison")
        rows.append(Row(d["a"], d["b"], d.get("param"), d.get("unit") or "", Comparison(**c) if c else None,
                        d.get("note") or "", d.get("sequential")))
    return rows


def comparison_title(run: Mapping[str, Any]) -> str:
    """`compare`'s title: the run and its stored design (``summary.display.design``)."""
    design = display(run).get("design")
    return _compare.title(int(run["id"]), str(design)) if design else f"run #{run['id']}: comparisons"


def comparison_alpha(run: Mapping[str, Any]) -> float:
    alpha = display(run).get("alpha")
    return float(alpha) if isinstance(alpha, (int, float)) else ALPHA


def stat_metrics(rows: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> list[Metric]:
    """Stored stat rows back as the Metrics `stat` printed: values per repetition, notes and the
    repetitions that did other work from ``extra``; not counted / not supported from the run's
    ``summary.stat.metrics`` (a row only says skipped)."""
    known = _dict(_dict(summary(run).get("stat")).get("metrics"))
    out = []
    for row in rows:
        extra = _dict(row.get("extra"))
        name = str(extra.get("metric") or row["bench"])
        said = _dict(known.get(name)).get("status")
        status = ("derived" if extra.get("derived") else
                  (said if said in ("not counted", "not supported") else "not counted")
                  if row.get("status") == "skipped" else "ok")
        out.append(Metric(name, row.get("unit") or "", list(extra.get("values") or []), status=status,
                          notes=list(extra.get("notes") or []), reason=row.get("reason"),
                          different=list(extra.get("different_work") or [])))
    return out


def stat_title(rows: Sequence[Mapping[str, Any]], run: Mapping[str, Any]) -> str:
    """`stat`'s title: the command, its repetitions and the backend, from ``summary.stat``
    (else the first row's ``extra``)."""
    info = _dict(summary(run).get("stat"))
    first = _dict(rows[0].get("extra")) if rows else {}
    argv = info.get("argv") or first.get("command") or []
    reps = info.get("repetitions") if isinstance(info.get("repetitions"), list) else first.get("repetitions") or []
    backend = str(info.get("backend") or first.get("backend") or "timing")
    return _stat.title(int(run["id"]), list(argv), len(reps), backend)


def profile_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The flat profile's rows (stats.profile.flat_profile's, each stored whole in ``extra``:
    experiments.profile.result_row) in the profile's order: as stored (by id), not the suite's."""
    return [_dict(r.get("extra")) for r in sorted(rows, key=lambda r: r.get("id") or 0)]


def run_title(run: Mapping[str, Any]) -> str:
    """`run`'s title: the run, its CPU and compiler (the run row's ``cpu`` and ``build``)."""
    build = _dict(run.get("build"))
    return _run.title(int(run["id"]), run.get("cpu"), build.get("cc_version") or run.get("compiler"))


def with_spread(store: Store, run: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> list[Result]:
    """The rows with this host's run-to-run spread (``extra.run_to_run``) as `run` printed it:
    from the replicate groups stored before this run (experiments.history.host_spread)."""
    rid = int(run["id"])
    return history.with_spread(rows, host_spread(store, dict(run), {rid}, before=rid))


# ---------------------------------------------------------------- the whole
def print_run(store: Store, run: Mapping[str, Any], wide: bool, console: Console, notes: Console) -> None:
    """Print the stored run ``run`` (a store.get_run row) as its command printed it: its tables
    to ``console``, then on ``notes`` its status and start, who made it and the timer."""
    rid = int(run["id"])
    rows = store.results(rid)
    try:
        data = variants_data(run)
        compared = comparison_rows(run)
        if data is not None:
            variants_report.print_variants(data, console, run_id=rid, wide=wide, sort=variants_sort(data, run),
                                          disasm=any("disasm" in v for d in data for v in d.get("variants") or []))
        elif compared is not None:
            console_report.print_comparisons(compared, console, title=comparison_title(run),
                                             alpha=comparison_alpha(run), wide=wide)
        else:
            _print_rows(store, run, rows, wide, console, notes)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a summary an import damaged: not a traceback
        notes.print(safe_text(f"cyclebench: run #{rid}'s stored table is incomplete ({type(e).__name__}: {e}): "
                              "its result rows as they are", multiline=False), highlight=False)
        console_report.print_results(rows, console, title=f"run #{rid}", wide=wide)
    notes.print(safe_text(f"run #{rid} · {run.get('status')} · {run.get('started_at')}", multiline=False),
                highlight=False)
    identity = console_report.identity_line(dict(run))
    if identity:
        notes.print(safe_text(identity, multiline=False), highlight=False, soft_wrap=True)
    if run.get("calibration"):
        notes.print(safe_text(console_report.calibration_line(run.get("calibration"))), highlight=False)


def _print_rows(store: Store, run: Mapping[str, Any], rows: list[dict[str, Any]], wide: bool, console: Console,
                notes: Console) -> None:
    """A run of result rows: each kind's table (a run's, stat's, profile's, scale's)."""
    stat = [r for r in rows if r.get("kind") == STAT]
    prof = [r for r in rows if r.get("kind") == PROFILE]
    scale = [r for r in rows if scaling.is_scale_row(r)]
    others = [r for r in rows if r.get("kind") not in (STAT, PROFILE) and not scaling.is_scale_row(r)]
    if others or not (stat or prof or scale):
        wis = _dict(_dict(run.get("env")).get("wis"))
        if wis:  # `run FILE.c` of will-it-scale test cases (commands._wis.run_cases)
            console_report.print_results(others, console, title=_wis.run_title(int(run["id"])), wide=wide)
            for line in _wis.cost_lines(others):
                console.print(safe_text(line), highlight=False)
        else:
            _run.print_tables(with_spread(store, run, others), run_title(run), bool(display(run).get("net")), wide,
                              console)
    if stat:
        console.print(stat_table(stat_metrics(stat, run), title=stat_title(stat, run), wide=wide))
    if prof:
        info = _dict(summary(run).get("profile"))
        unit = str(info.get("unit") or prof[0].get("unit") or "")
        limit = display(run).get("limit")
        console.print(profile_table(profile_rows(prof), unit,
                                    _profile.title(str(info.get("target") or "?"), str(info.get("clock") or unit)),
                                    info.get("backend") == "callgrind", wide,
                                    limit if isinstance(limit, int) and limit > 0 else DEFAULT_LIMIT))
        if isinstance(info.get("probe"), dict):
            notes.print(_profile.probe_line(info["probe"], unit), highlight=False)
    if scale:
        series = scaling.series_from_rows(scale)
        descriptions = {s.bench: s.points[0].get("description") for s in series
                        if s.points and "description" in s.points[0]}
        modes = _dict(_dict(run.get("env")).get("scale")).get("modes") or [series[0].mode]
        _scale.print_series(series, descriptions, modes[0], wide, console)


def export(store: Store, run: Mapping[str, Any], fmt: str) -> Exported:
    """`show RUN --format F`: what `export RUN --format F` writes, except that csv, markdown and
    text of a compare run are its comparisons, the table show prints (as `compare --format`)."""
    rid = int(run["id"])
    try:
        compared = comparison_rows(run)
    except (KeyError, TypeError, ValueError, AttributeError):  # damaged (print_run says so): the rows
        compared = None
    if compared is not None and fmt in TABLE_FORMATS:
        return export_comparisons(store, compared, fmt, rid, comparison_title(run), comparison_alpha(run))
    return export_runs(store, [rid], fmt)
