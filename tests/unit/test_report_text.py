"""Text from a benchmark, the runner, a file or the database is printed
literally — never parsed as rich markup — with its control characters made visible.

No compiler: the tables are built from dict rows and rendered to a recording console.
"""

from __future__ import annotations

import io
import re
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from cyclebench.model import BenchInfo, Comparison, Series
from cyclebench.report import console as report
from cyclebench.report import plots
from cyclebench.report import variants as variants_report
from cyclebench.report.text import safe_text, visible

REASON = "cannot open MSR device [/dev/cpu/0/msr-nope]"
NAME = "[/x]"
ITALIC = "[i]x[/i]"
OSC = "\x1b]0;pwned\x07"  # sets the terminal's title
CSI = "\x1b[31mred"


def render(renderable: Any, width: int = 200) -> tuple[str, str]:
    """(plain text, the bytes a colour terminal would get)."""
    raw = io.StringIO()
    console = Console(file=raw, record=True, width=width, force_terminal=True, color_system="truecolor")
    console.print(renderable)
    return console.export_text(), raw.getvalue()


def assert_literal(plain: str, raw: str) -> None:
    for s in (REASON, NAME, ITALIC, "\\x1b]0;pwned\\x07"):
        assert s in plain, s
    assert "\x1b" not in plain and "\x07" not in plain
    assert OSC not in raw and "\x07" not in raw and "\x1b]0;" not in raw  # rich's own styles are CSI only
    assert "\x1b[31mred" not in raw


def test_safe_text_is_literal_and_visible() -> None:
    assert safe_text("[bold]x[/bold]").plain == "[bold]x[/bold]"
    assert safe_text(NAME).spans == []
    assert visible(OSC) == "\\x1b]0;pwned\\x07"
    assert visible("a\r\nb\rc") == "a\nb\\x0dc"  # CRLF is a line break, a lone CR would overwrite the line
    assert visible("a\nb", multiline=False) == "a\\x0ab"
    assert visible("x\u202ey") == "x\\u202ey"  # bidi override (right-to-left spoofing)
    assert visible("\x9b31m") == "\\x9b31m"  # C1 CSI
    assert visible("tab\there") == "tab\there"  # rich expands tabs
    assert visible("1\u00a0000 µs ✓ 日本") == "1\u00a0000 µs ✓ 日本"  # printable text stays
    assert safe_text(None).plain == ""
    assert safe_text(3).plain == "3"


def test_text_never_parsed_as_markup_by_print() -> None:
    plain, _ = render(safe_text(f"{REASON} {ITALIC}"))
    assert f"{REASON} {ITALIC}" in plain


def _row(**kw: Any) -> dict[str, Any]:
    row = {"bench": "copy/memcpy", "param": 64, "status": "ok", "unit": "ref-cycles", "per_op": 12.5,
           "ci_low": 12.4, "ci_high": 12.6, "min": 12.1, "rcv": 0.01, "cycles_per_op": 18.25,
           "cycles_ci_low": 18.0, "cycles_ci_high": 18.5, "ns_per_op": 6.1, "n_samples": 40, "outliers": 0}
    row.update(kw)
    return row


HOSTILE_ROWS = [
    _row(bench="crash/msr", status="crashed", reason=REASON, per_op=None),
    _row(bench=NAME, status="failed", reason=ITALIC),
    _row(bench="esc/osc", status="failed", reason=OSC),
    _row(bench="esc/csi", variant=CSI, status="ok"),
    _row(bench=ITALIC, status="invalid", reason="verify failed"),
]


@pytest.mark.parametrize("width", [200, 80])
def test_results_table_prints_data_literally(width: int) -> None:
    plain, raw = render(report.results_table(HOSTILE_ROWS, title=f"run #1 · {NAME}"), width)
    assert_literal(plain, raw)
    for s in ("crash/msr", "esc/osc", "\\x1b[31mred"):
        assert s in plain, s


def test_results_table_too_narrow_still_safe() -> None:
    plain, raw = render(report.results_table(HOSTILE_ROWS), 40)  # cells fold; nothing raw reaches the terminal
    assert "\x1b" not in plain and OSC not in raw and "\x07" not in raw and "…" not in plain


def test_results_table_wide_and_net() -> None:
    plain, raw = render(report.results_table(HOSTILE_ROWS, net=True, wide=True))
    assert "net per op" in plain and "cycles~ net" in plain
    assert_literal(plain, raw)


def test_print_results_to_a_console() -> None:
    buf = io.StringIO()
    report.print_results(HOSTILE_ROWS, Console(file=buf, width=120), title=NAME)
    assert REASON in buf.getvalue() and NAME in buf.getvalue()


def _cmp(verdict: str = "faster") -> Comparison:
    return Comparison(median_a=10.0, median_b=9.0, diff=-1.0, ci_low=-1.2, ci_high=-0.8, rel=-0.1, p=1e-5,
                      pairs=30, margin=0.05, verdict=verdict)


def test_comparisons_print_names_and_notes_literally() -> None:
    rows = [SimpleNamespace(a=NAME, b=ITALIC, param=None, unit="cycles~", cmp=_cmp(), note=OSC),
            SimpleNamespace(a="copy/memcpy", b=NAME, param=64, unit=CSI, cmp=None, note=REASON)]
    console = Console(file=io.StringIO(), record=True, width=200, force_terminal=True)
    report.print_comparisons(rows, console, title=NAME)
    plain = console.export_text()
    assert_literal(plain, console.file.getvalue())  # type: ignore[attr-defined]
    assert "failed" in plain and "faster" in plain


def _variants(label: str = NAME, reason: str = REASON) -> list[dict[str, Any]]:
    base = {"cc": "gcc", "cflags": [], "target": None, "emulated": False, "body_bytes": 40, "text_bytes": 900}
    return [{"bench": ITALIC, "param": None, "unit": "cycles~", "variants": [
        {**base, "label": "-O2", "status": "ok", "reason": None, "per_invocation": [10.0, 10.2, 10.1]},
        {**base, "label": label, "status": "ok", "reason": None, "per_invocation": [9.0, 9.1, 9.2],
         "comparison": {"rel": -0.1, "verdict": "faster", "ci_low": -1.2, "ci_high": -0.8}},
        {**base, "label": OSC, "status": "crashed", "reason": reason, "per_invocation": []},
        {**base, "label": "qemu", "status": "ok", "reason": ITALIC, "emulated": True},
    ]}]


def test_variants_print_labels_and_reasons_literally() -> None:
    data = _variants()
    for v in data[0]["variants"]:
        v["disasm"] = [f"  401000:\tmov {NAME}", OSC]
        v["classes"] = {"total": 3}
        v["calls"] = [ITALIC]
    data[0]["variants"][0]["simulated"] = {"Ir": 3.0, "I1mr": 0.1}
    console = Console(file=io.StringIO(), record=True, width=300, force_terminal=True)  # reasons on one line
    variants_report.print_variants(data, console, run_id=3, disasm=True)
    plain = console.export_text()
    assert_literal(plain, console.file.getvalue())  # type: ignore[attr-defined]
    assert "mov [/x]" in plain


def test_simulated_and_counters_literally() -> None:
    rows = [_row(bench=NAME, status="crashed", reason=REASON),
            _row(bench=ITALIC, simulated={"events": {"Ir": 3.0}, "cache": {"I1": [32768, 8, 64]}}),
            _row(bench="esc/osc", status="failed", reason=OSC)]
    console = Console(file=io.StringIO(), record=True, width=250, force_terminal=True)
    report.print_simulated(rows, console, title=NAME)
    counted = [_row(bench=NAME, counters={"events": {"cycles": {"per_op": 3.0}, CSI: {
        "status": ITALIC}}, "derived": {}}), _row(bench=OSC, counters={"events": {"cycles": {}}})]
    report.print_counters(counted, console)
    plain = console.export_text()
    for s in (NAME, ITALIC, REASON, "\\x1b]0;pwned\\x07", "\\x1b[31mred"):
        assert s in plain, s
    assert "\x1b" not in plain and OSC not in console.file.getvalue()  # type: ignore[attr-defined]


def test_scale_table_and_chart_literally() -> None:
    s = Series(bench=NAME, param=None, mode="threads", points=[
        {"tasks": 1, "status": "ok", "total_median": 1e6, "total_min": 9e5, "total_max": 1.1e6, "speedup": 1.0,
         "efficiency": 1.0, "notes": [ITALIC]},
        {"tasks": 2, "status": "crashed", "reason": REASON, "notes": [REASON, OSC]}])
    plain, raw = render(plots.scale_table(s))
    assert_literal(plain, raw)
    chart = "\n".join(plots.text_chart([s]))
    assert NAME in chart and "\x1b" not in chart


def test_run_list_prints_names_literally(monkeypatch: pytest.MonkeyPatch) -> None:
    from cyclebench.ui import run as run

    console = Console(file=io.StringIO(), record=True, width=200, force_terminal=True)
    monkeypatch.setattr(run, "out", console)
    run.print_list([BenchInfo(name=NAME, group="x", params=(1, 2), require=ITALIC, file=f"/t/{OSC}.c", line=3,
                               has_verify=True),
                     BenchInfo(name=REASON, group="x", params=None, require=None, file="a.c", line=1,
                               has_verify=False)])
    assert_literal(console.export_text(), console.file.getvalue())  # type: ignore[attr-defined]


@pytest.mark.parametrize("low", [-138.6, None])
def test_a_min_below_zero_is_never_printed_as_a_cost(low: float | None) -> None:
    """A min below zero (stored by older versions) or none (estimators now)
    prints as '-' with a note; a real min prints as a number, with no note."""
    rows = [_row(bench="copy/nt_store", param=48, per_op=768.5, ci_low=761.0, ci_high=793.9, min=low),
            _row(bench="copy/nt_store", param=64, per_op=424.3, ci_low=423.4, ci_high=425.7, min=421.4)]
    table = report.results_table(rows, wide=True)
    plain, _ = render(table)
    line48, line64 = (next(ln for ln in plain.splitlines() if re.search(rf"nt_store\s+{p}\s", ln)) for p in (48, 64))
    head = [c.header for c in table.columns]
    cells48, cells64 = table.rows
    assert cells48[head.index("min")] == "-" and "-138" not in plain  # the min column
    assert re.search(r"\s+".join(re.escape(c) for c in cells48[:-1] if c), line48)  # printed as the cells say
    assert "no min: a batch beat the fitted fixed cost" in line48
    assert cells64[head.index("min")] == "421.4" and "no min" not in line64
