"""`compare --gbench OLD NEW`: real Google Benchmark executables (Debian's libbenchmark-dev) of known
difference (tests/data/gbench_chain.cc), judged with paired, shuffled invocations and the sequential
rule of `compare --rev`."""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import DATA, cli

NO_GBENCH = (shutil.which("g++") is None or not Path(subprocess.run(
    ["g++", "-print-file-name=libbenchmark.so"], capture_output=True, text=True).stdout.strip()).is_file())
pytestmark = pytest.mark.skipif(NO_GBENCH or platform.machine() != "x86_64",
                                reason="needs g++ and libbenchmark-dev (apt-get install g++ libbenchmark-dev), x86-64")


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("gbench")
    out = {}
    for name, flags in (("old", []), ("old_again", []), ("new", ["-DN=309"]), ("extra", ["-DEXTRA"]),
                        ("broken", ["-DCRASH", "-DERROR", "-DHANG"])):
        out[name] = d / name
        subprocess.run(["g++", "-O2", *flags, str(DATA / "gbench_chain.cc"), "-o", str(out[name]), "-lbenchmark",
                        "-lpthread"], check=True)
    return out


def _compare(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "c.json"
    r = cli("compare", "--gbench", *args, "--json", str(out), "--cpu", "1")
    return r.exit_code, (json.loads(out.read_text()) if out.is_file() else {}), r.output


def _verdicts(doc: dict) -> dict[str, str | None]:
    return {row["a"].split(" @ ")[0]: (row["comparison"] or {}).get("verdict") for row in doc["rows"]}


@pytest.mark.timing
def test_three_percent_slower_is_found_and_the_unchanged_benchmark_is_not(builds: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    """BM_chain: 300 → 309 adds (+3%); BM_same: 200 in both."""
    code, doc, output = _compare(tmp_path, str(builds["old"]), str(builds["new"]), "--budget", "10")
    assert code == 0, output
    got = _verdicts(doc)
    row = next(r for r in doc["rows"] if r["a"].startswith("BM_chain"))
    cmp = row["comparison"]
    # slower; or, where the host kept the repeated CI's lower end inside the 0.5% margin until the
    # budget ended (a fresh CI: +2.95% [+0.02, +5.01] ns, inconclusive), a CI that holds +3% and
    # excludes 0 — never faster, equivalent, or a CI that misses the change
    holds = 0 < cmp["ci_low"] < 0.03 * cmp["median_a"] < cmp["ci_high"]
    same = next(r for r in doc["rows"] if r["a"].startswith("BM_same"))["comparison"]
    if got["BM_chain"] == "inconclusive" and same["ci_high"] - same["ci_low"] > 0.2 * same["median_a"]:
        # a fresh CI's sitting: the unchanged benchmark's CI ±16% over 30 pairs, the chain's ±24%
        # — whole invocations 3–45% slow; no budget of 10 s resolves 3% then, and the verdict says so
        pytest.skip(f"host too noisy to resolve 3% in 10 s: the unchanged benchmark's CI is "
                    f"[{same['ci_low']:+.1f}, {same['ci_high']:+.1f}] ns on {same['median_a']:.1f}")
    assert got["BM_chain"] == "slower" or (got["BM_chain"] == "inconclusive" and holds), output
    assert got["BM_same"] not in ("slower", "faster"), output
    assert row["unit"] == "ns" and 0.01 < cmp["rel"] < 0.05, row
    assert "items_per_second" in row["note"] and "adds" in row["note"]  # the library's counters carried through
    assert "margin 0.5% of A" in doc["design"]


@pytest.mark.timing
def test_a_build_against_itself_gives_no_verdict(builds: dict[str, Path], tmp_path: Path) -> None:
    code, doc, output = _compare(tmp_path, str(builds["old"]), str(builds["old_again"]), "--budget", "4")
    assert code == 0, output
    assert not {v for v in _verdicts(doc).values()} & {"slower", "faster"}, output


def test_the_filter_and_benchmarks_in_one_build_only(builds: dict[str, Path], tmp_path: Path) -> None:
    code, doc, output = _compare(tmp_path, str(builds["old"]), str(builds["extra"]), "--filter", "BM_s.*|BM_extra",
                                 "--budget", "0.5")
    assert code in (0, 1), output
    assert list(_verdicts(doc)) == ["BM_same"] and doc["new"] == ["BM_extra"] and doc["removed"] == []
    assert "only in extra (new): BM_extra" in output


def test_a_crash_a_hang_and_a_reported_error_are_named_not_judged(builds: dict[str, Path], tmp_path: Path) -> None:
    code, doc, output = _compare(tmp_path, str(builds["broken"]), str(builds["broken"]), "--filter",
                                 "BM_crash|BM_error|BM_hang", "--budget", "0.5", "--timeout", "1")
    assert code == 1 and "Traceback" not in output, output
    notes = {r["a"].split(" @ ")[0]: r["note"] for r in doc["rows"]}
    assert "SIGABRT" in notes["BM_crash"] and "the input file is missing" in notes["BM_error"], notes
    assert "timeout" in notes["BM_hang"] and "1 s" in notes["BM_hang"], notes


def test_bad_input_is_one_line_and_exit_2(builds: dict[str, Path], tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    cases = [([shutil.which("true") or "/bin/true", str(builds["old"])], "not a Google Benchmark executable"),
             ([str(script), str(builds["old"])], "not an executable this machine can read"),
             ([str(builds["old"]), str(tmp_path / "missing")], "no such file"),
             ([str(builds["old"]), str(builds["new"]), "--filter", "^nothing$"], "matches no benchmark"),
             ([str(builds["old"])], "two Google Benchmark executables")]
    if shutil.which("aarch64-linux-gnu-gcc"):  # another architecture's executable
        other = tmp_path / "arm"
        (tmp_path / "arm.c").write_text("int main(void) { return 0; }\n")
        subprocess.run(["aarch64-linux-gnu-gcc", str(tmp_path / "arm.c"), "-o", str(other)], check=True)
        cases.append(([str(other), str(builds["old"])], "built for aarch64"))
    for args, why in cases:
        r = cli("compare", "--gbench", *args)
        assert r.exit_code == 2 and why in r.output and "Traceback" not in r.output, (args, r.output)
        assert len(r.output.strip().splitlines()) <= 2 or r.output.startswith("Usage:"), r.output
