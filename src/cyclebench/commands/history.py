"""`cyclebench history BENCH`: one benchmark's per-run estimate in time order, with the runs
where it stepped (stats/changepoint.py) and a gate for CI pipelines (--fail-on-regression)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from cyclebench.commands._common import UserError, err, open_store, out, write_text
from cyclebench.commands._export import deliver
from cyclebench.commands._options import OutputOptions, db_option, format_option, json_option, parse_labels, wide_option
from cyclebench.experiments.history import estimate_of, host_spread
from cyclebench.model import OK
from cyclebench.report import history as report
from cyclebench.report.export import Export, Exported, write
from cyclebench.report.plots import FORMATS
from cyclebench.stats import changepoint
from cyclebench.stats.ab import MARGIN_ABS, MARGIN_REL
from cyclebench.store import Store


def points_of(store: Store, bench: str, param: int | None, variant: str, host: str | None,
              labels: dict[str, str], since: dt.date | None,
              ) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]], list[dict[str, Any]]]:
    """The valid results of ``bench`` (at ``param``, of ``variant``) in the runs that match,
    oldest first, in one unit (cycles~ when all have it, else the most common timer unit):
    (points, unit, their runs, their result rows). Raises UserError when the benchmark has
    several parameters and none was chosen, or nothing matches."""
    got: list[tuple[dict[str, Any], dict[str, Any]]] = []
    found = store.list_runs(None, host=host, since=since, labels=labels)  # filtered in SQL
    rows = store.results_of([r["id"] for r in found])  # one query
    for run in time_order(found):
        for row in rows[run["id"]]:
            if row["bench"] == bench and (row.get("variant") or "") == variant and row["status"] == OK:
                got.append((run, row))
    params = sorted({row["param"] for _, row in got}, key=lambda p: (p is None, p))
    if param is None and len(params) > 1:
        raise UserError(f"{bench} was measured at several parameters ({', '.join(map(str, params))}): pass -p")
    got = [(run, row) for run, row in got if param is None or row["param"] == param]
    if not got:
        raise UserError(f"no valid result of {bench}{'' if param is None else f' [{param}]'} in the runs that match "
                        f"({store.url})")
    return points_from(got)


def time_order(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs oldest first: by start time, then id."""
    return sorted(runs, key=lambda r: (r.get("started_at") or "", r["id"]))


def points_from(got: Sequence[tuple[dict[str, Any], dict[str, Any]]],
                ) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]], list[dict[str, Any]]]:
    """A series from its (run, valid result row) pairs of one benchmark, parameter and variant,
    oldest first (non-empty): (points, unit, their runs, their rows), the unit cycles~ when every
    row has it, else the most common timer unit, rows in another unit left out. A point: run,
    started_at, labels, estimate, ci_low, ci_high, param (the run's own unit)."""
    units = [estimate_of(row)[1] for _, row in got]
    unit = "cycles~" if all(u == "cycles~" for u in units) else max(set(units), key=units.count)
    points, kept = [], []
    for run, row in got:
        if unit == "cycles~":
            est, lo, hi = row["cycles_per_op"], row.get("cycles_ci_low"), row.get("cycles_ci_high")
        elif row.get("unit") == unit:
            est, lo, hi = row["per_op"], row.get("ci_low"), row.get("ci_high")
        else:
            continue
        points.append({"run": run["id"], "started_at": run.get("started_at"), "labels": run.get("labels") or {},
                       "estimate": est, "ci_low": lo, "ci_high": hi, "param": row["param"]})
        kept.append((run, row))
    return points, unit, [run for run, _ in kept], [row for _, row in kept]


def analyse(points: Sequence[dict[str, Any]], spread: tuple[float, int] | None,
            alpha: float = changepoint.ALPHA) -> tuple[changepoint.History, float]:
    """The change points of a series (points_from's points, oldest first) and the practical
    margin of a regression in its unit (compare's: MARGIN_ABS or MARGIN_REL of the median run,
    the smaller): each run's standard error from its 95% CI (normal), ``spread`` the host's
    run-to-run (sd, df) from earlier replicate groups (experiments.history.host_spread; None: the
    series' own, stats.changepoint)."""
    est = [p["estimate"] for p in points]
    se = [((p["ci_high"] - p["ci_low"]) / (2 * 1.96)) if p["ci_low"] is not None else 0.0 for p in points]
    base = float(sorted(est)[len(est) // 2])
    margin = min(MARGIN_ABS, MARGIN_REL * abs(base))
    return changepoint.detect(est, se, *(spread or (None, None)), alpha=alpha, margin=margin), margin


@click.command("history")
@click.argument("bench")
@click.option("-p", "--param", type=int, default=None, help="The parameter (size, count) to follow.")
@click.option("--variant", default="", help="The variant (a `variants` flag set); default: plain runs.")
@click.option("--host", default=None, help="Only runs of this host (its name or host id).")
@click.option("--label", "label_args", multiple=True, metavar="KEY=VALUE", help="Only runs with this label.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None, metavar="YYYY-MM-DD",
              help="Only runs started on or after this day (UTC).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the history to FILE (.png, .svg, .pdf).")
@click.option("--fail-on-regression", is_flag=True,
              help="Exit 1 when a change point among the last --window runs is a slowdown beyond the margin.")
@click.option("--window", type=click.IntRange(1), default=10, show_default=True,
              help="Runs that count as recent for --fail-on-regression.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True), default=changepoint.ALPHA, show_default=True,
              help="Significance of a change point, per segment searched (Bonferroni over its splits).")
@json_option
@format_option
@db_option
@wide_option
def history_cmd(bench: str, param: int | None, variant: str, host: str | None, label_args: tuple[str, ...],
                since: dt.datetime | None, plot_path: Path | None, fail_on_regression: bool, window: int, alpha: float,
                json_path: Path | None, output: OutputOptions, db: str | None, wide: bool) -> None:
    """One benchmark's per-run estimate ± CI in time order, with its change points."""
    if plot_path is not None and plot_path.suffix.lower() not in FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(FORMATS)}")
    labels = parse_labels(label_args)
    store = open_store(db, create=False)
    points, unit, runs, rows = points_of(store, bench, param, variant, host, labels, since.date() if since else None)
    spread = host_spread(store, runs[-1], {r["id"] for r in runs}).get((bench, points[-1]["param"], variant))
    h, margin = analyse(points, spread, alpha)
    name = bench + ("" if param is None else f" [{param}]") + (f" [{variant}]" if variant else "")
    title = f"history of {name} · {len(points)} runs · {unit}"
    if not output.to_stdout:
        out.print(report.history_table(title, points, h, unit, wide=wide))
    if len(points) < 2 * changepoint.MIN_SEGMENT:
        err.print(f"cyclebench: {len(points)} runs: a change point needs {changepoint.MIN_SEGMENT} on each side",
                  highlight=False)
    if plot_path is not None:
        try:
            report.plot_history(title, points, h, unit, plot_path)
        except OSError as e:
            raise UserError(f"cannot write {plot_path}: {e.strerror or e}") from None
        err.print(f"history plot: {plot_path}", highlight=False)
    data = None
    if json_path is not None or output.asked:
        data = json.dumps({
            "format": "cyclebench-history", "version": 1,
            "bench": bench, "param": param, "variant": variant, "unit": unit, "margin": margin,
            "sigma": h.sigma, "sigma_source": h.sigma_source, "alpha": h.alpha, "min_segment": h.min_segment,
            "points": points, "outliers": h.outliers,
            "changes": [{**asdict(c), "run": points[c.index]["run"], "rel": c.rel} for c in h.changes],
        }, indent=1) + "\n"
    if json_path is not None and data is not None:
        write_text(json_path, data)
    if output.asked:  # json: the history itself; the other formats: the runs' results, one replicate a run
        fmt = output.fmt
        deliver(output, Exported(data or "") if fmt == "json" else
                write(fmt, Export([dict(r) for r in rows], {r["id"]: r for r in runs}, title=title)))
    if fail_on_regression:
        recent = [c for c in h.changes if c.regression and c.index >= len(points) - window]
        if recent:
            c = recent[-1]
            err.print(f"cyclebench: regression: {name} {100 * c.rel:+.1f}% from run #{points[c.index]['run']} "
                      f"(within the last {window} runs)", style="red", highlight=False)
            sys.exit(1)
