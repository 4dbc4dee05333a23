"""The site's interactive plots as Plotly figures (plotly.com/javascript/reference: a figure is
``{"data": [traces], "layout": {...}}`` in JSON, drawn in the page by plotly.js, which the
site carries itself): a benchmark's history across hosts, and scale's curves.

Built as Plotly's JSON (the TypedDicts below name the attributes used, as the reference spells
them), not through plotly's Python classes: a lab's site has hundreds of figures and the classes
validate every property on the way (tests/commands/test_report_site.py checks the figures are
valid with them). Every string that came from a benchmark, a run or the database is
HTML-escaped here: Plotly reads a small set of HTML tags in its text.
"""

from __future__ import annotations

import datetime as dt
import html
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from cyclebench.model import Point, Run, Series
from cyclebench.stats.changepoint import ChangePoint, History


class Font(TypedDict, total=False):
    size: int


class Title(TypedDict, total=False):
    text: str
    font: Font


class Line(TypedDict, total=False):
    """A trace's or a shape's line (plotly.com/javascript/reference/scatter/#scatter-line)."""

    color: str
    width: int
    dash: str  # solid | dash | dot


class Marker(TypedDict, total=False):
    """scatter.marker: one value, or one per point."""

    color: str | list[str]
    size: int
    symbol: str | list[str]
    line: Line


class Meta(TypedDict, total=False):
    """What a trace is, for the page's script and the tests: its role and host (history) or series (scale)."""

    role: str  # band | runs | level | outlier | change | throughput | efficiency
    host: str
    series: str


class Scatter(TypedDict, total=False):
    """A scatter trace (plotly.com/javascript/reference/scatter): x, y in data units (x of a
    history: Plotly date strings, UTC; None breaks a line)."""

    type: str
    mode: str
    name: str
    legendgroup: str
    showlegend: bool
    x: Sequence[Any]  # dates (str), task counts (int), None between segments
    y: Sequence[float | None]
    fill: str
    fillcolor: str
    line: Line
    marker: Marker
    hoverinfo: str
    hovertemplate: str
    customdata: list[list[Any]]  # per point: run id, escaped texts
    xaxis: str
    yaxis: str
    meta: Meta


class Shape(TypedDict, total=False):
    """A layout shape (plotly.com/javascript/reference/layout/shapes): here, lines."""

    type: str
    xref: str
    yref: str
    x0: Any  # a date string or a number, as the axis
    x1: Any
    y0: float
    y1: float
    line: Line


class Axis(TypedDict, total=False):
    title: Title
    type: str  # date | log
    rangemode: str
    domain: list[float]
    dtick: int
    anchor: str


class Margin(TypedDict, total=False):
    l: int  # noqa: E741  (Plotly's name)
    r: int
    t: int
    b: int


class Legend(TypedDict, total=False):
    orientation: str
    y: float


Layout = TypedDict("Layout", {  # noqa: UP013  ("xaxis2" is a key, not a name)
    "title": Title, "xaxis": Axis, "yaxis": Axis, "xaxis2": Axis, "yaxis2": Axis, "hovermode": str,
    "shapes": list[Shape], "height": int, "margin": Margin, "legend": Legend}, total=False)


class Figure(TypedDict):
    """A Plotly figure as JSON: what the page's script hands to Plotly.newPlot."""

    data: list[Scatter]
    layout: Layout


# d3.js's category10 palette, Plotly's default colour sequence: one colour per host (or benchmark)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
SLOWER, FASTER = "#d62728", "#2ca02c"


def esc(s: Any) -> str:
    """Text for Plotly: HTML-escaped (Plotly shows the entities as the characters)."""
    return html.escape("" if s is None else str(s), quote=False)


def plotly_time(iso: str | None) -> str | None:
    """An ISO 8601 time (any offset) as Plotly's date string in UTC, "YYYY-MM-DD HH:MM:SS.fff"."""
    if not iso:
        return None
    try:
        t = dt.datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso)[:23].replace("T", " ")
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return t.isoformat(sep=" ", timespec="milliseconds")


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def num(x: Any) -> float | None:
    """A number for the figure's JSON: None for a missing, NaN or infinite one (JSON has none)."""
    if x is None:
        return None
    v = float(x)
    return v if math.isfinite(v) else None


def nums(xs: Sequence[Any]) -> list[float | None]:
    return [num(x) for x in xs]


@dataclass(frozen=True)
class Trace:
    """One host's series of a benchmark: the points and analysis of `cyclebench history`
    (experiments.history.points_from and analyse; ``margin`` in the series' unit), with what
    the hover shows of each run (``runs``: the points' runs, in the same order)."""

    host: str
    unit: str
    points: Sequence[Point]
    history: History
    margin: float
    runs: Sequence[Run]


def change_text(c: ChangePoint) -> str:
    """A change point as the history table says it (report.history.marks)."""
    arrow = "▲ slower" if c.diff > 0 else "▼ faster"
    return (f"{arrow} {100 * c.rel:+.1f}% [{c.ci_low:+.3g}, {c.ci_high:+.3g}] p={c.p:.1e}"
            + (" regression" if c.regression else ""))


def history_figure(title: str, traces: Sequence[Trace]) -> Figure:
    """Per host: the per-run estimate in time order (markers and line; hover: run, labels, git
    revision, kernel), its 95% CI as a band, the level of each segment between change points
    (dashed), change points (▲ slower, ▼ faster, and a dotted vertical line) and outlier runs
    (hollow). Every trace's ``meta`` says what it is (role, host). Units differ between hosts
    only when one has no cycles~: the legend then names each host's."""
    data: list[Scatter] = []
    shapes: list[Shape] = []
    units = sorted({t.unit for t in traces})
    for i, t in enumerate(traces):
        colour = PALETTE[i % len(PALETTE)]
        name = esc(t.host) + ("" if len(units) == 1 else f" ({esc(t.unit)})")
        x = [plotly_time(p["started_at"]) for p in t.points]
        y = nums([p["estimate"] for p in t.points])
        lo = nums([p["ci_low"] if p.get("ci_low") is not None else p["estimate"] for p in t.points])
        hi = nums([p["ci_high"] if p.get("ci_high") is not None else p["estimate"] for p in t.points])
        out = set(t.history.outliers)
        data.append({"type": "scatter", "x": x + x[::-1], "y": hi + lo[::-1], "fill": "toself", "mode": "lines",
                     "line": {"width": 0}, "fillcolor": _rgba(colour, 0.18), "hoverinfo": "skip",
                     "showlegend": False, "legendgroup": name, "meta": {"role": "band", "host": t.host}})
        custom = []
        for p, run in zip(t.points, t.runs, strict=True):
            half = (p["ci_high"] - p["ci_low"]) / 2 if p.get("ci_low") is not None else None
            labels = ", ".join(f"{k}={v}" for k, v in (p.get("labels") or {}).items())
            custom.append([p["run"], esc(labels or "-"), esc(run.get("code_rev") or "-"),
                           esc(run.get("kernel_release") or "-"), "-" if half is None else f"{half:.3g}"])
        data.append({"type": "scatter", "mode": "lines+markers", "name": name, "legendgroup": name, "x": x, "y": y,
                     "line": {"color": colour, "width": 1}, "marker": {"color": colour, "size": 6},
                     "customdata": custom,
                     "hovertemplate": ("run #%{customdata[0]} · %{x}<br>%{y:.4g} ± %{customdata[4]} "
                                       + esc(t.unit) + "<br>labels %{customdata[1]}<br>code %{customdata[2]}"
                                       "<br>kernel %{customdata[3]}<extra>" + name + "</extra>"),
                     "meta": {"role": "runs", "host": t.host}})
        bounds = [0, *[c.index for c in t.history.changes], len(t.points)]
        lx: list[str | None] = []
        ly: list[float | None] = []
        for a, b in itertools.pairwise(bounds):
            seg = [v for k in range(a, b) if k not in out and (v := y[k]) is not None]
            if seg:
                level = sum(seg) / len(seg)
                lx += [x[a], x[b - 1], None]
                ly += [num(level), num(level), None]
        data.append({"type": "scatter", "mode": "lines", "x": lx, "y": ly, "showlegend": False, "legendgroup": name,
                     "line": {"color": colour, "dash": "dash", "width": 2}, "hoverinfo": "skip",
                     "meta": {"role": "level", "host": t.host}})
        if out:
            ks = sorted(out)
            data.append({"type": "scatter", "mode": "markers", "name": f"{name}: outlier runs", "legendgroup": name,
                         "x": [x[k] for k in ks], "y": [y[k] for k in ks], "showlegend": False,
                         "marker": {"symbol": "circle-open", "size": 12, "color": "#7f7f7f", "line": {"width": 2}},
                         "customdata": [[t.points[k]["run"]] for k in ks],
                         "hovertemplate": "run #%{customdata[0]}: outlier (left out of the change points)<extra>"
                                          + name + "</extra>",
                         "meta": {"role": "outlier", "host": t.host}})
        if t.history.changes:
            cs = t.history.changes
            data.append({"type": "scatter", "mode": "markers", "name": f"{name}: change points", "legendgroup": name,
                         "showlegend": False, "x": [x[c.index] for c in cs], "y": [y[c.index] for c in cs],
                         "marker": {"symbol": ["triangle-up" if c.diff > 0 else "triangle-down" for c in cs],
                                    "size": 15, "color": [SLOWER if c.diff > 0 else FASTER for c in cs],
                                    "line": {"color": "#000", "width": 1}},
                         "customdata": [[t.points[c.index]["run"], esc(change_text(c))] for c in cs],
                         "hovertemplate": "change point at run #%{customdata[0]}<br>%{customdata[1]}<extra>"
                                          + name + "</extra>",
                         "meta": {"role": "change", "host": t.host}})
            shapes += [{"type": "line", "xref": "x", "yref": "paper", "x0": x[c.index], "x1": x[c.index], "y0": 0,
                        "y1": 1, "line": {"color": SLOWER if c.diff > 0 else FASTER, "width": 1, "dash": "dot"}}
                       for c in cs]
    return {"data": data, "layout": {
        "title": {"text": esc(title), "font": {"size": 15}},
        "xaxis": {"title": {"text": "run started (UTC)"}, "type": "date"},
        "yaxis": {"title": {"text": f"per op ({esc(' / '.join(units))})"}, "rangemode": "normal"},
        "hovermode": "closest", "shapes": shapes, "height": 460, "margin": {"l": 70, "r": 20, "t": 50, "b": 50},
        "legend": {"orientation": "h", "y": -0.18}}}


def scale_figure(title: str, series: Sequence[Series], ncpus: int | None = None) -> Figure:
    """scale's two panels (report.plots.plot_scaling's): total throughput (log) and efficiency
    = speed-up / tasks against tasks, one colour per benchmark and allocator, solid for
    threads and dashed for processes, a band from the slowest to the fastest interval, and
    the CPU count (beyond it, oversubscribed) dotted."""
    keys = sorted({(s.bench, s.variant) for s in series})
    colour = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(keys)}
    data: list[Scatter] = []
    for s in series:
        pts = [p for p in s.points if p.get("total_median")]
        if not pts:
            continue
        c = colour[(s.bench, s.variant)]
        line: Line = {"color": c, "dash": "solid" if s.mode == "threads" else "dash"}
        x = [p["tasks"] for p in pts]
        name = esc(s.label)
        data.append({"type": "scatter", "x": x + x[::-1],
                     "y": nums([p.get("total_max") or p["total_median"] for p in pts]
                               + [p.get("total_min") or p["total_median"] for p in pts][::-1]),
                     "fill": "toself", "mode": "lines", "line": {"width": 0}, "fillcolor": _rgba(c, 0.15),
                     "hoverinfo": "skip", "showlegend": False, "legendgroup": name, "xaxis": "x", "yaxis": "y",
                     "meta": {"role": "band", "series": s.label}})
        data.append({"type": "scatter", "mode": "lines+markers", "name": name, "legendgroup": name, "x": x,
                     "y": nums([p["total_median"] for p in pts]), "line": line, "xaxis": "x", "yaxis": "y",
                     "hovertemplate": "%{x} tasks: %{y:.4s} ops/s<extra>" + name + "</extra>",
                     "meta": {"role": "throughput", "series": s.label}})
        eff = [p for p in pts if p.get("efficiency") is not None]
        data.append({"type": "scatter", "mode": "lines+markers", "name": name, "legendgroup": name,
                     "showlegend": False, "x": [p["tasks"] for p in eff], "y": nums([p["efficiency"] for p in eff]),
                     "line": line, "xaxis": "x2", "yaxis": "y2",
                     "hovertemplate": "%{x} tasks: efficiency %{y:.2f}<extra>" + name + "</extra>",
                     "meta": {"role": "efficiency", "series": s.label}})
    shapes: list[Shape] = [{"type": "line", "xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": 1,
                                     "y1": 1, "line": {"color": "#999", "width": 1}}]
    if ncpus:
        shapes += [{"type": "line", "xref": ax, "yref": f"{ax.replace('x', 'y')} domain", "x0": ncpus, "x1": ncpus,
                    "y0": 0, "y1": 1, "line": {"color": "#666", "width": 1, "dash": "dot"}} for ax in ("x", "x2")]
    return {"data": data, "layout": {
        "title": {"text": esc(title), "font": {"size": 15}}, "height": 440, "hovermode": "closest",
        "xaxis": {"domain": [0, 0.46], "title": {"text": "tasks"}, "dtick": 1},
        "yaxis": {"type": "log", "title": {"text": "total throughput (ops/s, log)"}},
        "xaxis2": {"domain": [0.54, 1], "title": {"text": "tasks"}, "dtick": 1, "anchor": "y2"},
        "yaxis2": {"title": {"text": "efficiency = speed-up / tasks"}, "rangemode": "tozero", "anchor": "x2"},
        "shapes": shapes, "margin": {"l": 70, "r": 20, "t": 50, "b": 50}, "legend": {"orientation": "h", "y": -0.2}}}
