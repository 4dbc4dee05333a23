"""One series identity for every reader (model.series_key): a run's purpose stored and inferred,
the measurement a row is, the benchmark file's digest, and `history`'s choice of a series among a
benchmark's stored results (experiments.history.choose) with the line naming what it left out."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.history import choose
from cyclebench.model import (
    COMPARE,
    FLEET,
    PURPOSE_ENV,
    REVISION,
    RUN,
    VARIANTS,
    Point,
    Result,
    Run,
    infer_purpose,
    measurement_of,
    series_key,
    source_digest,
)
from cyclebench.store import Store


@pytest.mark.parametrize(("argv", "labels", "purpose"), [
    (["cyclebench", "run", "-b", "x"], None, RUN),
    (["cyclebench", "run", "-b", "x"], {"night": "1"}, RUN),  # a labelled run is still a run
    (["cyclebench", "bisect", "--good", "a"], None, REVISION),
    (["cyclebench", "compare", "--rev", "a", "--rev", "b"], None, REVISION),
    (["cyclebench", "compare", "--rev=a", "--rev=b"], None, REVISION),
    (["pytest", "-q"], {"bisect": "ab12", "rev": "f00", "step": "3"}, REVISION),  # labels alone tell
    (["pytest", "-q"], {"rev": "f00", "base": "ba5e"}, REVISION),
    (["cyclebench", "variants", "f.c", "--flags", "-O2"], None, VARIANTS),
    (["cyclebench", "compare", "a/x", "--allocator", "glibc,jemalloc"], None, VARIANTS),
    (["cyclebench", "compare", "a/x", "a/y"], None, COMPARE),
    (["cyclebench", "--db", "sqlite:///x", "scale", "a/x"], None, RUN),
    (None, None, RUN), ("not a list", "not a mapping", RUN),  # damaged columns
])
def test_infer_purpose(argv: object, labels: object, purpose: str) -> None:
    assert infer_purpose(argv, labels) == purpose  # type: ignore[arg-type]


def test_purpose_stored_given_inferred_and_the_fleets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Store(f"sqlite:///{tmp_path / 'p.db'}")
    given = s.begin_run(command=["pytest"], purpose=VARIANTS)
    inferred = s.begin_run(command=["cyclebench", "compare", "a/x", "a/y"])
    monkeypatch.setenv(PURPOSE_ENV, FLEET)  # a fleet's agent: its ordinary runs are the fleet's
    fleet = s.begin_run(command=["cyclebench", "run"], purpose=RUN)
    fleet_compare = s.begin_run(command=["cyclebench", "compare", "a/x", "a/y"], purpose=COMPARE)
    imported = s.insert_run({"started_at": "2026-01-01T00:00:00+00:00", "command": ["cyclebench", "run"],
                             "purpose": REVISION}, [])
    got = {r.id: r.purpose for r in s.list_runs(None)}
    assert got == {given: VARIANTS, inferred: COMPARE, fleet: FLEET, fleet_compare: COMPARE, imported: REVISION}
    s.close()


def test_measurement_of_each_kind() -> None:
    assert measurement_of(Result(kind="timing")) == "timing"
    assert measurement_of(Result(kind="timing", counters={"events": [], "derived": {}})) == "counters"  # type: ignore[typeddict-item]
    assert measurement_of(Result(kind="simulated")) == "callgrind"
    assert measurement_of(Result(kind="scaling", scale={"mode": "threads"})) == "scale threads"  # type: ignore[typeddict-item]
    assert measurement_of(Result(kind="profile")) == "profile"
    assert measurement_of({"bench": "x"}) == "timing"  # a row that does not say its kind


def test_source_digest_picks_the_benchmark_file() -> None:
    one = {"build": {"digests": {"/a/f.c": "d1"}}}
    suite = {"build": {"digests": {"/s/syscall.c": "d2", "/s/copy.c": "d3"}}}
    assert source_digest(one, "x/y") == "d1"
    assert source_digest(suite, "syscall/getpid") == "d2" and source_digest(suite, "copy/memcpy") == "d3"
    both = source_digest(suite, "other/x")
    assert both is not None and both not in ("d2", "d3")  # one digest of all: any change is a new version
    assert source_digest({"build": {"digests": {"/s/syscall.c": "dX", "/s/copy.c": "d3"}}}, "other/x") != both
    assert source_digest({"build": None}, "x/y") is None and source_digest({}, "x/y") is None


def _run(i: int, purpose: str = RUN, host: str = "h1", digest: str | None = "d1") -> Run:
    return Run(id=i, started_at=f"2026-01-{i:02d}T00:00:00+00:00", host=host, purpose=purpose,
               build={"digests": {"/f.c": digest}} if digest else None)


def _row(v: float, kind: str = "timing", unit: str = "ref-cycles") -> Result:
    return Result(bench="x/y", kind=kind, unit=unit, per_op=v, cycles_per_op=v if kind == "timing" else None)


def test_choose_prefers_ordinary_timing_and_names_what_it_left_out() -> None:
    got = [(_run(1, digest="d0"), _row(80)), (_run(2, REVISION), _row(130)), (_run(3), _row(203.2, "simulated", "Ir")),
           (_run(4, REVISION), _row(90)), (_run(5), _row(101)), (_run(6, host="h2"), _row(99)),
           (_run(7), _row(100)), (_run(8, digest=None), _row(102))]
    chosen = choose(got)
    # run 8 (no digest kept) joins the newest known version (d1); run 1 measured an earlier file (d0)
    assert [r.id for r, _ in chosen.pairs] == [5, 7, 8]
    assert chosen.key.host == "h1" and chosen.key.purpose == RUN and chosen.key.measurement == "timing"
    note = chosen.note("x/y")
    assert note is not None
    assert "2 revision runs" in note and "1 callgrind run" in note and "1 run on h2" in note
    assert "1 run of another version of the benchmark's file" in note
    assert note.endswith(": --host h2, --kind callgrind, --purpose revision")
    # asked: the callgrind series, the revisions, every purpose in one
    assert [r.id for r, _ in choose(got, measurement="callgrind").pairs] == [3]
    assert [r.id for r, _ in choose(got, REVISION).pairs] == [2, 4]
    assert [r.id for r, _ in choose(got, "all").pairs] == [2, 4, 5, 7, 8]
    with pytest.raises(ExperimentError, match=r"no run of purpose fleet .*purposes there: revision, run"):
        choose(got, FLEET)


def test_choose_falls_back_to_what_there_is() -> None:
    """A bisect's runs alone (`history --label bisect=ID`): their series, nothing left out."""
    got = [(_run(1, REVISION), _row(100)), (_run(2, REVISION), _row(104))]
    chosen = choose(got)
    assert [r.id for r, _ in chosen.pairs] == [1, 2] and chosen.note("x/y") is None


def test_series_key_reads_slim_rows() -> None:
    """The site keeps a slim row with its measurement: the same key as the whole row's."""
    from cyclebench.experiments.site.records import LightResult

    row = Result(bench="x/y", kind="simulated", unit="Ir", per_op=3.0)
    assert series_key(_run(1), LightResult.of(row)) == series_key(_run(1), row)


def test_stored_compare_sets_like_beside_like(tmp_path: Path) -> None:
    """`compare RUN RUN`: a timing result is judged against one timed with counters on the timing
    they share (the row says the counters are not compared); runs of different purposes are
    compared, and the note says they differ."""
    from cyclebench.experiments.stored import compare_runs

    s = Store(f"sqlite:///{tmp_path / 'c.db'}")
    ids = []
    for purpose, counters in ((RUN, None), (REVISION, None), (RUN, {"events": [], "derived": {}})):
        rid = s.begin_run(command=["cyclebench", "run"], purpose=purpose)
        s.add_result(rid, Result(bench="x/y", kind="timing", unit="ref-cycles", per_op=100.0, ci_low=99.0,
                                 ci_high=101.0, counters=counters))  # type: ignore[arg-type]
        s.finish_run(rid, "complete")
        ids.append(rid)
    (row,) = compare_runs(s, [[ids[0]], [ids[2]]]).rows
    assert row.cmp is not None and "also read counters" in row.note and "not compared" in row.note
    (row,) = compare_runs(s, [[ids[0]], [ids[1]]]).rows
    assert "runs differ in purpose (run, revision)" in row.note
    s.close()


def test_a_run_imported_again_is_one_point() -> None:
    """`import` of a run file already in the database makes a second run of the same measurement
    (same start, host, process and figure): one point, the copy named."""
    first = Run(id=1, started_at="2026-01-01T00:00:00+00:00", host="h1", host_id="aa", pid=7, purpose=RUN)
    again = Run(id=9, started_at="2026-01-01T00:00:00+00:00", host="h1", host_id="aa", pid=7, purpose=RUN)
    other = Run(id=2, started_at="2026-01-02T00:00:00+00:00", host="h1", host_id="aa", pid=8, purpose=RUN)
    chosen = choose([(first, _row(100)), (again, _row(100)), (other, _row(101))])
    assert [r.id for r, _ in chosen.pairs] == [1, 2]
    assert chosen.note("x/y") == "1 run imported again (the same measurement as a run in it) of x/y not in this series"


def test_stored_compare_of_simulated_counts_is_exact(tmp_path: Path) -> None:
    """Two callgrind runs: their counts are exact, so Δ is the answer (its CI printed "exact", not
    0), judged against compare's margin; history prints the same "exact"."""
    from cyclebench.experiments.history import analyse, points_from
    from cyclebench.experiments.stored import compare_runs
    from cyclebench.report.console import comparisons_table
    from cyclebench.report.history import history_table

    def plain(table: object) -> str:
        console = Console(record=True, width=200, file=io.StringIO())
        console.print(table)
        return console.export_text()

    s = Store(f"sqlite:///{tmp_path / 'c.db'}")
    ids = []
    for ir in (303.0, 310.0):
        rid = s.begin_run(command=["cyclebench", "run", "--backend", "callgrind"])
        s.add_result(rid, Result(bench="x/y", kind="simulated", unit="Ir", per_op=ir))
        s.finish_run(rid, "complete")
        ids.append(rid)
    (row,) = compare_runs(s, [[ids[0]], [ids[1]]]).rows
    assert row.cmp is not None and row.cmp.verdict == "slower" and row.cmp.diff == 7.0
    assert "simulated counts (callgrind): exact" in row.note
    text = plain(comparisons_table([row], wide=True))
    assert " exact " in text and "[+7" not in text
    pairs = [(r, x) for r in s.list_runs(None)[::-1] for x in s.results(int(r.id or 0))]
    points, unit, _, _ = points_from(pairs)
    h, _ = analyse(points, None)
    assert " exact " in plain(history_table("t", points, h, unit, wide=True))
    s.close()


def test_min_is_not_pushed_below_what_the_samples_support() -> None:
    """stats.estimators.estimate's min: a small batch whose few ticks of jitter fall on the fixed
    cost subtracted read far below the per-op cost (ticks/n); the min is over the largest batches."""
    import numpy as np

    from cyclebench.stats.estimators import estimate

    ladder = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    n = np.tile(ladder, 12)
    rng = np.random.default_rng(3)
    t = 500 + 210.8 * n + rng.normal(0, 15, len(n))  # ±15 ticks of jitter on every sample
    e = estimate(n, t, group=len(ladder))
    assert e.min is not None and e.per_op - 1 < e.min <= e.per_op, (e.min, e.per_op)
    c = (t - e.intercept) / n
    assert c.min() < e.per_op - 10  # what the smallest batches alone would have said


def test_one_run_has_no_run_to_run_sd() -> None:
    """A series of one run: the history's caption says it has no run-to-run sd instead of "0.000";
    from two runs on, the sd pooled around the levels is printed."""
    from cyclebench.report.history import history_table
    from cyclebench.stats.changepoint import detect

    def caption(xs: list[float]) -> str:
        points = [Point(run=i + 1, started_at="2026-11-28T06:00:00", labels={}, estimate=x, ci_low=x - 1,
                        ci_high=x + 1, param=None) for i, x in enumerate(xs)]
        console = Console(record=True, width=200, file=io.StringIO())
        console.print(history_table("t", points, detect(xs), "cycles~", wide=True))
        return console.export_text()

    assert detect([46.24]).sigma_source == "none" and detect([46.24, 47.0]).sigma_source == "series"
    one, two = caption([46.24]), caption([46.24, 47.0])
    assert "no series sd (one run)" in one and "sd 0.000" not in one
    assert "series sd 0.537" in two  # |46.24 − 47| / √2, pooled around one level
