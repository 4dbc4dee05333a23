"""Plots and tables of the scaling mode (matplotlib, Agg backend: no display needed).

One figure, two panels sharing the task axis: total throughput (ops/s, log scale) and
efficiency (speed-up / tasks; 1 = perfect scaling), one line per benchmark and mode
(solid: threads, dashed: processes), a band from the slowest to the fastest interval, a
dotted vertical line at the CPU count (beyond it: oversubscribed) and, beyond it, the
ceiling CPUs / tasks that oversubscribed efficiency cannot exceed. Also, for the
terminal, the table of one benchmark and mode and the compact text chart of efficiency.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cyclebench.atomic import replacing
from cyclebench.model import Result
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import visible

if TYPE_CHECKING:
    from cyclebench.model import Series

FORMATS = (".png", ".svg", ".pdf")
BAR_WIDTH = 30
_EIGHTHS = " ▏▎▍▌▋▊▉"


def plot_scaling(series: Sequence[Series], path: Path, ncpus: int | None = None, title: str | None = None,
                 dpi: int = 120) -> tuple[int, int]:
    """Write the figure to ``path`` (format from the suffix: png, svg, pdf). Returns its size
    in pixels (width, height) at ``dpi``. Raises ValueError for an unknown suffix."""
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"plot file must end in {', '.join(FORMATS)}: {path}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(12, 5.2), dpi=dpi)
    benches = sorted({(s.bench, s.variant) for s in series})  # one colour per benchmark and allocator
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {b: colors[i % len(colors)] for i, b in enumerate(benches)}
    all_tasks: set[int] = set()
    for s in series:
        pts = [p for p in s.points if p.get("total_median")]
        if not pts:
            continue
        x = [p["tasks"] for p in pts]
        all_tasks.update(x)
        hue = color[(s.bench, s.variant)]
        threads = s.mode == "threads"
        line, marker = ("-", "o") if threads else ("--", "s")
        ax_t.plot(x, [p["total_median"] for p in pts], label=s.label, color=hue, linestyle=line, marker=marker,
                  markersize=4)
        ax_t.fill_between(x, [p["total_min"] for p in pts], [p["total_max"] for p in pts], color=hue,
                          alpha=0.15, linewidth=0)
        eff = [p for p in pts if p.get("efficiency") is not None]
        if eff:
            xe = [p["tasks"] for p in eff]
            ax_e.plot(xe, [p["efficiency"] for p in eff], label=s.label, color=hue, linestyle=line, marker=marker,
                      markersize=4)
            # the speed-up's range over N (stats.scaling.speedup_range); a point without one (1 task
            # itself, a single interval) is its own figure
            ax_e.fill_between(xe, [p.get("efficiency_min", p["efficiency"]) for p in eff],
                              [p.get("efficiency_max", p["efficiency"]) for p in eff],
                              color=hue, alpha=0.15, linewidth=0)
    if ncpus and all_tasks and max(all_tasks) > ncpus:  # the most N tasks on ncpus CPUs can reach
        xs = sorted(t for t in all_tasks if t >= ncpus)
        ax_e.plot(xs, [ncpus / t for t in xs], color="0.5", linestyle=":", linewidth=1, label="_ceiling")
        ax_e.text(xs[-1], ncpus / xs[-1], f"ceiling {ncpus}/tasks ", fontsize=8, color="0.4", ha="right",
                  va="bottom")
    ax_t.set_yscale("log")
    ax_t.set_ylabel("total throughput (ops/s, log)")
    ax_t.set_title("throughput: median interval, band = min–max interval", fontsize=10)
    ax_e.axhline(1.0, color="0.6", linewidth=0.8)
    ax_e.set_ylim(bottom=0)
    ax_e.set_ylabel("efficiency = speed-up / tasks")
    ax_e.set_title("efficiency vs 1 task (1 = perfect scaling)", fontsize=10)
    for ax in (ax_t, ax_e):
        ax.set_xlabel("tasks")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, which="major", alpha=0.3)
        if ncpus and all_tasks and max(all_tasks) > ncpus:
            ax.axvline(ncpus, color="0.4", linestyle=":", linewidth=1)
            ax.text(ncpus, 0.02, f" {ncpus} CPUs → oversubscribed", transform=ax.get_xaxis_transform(), fontsize=8,
                    color="0.3")
    handles, labels = ax_t.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, max(1, len(labels))), fontsize=8, frameon=False)
    if title:
        fig.suptitle(title, fontsize=11)
    rows = (len(labels) + 3) // 4
    fig.tight_layout(rect=(0, 0.04 + 0.035 * rows, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp:  # whole or not at all (cyclebench.atomic)
        fig.savefig(tmp)
    width, height = (round(v * dpi) for v in fig.get_size_inches())
    plt.close(fig)
    return width, height


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A horizontal bar of ``fraction`` × width cells (eighths of a cell), capped at 1.25 × width."""
    cells = max(0.0, min(fraction, 1.25)) * width
    full = int(cells)
    rest = int((cells - full) * 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def text_chart(series: Sequence[Series], width: int = BAR_WIDTH) -> list[str]:
    """Efficiency bars, one block per benchmark and mode: ``  2 │██████████████▋    0.98``. The
    bars draw the efficiency per CPU-second the tasks got where it was measured (on a loaded host
    the wall-clock one reads as a failure to scale that is the host's: docs/scale.md), the
    wall-clock figure printed beside it."""
    lines: list[str] = []
    for s in series:
        pts = [p for p in s.points if p.get("efficiency") is not None]
        if not pts:
            continue
        robust = all(p.get("cpu_efficiency") is not None for p in pts)
        what = "efficiency per CPU-second (│ = 1.0), wall-clock beside" if robust else "efficiency (│ = 1.0)"
        lines.append(f"{visible(s.label, multiline=False)}  {what}")
        for p in pts:
            value = p["cpu_efficiency"] if robust else p["efficiency"]
            b = bar(value, width)
            cell = (b + " " * width)[:width] + "│" + b[width:]
            flag = "  oversubscribed" if p.get("oversubscribed") else ""
            wall = f"  wall-clock {p['efficiency']:.2f}" if robust else ""
            lines.append(f"  {p['tasks']:>3} {cell:<{width + 9}} {value:.2f}{wall}{flag}")
    return lines


def si(x: float | None) -> str:
    """3 significant digits with an SI prefix: 11.5M, 3.95G."""
    if x is None:
        return "-"
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"


def _f(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def superlinear_note(p: Any) -> str | None:
    """What a row says of a speed-up above its ideal (stats.scaling.superlinear): against its
    range, within it (the intervals' spread explains it) or beyond it; from single intervals,
    that there is no spread to judge it by."""
    from cyclebench.stats import scaling  # here: a scale run's table only (numpy)

    got = scaling.superlinear(p)
    if got is None:
        return None
    d = scaling.SPEEDUP_DIGITS
    what = f"{got.tasks} tasks' ideal" if got.ideal == got.tasks else f"the ideal of {got.ideal} CPUs"
    head = f"superlinear: {got.speedup:.{d}f}× above {what}"
    if got.beyond is None or got.low is None or got.high is None:
        return f"{head}, from 1 interval at a task count: no spread to judge it by (a longer --duration)"
    span = f"{got.low:.{d}f}–{got.high:.{d}f}×"
    if got.beyond:
        return (f"{head}, beyond its range {span}: more than the tasks explain (a shared cache, the core clock, "
                "or a 1-task run another program slowed)")
    return f"{head}, within its range {span}: the intervals' spread holds the ideal"


def scale_table(s: Series, wide: bool = False) -> FitTable:
    """One benchmark in one mode: a row per task count. Tasks, total ops/s, speed-up with its
    range (stats.scaling.speedup_range) and the efficiency per CPU-second (the load-robust
    answer) stay at any width; the other columns drop (report.fit), notes go under their row
    (a superlinear speed-up first: superlinear_note)."""
    from cyclebench.stats.scaling import SPEEDUP_DIGITS  # here: a scale run's table only (numpy)

    t = FitTable([
        Column("tasks"),
        Column("total ops/s"),
        Column("min–max", priority=3),
        Column("speed-up"),
        Column("range"),  # the speed-up's uncertainty, as a ±CI95 beside a figure: never dropped
        Column("effic.", priority=1),
        Column("effic./CPU-s"),  # the load-robust answer: throughput per CPU-second the tasks got
        Column("per task min/med/max", priority=6),
        Column("fairness", priority=2),
        Column("ns/op", priority=4),
        Column("wait", priority=5),
        Column("notes", justify="left", notes=True),
    ], title=s.label, title_justify="left", wide=wide,
        caption="speed-up range: N tasks' slowest interval ÷ 1 task's fastest to their fastest ÷ its slowest "
                "(-: 1 task itself, or one interval at a count)")
    d = SPEEDUP_DIGITS
    for p in s.points:
        style = "" if p.get("status") == "ok" else "red"
        has = p.get("total_median") is not None
        low, high = p.get("speedup_min"), p.get("speedup_max")
        notes = [n for n in (superlinear_note(p),) if n] + [str(n) for n in p.get("notes") or []]
        t.add_row(
            str(p["tasks"]), si(p.get("total_median")),
            f"{si(p.get('total_min'))}–{si(p.get('total_max'))}" if has else "-",
            _f(p.get("speedup"), f".{d}f") + ("×" if p.get("speedup") is not None else ""),
            f"{low:.{d}f}–{high:.{d}f}" if low is not None and high is not None else "-",
            _f(p.get("efficiency"), ".2f"), _f(p.get("cpu_efficiency"), ".2f"),
            f"{si(p.get('task_min'))} / {si(p.get('task_median'))} / {si(p.get('task_max'))}" if has else "-",
            _f(p.get("fairness"), ".2f"), _f(p.get("ns_per_op"), ".3g"),
            "-" if p.get("wait_pct") is None else f"{p['wait_pct']:.0f}%",
            ", ".join(notes), style=style,
        )
    return t


def _figure(n: int, path: Path) -> tuple[Any, Any]:
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"plot file must end in {', '.join(FORMATS)}: {path}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(9, max(2.5, 0.32 * n + 1.2)), dpi=120)


def _finish(fig: Any, ax: Any, labels: Sequence[str], xlabel: str, title: str, path: Path) -> None:
    """One line per label, top to bottom; axis label and title; written to ``path`` and closed."""
    import matplotlib.pyplot as plt

    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels([visible(n, multiline=False) for n in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    with replacing(path) as tmp:  # whole or not at all (cyclebench.atomic)
        fig.savefig(tmp)
    plt.close(fig)


def plot_results(rows: Sequence[Result], path: Path, title: str | None = None) -> int:
    """`run --plot`: each valid result's per op with its 95% CI, one line per benchmark and
    parameter, on a log axis (costs span 1 to 10⁶), cycles~ where the result has it, else its
    timer unit (marked). Returns the number of results drawn. ValueError for a bad suffix."""
    good = [r for r in rows if r.get("status") in ("ok", "disturbed") and r.get("per_op") is not None]
    fig, ax = _figure(len(good), path)
    for y, r in enumerate(good):
        est = r.best  # cycles~ where the result has it, else the timer's unit
        assert est is not None  # per_op is set (good)
        cyc, v, lo, hi = est.unit == "cycles~", est.value, est.ci_low, est.ci_high
        err = [[max(v - lo, 0)], [max(hi - v, 0)]] if lo is not None and hi is not None else None
        ax.errorbar([max(v, 1e-3)], [y], xerr=err, fmt="o" if cyc else "s", ms=4, capsize=3,
                    color="tab:blue" if r.get("status") == "ok" else "tab:gray")
    names = [r["bench"] + ("" if r.get("param") is None else f" [{r['param']}]")
             + ("" if r.get("cycles_per_op") is not None else f" ({r.get('unit')})") for r in good]
    ax.set_xscale("log")
    _finish(fig, ax, names, "per op (cycles~; ■ = timer unit), 95% CI", title or "cyclebench run", path)
    return len(good)


def plot_comparisons(rows: Sequence[Any], path: Path, title: str | None = None) -> int:
    """`compare --plot`: each comparison's Δ (B − A) in % of A with its CI (the repeated CI of a
    sequential compare), the practical margin shaded, coloured by verdict. Returns the number
    drawn. ValueError for a bad suffix."""
    good = [r for r in rows if r.cmp is not None and r.cmp.median_a]
    fig, ax = _figure(len(good), path)
    colours = {"slower": "tab:red", "faster": "tab:green", "equivalent": "tab:blue"}
    for y, r in enumerate(good):
        c, a = r.cmp, abs(r.cmp.median_a)
        d, lo, hi = 100 * c.diff / a, 100 * c.ci_low / a, 100 * c.ci_high / a
        known = lo == lo and hi == hi
        ax.errorbar([d], [y], xerr=[[d - lo], [hi - d]] if known else None, fmt="o", ms=4, capsize=3,
                    color=colours.get(c.verdict, "tab:gray"))
        m = 100 * c.margin / a
        ax.fill_betweenx([y - 0.4, y + 0.4], -m, m, color="tab:gray", alpha=0.15, lw=0)
    ax.axvline(0, color="black", lw=0.6)
    names = [f"{r.a} → {r.b}" + ("" if r.param is None else f" [{r.param}]") + f": {r.cmp.verdict}" for r in good]
    _finish(fig, ax, names, "Δ (B − A), % of A, with its CI; grey: the practical margin",
            title or "cyclebench compare", path)
    return len(good)
