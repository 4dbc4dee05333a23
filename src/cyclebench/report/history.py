"""A benchmark's history: the table (one line per run, change points and outliers marked) and
the plot (per-run estimate with its CI in time order, the levels between change points)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from cyclebench.atomic import replacing
from cyclebench.model import Point
from cyclebench.report.console import fmt, fmt_interval
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.plots import FORMATS
from cyclebench.report.text import safe_text
from cyclebench.stats.changepoint import History


def marks(points: Sequence[Point], h: History) -> list[str]:
    """Per point: "" or what it is — the first run of a new level (▲ slower / ▼ faster, Δ%,
    "regression" when beyond the margin), or an outlier run."""
    out = [""] * len(points)
    revs = [p.get("revision") for p in points]
    for i in h.outliers:
        out[i] = "outlier (left out)"
    for c in h.changes:
        arrow = "▲ slower" if c.diff > 0 else "▼ faster"
        out[c.index] = (f"{arrow} {100 * c.rel:+.1f}% [{c.ci_low:+.3g}, {c.ci_high:+.3g}] p={c.p:.1e}"
                        + (" regression" if c.regression else ""))
    # a revision series's commit changes are its steps: said where they are
    for i in range(1, len(points)):
        if revs[i] and revs[i - 1] and revs[i] != revs[i - 1]:
            out[i] = "; ".join(x for x in (out[i], f"revision {revs[i][:7]} (was {revs[i - 1][:7]})") if x)
    # the compiler stays in a series (docs/method.md §9) and is said where it changes
    for i in range(1, len(points)):
        was, now = points[i - 1].get("compiler"), points[i].get("compiler")
        if was and now and was != now:
            out[i] = "; ".join(x for x in (out[i], f"compiler changed: {now} (was {was})") if x)
    return out


def history_table(title: str, points: Sequence[Point], h: History, unit: str, wide: bool = False,
                  ) -> FitTable:
    """``points``: the runs' figures (model.Point: run, started_at, labels, estimate, ci_low, ci_high), oldest first.
    A simulated count (unit Ir: callgrind) has no CI: it is exact, and says so."""
    # three spreads between runs, each named for what it pools (one name each in every view):
    # replicate sd (this host's replicate groups: show, csv), series sd (these runs around the
    # levels found), the sd of the runs compared (`compare RUN… RUN…`)
    sd = {"host": f"replicate sd {fmt(h.sigma)} (this host's replicate runs of one build)",
          "none": "no series sd (one run)"}.get(
        h.sigma_source, f"series sd {fmt(h.sigma)} (these runs around the levels found)")
    revised = any(p.get("revision") for p in points)
    table = FitTable([
        Column("run"),
        Column("started", justify="left", priority=2),
        *([Column("revision", justify="left")] if revised else []),
        Column("labels", justify="left", priority=1),
        Column(f"per op ({unit})"),
        Column("±CI95"),
        Column("change", justify="left", notes=True),
    ], title=title, wide=wide,
        caption=(f"change points: binary segmentation, t test per split, α = {h.alpha:g} a segment "
                 f"(Bonferroni), ≥ {h.min_segment} runs a side; {sd}"))
    for p, mark in zip(points, marks(points, h), strict=True):
        labels = ",".join(f"{k}={v}" for k, v in (p.get("labels") or {}).items())
        style = "red" if mark.startswith("▲") else "green" if mark.startswith("▼") else "dim" if mark else ""
        table.add_row(str(p["run"]), str(p["started_at"])[:19].replace("T", " "),
                      *([(p.get("revision") or "-")[:7]] if revised else []),
                      safe_text(labels, multiline=False), fmt(p["estimate"]),
                      # both ends where one half-width would misplace one (console.fmt_interval), as show prints it
                      fmt_interval(p["estimate"], p["ci_low"], p.get("ci_high")) if p.get("ci_low") is not None
                      else "exact" if unit == "Ir" else "-",
                      Text(mark, style=style))
    return table


@dataclass(frozen=True)
class GateVerdict:
    """`history --fail-on-regression`'s answer: ``failed`` (exit 1) and the one line that says
    why, either way."""

    failed: bool
    line: str


def gate_verdict(name: str, points: Sequence[Point], h: History, window: int, margin: float, unit: str,
                 ) -> GateVerdict:
    """The gate over the last ``window`` runs of ``points`` (all of them when the series is
    shorter: the line names the runs it really read): failed when a change point among them is a
    regression (its Δ's CI above +``margin``: stats.changepoint), naming each — Δ%, the run it
    starts at, the levels before and after; passed saying why none is there (no change point,
    or one that is no slowdown beyond the margin), and with too few runs for any change point,
    that none could be found and what one needs."""
    n = len(points)
    start = max(0, n - window)
    last = "the last run" if n - start == 1 else f"the last {n - start} runs"
    recent = [c for c in h.changes if c.index >= start]
    if regressions := [c for c in recent if c.regression]:  # the newest first: the one a fix is for
        said = [f"{100 * c.rel:+.1f}% from run #{points[c.index]['run']} ({fmt(c.before)} → {fmt(c.after)} {unit}, "
                f"Δ's 95% CI [{c.ci_low:+.3g}, {c.ci_high:+.3g}])" for c in reversed(regressions)]
        return GateVerdict(True, f"regression: {name} {'; and '.join(said)}, within {last}")
    head = f"no regression {'in' if n - start == 1 else 'among'} {last} of {name}"
    kept, out = n - len(h.outliers), len(h.outliers)
    if kept < 2 * h.min_segment:  # binary segmentation had no split to try: no change point was possible
        left_out = f" (and {out} outlier{'s' * (out != 1)} left out)" if out else ""
        return GateVerdict(False, f"{head}: no change point found — {kept} run{'s' * (kept != 1)}{left_out}, "
                                  f"a change point needs {h.min_segment} runs on each side")
    # a level is seen only with h.min_segment runs at it: said, so a slow last run is not read as a pass
    shows = f"; a step shows once {h.min_segment} runs are at its new level"
    if not recent:
        older = [c for c in h.changes if c.regression]
        before = f" (the regression from run #{points[older[-1].index]['run']} is older)" if older else ""
        return GateVerdict(False, f"{head}: no change point there{before}{shows}")
    what = ", ".join(f"{'▲' if c.diff > 0 else '▼'} {100 * c.rel:+.1f}% from run #{points[c.index]['run']}"
                     for c in recent)
    return GateVerdict(False, f"{head}: {what}, no slowdown beyond the margin ({fmt(margin)} {unit}){shows}")


def plot_history(title: str, points: Sequence[Point], h: History, unit: str, path: Path,
                 dpi: int = 120) -> None:
    """Per-run estimate with its 95% CI against the run's position in time, the mean level of
    each segment between change points (dashed), change points as vertical lines (red: slower,
    green: faster), outliers hollow. Format from the suffix (png, svg, pdf); ValueError else."""
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"plot file must end in {', '.join(FORMATS)}: {path}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = list(range(len(points)))
    y = [p["estimate"] for p in points]
    lo = [p["estimate"] - p["ci_low"] if p.get("ci_low") is not None else 0 for p in points]
    hi = [p["ci_high"] - p["estimate"] if p.get("ci_high") is not None else 0 for p in points]
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=dpi)
    keep = [i for i in x if i not in set(h.outliers)]
    ax.errorbar([x[i] for i in keep], [y[i] for i in keep], yerr=[[lo[i] for i in keep], [hi[i] for i in keep]],
                fmt="o", ms=4, capsize=3, color="tab:blue", label="run (95% CI)")
    if h.outliers:
        ax.plot([x[i] for i in h.outliers], [y[i] for i in h.outliers], "o", mfc="none", color="tab:gray",
                label="outlier run")
    bounds = [0, *[c.index for c in h.changes], len(points)]
    for a, b in itertools.pairwise(bounds):
        seg = [y[i] for i in range(a, b) if i not in set(h.outliers)]
        if seg:
            ax.hlines(sum(seg) / len(seg), a - 0.4, b - 0.6, linestyles="dashed", colors="tab:orange")
    for c in h.changes:
        ax.axvline(c.index - 0.5, color="tab:red" if c.diff > 0 else "tab:green", alpha=0.6)
        ax.annotate(f"{100 * c.rel:+.1f}%", (c.index - 0.5, max(y)), textcoords="offset points", xytext=(3, 0),
                    fontsize=8)
    ax.set_xticks(x)
    ax.set_xticklabels([str(p["run"]) for p in points], fontsize=7, rotation=90 if len(points) > 30 else 0)
    ax.set_xlabel("run (time order)")
    ax.set_ylabel(f"per op ({unit})")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    with replacing(path) as tmp:  # whole or not at all (cyclebench.atomic)
        fig.savefig(tmp)
    plt.close(fig)
