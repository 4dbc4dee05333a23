"""`export --format F [-o FILE]` and the same options on `run` and `compare`, end to end: one
export round (two runs, each exported, the real tool compares them), stdout carrying only the
format, --json keeping its meaning, and one line for a file that cannot be written
(docs/exports.md)."""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import exporttools
from cyclebench.report.export.csvfile import COMPARISON_COLUMNS, RESULT_COLUMNS

from conftest import DATA, FAST, cli

CHAIN = ["-f", str(DATA / "chain.c")]
# six processes of five rounds a run: benchstat needs 4 samples a side for a test, 6 for a CI
SIX = ["--processes", "6", "--target-ci", "0", "--repeat", "30", "--min-time", "0.01", "--warmup", "0.002"]
RUN = ["run", *CHAIN, "-b", "chain/add200", *SIX]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database with two runs of chain/add200 (ids 1 and 2)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'results.db'}"
    for _ in range(2):
        r = cli(*RUN, "-q", "--db", url)
        assert r.exit_code == 0, r.output
    return url


def _export(url: str, run: int, fmt: str, path: Path) -> Path:
    r = cli("export", str(run), "--format", fmt, "-o", str(path), "--db", url)
    assert r.exit_code == 0, r.output
    return path


def test_export_round_google_benchmark_compare(two_runs: str, tmp_path: Path) -> None:
    argv = exporttools.gbench_compare()
    a, b = (_export(two_runs, i, "gbench", tmp_path / f"{i}.json") for i in (1, 2))
    doc = json.loads(a.read_text())
    iters = [e for e in doc["benchmarks"] if e["name"] == "chain/add200"]
    assert len(iters) == 6 and all(e["time_unit"] == "ns" and e["cycles_per_op"] > 100 for e in iters)
    r = exporttools.run([*argv, "--no-color", "benchmarks", str(a), str(b)])
    assert r.returncode == 0, r.stderr
    assert "Time" in r.stdout and "chain/add200_median" in r.stdout and "chain/add200_pvalue" in r.stdout


def test_export_round_benchstat(two_runs: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    tool = exporttools.benchstat(tmp_path_factory.mktemp("go"))
    a, b = (_export(two_runs, i, "benchstat", tmp_path / f"{i}.txt") for i in (1, 2))
    r = exporttools.run([tool, str(a), str(b)])
    assert r.returncode == 0, r.stderr
    assert "cycles/op" in r.stdout and "sec/op" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("chain/add200")]
    assert len(rows) >= 2 and all("n=6" in line for line in rows)  # one sample per process


def test_export_round_pyperf(two_runs: str, tmp_path: Path) -> None:
    exporttools.pyperf_available()
    a, b = (_export(two_runs, i, "pyperf", tmp_path / f"{i}.json") for i in (1, 2))
    r = exporttools.run([sys.executable, "-m", "pyperf", "compare_to", str(a), str(b), "--table"])
    assert r.returncode == 0, r.stderr
    assert "chain/add200" in r.stdout or "Benchmark hidden because not significant (1): chain/add200" in r.stdout
    show = exporttools.run([sys.executable, "-m", "pyperf", "show", str(a)])
    assert show.returncode == 0 and " ns" in show.stdout, show.stdout


def test_export_writes_stdout_alone_and_json_keeps_its_meaning(two_runs: str, tmp_path: Path) -> None:
    r = cli("export", "1", "--format", "csv", "--db", two_runs)
    assert r.exit_code == 0 and r.stderr == ""
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert tuple(rows[0]) == RESULT_COLUMNS and {x["bench"] for x in rows} == {"loop/empty", "chain/add200"}
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert cli("export", "1", "--json", str(old), "--db", two_runs).exit_code == 0
    assert cli("export", "1", "--format", "json", "-o", str(new), "--db", two_runs).exit_code == 0
    assert json.loads(old.read_text()) == json.loads(new.read_text())
    assert json.loads(cli("export", "1", "--db", two_runs).stdout)["format"] == "cyclebench-run"
    r = cli("export", "1", "--format", "text", "--db", two_runs)
    assert max(len(line) for line in r.stdout.splitlines()) <= 72
    # the name whole, or folded after its '/' where the answer's columns need the room (report.fit:
    # a CI cell of "-0.0054/+0.019" took the table to 73 once)
    names = [line.strip("| ").split(" ")[0] for line in r.stdout.splitlines()]
    folded = any(a == "chain/" and b == "add200" for a, b in itertools.pairwise(names))
    assert "chain/add200" in names or folded, r.stdout


def test_run_format_without_o_prints_no_table(db: str) -> None:
    r = cli(*RUN, "--format", "benchstat")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# cyclebench run #1")
    assert all(line.startswith(("#", "goos:", "goarch:", "pkg:", "cpu:", "Benchmark")) for line in lines), r.stdout
    assert sum(line.startswith("Benchmarkchain/add200\t") for line in lines) == 6
    assert "stored" in r.stderr and "timer " in r.stderr  # the notes stay, on stderr


def test_run_format_with_o_keeps_the_table(db: str, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    r = cli("run", *CHAIN, "-b", "chain/add200", *FAST, "--format", "markdown", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "chain/add200" in r.stdout and "per op" in r.stdout and "────" in r.stdout  # the console table
    assert "| chain/add200 |" in out.read_text()


def test_compare_exports_its_comparisons_or_its_measurements(db: str, tmp_path: Path) -> None:
    cmp = ["compare", "chain/add200", "chain/add400", *CHAIN, "--repeat", "20", "--min-time", "0.05"]
    r = cli(*cmp, "--format", "csv")
    assert r.exit_code == 0, r.output
    [row] = list(csv.DictReader(io.StringIO(r.stdout)))
    assert tuple(row) == COMPARISON_COLUMNS and row["a"] == "chain/add200" and row["verdict"] == "slower"
    gb = tmp_path / "cmp.json"
    r = cli("export", "--format", "gbench", "-o", str(gb))  # the compare's run: its measured results
    names = {e["run_name"] for e in json.loads(gb.read_text())["benchmarks"]}
    assert names == {"chain/add200/variant:compare", "chain/add400/variant:compare"}
    r = cli(*cmp, "--format", "benchstat", "--json", str(tmp_path / "rows.json"))
    assert r.exit_code == 0 and "Benchmarkchain/add400/variant=compare\t" in r.stdout
    assert json.loads((tmp_path / "rows.json").read_text())[0]["comparison"]["verdict"] == "slower"
    r = cli("compare", "1", "2", "--format", "gbench")
    assert r.exit_code == 2 and "compare of stored runs measures none" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [["export", "--format", "csv"], ["run", "-b", "nothing/at_all", "--format", "csv"],
                                  ["compare", "a/b", "c/d", "--format", "text"]])
def test_an_output_that_cannot_be_written_is_one_line(db: str, tmp_path: Path, argv: list[str]) -> None:
    for bad in (tmp_path / "no" / "dir.csv", tmp_path):
        r = cli(*argv, "-o", str(bad))
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith("cyclebench: error: -o/--output: cannot write") and "Traceback" not in r.output
        assert len(r.stderr.strip().splitlines()) == 1


@pytest.fixture
def full_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, full, with an old file (old.out, 'OLD') on it."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True,
                           text=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mount.stderr.strip()}")
    try:
        (mnt / "old.out").write_text("OLD\n")
        with open(mnt / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * 1024)
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.parametrize("argv", [["export", "1", "--json"], ["export", "1", "--format", "markdown", "-o"],
                                  ["run", *CHAIN, "-b", "chain/add200", *FAST, "-q", "--json"],
                                  ["gen", "icache", "-o"]])
def test_a_full_disk_leaves_the_old_file_whole(two_runs: str, full_fs: Path, argv: list[str]) -> None:
    """Written to a temporary file and renamed (cyclebench.atomic): the export does not fit, and
    the file it would have replaced is still the old one, whole."""
    target = full_fs / "old.out"
    r = cli(*argv, str(target), *(["--db", two_runs] if argv[0] != "gen" else []))
    assert r.exit_code == 2, r.output
    assert "No space left on device" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert target.read_text() == "OLD\n"
    assert sorted(p.name for p in full_fs.iterdir()) == ["filler", "old.out"]  # no temporary file left
    if argv[0] == "run":
        assert "the results are stored (run #" in r.stderr
