"""`cyclebench history BENCH`: one benchmark's per-run estimate in time order, with the runs
where it stepped (stats/changepoint.py) and a gate for CI pipelines (--fail-on-regression)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from cyclebench.experiments.history import ALL
from cyclebench.model import PURPOSES, REVISION, RUN, TIMING
from cyclebench.stats import changepoint
from cyclebench.ui import options as o
from cyclebench.ui.options import FloatRange, parse_labels
from cyclebench.ui.record import argument, group, option, takes


@dataclass(frozen=True, kw_only=True)
class HistoryArgs:
    """`history`'s options (--help gives each one's meaning)."""

    bench: str = argument()
    param: int | None = option("-p", "--param", type=int, help="The parameter (size, count) to follow.")
    variant: str = option("--variant", default="", help="The variant (a `variants` flag set); default: plain runs.")
    host: str | None = option("--host", help="Only runs of this host (its name or host id).")
    label_args: tuple[str, ...] = option("--label", multiple=True, metavar="KEY=VALUE",
                                         help="Only runs with this label.")
    purpose: str | None = option("--purpose", type=click.Choice([*PURPOSES, ALL]), help="Runs of this purpose "
                                 "(why they were measured); default: ordinary runs (run, fleet). 'all': every one.")
    kind: str | None = option("--kind", metavar="KIND", help="Results of this kind of measurement (timing, counters, "
                              "callgrind, stat); default: timing where there is some. A scaling run's "
                              "throughputs are `show RUN`'s, not a history's.")
    build: str | None = option("--build", metavar="FLAGS", help="Runs of the benchmark built with these flags "
                               "(as history names a build: '-O1', '-O2 -DN=4 + jemalloc'); default: the newest "
                               "run's.")
    since: dt.datetime | None = option("--since", type=click.DateTime(["%Y-%m-%d"]), metavar="YYYY-MM-DD",
                                       help="Only runs started on or after this day (UTC).")
    plot_path: Path | None = option("--plot", type=click.Path(dir_okay=False, path_type=Path),
                                    help="Also draw the history to FILE (.png, .svg, .pdf).")
    fail_on_regression: bool = option("--fail-on-regression", is_flag=True, help="Exit 1 when a change point among "
                                      "the last --window runs is a slowdown beyond the margin.")
    window: int = option("--window", type=click.IntRange(1), default=10, show_default=True,
                         help="Runs that count as recent for --fail-on-regression.")
    alpha: float = option("--alpha", type=FloatRange(0, 1, min_open=True), default=changepoint.ALPHA, show_default=True,
                          help="Significance of a change point, per segment searched (Bonferroni over its splits).")
    json_path: Path | None = group(o.json_option)
    output: o.OutputOptions = group(o.format_option)
    db: str | None = group(o.db_option)
    wide: bool = group(o.wide_option)


@click.command("history")
@takes(HistoryArgs)
def history_cmd(a: HistoryArgs) -> None:
    """One benchmark's per-run estimate ± CI in time order, with its change points."""
    from cyclebench.experiments.history import analyse, host_spread, points_of, series_spread
    from cyclebench.report import history as report
    from cyclebench.report.export import Export, Exported, write
    from cyclebench.report.plots import FORMATS
    from cyclebench.ui.common import UserError, err, open_store, out, write_text, writing
    from cyclebench.ui.export import deliver

    if a.plot_path is not None and a.plot_path.suffix.lower() not in FORMATS:
        raise UserError(f"--plot: the file must end in {', '.join(FORMATS)}")
    labels = parse_labels(a.label_args)
    store = open_store(a.db, create=False)
    since = a.since.date() if a.since else None
    points, unit, runs, rows, chosen = points_of(store, a.bench, a.param, a.variant, a.host, labels, since,
                                                 a.purpose, a.kind, a.build)
    spread = series_spread(host_spread(store, runs[-1], {r["id"] for r in runs}), chosen.key)
    h, margin = analyse(points, spread, a.alpha)
    name = a.bench + ("" if a.param is None else f" [{a.param}]") + (f" [{a.variant}]" if a.variant else "")
    key = chosen.key
    purpose = "every purpose" if a.purpose == ALL else key.purpose if key.purpose != RUN else ""
    shown = ", ".join(x for x in (key.host, key.measurement if key.measurement != TIMING else "", purpose) if x)
    title = f"history of {name} · {shown} · {len(points)} run{'s' * (len(points) != 1)} · {unit}"
    if key.purpose == REVISION:  # which order its steps are in: a commit's, or (runs stored without it) time's
        title += " · by commit" if chosen.order == "commit" else " · in time order (no commit order stored)"
    if not a.output.to_stdout:
        out.print(report.history_table(title, points, h, unit, wide=a.wide))
    if note := chosen.note(name):
        err.print(f"cyclebench: {note}", highlight=False)
    if len(points) < 2 * changepoint.MIN_SEGMENT and not a.fail_on_regression:  # the gate's verdict says it
        err.print(f"cyclebench: {len(points)} run{'s' * (len(points) != 1)}: a change point needs "
                  f"{changepoint.MIN_SEGMENT} on each side",
                  highlight=False)
    if a.plot_path is not None:
        with writing(a.plot_path):
            report.plot_history(title, points, h, unit, a.plot_path)
        err.print(f"history plot: {a.plot_path}", highlight=False)
    data = None
    if a.json_path is not None or a.output.asked:
        data = json.dumps({
            "format": "cyclebench-history", "version": 1,
            "bench": a.bench, "param": a.param, "variant": a.variant, "unit": unit, "margin": margin,
            "series": asdict(key), "left_out": [asdict(lo) for lo in chosen.left_out],
            "sigma": h.sigma, "sigma_source": h.sigma_source, "alpha": h.alpha, "min_segment": h.min_segment,
            "points": [dict(p) for p in points], "outliers": h.outliers,
            "changes": [{**asdict(c), "run": points[c.index]["run"], "rel": c.rel} for c in h.changes],
        }, indent=1) + "\n"
    if a.json_path is not None and data is not None:
        write_text(a.json_path, data)
    if a.output.asked:  # json: the history itself; the other formats: the runs' results, one replicate a run
        fmt = a.output.fmt
        deliver(a.output, Exported(data or "") if fmt == "json" else
                write(fmt, Export([dict(r) for r in rows], {r["id"]: r for r in runs}, title=title)))
    if a.fail_on_regression:  # a verdict either way: a CI log that passed says so, and over which runs
        verdict = report.gate_verdict(name, points, h, a.window, margin, unit)
        err.print(f"cyclebench: {verdict.line}", style="red" if verdict.failed else "green", highlight=False)
        if verdict.failed:
            sys.exit(1)
