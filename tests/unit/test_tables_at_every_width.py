"""Every command's table at the widths users print it at (60, 80, 100, 200 columns): the
answer columns are all there, no number is shortened or replaced by "…", no header is cut,
names wrap only between their words, and what a narrow width left out is named under the
table. One check, applied to the table of each command (docs/architecture.md: report/).

No compiler: each table is built from fixture rows as its command builds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from cyclebench.experiments.counters import SweptEvent
from cyclebench.model import BenchInfo, Comparison, Series, TimedProfileRow
from cyclebench.report import console as report
from cyclebench.report import hosts, listing, plots, ranked
from cyclebench.report.fit import FitTable, pieces
from cyclebench.report.history import history_table
from cyclebench.report.profile import profile_table
from cyclebench.report.stat import stat_table
from cyclebench.report.variants import variants_ranked
from cyclebench.runner.profile import calls_of
from cyclebench.stats.changepoint import detect
from cyclebench.stats.profile import Probe, flat_profile
from cyclebench.stats.repetitions import Metric

from .test_report_fit import unwrap_headers

WIDTHS = (60, 80, 100, 200)


def _row(bench: str, param: int | None, per_op: float, **kw: Any) -> dict[str, Any]:
    r = {"bench": bench, "param": param, "status": "ok", "unit": "ref-cycles", "per_op": per_op,
         "ci_low": per_op * 0.99, "ci_high": per_op * 1.01, "min": per_op * 0.97, "rcv": 0.0123,
         "cycles_per_op": per_op * 1.3, "cycles_ci_low": per_op * 1.28, "cycles_ci_high": per_op * 1.32,
         "ns_per_op": per_op / 2.3, "n_samples": 40, "outliers": 0, "net_per_op": per_op - 1.2,
         "net_ci_low": per_op - 1.4, "net_ci_high": per_op - 1.0, "cycles_net": per_op * 1.3 - 1.5,
         "cycles_net_ci_low": per_op * 1.3 - 1.7, "cycles_net_ci_high": per_op * 1.3 - 1.3}
    r.update(kw)
    return r


EVENTS = {"Ir": 4103.2, "Dr": 4097.1, "Dw": 4096.0, "I1mr": 0.1, "D1mr": 64.02, "D1mw": 64.0, "ILmr": 0.1,
          "DLmr": 0.0, "Bc": 4098.0, "Bcm": 0.8, "Bi": 0.0, "Bim": 0.0}
RESULTS = [
    _row("loop/empty", None, 1.494),
    _row("copy/rep_movsb", 64, 31.87),
    _row("copy/rep_movsb", 1048576, 123456.7, outliers=9),
    _row("counter/lock_cmpxchg16b_x4", None, 18.93),
    _row("contend/unpadded_counter", 2, 1234.5),
    _row("wis/tlb_flush1", None, 98765.4) | {
        "status": "failed", "per_op": None,
        "reason": "does not link: undefined reference to 'testcase_setup' (compiler output above)"},
    _row("alloc/pool_random", 100000, 136.2, variant="alloc=jemalloc",
         line={"sched": {"policy": "SCHED_FIFO", "priority": 1}}),
]
SIMULATED = [{**r, "simulated": {"events": {k: v * (i + 1) for k, v in EVENTS.items()},
                                 "cache": {"I1": [32768, 8, 64], "D1": [32768, 8, 64], "LL": [8388608, 16, 64]}}}
             for i, r in enumerate(RESULTS[:5])] + [RESULTS[5]]
COUNTED = [{**r, "counters": {
    "events": {"task-clock": {"per_op": r["per_op"] / 2.3}, "context-switches": {"per_op": 0.00012},
               "page-faults": {"per_op": 0.0}, "instructions": {"status": "not supported"}},
    "derived": {"IPC": 2.81}}} for r in RESULTS[1:5]]


def _cmp(a: float, b: float, verdict: str, note: str = "") -> SimpleNamespace:
    lo, hi = (b - a) * 1.1, (b - a) * 0.9
    return SimpleNamespace(a="copy/rep_movsb", b="copy/memcpy_avx2_nontemporal", param=4096, unit="cycles~",
                           note=note, cmp=Comparison(median_a=a, median_b=b, diff=b - a, ci_low=min(lo, hi),
                                                     ci_high=max(lo, hi), rel=(b - a) / a, p=2.5e-5, pairs=30,
                                                     margin=0.05, verdict=verdict))


COMPARISONS = [_cmp(123.45, 98.765, "faster"), _cmp(300.1, 301.2, "slower", "wide CI on B, 3/40 outliers"),
               _cmp(1234567.0, 1234570.0, "equivalent"),
               SimpleNamespace(a="syscall/getpid", b="wis/tlb_flush1", param=None, unit="cycles~", cmp=None,
                               note="wis/tlb_flush1: crashed: SIGSEGV")]
SEQUENTIAL = [SimpleNamespace(**vars(c), sequential={"equivalence": 0.01, "alpha": 0.002}) for c in COMPARISONS]

VARIANT_BASE = {"cc": "gcc", "cflags": [], "target": None, "emulated": False, "body_bytes": 412, "text_bytes": 16384}
VARIANTS = {"bench": "icache/calls1024x8", "param": None, "unit": "cycles~", "variants": [
    {**VARIANT_BASE, "label": "-O2 -falign-functions=1", "status": "ok", "reason": None, "baseline": True,
     "mean": 24383.0, "stddev_pct": 0.89, "ci_low": 24200.0, "ci_high": 24500.0, "best": 24100.0,
     "simulated": {**EVENTS, "I1mr": 1797.0}, "counters": {"task-clock": 10601.2},
     "size": {"text": 103026, "data": 600, "bss": 8, "dec": 103090}},
    {**VARIANT_BASE, "label": "-O2 -falign-functions=64", "status": "ok", "reason": None, "mean": 24558.0,
     "stddev_pct": 0.45, "ci_low": 24400.0, "ci_high": 24700.0, "best": 24301.0,
     "simulated": {**EVENTS, "I1mr": 2124.0}, "counters": {"task-clock": 10677.9},
     "size": {"text": 156514, "data": 600, "bss": 8, "dec": 156578},
     "comparison": {"rel": 0.0062, "verdict": "~", "ci_low": -20.0, "ci_high": 300.0}},
    {**VARIANT_BASE, "label": "-Os", "status": "crashed", "reason": "killed by SIGSEGV", "counters": {},
     "size": {"text": 103001, "data": 600, "bss": 8, "dec": 103065}}]}

SCALE = Series(bench="contend/unpadded_counter", param=None, mode="threads", points=[
    {"tasks": t, "status": "ok", "total_median": 1.15e7 * t * 0.9, "total_min": 1.1e7 * t * 0.9,
     "total_max": 1.2e7 * t * 0.9, "speedup": 0.9 * t, "efficiency": 0.9, "cpu_efficiency": 0.95,
     "task_min": 1.0e7, "task_median": 1.03e7, "task_max": 1.05e7, "fairness": 0.98, "ns_per_op": 86.9,
     "wait_pct": 1.0, "notes": ["oversubscribed: 3 tasks on 2 CPUs"] if t == 3 else []} for t in (1, 2, 3)])

METRICS = [Metric("task-clock", "msec", [512.3, 498.1, 505.5, 510.0, 502.2]),
           Metric("context-switches", "count", [12.0, 15.0, 9.0, 30.0, 11.0], notes=["repetition 4 did other work"]),
           Metric("cycles", "count", [None] * 5, status="not supported", reason="no PMU exposed (a VM)"),
           Metric("instructions per cycle", "", [2.1] * 5, status="derived")]

HISTORY_X = [300.1, 300.4, 299.8, 300.2, 300.3, 312.5, 312.8, 312.2, 312.9, 312.4]
HISTORY_POINTS = [{"run": 100 + i, "started_at": f"2026-11-{10 + i:02d}T12:00:00", "estimate": x,
                   "ci_low": x - 0.4, "ci_high": x + 0.4, "labels": {"kernel": "6.1.0-27-amd64", "rev": f"a1b2c{i}"}}
                  for i, x in enumerate(HISTORY_X)]

RUNS = [{"id": 1000 + i, "started_at": "2026-11-25 16:39:04", "status": "complete",
         "labels": {"kernel": "6.1.0-27", "side": "b"}, "host": "lab-epyc-9654-07.example.org",
         "cpu_model": "AMD EPYC 9654 96-Core Processor", "cpu": 1,
         "command": ["cyclebench", "run", "-b", "copy/*", "--target-ci", "0.5", "--label", "side=b"]}
        for i in range(3)]


def _profile_rows() -> list[TimedProfileRow]:
    def ev(ph: str, ts_us: float, name: str) -> dict[str, Any]:
        return {"ph": ph, "ts": ts_us, "name": name, "tid": 1, "pid": 1}

    events, t = [ev("B", 0, "main")], 0.0
    for _ in range(3):
        t += 1
        events.append(ev("B", t / 1000, "outer_function_with_a_long_name"))
        events += [ev("B", (t + 150) / 1000, "leaf"), ev("E", (t + 270) / 1000, "leaf")]
        t += 900
        events.append(ev("E", t / 1000, "outer_function_with_a_long_name"))
    events.append(ev("E", (t + 1) / 1000, "main"))
    rows = flat_profile(calls_of(events), 1.0, Probe(inner_lo=110, inner_hi=130, outer=150))
    return [dataclasses.replace(r, ir_self=3001.0) for r in rows]


BENCHES = [BenchInfo("copy/memcpy", "copy", (16, 64, 256, 1024, 4096, 65536, 1048576), None, "copy.c", 41, True),
           BenchInfo("counter/lock_cmpxchg16b_x4", "counter", None, "cx16", "counter.c", 212, True),
           BenchInfo("timer/rdtscp", "timer", None, "rdtscp", "timer.c", 30, False)]
CASES = [SimpleNamespace(name="wis/tlb_flush1", path="tests/will-it-scale/tests/tlb_flush1.c",
                         description="TLB flush of a private mapping (madvise MADV_DONTNEED)"),
         SimpleNamespace(name="wis/getppid1", path="tests/will-it-scale/tests/getppid1.c", description="getppid")]
EVENT_LIST = [("generic", SimpleNamespace(name="task-clock", encoding="software:0x1"), None),
              ("generic", SimpleNamespace(name="cycles", encoding="hardware:0x0"),
               "perf_event_open: No such file or directory (no PMU exposed here)"),
              ("amd64_fam19h_zen4", SimpleNamespace(name="amd64_fam19h_zen4::RETIRED_INSTRUCTIONS",
                                                    encoding="raw:0xc0"), None)]
SWEEP = [SweptEvent("amd64_fam19h_zen4::RETIRED_INSTRUCTIONS", "raw:0x00c0", True, None, 300.12),
         SweptEvent("amd64_fam19h_zen4::RETIRED_BRANCH_INSTRUCTIONS", "raw:0x00c2", True, None, 1.0)]
HOST_ROWS = [hosts.HostRow("syscall/getpid", None, "", {
    "lab-xeon-8480": hosts.HostCell(352.5, 2.1, "cycles~", 3),
    "lab-epyc-9654": hosts.HostCell(379.2, 9.9, "cycles~", 3)}),
    hosts.HostRow("copy/rep_movsb", 1048576, "", {
        "lab-xeon-8480": hosts.HostCell(123456.7, 120.0, "cycles~", 3),
        "lab-epyc-9654": hosts.HostCell(98765.4, None, "ref-cycles", 1)})]
RANKED = [ranked.RankedSide("run #12 (kernel=6.1)", 352.5, 2.1, 349.0, True, rel=0.0, verdict=None, note=""),
          ranked.RankedSide("run #13 (kernel=6.6)", 379.2, 9.9, 371.2, False, rel=0.0757, verdict="slower",
                            note="3 runs")]

TABLES: dict[str, Callable[[], FitTable]] = {
    "run": lambda: report.results_table(RESULTS, title="run #1 · CPU 1 · gcc 12.2.0"),
    "run --net": lambda: report.results_table(RESULTS, title="run #1", net=True),
    "run --runs (run-to-run sd)": lambda: report.results_table(
        [{**r, "run_to_run": {"sd": 0.43, "df": 4}} for r in RESULTS], title="run #1"),
    "run --backend callgrind": lambda: report.simulated_table(SIMULATED, title="run #2 · simulated (callgrind)"),
    "run -e (counters)": lambda: report.counters_table(COUNTED),  # type: ignore[return-value]
    "compare": lambda: report.comparisons_table(COMPARISONS, title="run #3"),
    "compare (sequential)": lambda: report.comparisons_table(SEQUENTIAL, title="run #3"),
    "compare RUN RUN": lambda: report.comparisons_table(COMPARISONS, title="run #1 vs run #2 (stored runs)"),
    "compare --by host": lambda: hosts.hosts_table(["lab-xeon-8480", "lab-epyc-9654"], HOST_ROWS,
                                                   {"lab-xeon-8480": "Intel Xeon", "lab-epyc-9654": "AMD EPYC"}),
    "compare N runs (ranked)": lambda: ranked.ranked_table("syscall/getpid", "cycles~", RANKED),
    "variants": lambda: variants_ranked(VARIANTS, run_id=4),
    "variants --sort I1mr": lambda: variants_ranked(VARIANTS, sort="I1mr", run_id=4),
    "variants --sort text": lambda: variants_ranked(VARIANTS, sort="text", run_id=4),
    "counters list": lambda: listing.events_table(EVENT_LIST, "counter events"),
    "counters sweep": lambda: listing.sweep_table(SWEEP, "counter/plain_add: events per op", raw=True),
    "scale": lambda: plots.scale_table(SCALE),
    "stat": lambda: stat_table(METRICS, title="stat #9 · 'ls -R /usr/include' · 5 repetitions"),
    "history": lambda: history_table("syscall/getpid on lab-epyc-9654", HISTORY_POINTS, detect(HISTORY_X),
                                     "cycles~"),
    "runs": lambda: listing.runs_table(RUNS),
    "profile": lambda: profile_table(_profile_rows(), "cycles~", "profile of ./prog"),
    "profile --backend callgrind": lambda: profile_table(_profile_rows(), "Ir", "profile of ./prog", simulated=True),
    "run --list": lambda: listing.bench_list_table(BENCHES),
    "scale --list (will-it-scale)": lambda: listing.cases_table(CASES),
}


def render(table: FitTable, width: int) -> str:
    console = Console(record=True, width=width, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    console.file.close()
    return console.export_text()


def header_block(table: FitTable, width: int) -> str:
    """The headers as printed, without title and caption, each header's wrapped words joined."""
    title, caption = table.title, table.caption
    table.title = table.caption = None
    try:
        text = render(table, width)
    finally:
        table.title, table.caption = title, caption
    lines = text.splitlines()
    rule = next((i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) == {"─"}), None)
    if rule is None:  # a record a row: each header on its own line
        return text
    return unwrap_headers(lines[:rule])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(TABLES))
def test_every_table_keeps_its_answer_whole(name: str, width: int) -> None:
    table = TABLES[name]()
    text = render(table, width)
    flat = " ".join(text.split())
    lay = table.layout(Console(width=width), width)
    answer = [i for i, c in enumerate(table.columns) if c.priority == 0 and not c.notes]
    assert "…" not in text, text  # nothing elided: no cell, no header
    above = {i for i, c in enumerate(table.columns) if c.fold is not None} if lay.names_above else set()
    assert set(answer) <= set(lay.shown) | above, (name, width)
    assert all(table.columns[i].priority > 0 for i, c in enumerate(table.columns) if c.header in lay.dropped
               and i not in lay.shown)
    if not lay.records:
        assert max(cell_len(ln) for ln in text.splitlines()) <= width, text
    heads = header_block(table, width)
    for i in answer:  # a record, or a name above its row, has a line of its own: no header there
        if not (lay.records and table.columns[i].heading) and i not in above:
            assert table.columns[i].header in heads, (name, width, table.columns[i].header, heads)
    for row in table.rows:
        for i in [*lay.shown, *sorted(above)]:
            col, cell = table.columns[i], row[i]
            if col.notes or not cell:
                continue
            if col.fold is None:  # a number (or a short word): printed whole, on one line
                assert cell in text, (name, width, col.header, cell, text)
            else:  # a name: wrapped, if at all, between its words
                for piece in pieces(cell):
                    assert piece.strip() in text, (name, width, piece, text)
    if lay.dropped:
        assert f"not shown at {width} columns: {', '.join(lay.dropped)} (--wide" in flat, text
    else:
        assert "not shown at" not in flat


@pytest.mark.parametrize("name", list(TABLES))
def test_wide_keeps_every_column_at_200(name: str) -> None:
    table = TABLES[name]()
    table.wide = True
    text = render(table, 200)
    lay = table.layout(Console(width=200), 200)
    assert not lay.dropped and "not shown at" not in text
    assert len(lay.shown) + (lay.notes_under or not any(c.notes for c in table.columns)) >= len(table.columns)


def test_a_soft_wrapping_console_prints_every_column_at_its_natural_width() -> None:
    """A pipe or a file without COLUMNS (ui/common): every column, lines as long as they
    need, notes beside their rows."""
    table = report.results_table(RESULTS, title="run #1")
    console = Console(record=True, width=80, soft_wrap=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    text = console.export_text()
    assert "not shown" not in text and max(len(ln) for ln in text.splitlines()) > 80
    head = " ".join(text.split("─")[0].split())
    for h in ("min", "rCV", "ns/op", "notes"):
        assert h in head, h
    assert "does not link: undefined reference to 'testcase_setup' (compiler output above)" in text
    captioned = report.results_table([{**r, "run_to_run": {"sd": 0.43, "df": 4}} for r in RESULTS])
    console = Console(record=True, width=80, soft_wrap=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(captioned)
    said = " ".join(console.export_text().split())
    assert "pooled over its replicate groups (cycles~ where there are cycles~; the csv's run_to_run_sd)" in said
