"""A series holds one build of a benchmark (model.SeriesKey, model.build_of): the lab fixture's
chain/add200 runs 9–11 (--cflags -O1) are not points of the -O2 series, and the line under it
names them with the option that follows them; a compiler stays in a series and is marked where it
changes; a revision series says which commit each point is of, and calls a run of another commit
that, not an outlier. The three spreads between runs have three names (docs/method.md §9)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gallery

from cyclebench.model import Point, build_of, series_key
from cyclebench.report.history import marks
from cyclebench.stats.changepoint import detect


@pytest.fixture(scope="module")
def lab() -> Iterator[Path]:
    with gallery.lab_copy() as db:
        yield db


def _rows(out: str) -> list[int]:
    return [int(line.split()[0]) for line in out.splitlines() if line[:4].strip().isdigit()]


def test_a_series_holds_one_build_and_names_the_others(lab: Path) -> None:
    plain = gallery.invoke(["history", "chain/add200", "--wide"], lab)
    assert plain.exit_code == 0, plain.output
    assert not {9, 10, 11} & set(_rows(plain.output)), plain.output
    assert "3 runs built with -O1" in plain.output and "--build -O1" in plain.output
    o1 = gallery.invoke(["history", "chain/add200", "--build", "-O1", "--wide"], lab)
    assert o1.exit_code == 0, o1.output
    assert _rows(o1.output) == [9, 10, 11]
    bad = gallery.invoke(["history", "chain/add200", "--build", "-O3"], lab)
    assert bad.exit_code == 2 and "builds: '-O1', '-O2'" in bad.output, bad.output


def test_the_build_joins_its_flags_and_allocator() -> None:
    run = {"build": {"cflags": ["-O2"], "defines": ["N=4"], "include_dirs": ["/tmp/wt-1/lib"], "ldflags": ["x.a"]},
           "purpose": "run"}
    assert build_of(run, {"allocator": {"name": "jemalloc"}}) == "-O2 -DN=4 -Ilib x.a + jemalloc"
    # a revision's worktree is its own: the include directory counts by its name
    other = {**run, "build": {**run["build"], "include_dirs": ["/tmp/wt-2/lib"]}}
    # a revision's library is in its own worktree: by its name, one series across the revisions
    rev = {**run, "build": {**run["build"], "ldflags": ["/cache/revisions/0f75/src/x.a"]}}
    assert build_of(rev, {}) == build_of(run, {})
    assert build_of(other, {}) == build_of(run, {})
    assert build_of({"build": {"cflags": ["-O1"]}, "purpose": "variants"}, {}) is None  # the variant names it
    a = series_key(run, {"bench": "x"})
    assert a.differs(series_key({**run, "build": {"cflags": ["-O1"]}}, {"bench": "x"})) == "build"
    assert a.differs(series_key({"purpose": "run"}, {"bench": "x"})) is None  # not known: joins


def _point(i: int, est: float, compiler: str = "gcc 12", revision: str | None = None) -> Point:
    return Point(i, None, {}, est, est - 0.5, est + 0.5, None, compiler, revision)


def test_a_compiler_change_is_marked_and_a_revision_is_named() -> None:
    points = [_point(i, 100.0, "gcc 12" if i < 3 else "gcc 13") for i in range(6)]
    h = detect([p.estimate for p in points], [0.25] * 6)
    got = marks(points, h)
    assert got[3] == "compiler changed: gcc 13 (was gcc 12)" and not any(got[:3]) and not any(got[4:])
    revs = ["d0c0d22", "069bbd9", "069bbd9", "069bbd9", "cf27b68"]
    points = [_point(i, 298.7 if r == "d0c0d22" else 311.0, revision=r) for i, r in enumerate(revs)]
    h = detect([p.estimate for p in points], [0.6] * 5, outliers=False)
    assert marks(points, h) == ["", "revision 069bbd9 (was d0c0d22)", "", "", "revision cf27b68 (was 069bbd9)"]


def test_a_revision_series_is_in_commit_order_and_its_good_run_no_outlier(lab: Path) -> None:
    """The lab's lib/work: bisect's GOOD-side run of d0c0d22 (298.7 among 311s) was listed between
    two runs of 069bbd9 and left out as an outlier; by commit it is the series' first point."""
    got = gallery.invoke(["history", "lib/work"], lab)
    assert got.exit_code == 0, got.output
    assert "by commit" in got.output and "outlier" not in got.output
    assert _rows(got.output)[0] == 24 and _rows(got.output)[-1] == 22


def test_the_spreads_between_runs_have_one_name_each(lab: Path) -> None:
    history = gallery.invoke(["history", "chain/add200", "--wide"], lab).output
    stored = gallery.invoke(["compare", "g6", "g9", "--wide"], lab).output
    shown = gallery.invoke(["show", "8", "--wide"], lab).output
    assert "series sd" in history and "run-to-run sd" not in history
    assert "run-to-run sd" not in stored
    assert "sd of the runs compared" in stored or "pooled from the runs compared" in stored
    assert "replicate sd" in shown and "run-to-run sd" not in shown
