"""model.Result's typed parts (what was measured, what the analysis added) and store/rows.py, the
one place they become the results table's ``extra`` JSON column and back: a record of every kind,
with every part set, comes back equal from the database and from a run file; the column holds
the keys it held before the parts existed, in the same order; and every row of a database an
earlier cyclebench wrote (tests/data/compat) reads into parts that give back its column as it is."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields, replace
from pathlib import Path

import pytest
from tests import compat

from cyclebench.model import (
    EMULATED,
    PROFILE,
    SCALING,
    SIMULATED,
    STAT,
    TIMING,
    Result,
    SimulatedProfileRow,
    TimedProfileRow,
)
from cyclebench.store import Store, runfile
from cyclebench.store.rows import ADDED, MEASURED, READ, extra_of, result_of, row_of
from cyclebench.store.schema import results

# What the analysis adds, every one of them set (values as JSON gives them back: lists, not tuples,
# but for per_invocation, which a record holds as a tuple).
ADDED_PARTS: dict[str, object] = {
    "disturbance": {"batches": 160, "disturbed": 150, "preempted": 150, "migrated": 0},
    "per_process": {"per_op": [10.0, 10.5, 9.5], "cycles_per_op": [30.0, 31.5, 28.5]},
    "calibration_rse": 0.0012,
    "counters": {"events": {"instructions": {"status": "counted", "per_op": 12.0, "ci_low": 11.9, "ci_high": 12.1},
                            "cycles": {"status": "not counted: no PMU"}},
                 "derived": {"IPC": 0.4}},
    "allocator": {"name": "jemalloc", "library": "/usr/lib/libjemalloc.so.2", "version": "5.3.0"},
    "partial": "2 of 3 processes",
    "per_invocation": (10.1, 10.4),
    "revision": "0123456789abcdef0123456789abcdef01234567",
    "run_to_run": {"sd": 0.43, "df": 4},
}
LINE = {"type": "result", "bench": "sum/simple", "param": 64, "sched": {"policy": "SCHED_OTHER", "priority": 0},
        "timer": "rdtsc", "unit": "ref-cycles", "n_base": 64, "rounds": 12, "ladder": 8, "seed": 7,
        "timer_overhead": {"min": 20, "median": 22}, "disturb_source": "nivcsw+run_delay", "cpu": 3,
        "chain": {"kind": "add", "adds": 300, "add_ticks": [240, 241]}, "chains": [{"kind": "add", "adds": 300}],
        "verified": True, "reason": None, "pmu_error": "no PMU", "processes": 3, "process_rounds": [4, 4, 4],
        "invocations": 2}
INTERVAL = {"type": "interval", "i": 0, "t": 0.1, "dt": 0.1, "ticks": 200000, "warmup": False, "deltas": [400]}


def records() -> list[Result]:
    """One record of every kind (two of profile: timed and simulated), each with its measured part
    and every part the analysis adds: together, every typed field of Result set."""
    base = {"status": "ok", "variant": "", "created_at": "2025-01-01T00:00:00.000+00:00"}
    return [
        Result(kind=TIMING, bench="sum/simple", param=64, unit="ref-cycles", per_op=10.0, line=LINE, **base,
               **ADDED_PARTS),  # type: ignore[arg-type]
        Result(kind=TIMING, bench="wis/getppid", unit="ref-cycles", per_op=500.0, calibration_rse=0.002,
               wis={"tasks": 1, "mode": "threads", "processes": 2, "interval": 0.1, "ops_per_s": 2e6,
                    "wait_pct": 0.5, "description": "getppid(2) loop", "cpu": 1, "intervals": [[INTERVAL], [INTERVAL]],
                    "cycles_source": "add chain timed on CPU 1 before and after each run, not during it",
                    "chain_clock": [[1.25, 1.25], [1.25, None]], "cycles_doubtful": "the clock moved",
                    "file": "/tmp/getppid.c"}, **base),  # type: ignore[arg-type]
        Result(kind=TIMING, bench="BM_chain", unit="ns", per_op=100.7, gbench={
            "executable": "/tmp/bench_chain", "library_version": "1.7", "processes": 2, "cpu": 1, "min_time": 0.01,
            "iterations": [100000, 139599], "real_ns": [100.7, 100.9], "cpu_ns": [100.5, 100.6], "threads": 1,
            "figure": "cpu time (its thread's time on the CPU)",
            "user_counters": {"adds": 300.0, "items_per_second": 2.977e9}, "core_ghz": [3.1, None],
            "no_clock": "no add chain timed around it"}, **base),  # type: ignore[arg-type]
        Result(kind=SIMULATED, bench="loop/empty", unit="Ir", per_op=3.0, simulated={
            "simulated": True, "backend": "callgrind", "events": {"Ir": 3.0, "D1mr": 0.0},
            "cache": {"I1": [32768, 8, 64], "LL": [8388608, 16, 64]}, "n": [1000, 2000]}, **base),  # type: ignore[arg-type]
        Result(kind=STAT, bench="stat:true/wall", unit="ms", per_op=1.2, stat={
            "stat": True, "backend": "timing", "simulated": False, "metric": "wall", "values": [1.1, 1.2, None],
            "max": 1.3, "stddev": 0.1, "sem": 0.05, "notes": ["one note"], "derived": False, "command": ["/bin/true"],
            "different_work": [3], "repetitions": [{"type": "stat", "exit": 0, "wall_ns": 1100000, "rep": 0}],
            "exit": "exit 0 in 3/3 runs"}, **base),  # type: ignore[arg-type]
        Result(kind=SCALING, bench="contend/padded", param=2, unit="ops/s", median=1.5e7, scale={
            "tasks": 2, "mode": "threads", "cpus_used": 2, "oversubscribed": False, "intervals_total": 12,
            "intervals_measured": 10, "total_median": 1.5e7, "task_cpus": [1, 2], "sampler_cpus": None,
            "per_task": [7.4e6, 7.6e6], "speedup": 1.9, "bench_param": None, "notes": ["best of 2 attempts"],
            "start": {"type": "scale_start", "tasks": 2, "mode": "threads", "cpus": [1, 2]},
            "end": {"type": "scale_end", "intervals_done": 12, "total_ops": [10, 11], "verified": [True, None]},
            "crash": None, "intervals": [INTERVAL], "description": "a padded counter"},
               allocator=ADDED_PARTS["allocator"], **{**base, "variant": "threads:alloc=jemalloc"}),  # type: ignore[arg-type]
        Result(kind=PROFILE, bench="work", unit="cycles~", per_op=41.5, profile=TimedProfileRow(
            function="work", calls=1000, self_raw=45.0, self=41.5, self_mean=42.0, self_pm=1.5, total_raw=90.0,
            total=86.5, total_pm=3.0, comp_share=0.08, compensated=False, pct=61.2, ir_self=120.0), **base),  # type: ignore[arg-type]
        Result(kind=PROFILE, bench="main", unit="Ir", per_op=12.0, profile=SimulatedProfileRow(
            function="main", calls=1, self=12.0, total=5000.0, self_ir=12, total_ir=5000, pct=0.2), **base),  # type: ignore[arg-type]
        Result(kind=EMULATED, bench="x/sum", variant="aarch64 -O2", status="ok", unit="emulated",
               created_at=base["created_at"], emulated={"emulated": True, "verified": True}),
    ]


def test_the_records_set_every_typed_part() -> None:
    parts = {*MEASURED, *ADDED}
    assert parts == {f.name for f in fields(Result)} - {c.name for c in results.columns} - set(READ)
    assert {name for r in records() for name in parts if getattr(r, name) is not None} == parts


def _stored(tmp_path: Path, name: str) -> tuple[Store, int]:
    store = Store(f"sqlite:///{tmp_path / name}")
    return store, store.begin_run(command=["cyclebench", "run"], host="h", status="complete")


def _without_ids(r: Result) -> Result:
    return replace(r, id=None, run_id=None)


def test_every_part_round_trips_through_the_database_and_the_run_file(tmp_path: Path) -> None:
    store, rid = _stored(tmp_path, "a.db")
    given = records()
    for r in given:
        back = store.record(rid, r)
        assert back.id is not None and _without_ids(back) == r
    read = {(r.bench, r.variant): r for r in store.results(rid)}
    assert len(read) == len(given)
    for r in given:
        got = read[(r.bench, r.variant)]
        assert got.run_id == rid and _without_ids(got) == r, r.bench
        assert got.per_invocation is None or isinstance(got.per_invocation, tuple)
    # the run file: written, read back and imported into another database
    path = tmp_path / "run.json"
    runfile.dump(runfile.run_to_dict(store, rid), path)
    other, _ = _stored(tmp_path, "b.db")
    rid2 = runfile.import_run(other, runfile.load(path))
    again = {(r.bench, r.variant): r for r in other.results(rid2)}
    for r in given:
        assert _without_ids(again[(r.bench, r.variant)]) == r, r.bench
    # and the one flattening alone, through JSON text
    for r in given:
        assert result_of(json.loads(json.dumps(row_of(r)))) == r, r.bench
    store.close()
    other.close()


def test_the_column_holds_the_keys_it_always_held(tmp_path: Path) -> None:
    """A timing row's column: the runner line's keys in the runner's order, then what the analysis
    added in the order it adds it — as the record's ``extra`` dict was stored before."""
    store, rid = _stored(tmp_path, "c.db")
    timing = records()[0]
    store.add_result(rid, timing)
    (text,) = sqlite3.connect(tmp_path / "c.db").execute("SELECT extra FROM results").fetchone()
    column = json.loads(text)
    assert list(column) == [*LINE, *ADDED]
    assert column == {**LINE, **{k: list(v) if isinstance(v, tuple) else v for k, v in ADDED_PARTS.items()}}
    assert runfile.run_to_dict(store, rid)["results"][0]["extra"] == column  # the run file: the same object
    store.close()


def test_a_record_without_parts_stores_no_json() -> None:
    assert extra_of(Result(bench="a/b", status="skipped", reason="not installed")) is None
    assert row_of(Result(bench="a/b"))["extra"] is None


@pytest.fixture(scope="module")
def compat_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db, _ = compat.unpack(tmp_path_factory.mktemp("compat"))
    return db


def test_an_old_databases_rows_read_into_parts_that_give_their_column_back(compat_db: Path) -> None:
    """Every row of the database an earlier main wrote (run, callgrind, compare, variants, stat,
    scale): its column read into parts and written again is the same JSON, key for key, in order."""
    con = sqlite3.connect(compat_db)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM results ORDER BY id")]
    assert {r["kind"] for r in rows} >= {TIMING, SIMULATED, STAT, SCALING}
    for row in rows:
        stored = json.loads(row["extra"]) if row["extra"] is not None else None
        record = result_of({**row, "extra": stored})
        got = extra_of(record)
        assert got == stored and list(got or {}) == list(stored or {}), (row["id"], row["bench"])
        assert record.line is not None or row["kind"] != TIMING


def test_a_result_reads_its_figures_as_values_with_their_ci_and_unit() -> None:
    from dataclasses import replace

    from cyclebench.model import PerOp

    r = Result(bench="x", per_op=10.0, ci_low=9.0, ci_high=11.0, unit="ref-cycles", cycles_per_op=30.0,
               cycles_ci_low=29.0, cycles_ci_high=31.5, net_per_op=4.0, net_ci_low=3.0, net_ci_high=5.0)
    assert r.timer == PerOp(10.0, 9.0, 11.0, "ref-cycles") and r.timer.half == 1.0
    assert r.cycles == PerOp(30.0, 29.0, 31.5, "cycles~") and r.best == r.cycles
    assert r.net == PerOp(4.0, 3.0, 5.0, "ref-cycles")
    assert r.pmu is None and r.net_cycles is None  # no PMU here, no cycles~ net asked
    uncalibrated = replace(r, cycles_per_op=None, cycles_ci_low=None, cycles_ci_high=None)
    assert uncalibrated.best == uncalibrated.timer and uncalibrated.cycles is None
    assert replace(r, ci_low=None).timer.half is None  # type: ignore[union-attr]
    assert not {"timer", "cycles", "best"} & set(dict(r))  # figures are read, not stored: no new column


def test_run_plot_draws_cycles_where_calibrated_else_the_timer_unit(tmp_path: Path) -> None:
    """`run --plot`: one point per valid result, cycles~ with its CI where the result has it, else
    the timer's figure with its unit named; failed rows are not drawn."""
    from cyclebench.report import plots

    rows = [Result(bench="a/x", per_op=10.0, ci_low=9.0, ci_high=11.0, unit="ref-cycles", cycles_per_op=30.0,
                   cycles_ci_low=29.0, cycles_ci_high=31.0),
            Result(bench="a/y", per_op=5.0, ci_low=4.5, ci_high=5.5, unit="ns"),
            Result(bench="a/z", status="crashed", reason="SIGSEGV")]
    assert plots.plot_results(rows, tmp_path / "p.svg", title="run #1") == 2
    svg = (tmp_path / "p.svg").read_text()
    assert "a/y (ns)" in svg and "a/x (" not in svg and "a/z" not in svg
