"""Tables a person can read in an 80-column terminal. The columns that carry the
answer stay at any width and every number in them is printed whole; secondary columns
drop; notes wrap under their row; wide shows every column.

No compiler: rows are dicts (or the model's dataclasses) rendered to a recording console.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from cyclebench.model import Comparison, Series
from cyclebench.report import console as report
from cyclebench.report import plots
from cyclebench.report.console import fmt, fmt_ci, fmt_interval
from cyclebench.report.fit import Column, FitTable


def render(renderable: Any, width: int) -> str:
    console = Console(record=True, width=width, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    console.file.close()
    text = console.export_text()
    assert "…" not in text  # rich's ellipsis: nothing is ever cut
    assert max(cell_len(line) for line in text.splitlines()) <= width
    return text


def headers(text: str) -> str:
    """The header line(s), above the rule under the header, joined so a header wrapped over
    two lines reads as one: each column's words top to bottom."""
    lines = text.splitlines()
    end = next(i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) == {"─"})
    return unwrap_headers([ln for ln in lines[:end] if "#" not in ln and " · " not in ln])  # not the title


def unwrap_headers(lines: list[str]) -> str:
    """Header lines → the headers separated by two spaces (words of a wrapped header joined)."""
    width = max(len(ln) for ln in lines)
    lines = [ln.ljust(width) for ln in lines]
    blank = [all(ln[k] == " " for ln in lines) for k in range(width)]
    spans, k = [], 0
    while k < width:  # columns of text separated by runs of ≥ 2 blank positions
        if blank[k]:
            k += 1
            continue
        j = k
        while j < width and not (blank[j] and (j + 1 >= width or blank[j + 1])):
            j += 1
        spans.append((k, j))
        k = j
    return "  ".join(" ".join(w for ln in lines if (w := ln[a:b].strip())) for a, b in spans)


def _half(lo: float, hi: float) -> float:
    return (hi - lo) / 2


RESULTS = [
    {"bench": "copy/rep_movsb", "param": 65536, "status": "ok", "unit": "ref-cycles", "per_op": 1234.567,
     "ci_low": 1230.1, "ci_high": 1240.3, "min": 1201.9, "rcv": 0.0123, "cycles_per_op": 1789.12,
     "cycles_ci_low": 1780.0, "cycles_ci_high": 1799.5, "ns_per_op": 612.345, "n_samples": 40, "outliers": 9,
     "pmu_cycles_per_op": 1790.0, "pmu_agreement": 1.0004},
    {"bench": "copy/memcpy", "param": 64, "status": "ok", "unit": "ref-cycles", "per_op": 0.61234,
     "ci_low": 0.6, "ci_high": 0.63, "min": 0.58, "rcv": 0.2, "cycles_per_op": 0.8812, "cycles_ci_low": 0.87,
     "cycles_ci_high": 0.89, "ns_per_op": 0.3012, "n_samples": 40, "outliers": 0},
    {"bench": "contend/unpadded_counter", "param": None, "status": "ok", "unit": "ref-cycles",
     "per_op": 123456.78, "ci_low": 120000.0, "ci_high": 127000.0, "min": 119876.5, "rcv": 0.031,
     "cycles_per_op": 170001.2, "cycles_ci_low": 165000.0, "cycles_ci_high": 175000.0, "ns_per_op": 61728.4,
     "n_samples": 40, "outliers": 1},
    {"bench": "crash/msr", "param": None, "status": "crashed", "unit": "ref-cycles",
     "reason": "SIGABRT: cannot open MSR device [/dev/cpu/0/msr-nope]"},
]
ANSWER = ("benchmark", "param", "per op", "±CI95", "unit", "cycles~")
SECONDARY = ("min", "rCV", "ns/op")


def answer_numbers(r: dict[str, Any]) -> list[str]:
    return [fmt(r["per_op"]), fmt_interval(r["per_op"], r["ci_low"], r["ci_high"]), fmt(r["cycles_per_op"])]


def test_results_at_80_keep_the_answer_whole() -> None:
    text = render(report.results_table(RESULTS, title="run #1"), 80)
    head = headers(text)
    for h in ANSWER:
        assert h in head, h
    for h in ("min", "rCV", "notes"):  # dropped whole, from the right, and named under the table
        assert h not in head, h
    # both ends of a lopsided CI (-4.5/+5.7) take the room the cycles~ CI had; ns/op, dropped before it, fits
    assert "not shown at 80 columns: min, rCV, ±CI95 (--wide" in " ".join(text.split())
    for r in RESULTS[:3]:
        for number in answer_numbers(r):
            assert number in text, number
        assert r["bench"][:12] in text
    assert "ref-cycles" in text
    flat = " ".join(text.split())
    assert "crashed: SIGABRT: cannot open MSR device [/dev/cpu/0/msr-nope]" in flat  # under its row
    assert "9/40 outliers" in flat and "wide CI" not in flat


def test_notes_line_sits_under_its_row() -> None:
    lines = render(report.results_table(RESULTS), 80).splitlines()
    crash = next(i for i, ln in enumerate(lines) if "crash/msr" in ln)
    assert "crashed:" in lines[crash + 1] and lines[crash + 1].startswith("   crashed:")


def test_results_wide_keep_every_column() -> None:
    text = render(report.results_table(RESULTS, wide=True), 220)
    head = headers(text)
    for h in (*ANSWER, *SECONDARY, "notes"):
        assert h in head, h
    for r in RESULTS[:3]:
        for number in [*answer_numbers(r), fmt(r["min"]), fmt(r["ns_per_op"]), f"{100 * r['rcv']:.1f}%",
                       fmt_interval(r["cycles_per_op"], r["cycles_ci_low"], r["cycles_ci_high"])]:
            assert number in text, number


def test_results_wide_at_80_drop_nothing() -> None:
    table = report.results_table(RESULTS, wide=True)
    lay = table.layout(Console(width=80), 80)
    assert len(lay.shown) + lay.notes_under == len(table.columns) and not lay.dropped
    render(table, 80)  # squeezed, folded, never elided


def test_a_wider_terminal_shows_more() -> None:
    table = report.results_table(RESULTS)
    shown = [len(table.layout(Console(width=w), w).shown) for w in (60, 80, 100, 120, 160, 200)]
    assert shown == sorted(shown) and shown[0] < shown[-1]
    assert not table.layout(Console(width=200), 200).notes_under  # room for notes beside the rows


@pytest.mark.parametrize("width", [30, 40, 50, 60])
def test_narrower_than_the_answer_folds_never_elides(width: int) -> None:
    render(report.results_table(RESULTS), width)


def _cmp(a: float, b: float, lo: float, hi: float, verdict: str) -> Comparison:
    return Comparison(median_a=a, median_b=b, diff=b - a, ci_low=lo, ci_high=hi, rel=(b - a) / a, p=2.5e-5,
                      pairs=30, margin=0.05, verdict=verdict)


COMPARISONS = [
    SimpleNamespace(a="copy/memcpy", b="copy/rep_movsb", param=4096, unit="cycles~",
                    cmp=_cmp(123.45, 98.765, -25.1, -24.3, "faster"), note=""),
    SimpleNamespace(a="copy/memcpy", b="copy/rep_movsb", param=64, unit="cycles~",
                    cmp=_cmp(10.5, 10.51, -0.0123, 0.0321, "~"), note="wide CI on B, 3/40 outliers"),
    SimpleNamespace(a="copy/memcpy", b="copy/crashes", param=8, unit="cycles~", cmp=None,
                    note="copy/crashes: crashed: SIGSEGV"),
]


def test_compare_at_80_keeps_delta_ci_and_verdict() -> None:
    text = render(report.comparisons_table(COMPARISONS, title="run #2"), 80)
    head = headers(text)
    for h in ("A", "B", "param", "A per op", "B per op", "Δ (B−A)", "Δ%", "95% CI of Δ", "verdict", "(cycles~)"):
        assert h in head, h  # the unit, one for every row, in the per-op headers
    assert "p (Holm)" not in head
    for r in COMPARISONS[:2]:  # both sides' per op are the answer too
        assert fmt(r.cmp.median_a) in text and fmt(r.cmp.median_b) in text
    for r in COMPARISONS[:2]:
        c = r.cmp
        for s in (report.signed(c.diff), f"[{report.signed(c.ci_low)}, {report.signed(c.ci_high)}]",
                  f"{100 * c.rel:+.2f}%", c.verdict):
            assert s in text, s
    assert "failed" in text and "SIGSEGV" in text


def test_compare_of_a_large_cost_keeps_delta_percent_and_unit_in_plain_digits() -> None:
    """A 64,000-cycle op 2,360 slower: Δ +2,360 (never +2.36e+03), its Δ% and the unit at 80 and 60."""
    rows = [SimpleNamespace(a="hash/sha256_block_64k", b="hash/sha256_block_64k_unrolled", param=65536,
                            unit="cycles~", cmp=_cmp(64000.0, 66360.0, 2100.0, 2620.0, "slower"), note="")]
    for width in (80, 60):
        text = render(report.comparisons_table(rows, title="run #3"), width)
        assert "+2,360" in text and "+3.69%" in text and "[+2,100, +2,620]" in text and "(cycles~)" in text, text
        assert "e+0" not in text and "…" not in text


def test_compare_of_several_units_keeps_the_unit_column() -> None:
    rows = [COMPARISONS[0], SimpleNamespace(**{**vars(COMPARISONS[1]), "unit": "ns"})]
    text = render(report.comparisons_table(rows), 80)
    assert "unit" in headers(text) and "ns" in text and "(cycles~)" not in headers(text)


def test_compare_wide_keeps_every_column() -> None:
    text = render(report.comparisons_table(COMPARISONS, wide=True), 240)
    head = headers(text)
    for h in ("A per op", "B per op", "Δ%", "p (Holm)", "(cycles~)", "notes"):
        assert h in head, h
    assert "<0.0001" in text and fmt(123.45) in text and "-20.00%" in text


def test_variants_ranked_at_80() -> None:
    from cyclebench.report.variants import variants_ranked

    base = {"cc": "gcc", "cflags": [], "target": None, "emulated": False, "body_bytes": 412, "text_bytes": 16384,
            "size": {"text": 1537, "data": 240, "bss": 0, "dec": 1777}}
    d = {"bench": "cas/counter", "param": None, "unit": "cycles~", "variants": [
        {**base, "label": "-O2", "status": "ok", "reason": None, "per_invocation": [12.34, 12.5, 12.41],
         "baseline": True, "mean": 12.4167, "stddev_pct": 0.65, "ci_low": 12.2, "ci_high": 12.6, "best": 12.34},
        {**base, "label": "-O2 -march=native -mtune=native", "status": "ok", "reason": None,
         "per_invocation": [9.87, 9.9, 9.95], "mean": 9.9067, "stddev_pct": 0.41, "ci_low": 9.8, "ci_high": 10.0,
         "best": 9.87, "comparison": {"rel": -0.2043, "verdict": "faster", "ci_low": -2.61, "ci_high": -2.4}}]}
    text = render(variants_ranked(d, run_id=4), 80)
    head = headers(text)
    # the long flag set goes above its row (report.fit): every column has room then
    for h in ("per op (cycles~)", "± sd", "Δ% median", "verdict"):
        assert h in head, h
    assert "body B" not in head
    for s in (fmt(12.4167), fmt(9.9067), "0.65%", "-20.43%", "faster", "(baseline)", "* -O2",
              "-O2 -march=native -mtune=native"):
        assert s in text, s
    assert text.index(fmt(9.9067)) < text.index(fmt(12.4167))  # ranked: the faster variant first
    wide = headers(render(variants_ranked(d, wide=True), 240))
    for h in ("lowest inv.", "95% CI", "text", "data", "bss", "dec", "body B"):
        assert h in wide, h
    by_size = render(variants_ranked(d, sort="dec", wide=True), 240)
    assert "ranked by dec" in by_size
    with pytest.raises(ValueError):
        variants_ranked(d, sort="I1mr")  # not simulated: no such column


def test_scale_at_80_keeps_tasks_throughput_speedup() -> None:
    pts = [{"tasks": t, "status": "ok", "total_median": 1.15e7 * t * 0.9, "total_min": 1.1e7 * t * 0.9,
            "total_max": 1.2e7 * t * 0.9, "speedup": 0.9 * t, "efficiency": 0.9, "cpu_efficiency": 0.95,
            "task_min": 1.0e7, "task_median": 1.03e7, "task_max": 1.05e7, "fairness": 0.98, "ns_per_op": 86.9,
            "wait_pct": 1.0, "notes": ["oversubscribed: 3 tasks on 2 CPUs"] if t == 3 else []} for t in (1, 2, 3)]
    s = Series(bench="contend/padded", param=None, mode="threads", points=pts)
    text = render(plots.scale_table(s), 80)
    head = headers(text)
    for h in ("tasks", "total", "ops/s", "speed-up", "effic./CPU-s"):  # "total ops/s" may wrap at its space
        assert h in head, h
    assert "per task min/med/max" not in head
    for p in pts:
        assert plots.si(p["total_median"]) in text and f"{p['speedup']:.2f}×" in text
    for width in (80, 60):  # the load-robust answer stays at any width (a loaded host's wall-clock misleads)
        assert "effic./CPU-s" in headers(render(plots.scale_table(s), width)) or "effic./CPU-s  0.95" in \
            render(plots.scale_table(s), width)
    assert "oversubscribed: 3 tasks on 2 CPUs" in " ".join(text.split())
    assert plots.scale_table(s).row_count == 3
    wide = headers(render(plots.scale_table(s, wide=True), 200))
    for h in ("min–max", "effic.", "fairness", "ns/op", "wait", "per task min/med/max"):
        assert h in wide, h


def test_fit_table_drops_highest_priority_number_first() -> None:
    t = FitTable([Column("name", justify="left", fold=8), Column("answer"), Column("second", priority=1),
                  Column("third", priority=2), Column("fourth", priority=3), Column("notes", notes=True)])
    t.add_row("some/benchmark", "123,456,789", "22.22", "33.33", "44.44", "a note that is long enough " * 3)
    widths = {}
    for w in (120, 50, 40, 30, 23, 21):
        lay = t.layout(Console(width=w), w)
        widths[w] = [t.columns[i].header for i in lay.shown], lay.notes_under, lay.records
    assert widths[120] == (["name", "answer", "second", "third", "fourth", "notes"], False, False)
    assert widths[50] == (["name", "answer", "second", "third", "fourth"], True, False)  # notes under the row
    assert widths[40] == (["name", "answer", "second", "third"], True, False)
    assert widths[30] == (["name", "answer", "second"], True, False)
    assert widths[23] == (["name", "answer"], True, False)  # the name wraps after its '/' to make room
    assert widths[21] == (["answer"], True, False)  # the name on a line above its row
    assert t.layout(Console(width=21), 21).names_above
    text = render(t, 30)
    assert "123,456,789" in text and "not shown at 30 columns: third, fourth" in " ".join(text.split())
    text = render(t, 23)
    lines = text.splitlines()
    assert "123,456,789" in text and any(ln.startswith("some/ ") for ln in lines) and \
        any(ln.startswith("benchmark") for ln in lines)  # wrapped after the '/', never inside a word
    text = render(t, 21)
    lines = text.splitlines()
    name = next(i for i, ln in enumerate(lines) if ln.startswith("some/"))
    assert lines[name + 1].startswith("benchmark") and "123,456,789" in lines[name + 2]  # the name above its row
    assert t.layout(Console(width=10), 10).records  # not even the number: a record a row


def test_fit_table_checks_its_rows() -> None:
    t = FitTable([Column("a"), Column("b")])
    with pytest.raises(ValueError):
        t.add_row("1")
    with pytest.raises(ValueError):
        FitTable([Column("n", notes=True), Column("m", notes=True)])


def test_net_columns_are_all_net_and_never_negative() -> None:
    """With --net every cost column is net and says so; a net cost whose CI holds
    zero is ≈0, one wholly below zero is <0 (overlapping the loop), never a negative figure."""
    from cyclebench.report.console import net_fmt

    assert net_fmt(-0.003, -0.01, 0.004) == "≈0" and net_fmt(0.5, -0.1, 1.1) == "≈0"
    assert net_fmt(-0.2, -0.3, -0.1) == "<0" and net_fmt(12.2, 12.1, 12.3) == fmt(12.2)
    assert net_fmt(-0.5, None, None) == "≈0"
    rows = [{"bench": "counter/plain_add", "param": None, "status": "ok", "unit": "ref-cycles", "per_op": 0.80,
             "ci_low": 0.79, "ci_high": 0.81, "net_per_op": -0.003, "net_ci_low": -0.01, "net_ci_high": 0.004,
             "min": 0.77, "rcv": 0.01, "cycles_per_op": 1.04, "cycles_ci_low": 1.03, "cycles_ci_high": 1.05,
             "cycles_net": -0.004, "cycles_net_ci_low": -0.012, "cycles_net_ci_high": 0.005, "ns_per_op": 0.35},
            {"bench": "counter/lock_add", "param": None, "status": "ok", "unit": "ref-cycles", "per_op": 13.88,
             "ci_low": 13.87, "ci_high": 13.89, "net_per_op": 13.08, "net_ci_low": 13.07, "net_ci_high": 13.09,
             "min": 13.86, "rcv": 0.001, "cycles_per_op": 18.1, "cycles_ci_low": 18.0, "cycles_ci_high": 18.2,
             "cycles_net": 17.06, "cycles_net_ci_low": 17.0, "cycles_net_ci_high": 17.1, "ns_per_op": 6.03}]
    text = render(report.results_table(rows, net=True, wide=True), 200)
    head = headers(text)
    for h in ("net per op", "min net", "cycles~ net", "ns/op net"):
        assert h in head, h
    # no negative figure: a minus only as a CI's lower end beside its estimate (-0.008/+0.009)
    assert not [w for w in text.split() if w.startswith("-0.00") and "/" not in w] and "≈0" in text
    assert fmt(13.86 - (13.88 - 13.08)) in text and fmt(6.03 * 13.08 / 13.88) in text  # min and ns/op net too


def test_a_negative_simulated_count_is_shown_as_zero_with_what_the_subtraction_gave() -> None:
    """callgrind's per op is E(n2) − E(n1) over n2 − n1 (runner/callgrind.per_op): a branch-miss
    count can come out below zero; the table says so instead of printing a negative count."""
    from cyclebench.model import Result

    events = {e: 1.0 for e in report.SIM_EVENTS} | {"Bcm": -0.3}
    row = Result.of({"bench": "chain/add200", "param": None, "variant": "", "status": "ok", "kind": "simulated",
                     "unit": "Ir", "per_op": 1.0, "simulated": {"events": events}})
    text = render(report.simulated_table([row], wide=True), 200)
    cells = text.splitlines()[2].split("Bcm/op shown")[0]  # the numbers, not the note beside them
    assert "-0.3" not in cells and "Bcm/op shown as 0" in text and "gave -0.3" in text


def test_a_tiny_ci_is_a_plain_number() -> None:
    assert fmt_ci(5e-05) == "<0.001" and fmt_ci(0.0031) == "0.0031" and fmt_ci(0.0) == "0"


def test_a_heading_too_long_for_a_rule_wraps_instead_of_cutting() -> None:
    from cyclebench.report.fit import Heading

    title = ("cb_body_chain_add400 [runner]: 99.4% of the body's samples; share of its own per instruction "
             "(skid: charged to the next one)")
    text = render(Heading(title), 80)  # render() fails on "…"
    assert " ".join(text.split()).replace("─", "").strip() == title
    assert "─── short ───" in render(Heading("short"), 80).replace("─" * 4, "───")


def test_the_instruction_classes_of_disasm_fold_flags_and_calls_never_cut() -> None:
    from cyclebench.report.variants import print_variants

    base = {"cc": "aarch64-linux-gnu-gcc", "cflags": [], "target": "aarch64", "emulated": True, "status": "ok",
            "reason": None, "per_invocation": None, "mean": None, "body_bytes": 96, "disasm": ["ret"]}
    d = {"bench": "atomic/cas_counter", "param": None, "unit": None, "variants": [
        {**base, "label": "-O2", "baseline": True, "classes": {"total": 25, "call": 1},
         "calls": ["__aarch64_cas8_acq_rel"]},
        {**base, "label": "-O2 -march=armv8.2-a", "classes": {"total": 17, "atomic": 1}, "calls": []},
        {**base, "label": "-O2 -mno-outline-atomics", "classes": {"total": 19, "atomic": 2}, "calls": []}]}
    console = Console(record=True, width=80, file=open("/dev/null", "w"))  # noqa: SIM115
    print_variants([d], console, disasm=True)
    text = console.export_text()
    assert "…" not in text and max(cell_len(ln) for ln in text.splitlines()) <= 80
    flat = " ".join(text.split())
    assert "-mno-outline-atomics" in flat and "-march=armv8.2-a" in flat and "cas8_acq_rel" in flat


def test_a_lopsided_ci_prints_both_ends_and_a_symmetric_one_its_half_width() -> None:
    """One half-width where it gives both ends within the digits shown and neither half is over 1.5×
    the other; else the two ends as distances from the estimate (the lab's chain/add400: 287.0 with
    a CI of [281.08, 305.88] was printed 287.0 ± 12.40, its lower end 6.3 too low)."""
    assert fmt_interval(287.0223, 281.0818, 305.8764) == "-5.9/+19"
    assert fmt_interval(140.53834, 140.52817, 140.54822) == "0.010"  # 0.0102 and 0.0099: both 0.010
    assert fmt_interval(199.974, 199.157, 200.917) == "-0.82/+0.94"  # 0.88 would misplace both by 0.06
    assert fmt_interval(10.0, 9.0, 11.0) == "1.0" and fmt_interval(5.0, 5.0, 5.0) == "0"
    assert fmt_interval(5.0, 4.9998, 5.0004) == "<0.001"  # both below the digits shown
    assert fmt_interval(400.3, 364.5, 414.1) == "-36/+14" and fmt_interval(95.2, -1097.7, 1288.1) == "1,193"
    assert fmt_interval(5.0, 5.1, 6.0) == "+0.10/+1.0"  # an estimate outside its CI says so, never a ±
    assert fmt_interval(5.0, None, 6.0) == "-"


def _paired(a: float, b: float, diff: float, lo: float, hi: float) -> SimpleNamespace:
    return SimpleNamespace(a="lib/flat @ d0c0d22", b="lib/flat @ 069bbd9", param=None, unit="cycles~", note="",
                           cmp=Comparison(median_a=a, median_b=b, diff=diff, ci_low=lo, ci_high=hi, rel=diff / a,
                                          p=0.93, pairs=18, margin=0.5, verdict="inconclusive"))


def test_a_paired_delta_is_named_and_its_b_is_a_plus_delta() -> None:
    """The median of the pairs' differences is not B − A of the two medians (the lab's compare --rev:
    A 100.6, B 100.8, Δ −0.030): the table names Δ for what it is, shows B as A + Δ, and says so
    under it — even where the two happen to agree to the digits shown; where Δ is B − A (stored
    runs' means, exact counts) the headers stay as they were."""
    lucky = render(report.comparisons_table([_paired(199.31, 398.99, 199.57, 197.5, 201.6)]), 120)
    assert "median paired Δ" in headers(lucky)  # 399.0 − 199.3 = 199.7 ≈ +199.6: still the paired design
    text = render(report.comparisons_table([_paired(100.6, 100.8, -0.030, -1.17, 1.12)]), 120)
    head = headers(text)
    assert "median paired Δ" in head and "B = A + Δ (cycles~)" in head and "Δ (B−A)" not in head
    row = next(line for line in text.splitlines() if "-0.030" in line)
    assert row.split().count("100.6") == 2 and "100.8" not in row  # B = 100.6 − 0.030, never B's own 100.8
    assert "not B's own per-op figure" in " ".join(text.split())
    plain = render(report.comparisons_table([_paired(199.3, 199.7, 199.7 - 199.3, -3.1, 3.98)]), 120)  # means
    assert "Δ (B−A)" in headers(plain) and "B per op" in headers(plain) and "not B's own" not in plain
