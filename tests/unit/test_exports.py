"""report/export: each format from rows made by hand (no compiler), read back by the tool it is
for — google/benchmark's compare.py, benchstat, pyperf — and by csv, a Markdown table's shape
and a 72-column limit (docs/exports.md)."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

import exporttools
from cyclebench.model import Comparison
from cyclebench.report.export import FORMATS, Export, write
from cyclebench.report.export.csvfile import COMPARISON_COLUMNS, RESULT_COLUMNS

RATE = 2.3e9  # the timer's rate (Hz): ns = ref-cycles / 2.3
RATIO = 1.3  # cycles~ per ref-cycle
GETPID = [240.0, 232.0, 250.0, 236.0, 244.0, 238.0]  # ref-cycles per op, one per runner process


def run_row(rid: int, host: str = "box") -> dict[str, Any]:
    return {"id": rid, "host": host, "cpu_model": "Test CPU @ 2.30GHz", "started_at": "2026-01-02T03:04:05.678+00:00",
            "tool_version": "0.1.0", "calibration": {"timer": "rdtsc-lfence/rdtscp", "unit": "ref-cycles",
                                                     "rate_hz": RATE},
            "env": {"cpu_info": {"logical_cpus": 4}, "kernel": {"machine": "x86_64"}}}


def timing(bench: str, per: list[float], param: int | None = None, run_id: int = 1, status: str = "ok",
           variant: str = "", scale: float = 1.0) -> dict[str, Any]:
    per = [p * scale for p in per]
    mid = sorted(per)[len(per) // 2]
    return {"run_id": run_id, "kind": "timing", "bench": bench, "param": param, "variant": variant, "status": status,
            "reason": None, "unit": "ref-cycles", "per_op": mid, "ci_low": min(per), "ci_high": max(per),
            "median": mid, "min": min(per) * 0.97, "rcv": 0.04, "ns_per_op": mid * 1e9 / RATE,
            "cycles_per_op": mid * RATIO, "cycles_ci_low": min(per) * RATIO, "cycles_ci_high": max(per) * RATIO,
            "n_samples": 60, "outliers": 0, "method": "rounds-2level",
            "line": {"processes": len(per)},
            "per_process": {"per_op": per, "cycles_per_op": [p * RATIO for p in per]}}


def results(run_id: int = 1, scale: float = 1.0) -> list[dict[str, Any]]:
    """One row of every kind and status an export meets."""
    return [
        timing("syscall/getpid", GETPID, run_id=run_id, scale=scale),
        timing("copy/memcpy", [60.0, 62.0, 61.0, 63.0, 60.5, 61.5], param=4096, run_id=run_id, scale=scale),
        {**timing("copy/rep_movsb", [90.0], param=64, run_id=run_id, scale=scale), "line": None,
         "per_process": None},  # one process
        {"run_id": run_id, "kind": "timing", "bench": "faults/segv", "param": None, "variant": "", "status": "crashed",
         "reason": "killed by SIGSEGV", "unit": None},
        {**timing("noisy/one", [10.0, 11.0, 12.0], run_id=run_id), "status": "disturbed",
         "reason": "9 of 12 batches preempted"},
        {"run_id": run_id, "kind": "simulated", "bench": "copy/memcpy", "param": 64, "variant": "", "status": "ok",
         "unit": "Ir", "per_op": 153.0, "median": 153.0, "min": 153.0,
         "simulated": {"simulated": True, "events": {"Ir": 153.0, "D1mr": 0.5, "I1mr": -0.01}}},
        {"run_id": run_id, "kind": "scaling", "bench": "contend/shared", "param": 2, "variant": "threads",
         "status": "ok", "unit": "ops/s", "median": 1.5e7 / scale, "ns_per_op": 130.0,
         "scale": {"intervals_measured": 10, "mode": "threads"}},
        {"run_id": run_id, "kind": "stat", "bench": "true/wall", "param": None, "variant": "", "status": "ok",
         "unit": "ms", "per_op": 1.2 * scale, "median": 1.2 * scale, "min": 1.1 * scale,
         "stat": {"stat": True, "metric": "wall", "values": [1.1 * scale, 1.2 * scale, 1.3 * scale], "notes": []}},
        {"run_id": run_id, "kind": "stat", "bench": "true/context-switches", "param": None, "variant": "",
         "status": "ok", "unit": "count", "per_op": 2.0, "median": 2.0,
         "stat": {"stat": True, "metric": "context-switches", "values": [2.0, 2.0, 3.0], "notes": []}},
    ]


def export(run_id: int = 1, scale: float = 1.0, **kw: Any) -> Export:
    return Export(results(run_id, scale), {run_id: run_row(run_id)}, **kw)


def getpid_ns(scale: float = 1.0) -> list[float]:
    return [p * scale * 1e9 / RATE for p in GETPID]


@dataclass
class Row:  # compare's Row (commands.compare), without importing the commands
    a: str
    b: str
    param: int | None
    unit: str
    cmp: Comparison | None
    note: str = ""
    sequential: dict[str, Any] | None = None


COMPARISONS = [
    Row("copy/rep_movsb", "copy/memcpy", 4096, "cycles~", Comparison(82.5, 61.0, -21.5, -23.0, -20.1, -0.26, 1e-6,
                                                                      40, 0.25, "faster")),
    Row("syscall/getpid", "syscall/getppid", None, "cycles~", Comparison(313.0, 314.0, 1.0, -2.0, 4.0, 0.003, 0.4,
                                                                         40, 0.25, "~"), "A differs | by process"),
    Row("a/very_long_benchmark_name_indeed", "b/another_very_long_benchmark_name", 1 << 20, "cycles~", None,
        "b/another_very_long_benchmark_name: crashed: killed by SIGSEGV " * 3),
]


# ---------------------------------------------------------------- Google Benchmark JSON
def test_gbench_repetitions_are_the_processes_in_ns_with_cycles_as_counters() -> None:
    out = write("gbench", export())
    doc = json.loads(out.text)
    assert doc["context"]["host_name"] == "box" and doc["context"]["mhz_per_cpu"] == 2300
    entries = [e for e in doc["benchmarks"] if e["run_name"] == "syscall/getpid"]
    iters = [e for e in entries if e["run_type"] == "iteration"]
    assert [e["repetition_index"] for e in iters] == list(range(6))
    assert all(e["repetitions"] == 6 and e["name"] == "syscall/getpid" for e in iters)
    assert [e["real_time"] for e in iters] == pytest.approx(getpid_ns())
    assert [e["cpu_time"] for e in iters] == pytest.approx(getpid_ns())
    assert [e["cycles_per_op"] for e in iters] == pytest.approx([p * RATIO for p in GETPID])
    assert [e["ref_cycles_per_op"] for e in iters] == pytest.approx(GETPID)
    aggs = {e["aggregate_name"]: e for e in entries if e["run_type"] == "aggregate"}
    assert set(aggs) == {"mean", "median", "stddev"} and aggs["median"]["name"] == "syscall/getpid_median"
    assert aggs["mean"]["real_time"] == pytest.approx(sum(getpid_ns()) / 6)
    assert {e["time_unit"] for e in doc["benchmarks"]} == {"ns"}  # compare.py's geomean knows no other
    names = {e["run_name"] for e in doc["benchmarks"]}
    assert names == {"syscall/getpid", "copy/memcpy/4096", "copy/rep_movsb/64", "true/wall"}
    one = [e for e in doc["benchmarks"] if e["run_name"] == "copy/rep_movsb/64"]
    assert len(one) == 1 and one[0]["repetitions"] == 1  # no processes: the one estimate, no aggregates
    wall = [e["real_time"] for e in doc["benchmarks"] if e["run_name"] == "true/wall"][:3]
    assert wall == pytest.approx([1.1e6, 1.2e6, 1.3e6])  # ms per run → ns
    notes = " ".join(out.notes)
    for left in ("faults/segv", "noisy/one", "copy/memcpy[64]", "contend/shared[2] (threads)",
                 "true/context-switches"):
        assert left in notes


def test_gbench_compare_py_reads_two_exports(tmp_path: Path) -> None:
    argv = exporttools.gbench_compare()
    a, b, diff = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "diff.json"
    a.write_text(write("gbench", export()).text)
    b.write_text(write("gbench", export(scale=1.2)).text)
    r = exporttools.run([*argv, "--no-color", "--dump_to_json", str(diff), "benchmarks", str(a), str(b)])
    assert r.returncode == 0, r.stderr
    assert "Time" in r.stdout and "CPU" in r.stdout
    for name in ("syscall/getpid", "copy/memcpy/4096", "true/wall", "OVERALL_GEOMEAN"):
        assert name in r.stdout
    report = {d["name"]: d for d in json.loads(diff.read_text())}
    getpid = report["syscall/getpid"]
    assert getpid["time_unit"] == "ns" and len(getpid["measurements"]) == 6
    assert getpid["measurements"][0]["time"] == pytest.approx(0.2)  # 20% slower, per repetition
    assert getpid["utest"]["time_pvalue"] < 0.01  # six repetitions a side, all slower
    assert report["syscall/getpid_median"]["measurements"][0]["time"] == pytest.approx(0.2)


# ---------------------------------------------------------------- Go benchmark format
def _go_lines(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line.startswith("Benchmark")]


def test_benchstat_lines_one_per_replicate_with_custom_units() -> None:
    out = write("benchstat", export())
    text = out.text
    head = text.splitlines()[:5]
    assert head[0].startswith("# cyclebench run #1 on box")
    assert head[1:] == ["goos: linux", "goarch: amd64", "pkg: cyclebench", "cpu: Test CPU @ 2.30GHz"]
    assert "Unit ops/s better=higher" in text
    lines = _go_lines(text)
    getpid = [f for f in lines if f[0] == "Benchmarksyscall/getpid"]
    assert len(getpid) == 6 and all(f[1] == "1" for f in getpid)
    values = [{u: float(v) for v, u in (pair.split(" ") for pair in f[2:])} for f in getpid]
    assert [v["cycles/op"] for v in values] == pytest.approx([p * RATIO for p in GETPID])
    assert values[0] == pytest.approx({"cycles/op": GETPID[0] * RATIO, "ns/op": getpid_ns()[0],
                                       "ref-cycles/op": GETPID[0]})
    names = {f[0] for f in lines}
    assert names == {"Benchmarksyscall/getpid", "Benchmarkcopy/memcpy/4096", "Benchmarkcopy/rep_movsb/64",
                     "Benchmarkcopy/memcpy/64", "Benchmarkcontend/shared/tasks=2/variant=threads",
                     "Benchmarktrue/wall", "Benchmarktrue/context-switches"}
    ir = next(f for f in lines if f[0] == "Benchmarkcopy/memcpy/64")
    assert "153 Ir/op" in ir and "0.5 D1mr/op" in ir
    wall = [f[2] for f in lines if f[0] == "Benchmarktrue/wall"]
    assert [float(w.split()[0]) for w in wall] == pytest.approx([1.1e-3, 1.2e-3, 1.3e-3]) and "sec/op" in wall[0]
    assert "faults/segv" in " ".join(out.notes) and "noisy/one" in " ".join(out.notes)


def test_benchstat_names_are_one_field() -> None:
    rows = [timing("odd name\twith space", [5.0, 6.0], variant="-O2 -march=native")]
    [line] = _go_lines(write("benchstat", Export(rows, {1: run_row(1)})).text)[:1]
    assert line[0] == "Benchmarkodd_name_with_space/variant=-O2_-march=native"


@pytest.fixture(scope="session")
def benchstat_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    return exporttools.benchstat(tmp_path_factory.mktemp("go"))


def test_benchstat_reads_two_exports(tmp_path: Path, benchstat_bin: str) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(write("benchstat", export()).text)
    b.write_text(write("benchstat", export(scale=1.2)).text)
    r = exporttools.run([benchstat_bin, str(a), str(b)])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for unit in ("cycles/op", "sec/op", "ref-cycles/op", "Ir/op", "ops/s"):
        assert f"│ {unit}" in out or f" {unit} " in out, unit
    assert "syscall/getpid" in out and "copy/memcpy/4096" in out
    getpid = [line for line in out.splitlines() if line.startswith("syscall/getpid")]
    assert len(getpid) >= 2 and all("+20.00%" in line and "p=0.002 n=6" in line for line in getpid[:2])


# ---------------------------------------------------------------- pyperf
def test_pyperf_runs_are_the_processes_in_seconds(tmp_path: Path) -> None:
    exporttools.pyperf_available()
    import pyperf

    out = write("pyperf", export())
    path = tmp_path / "a.json"
    path.write_text(out.text)
    suite = pyperf.BenchmarkSuite.load(str(path))
    byname = {b.get_name(): b for b in suite.get_benchmarks()}
    assert set(byname) == {"syscall/getpid", "copy/memcpy[4096]", "copy/rep_movsb[64]", "true/wall"}
    getpid = byname["syscall/getpid"]
    assert getpid.get_unit() == "second" and getpid.get_nrun() == 6
    assert list(getpid.get_values()) == pytest.approx([ns * 1e-9 for ns in getpid_ns()])
    assert byname["true/wall"].get_values() == pytest.approx((1.1e-3, 1.2e-3, 1.3e-3))
    assert suite.get_metadata()["hostname"] == "box"
    notes = " ".join(out.notes)
    assert "seconds, bytes or integers" in notes and "copy/memcpy[64]" in notes and "contend/shared" in notes


def test_pyperf_compare_to_reads_two_exports(tmp_path: Path) -> None:
    exporttools.pyperf_available()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(write("pyperf", export()).text)
    b.write_text(write("pyperf", export(scale=1.2)).text)
    r = exporttools.run([sys.executable, "-m", "pyperf", "compare_to", str(a), str(b), "--table"])
    assert r.returncode == 0, r.stderr
    getpid = next(line for line in r.stdout.splitlines() if "syscall/getpid" in line)
    assert "ns" in getpid and "1.20x slower" in getpid
    plain = exporttools.run([sys.executable, "-m", "pyperf", "compare_to", str(a), str(b)])
    assert plain.returncode == 0 and "syscall/getpid" in plain.stdout and "Mean +- std dev" in plain.stdout


def test_pyperf_leaves_out_values_it_refuses() -> None:
    rows = [timing("tiny/op", [0.4, -0.1, 0.3])]
    out = write("pyperf", Export(rows, {1: run_row(1)}))
    [bench] = json.loads(out.text)["benchmarks"]
    assert len(bench["runs"]) == 2 and "tiny/op (1 of 3)" in " ".join(out.notes)


# ---------------------------------------------------------------- several runs (replicate runs, a history)
def test_rows_of_several_runs_are_one_benchmarks_replicates() -> None:
    data = Export(results(1) + results(2, scale=1.1), {1: run_row(1), 2: run_row(2)})
    gb = json.loads(write("gbench", data).text)
    iters = [e for e in gb["benchmarks"] if e["run_name"] == "syscall/getpid" and e["run_type"] == "iteration"]
    assert len(iters) == 12 and iters[-1]["repetition_index"] == 11 and iters[0]["repetitions"] == 12
    assert gb["context"]["cyclebench_runs"] == "1,2"
    assert len([f for f in _go_lines(write("benchstat", data).text) if f[0] == "Benchmarksyscall/getpid"]) == 12
    pp = json.loads(write("pyperf", data).text)
    runs = next(b["runs"] for b in pp["benchmarks"] if b["metadata"]["name"] == "syscall/getpid")
    assert [r["metadata"]["cyclebench_run"] for r in runs] == [1] * 6 + [2] * 6


# ---------------------------------------------------------------- CSV
def test_csv_one_row_per_result_in_fixed_columns() -> None:
    text = write("csv", export()).text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == RESULT_COLUMNS and len(rows) == len(results())
    getpid = rows[0]
    src = results()[0]
    assert float(getpid["per_op"]) == src["per_op"] and float(getpid["cycles_ci_high"]) == src["cycles_ci_high"]
    assert [float(x) for x in getpid["per_process"].split()] == GETPID and getpid["processes"] == "6"
    crashed = next(r for r in rows if r["bench"] == "faults/segv")
    assert crashed["per_op"] == "" and crashed["notes"] == "crashed: killed by SIGSEGV"
    assert {r["kind"] for r in rows} == {"timing", "simulated", "scaling", "stat"}


def test_csv_of_comparisons() -> None:
    rows = list(csv.DictReader(io.StringIO(write("csv", Export(comparisons=COMPARISONS)).text)))
    assert tuple(rows[0]) == COMPARISON_COLUMNS
    assert [r["verdict"] for r in rows] == ["faster", "~", "failed"]
    assert float(rows[0]["diff"]) == -21.5 and rows[1]["note"] == "A differs | by process"


# ---------------------------------------------------------------- Markdown
def _cells(line: str) -> list[str]:
    """A GitHub table row's cells: split at pipes that are not escaped."""
    out, cur, esc = [], "", False
    for ch in line.strip()[1:-1]:
        if ch == "|" and not esc:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        esc = ch == "\\" and not esc
    return [*out, cur.strip()]


def test_markdown_table_cannot_be_broken_by_a_name() -> None:
    rows = [*results(), {**timing("weird|name `x` *y*", [5.0, 6.0]), "reason": None},
            {"run_id": 1, "kind": "timing", "bench": "x/y", "status": "failed", "reason": "line one\nline | two <b>"}]
    text = write("markdown", Export(rows, {1: run_row(1)}, title="run #1 · box", caption="a caption")).text
    lines = text.splitlines()
    assert lines[0] == "**run #1 · box**" and lines[-1] == "*a caption*"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == len(rows) + 2
    widths = {len(_cells(line)) for line in table}
    assert widths == {11}
    assert "weird\\|name \\`x\\` \\*y\\*" in text and "line one line \\| two \\<b\\>" in text
    assert table[1].startswith("|:---|---:|")


def test_markdown_of_comparisons() -> None:
    text = write("markdown", Export(comparisons=COMPARISONS)).text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert _cells(table[0])[:3] == ["A", "B", "param"] and len(table) == 5
    assert {len(_cells(line)) for line in table} == {12}
    assert "faster" in table[2] and "\\[-23.00, -20.10\\]" in table[2]  # as the console prints it


# ---------------------------------------------------------------- 72-column text
@pytest.mark.parametrize("data", [export(title="run #1 · box · Test CPU @ 2.30GHz · 2026-01-02 03:04 — a title "
                                        "long enough to wrap"),
                                  Export(comparisons=COMPARISONS, title="compare", caption="verdict only when p < "
                                         "0.002 and the CI lies outside the margin (0.25 unit or 0.5%)")],
                         ids=["results", "comparisons"])
def test_text_fits_72_columns_in_ascii_borders(data: Export) -> None:
    text = write("text", data).text
    lines = text.splitlines()
    assert max(cell_len(line) for line in lines) <= 72
    assert all(line == line.rstrip() for line in lines)
    borders = [line for line in lines if line.startswith("+")]
    assert borders and all(set(line) <= set("+-=|") for line in borders)
    names = ("syscall/getpid", "copy/memcpy", "faults/segv") if data.results else ("copy/rep_movsb", "faster")
    for name in names:
        assert name in text
    if data.comparisons:
        # the note, under its row (wrapped at the table's width: its borders left out to read it)
        assert "crashed: killed by SIGSEGV" in " ".join(" ".join(x.strip("|").split()) for x in lines)
    else:
        assert "240" in text and "ref-cycles" in text and "not shown at 72 columns" in text


def test_every_format_writes_an_empty_export() -> None:
    for fmt in FORMATS:
        out = write(fmt, Export())
        assert out.text.endswith("\n"), fmt
    with pytest.raises(ValueError, match="unknown export format"):
        write("yaml", Export())


def test_no_nan_reaches_a_json_export() -> None:
    rows = [{**timing("a/b", [1.0, 2.0]), "cycles_per_op": math.nan,
             "per_process": {"per_op": [1.0, math.nan, 2.0]}}]
    for fmt in ("gbench", "pyperf"):
        json.loads(write(fmt, Export(rows, {1: run_row(1)})).text, parse_constant=lambda c: pytest.fail(c))



def test_run_compare_and_export_share_format_and_output() -> None:
    from cyclebench.cli import all_commands
    from cyclebench.ui.options import EXPORT_FORMATS

    assert set(EXPORT_FORMATS) == {"json", *FORMATS}
    for name in ("run", "compare", "export"):
        params = {o: p for p in all_commands()[name].params for o in getattr(p, "opts", ())}
        assert {"--format", "-o", "--output", "--json"} <= set(params), name
        assert tuple(params["--format"].type.choices) == EXPORT_FORMATS, name


def test_an_output_replaced_whole_keeps_links_modes_and_devices(tmp_path: Path) -> None:
    """cyclebench.atomic: a symlinked output stays a link to the new file, an old file keeps its
    mode, a new one gets 0666 less the umask (not mkstemp's 0600), and a device is written
    through, never replaced (renaming over /dev/null would replace the node)."""
    import os
    import stat

    from cyclebench.atomic import write_atomic

    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    real.chmod(0o640)
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o640
    umask = os.umask(0o027)
    try:
        write_atomic(tmp_path / "fresh.json", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "fresh.json").stat().st_mode) == 0o640
    write_atomic(Path("/dev/null"), "nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.json", "link.json", "real.json"]


def test_csv_cells_are_never_formulas_or_terminal_controls() -> None:
    """OWASP "CSV Injection": a text cell starting with = + - @ tab or CR gets a leading quote;
    numbers, negative ones too, stay numbers; ESC and BEL are made visible as the terminal
    tables show them (report.text.visible)."""
    rows = [{**timing('=HYPERLINK("http://x","y")', [-1.5, -1.5]), "variant": "@SUM(A1)"},
            {**timing("x/\x1b]0;title\x07y", [2.0]), "variant": "-1.5", "reason": "+cmd"},
            {"run_id": 1, "kind": "timing", "bench": "\tx/tab", "status": "failed", "reason": "\rline\x1b[2J"}]
    got = list(csv.DictReader(io.StringIO(write("csv", Export(rows, {1: run_row(1)})).text)))
    assert [r["bench"] for r in got] == ["'=HYPERLINK(\"http://x\",\"y\")", "x/\\x1b]0;title\\x07y", "'\tx/tab"]
    assert [r["variant"] for r in got[:2]] == ["'@SUM(A1)", "-1.5"] and got[1]["reason"] == "'+cmd"
    assert got[0]["per_op"] == "-1.5" and got[0]["per_process"] == "-1.5 -1.5"
    assert got[2]["reason"] == "\\x0dline\\x1b[2J"
    cmp = [Row("=cmd|' /C calc'!A0", "-b", None, "cycles~", None, "\x1b[31mred")]
    (c,) = csv.DictReader(io.StringIO(write("csv", Export(comparisons=cmp)).text))
    assert (c["a"], c["b"], c["note"]) == ("'=cmd|' /C calc'!A0", "'-b", "\\x1b[31mred")


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_export_carries_a_raw_control_character(fmt: str) -> None:
    """A name, reason or note with ESC, BEL or CR reaches no export as such (JSON escapes them;
    csv, markdown and text show them as \\x1b)."""
    rows = [*results(), {**timing("x/\x1b]0;owned\x07\x1b[31mred", [5.0, 6.0]), "reason": "a\rb\x1b[2J"},
            {"run_id": 1, "kind": "timing", "bench": "x/y", "status": "crashed", "reason": "bad\x1b[2J\x07"}]
    text = write(fmt, Export(rows, {1: run_row(1)}, title="t\x1b[1m", caption="c\x07")).text
    assert [hex(ord(ch)) for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\n\t"] == []


def test_the_documents_keys_are_those_their_typed_dicts_name() -> None:
    """gbench's, pyperf's and csv's shapes (GBenchRun, PyperfSuite, CsvResult, CsvComparison)
    name every key the writers put in them, csv's in the columns' order."""
    from typing import get_type_hints

    from cyclebench.report.export import csvfile, gbench, pyperf

    def keys(td: Any) -> set[str]:
        return set(get_type_hints(td))

    g = json.loads(write("gbench", export()).text)
    assert set(g) == keys(gbench.GBenchRun) and set(g["context"]) <= keys(gbench.GBenchContext)
    assert {"host_name", "mhz_per_cpu", "cyclebench_runs"} <= set(g["context"])
    assert set().union(*map(set, g["benchmarks"])) == keys(gbench.GBenchBenchmark) - {"ticks_per_op", "ns_per_op"}
    p = json.loads(write("pyperf", export()).text)
    assert set(p) == keys(pyperf.PyperfSuite) and set(p["metadata"]) == keys(pyperf.PyperfSuiteMetadata)
    for b in p["benchmarks"]:
        assert set(b) == keys(pyperf.PyperfBenchmark) and set(b["metadata"]) == keys(pyperf.PyperfBenchmarkMetadata)
        assert all(set(r) == keys(pyperf.PyperfRun) and set(r["metadata"]) <= {"cyclebench_run"} for r in b["runs"])
    assert tuple(get_type_hints(csvfile.CsvResult)) == RESULT_COLUMNS
    assert set(get_type_hints(csvfile.CsvComparison)) == set(COMPARISON_COLUMNS)
    assert set(csvfile.comparison_record(COMPARISONS[0])) <= set(COMPARISON_COLUMNS)
