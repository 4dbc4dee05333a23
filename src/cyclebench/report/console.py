"""Console table of results (rich).

Columns: benchmark, param, per-op cost (slope of batch time vs batch size, stats.py) ± its
95% CI (one half-width where it gives both ends, else both: fmt_interval), min (lowest
per-sample cost, net of the fixed batch cost; '-' with a note when it is not a cost: below
zero, or not stored because it was), the
robust CV of per-sample costs (scaled MAD / median), the unit, the same cost in cycles~
(core cycles estimated by the add-chain calibration, calibrate.py) ± CI, ns/op, and notes.
With net=True the two costs are shown net of the loop's own cost (loop/empty).
A row that has no number says why (skipped, crashed, ...). A *disturbed* row (most of its
batches shared the CPU with another program: stats.result.disturbed_note) keeps its
figures, dimmed, and its note says what happened and what to do.

The tables fit the terminal they are printed on (report.fit: secondary columns drop,
notes go under their row, ``wide=True`` keeps all) and print what benchmarks, the runner
and stored runs say literally (report.text.safe_text: never markup, controls visible).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.text import Text

from cyclebench.model import CalibrationLine, Comparison, ComparisonRow, PerOp, Result, Run, build_of
from cyclebench.report import counts
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

STATUS_STYLE = {"ok": "", "disturbed": "yellow", "invalid": "red", "skipped": "yellow", "failed": "red",
                "crashed": "red", "timeout": "red", "error": "red"}
DISTURBED_FIGURES = "dim"  # a disturbed row's figures: shown, but not as a clean number
WIDE_CI = 0.05  # CI half-width above 5% of the value: flagged
CHAIN_DISAGREEMENT = 0.03  # imul- and add-chain clocks differing by more: cycles~ flagged
NAME_FOLD = 20  # a benchmark name may fold to this many cells to make room for the numbers
CMP_NAME_FOLD = 12  # compare shows two names a row
VARIANT_FOLD = 14  # variant labels (flag sets) fold at their spaces


def fmt(x: float | None) -> str:
    """Three or four significant digits, never scientific for the range we meet."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def signed(x: float) -> str:
    """A difference with its sign, as :func:`fmt` prints a figure: +2,360 for a 64,000-cycle op's
    Δ, never +2.36e+03."""
    if math.isnan(x):
        return "-"
    return ("-" if x < 0 else "+") + fmt(abs(x))


def fmt_p(p: float) -> str:
    """A p-value in plain digits (two significant), ``<0.0001`` below: the verdicts' α is 0.002."""
    if math.isnan(p):
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.2g}" if p < 0.01 else f"{p:.3f}"


def net_fmt(x: float | None, lo: float | None, hi: float | None) -> str:
    """A net cost: ``≈0`` when its CI holds zero (or, without a CI, when it is ≤ 0), ``<0``
    when the whole CI is below zero (the operation overlaps the loop's own work: docs/method.md
    §2), else the figure — never a negative cost."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if lo is not None and hi is not None and hi < 0:
        return "<0"
    if (lo is not None and lo <= 0) or x <= 0:
        return "≈0"
    return fmt(x)


def _shown(figure: PerOp | None, net: bool) -> tuple[str, str]:
    """A figure and its ±CI95 as the results table prints them; a net one never as a negative
    cost (net_fmt)."""
    if figure is None:
        return "-", "-"
    shown = net_fmt(figure.value, figure.ci_low, figure.ci_high) if net else fmt(figure.value)
    return shown, fmt_interval(figure.value, figure.ci_low, figure.ci_high)


def fmt_ci(x: float | None) -> str:
    """A CI half-width: two significant digits when small, so ±0.00 never hides a real 0.003;
    below 0.001 (of a cycle, a nanosecond) ``<0.001``, never 5e-05."""
    if x is None or math.isnan(x):
        return "-"
    if 0 < abs(x) < 1e-3:
        return "<0.001"
    if x == 0:
        return "0"
    return f"{x:#.2g}".rstrip(".") if abs(x) < 10 else fmt(x)  # '#': 1.977 is "2.0", not "2" beside "4.1"


def rounding(cell: str) -> float:
    """Half a unit of the last digit a figure's cell shows (0.05 for ``140.5``, 0.5 for ``1,080``
    or ``+200``): how far the number it stands for may lie from what it says. 0 for a cell that
    is no plain number (``-``, ``<0.001``, ``≈0``)."""
    digits = cell.strip().lstrip("+-").replace(",", "")
    if not digits or not all(ch.isdigit() or ch == "." for ch in digits):
        return 0.0
    decimals = len(digits.partition(".")[2])
    return 0.5 * 10.0 ** -decimals


def _offset(x: float) -> str:
    """A CI's end as its distance from the estimate, signed, in two significant digits as fmt_ci
    gives a half-width below 10 (``-0.82``, ``+19``, ``-1,200``): two of them share a cell."""
    a = abs(x)
    shown = f"{round(a, 1 - math.floor(math.log10(a))):,.0f}" if a >= 10 else fmt_ci(a)
    return "0" if x == 0 else ("-" if x < 0 else "+") + shown


ASYMMETRIC = 1.5  # one half-width more than this many times the other: both printed, whatever the digits


def fmt_interval(value: float | None, low: float | None, high: float | None) -> str:
    """A 95% CI beside its estimate ``value``, in the ±CI95 columns: one half-width (``0.88``) only
    where it gives both ends — value − it and value + it each within the rounding of the digits
    shown (:func:`rounding`), and neither half more than ASYMMETRIC times the other; else both
    ends as signed distances from the estimate (``-5.9/+19``): a bootstrap CI of a median from
    a few processes is often lopsided, and a mean half-width printed as ± puts one end where
    the CI is not (287.0 ± 12.40 for a CI of [281.1, 305.9]). Both halves below 0.001:
    ``<0.001``, nothing to tell apart at the digits shown."""
    if value is None or low is None or high is None or any(math.isnan(x) for x in (value, low, high)):
        return "-"
    below, above = value - low, high - value
    if 0 <= below < 1e-3 and 0 <= above < 1e-3 and (below or above):
        return "<0.001"
    if below >= 0 and above >= 0 and max(below, above) <= ASYMMETRIC * min(below, above):
        half = fmt_ci((below + above) / 2)
        said, slack = float(half.replace(",", "")), rounding(half)
        if abs(below - said) <= slack and abs(above - said) <= slack:
            return half
    return f"{_offset(-below)}/{_offset(above)}"


def has_min(row: Result) -> bool:
    """A min that is a cost: present and not below zero. Below zero (stored by older versions,
    or None now) a batch beat the fitted fixed cost: the samples do not fit
    fixed + per-op·n (stats.estimators)."""
    m = row.get("min")
    return m is not None and not (isinstance(m, float) and math.isnan(m)) and m >= 0


def min_above_ci(row: Result) -> bool:
    """Whether the lowest per-sample cost of every process's largest batches (stats.estimators)
    lies above the per-op CI's upper bound, in the timer's unit or in cycles~: the slope and the
    largest batches disagree (a cost per op that grows with the batch size), and the row says so."""
    return any(row.get(m) is not None and row.get(h) is not None and row[m] > row[h]
               for m, h in (("min", "ci_high"), ("cycles_min", "cycles_ci_high")))


def notes(row: Result) -> str:
    row = Result.of(row)  # a mapping of a record's fields reads as the record
    if row.get("status") != "ok":
        reason = row.get("reason") or ""
        return f"{row.get('status')}: {reason}" if reason else str(row.get("status"))
    out = []
    sched = (row.line or {}).get("sched")  # what the runner really ran under, not what was asked
    if sched and sched.get("policy") not in (None, "SCHED_OTHER"):
        out.append(f"{sched['policy']} {sched.get('priority')}")
    per_op, low, high = row.get("per_op"), row.get("ci_low"), row.get("ci_high")
    if per_op and low is not None and high is not None and per_op > 0 and (high - low) / 2 / per_op > WIDE_CI:
        out.append("wide CI")
    n, k = row.get("n_samples") or 0, row.get("outliers") or 0
    if n and k / n > 0.10:
        out.append(f"{k}/{n} outliers")
    if row.get("n_disturbed"):
        out.append(f"{row['n_disturbed']} disturbed dropped")
    if row.get("per_op") is not None and row.get("n_samples") and not has_min(row):
        out.append("no min: a batch beat the fitted fixed cost (samples off the line)")
    elif min_above_ci(row):
        out.append("min above the CI: the largest batches cost more per op than the slope")
    if row.get("pmu_cycles_per_op") is not None:
        out.append(f"PMU cycles {fmt(row['pmu_cycles_per_op'])}"
                   + (f" (cycles~/PMU {row['pmu_agreement']:.3f})" if row.get("pmu_agreement") else ""))
    agree = row.get("chain_agreement")
    if agree is not None and abs(agree - 1) > CHAIN_DISAGREEMENT:
        out.append(f"cycles~ doubtful (imul/add clock {agree:.2f})")
    return ", ".join(out)


def results_table(rows: Iterable[Result], title: str | None = None, net: bool = False,
                  wide: bool = False) -> FitTable:
    """net: show per-op figures net of the loop's own cost (loop/empty of the same run).

    Fits the width it is printed at (report.fit): benchmark, param, per op, ±CI95, unit and
    cycles~ stay at any width; the cycles~ CI, ns/op, min and rCV drop in that order from
    the end, and notes go under their row when they do not fit beside it. ``wide``: all.
    A row whose ``run_to_run`` holds this host's run-to-run sd for the benchmark gets
    it in a column of its own, beside (never instead of) the within-run CI."""
    rows = [Result.of(r) for r in rows]
    host = any(r.run_to_run for r in rows)
    table = FitTable([
        Column("benchmark", justify="left", fold=NAME_FOLD),
        Column("param"),
        Column("net per op" if net else "per op"),
        Column("±CI95"),
        Column("min net" if net else "min", priority=3),
        Column("rCV", priority=4),
        Column("unit", justify="left"),
        Column("cycles~" + (" net" if net else "")),
        Column("±CI95", priority=1),
        Column("ns/op net" if net else "ns/op", priority=2),
        *([Column("replicate sd", priority=5)] if host else []),
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide,
        caption=("±CI95: within this run; replicate sd: this host's spread between replicate runs of one "
                 "build, pooled over its replicate groups (cycles~ where there are cycles~; the csv's "
                 "run_to_run_sd)") if host else None)
    group = None
    for r in rows:
        bench = r.bench or ""
        if group is not None and bench.split("/")[0] != group:
            table.add_section()  # a rule between groups: copy/ rows read as one block
        group = bench.split("/")[0]
        style = STATUS_STYLE.get(r.status, "")
        name = safe_text(bench + (f" [{r.variant}]" if r.variant else ""), multiline=False)
        param = "" if r.param is None else str(r.param)
        unit = r.unit or ""
        cells: list[str | Text]
        if r.per_op is not None and r.status in ("ok", "invalid", "disturbed"):
            figure, ci = _shown(r.net if net else r.timer, net)
            cycles, cycles_ci = _shown(r.net_cycles if net else r.cycles, net)
            low, ns = (r.min if has_min(r) else None), r.ns_per_op
            if net:  # every cost net of the loop (loop per op = gross − net), or none
                loop = (r.per_op - r.net_per_op) if r.net_per_op is not None else None
                low = None if loop is None or low is None else low - loop
                scaled = ns is not None and r.net_per_op is not None and r.per_op
                ns = ns * r.net_per_op / r.per_op if scaled else None  # type: ignore[operator]
            cells = [figure, ci, (net_fmt(low, None, None) if net else fmt(low)) if low is not None else "-",
                     "-" if r.rcv is None else f"{100 * r.rcv:.1f}%", unit, cycles, cycles_ci,
                     (net_fmt(ns, None, None) if net else fmt(ns)) if ns is not None else "-"]
            if r.status == "invalid":
                cells = [safe_text(x, style="strike") if x not in ("", "-") else x for x in cells]
            elif r.status == "disturbed":
                cells = [safe_text(x, style=DISTURBED_FIGURES) for x in cells]
        else:
            cells = ["-", "-", "-", "-", unit, "-", "-", "-"]
        if host:
            rr = r.run_to_run
            cells.append(f"±{fmt(rr['sd'])} (df {rr['df']})" if rr else "-")
        table.add_row(name, param, *cells, safe_text(notes(r)), style=style)
    return table


def print_results(
    rows: Iterable[Result], console: Console | None = None, title: str | None = None, net: bool = False,
    wide: bool = False,
) -> None:
    (console or Console()).print(results_table(rows, title, net, wide))


def calibration_line(cal: CalibrationLine | None) -> str:
    """One line on the clock behind the numbers: timer, its own cost, its rate and the rate's source."""
    if not cal:
        return ""
    unit = cal.get("unit", "ticks")
    oh = cal.get("timer_overhead") or {}
    line = f"timer {cal.get('timer')}: start+stop costs {oh.get('median', '?')} {unit} (min {oh.get('min', '?')})"
    if unit != "ns" and cal.get("rate_hz"):
        line += f"; rate {cal['rate_hz'] / 1e6:.3f} MHz ({cal.get('rate_source')}"
        if cal.get("measured_hz") and cal.get("rate_source") != "measured":
            line += f", measured {cal['measured_hz'] / 1e6:.3f}"
        line += ")"
    if unit == "ref-cycles":
        line += "; ref-cycles are TSC ticks, not core cycles"
    if isinstance(cal.get("age_s"), (int, float)):  # reused within its sitting (experiments/session.py)
        line += f"; calibrated {cal['age_s']:.0f} s before the run"
    return line


def labels_text(labels: Any) -> str:
    """A run's labels as ``key=value, key=value`` (what --label gave), "" without any."""
    if not isinstance(labels, dict) or not labels:
        return ""
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def identity_line(run: Run) -> str:
    """One line on who and what made a stored run (a runs row): host and host id,
    kernel release (and version string), boot id, CPU model and microcode, compiler,
    cyclebench version, the sources' revision (dirty or not), labels. Absent facts are left
    out; ids are cut to 12 (host) and 8 (boot) characters, as git shortens hashes. ``env`` is
    read defensively: an imported run file may hold anything there."""
    parts: list[str] = []
    if run.get("host") or run.get("host_id"):
        host = str(run.get("host") or "?")
        env = run.get("env") if isinstance(run.get("env"), dict) else {}
        own = env.get("hostname")  # a fleet run is stored under its inventory name: say which machine
        ids = [f"machine {own}"] if own and own != host else []
        ids += [f"id {str(run['host_id'])[:12]}"] if run.get("host_id") else []
        parts.append(f"host {host}" + (f" ({', '.join(ids)})" if ids else ""))
    if run.get("kernel_release"):
        parts.append(f"kernel {run['kernel_release']}" + (f" {run['kernel_version']}" if run.get("kernel_version")
                                                          else ""))
    if run.get("boot_id"):
        parts.append(f"boot {str(run['boot_id'])[:8]}")
    cpu = run.get("cpu_model") or ""
    if run.get("microcode"):
        cpu = f"{cpu}{', ' if cpu else ''}microcode {run['microcode']}"
    if cpu:
        parts.append(cpu)
    if run.get("compiler"):
        parts.append(str(run["compiler"]))
    if flags := build_of(run, {}):  # the flags a series tells builds apart by (history --build)
        parts.append(f"built with {flags}")
    if run.get("group_id") is not None:  # what `compare gN gM` names it by
        parts.append(f"replicate group g{run['group_id']}")
    if run.get("tool_version"):
        parts.append(f"cyclebench {run['tool_version']}")
    if run.get("code_rev"):
        rev = str(run["code_rev"])
        parts.append(f"code {rev}" + (" (dirty)" if run.get("code_dirty") and not rev.endswith("-dirty") else ""))
    if labels_text(run.get("labels")):
        parts.append(f"labels {labels_text(run.get('labels'))}")
    return " · ".join(parts)


def environment_lines(rows: Iterable[Result]) -> list[str]:
    """Run-level facts behind the table: how disturbances were detected and what the core
    clock did (the calibration's own stability)."""
    rows = [r for r in map(Result.of, rows) if (r.line or {}).get("disturb_source")]
    lines = []
    sources = {str((r.line or {}).get("disturb_source")) for r in rows}
    dropped = sum(r.get("n_disturbed") or 0 for r in rows if r.get("status") != "disturbed")
    if any(x.startswith("nivcsw") for x in sources):
        how = ("kept off the CPU while another program ran, or moved to another CPU"
               if all(x == "nivcsw+run_delay" for x in sources if x.startswith("nivcsw"))
               else "involuntary context switches (no schedstat here) or a move to another CPU")
        lines.append(f"disturbed samples: {dropped} dropped ({how}; blocking by design does not count)")
    elif "perf" in sources:
        lines.append(f"disturbed samples: {dropped} dropped (perf software events: context-switches, cpu-migrations)")
    elif "getrusage" in sources:
        lines.append(f"disturbed samples: {dropped} dropped (perf events not permitted: getrusage context switches "
                     "only, migrations not seen)")
    elif rows:
        lines.append("disturbed samples: not detected (no perf events, no getrusage)")
    disturbed = [r for r in rows if r.get("status") == "disturbed"]
    if disturbed:
        lines.append(f"{len(disturbed)} result(s) disturbed: most of their batches shared the CPU with another program "
                     "(figures dimmed, not compared between stored runs; run `cyclebench check`, isolate the CPU "
                     "or pin elsewhere, and run again)")
    trimmed = sum(r.get("n_trimmed") or 0 for r in rows)
    if trimmed:
        total = sum((r.get("n_samples") or 0) + (r.get("n_trimmed") or 0) + (r.get("n_disturbed") or 0)
                    for r in rows)  # n_samples counts the samples the estimate used
        lines.append(f"trimmed: {trimmed} of {total} samples (an interrupt counted on the CPU during the batch, or "
                     "above their round's median and > 1% over its fastest: interrupts and VM exits add time, "
                     "never remove it)")
    ghz = [r["core_ghz"] for r in rows if r.get("core_ghz")]
    if ghz:
        stab = max((r.get("ratio_rcv") or 0) for r in rows)
        lines.append(f"core clock (add-chain calibration): {min(ghz):.2f}–{max(ghz):.2f} GHz across results, "
                     f"within a result ≤ {100 * stab:.2f}% (robust CV); cycles~ = ref-cycles × core/TSC ratio")
    return lines


VERDICT_STYLE = {"faster": "green", "slower": "red", "inconclusive": "yellow", "not exact": "yellow"}
# what a paired table's A, B and Δ are: said under it, since its Δ is not the difference of the medians
PAIRED_CAPTION = ("A: A's per-op figure, as show and history give it; median paired Δ: the median of each pair's "
                  "B − A (revisions: of B/A − 1, times A), what its CI and the verdict are of; B = A + Δ, not B's "
                  "own per-op figure (history's, the csv's median_b), which may differ from it, even in sign")


def unpaired_delta(c: Comparison) -> bool:
    """Whether ``c``'s Δ is B − A of its two medians (stored runs' means, exact counts), to the
    float. Not where Δ is the median of the pairs' differences (compare, compare --rev, bisect): a
    median is not linear, so median(B − A) need not be median(B) − median(A), nor of its sign; even
    where the two agree to the digits shown (a lucky sitting) the table says which it is, so one
    design always prints under one header."""
    scale = max(1.0, abs(c.median_a), abs(c.median_b))
    return abs(c.diff - (c.median_b - c.median_a)) <= 1e-9 * scale


def paired_table(rows: Iterable[ComparisonRow]) -> bool:
    """Whether a table of comparisons shows its B as A + Δ (PAIRED_CAPTION): some row's Δ is not
    B − A of its medians (unpaired_delta), so B's own median beside it would read A 100.6,
    B 100.8, Δ −0.030. The whole table then, so a column means one thing in every row."""
    return any(r.cmp is not None and not unpaired_delta(r.cmp) for r in rows)


def comparison_figures(c: Comparison, paired: bool) -> tuple[str, str, str, str, str, str]:
    """A comparison's cells as every table of comparisons prints them (the console's, markdown,
    text): A, B (A + Δ when ``paired``: paired_table), Δ, Δ% (Δ ÷ A), the CI of Δ (``exact``
    for exact counts, ``-`` where nothing estimates the spread) and p."""
    known = not math.isnan(c.ci_low)  # NaN: nothing estimates the spread (stats.runs), no CI, no p
    exact = known and c.ci_low == c.ci_high == c.diff  # simulated counts: Δ itself, no CI to give
    return (fmt(c.median_a), fmt(c.median_a + c.diff if paired else c.median_b), signed(c.diff),
            f"{100 * c.rel:+.2f}%",
            "exact" if exact else f"[{signed(c.ci_low)}, {signed(c.ci_high)}]" if known else "-",
            fmt_p(c.p) if known and not exact else "-")


def sides_headers(paired: bool, per: str = "") -> tuple[str, str, str]:
    """The headers of a comparison's A, B and Δ columns (``per``: the unit, said in them)."""
    if paired:
        return f"A per op{per}", f"B = A + Δ{per}", "median paired Δ"
    return f"A per op{per}", f"B per op{per}", "Δ (B−A)"


def comparisons_table(rows: Iterable[Any], title: str | None = None, alpha: float = 0.002,
                      wide: bool = False) -> FitTable:
    """One line per comparison (compare.Row: a, b, param, unit, cmp, note): A, B, their
    medians, Δ with its 95% CI, the Holm-adjusted p and the verdict; `~` means no
    difference worth reporting. Δ is B − A of the medians shown where it is (stored runs' means,
    exact counts); where it is the median of the pairs' differences (paired_table) its header
    says so, B is shown as A + Δ and the caption says what each is (PAIRED_CAPTION), so no row
    reads A 100.6, B 100.8, Δ −0.030. A, B, param, both sides' per op, Δ, the CI of Δ and the
    verdict stay at any width, Δ% and the unit too (in the per-op headers when every row has the
    same one); p drops first. Rows of the sequential
    design (``r.sequential``) show their repeated CI and nominal p, and the caption says how
    they were decided."""
    rows = list(rows)
    seq = [r.sequential for r in rows if getattr(r, "sequential", None)]
    caption = f"verdict only when p < {alpha:g} and the CI lies outside the margin (0.25 unit or 0.5%, the smaller)"
    if seq:
        eq = 100 * (seq[0].get("equivalence") or 0)
        caption = ("sequential: slower/faster when the repeated CI (all looks at once, 1 − α = "
                   f"{1 - seq[0]['alpha']:.4g}) lies outside the margin "
                   f"({seq[0].get('margin_rule') or '0.25 unit or 0.5%, the smaller'}); "
                   f"equivalent when it lies within ±{eq:g}% of A and Δ within the margin; inconclusive when "
                   "the budget ended first; p nominal, of the deciding look")
    paired = paired_table(rows)
    if paired:
        caption = f"{PAIRED_CAPTION}.\n{caption}"  # the period: markdown joins the lines
    counted = [r.cmp for r in rows if r.cmp is not None]
    exact_counts = bool(counted) and all(
        c.verdict == "not exact" or (c.verdict != "~" and c.ci_low == c.ci_high == c.diff) for c in counted)
    if exact_counts:
        # exact counts (compare --rev --backend callgrind): no spread, no p; the margin is the threshold
        c = counted[0]
        caption = (f"exact counts per op (callgrind): slower/faster when |Δ%| exceeds "
                   f"{100 * c.margin / abs(c.median_a) if c.median_a else 0:g}% of A, else equivalent; not exact: "
                   "a side's readings differ, no verdict")
    units = {r.unit for r in rows if r.unit}
    # one unit: said in the per-op headers, so it stays at any width (a column of its own would be
    # the first to go); several: a column among the answer's. A param column only when a row has one.
    per = f" ({next(iter(units))})" if len(units) == 1 else ""
    keep = {"param": any(r.param is not None for r in rows), "unit": len(units) != 1, "p (Holm)": not exact_counts}
    if exact_counts and per:  # counts: the unit is per op ("Ir/op"), and there is no p to show
        per = f" ({next(iter(units))}/op)"
    a_head, b_head, d_head = sides_headers(paired, per)
    columns = [
        Column("A", justify="left", fold=CMP_NAME_FOLD),
        Column("B", justify="left", fold=CMP_NAME_FOLD),
        Column("param"),
        Column(f"A{per}" if exact_counts else a_head),
        Column(f"B{per}" if exact_counts else b_head),
        Column(d_head),
        Column("Δ%"),
        Column("repeated CI of Δ" if seq else "CI of Δ" if exact_counts else "95% CI of Δ"),
        Column("p" if seq else "p (Holm)", priority=5),
        Column("verdict", justify="left"),
        Column("unit", justify="left"),
        Column("notes", justify="left", notes=True),
    ]
    shown = [keep.get(c.header, True) for c in columns]
    table = FitTable([c for c, k in zip(columns, shown, strict=True) if k], title=title, wide=wide, caption=caption)

    def add(*cells: Any) -> None:
        table.add_row(*[x for x, k in zip(cells, shown, strict=True) if k])

    for r in rows:
        c = r.cmp
        param = "" if r.param is None else str(r.param)
        a, b = safe_text(r.a, multiline=False), safe_text(r.b, multiline=False)
        if c is None:
            add(a, b, param, "-", "-", "-", "-", "-", "-", Text("failed", style="red"), r.unit, r.note)
            continue
        verdict = Text(c.verdict, style=VERDICT_STYLE.get(c.verdict, ""))
        add(a, b, param, *comparison_figures(c, paired), verdict, r.unit, r.note)
    return table


def print_comparisons(rows: Iterable[Any], console: Console, title: str | None = None, alpha: float = 0.002,
                      wide: bool = False) -> None:
    console.print(comparisons_table(rows, title, alpha, wide))


SIM_EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "Bc", "Bcm", "Bi", "Bim")
# the order the simulated event columns leave a narrow table (higher first): Ir, the answer,
# stays; data accesses and first-level misses outlast branches and last-level misses
SIM_PRIORITY = {"Ir": 0, "Dr": 1, "Dw": 1, "D1mr": 2, "D1mw": 2, "I1mr": 3, "Bc": 4, "Bcm": 4, "ILmr": 5,
                "DLmr": 5, "Bi": 6, "Bim": 6}


def simulated_table(rows: Iterable[Result], title: str | None = None, wide: bool = False,
                    asked: Iterable[str] = ()) -> FitTable:
    """Per-op counts simulated by callgrind (one column per event of SIM_EVENTS): exact and
    identical from run to run, for the fixed cache geometry in the caption — not measurements
    of this CPU. Ir and the ``asked`` events stay at any width; the others drop in
    SIM_PRIORITY's order."""
    rows = [Result.of(r) for r in rows]
    keep = set(asked) | {"Ir"}
    table = FitTable([
        Column("benchmark", justify="left", fold=NAME_FOLD),
        Column("param", names=True),
        *[Column(f"{ev}/op", priority=0 if ev in keep else SIM_PRIORITY[ev]) for ev in SIM_EVENTS],
        Column("notes", justify="left", notes=True),
    ], title=title, wide=wide)
    geometry = None
    for r in rows:
        sim = r.simulated or {}
        ev = sim.get("events")
        param = "" if r.get("param") is None else str(r["param"])
        name = safe_text(r["bench"], multiline=False)
        if r.get("status") != "ok" or not ev:
            table.add_row(name, param, *["-"] * len(SIM_EVENTS), notes(r),
                          style=STATUS_STYLE.get(str(r.get("status")), ""))
            continue
        geometry = sim.get("cache") or geometry
        # per op is a difference of two runs' counts (runner/callgrind.per_op): a miss count that came
        # out lower at the longer run (the simulated predictor's state) is no negative count
        below = counts.below(ev, SIM_EVENTS)
        table.add_row(name, param, *[counts.cell(ev.get(e), fmt) for e in SIM_EVENTS],
                      "; ".join(counts.clipped_note(f"{e}/op", ev[e]) for e in below))
    if geometry:
        table.caption = "simulated by callgrind · " + " · ".join(
            f"{k} {v[0] // 1024} KiB {v[1]}-way {v[2]} B lines" for k, v in geometry.items())
    return table


def print_simulated(rows: Iterable[Result], console: Console, title: str | None = None, wide: bool = False,
                    ) -> None:
    console.print(simulated_table(rows, title, wide))


def counters_table(rows: Iterable[Result], wide: bool = False) -> FitTable | None:
    """Counters per op (slope of count vs batch size, like the time), with derived metrics;
    an event that could not be counted says why instead of showing 0. Every asked event is
    an answer column (never dropped); derived metrics and reasons are the notes. None when
    no row counted events."""
    counted = [(r, r.counters) for r in map(Result.of, rows) if r.counters and r.counters.get("events")]
    if not counted:
        return None
    names = list(counted[0][1]["events"])
    table = FitTable([
        Column("benchmark", justify="left", fold=NAME_FOLD),
        Column("param", names=True),
        *[Column(n + (" (ns)" if n in ("task-clock", "cpu-clock") else "")) for n in names],
        Column("derived / notes", justify="left", notes=True),
    ], title="counters per op", wide=wide)
    for r, counters in counted:
        ev = counters["events"]
        cells, notes_ = [], []
        for n in names:
            e = ev.get(n, {})
            cells.append(fmt(e["per_op"]) if "per_op" in e else "-")
            if e.get("status", "counted") != "counted":
                notes_.append(f"{n}: {e['status']}")
        der = counters.get("derived") or {}
        notes_ = [f"{k} {v:.3g}" for k, v in der.items()] + notes_
        table.add_row(safe_text(r["bench"], multiline=False), "" if r.get("param") is None else str(r["param"]),
                      *cells, "; ".join(notes_))
    return table


def print_counters(rows: Iterable[Result], console: Console, wide: bool = False) -> None:
    table = counters_table(rows, wide)
    if table is not None:
        console.print(table)
