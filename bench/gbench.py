"""Google Benchmark builds judged two ways, in one sitting: google/benchmark's compare.py (10
repetitions of each build, one build after the other, Mann–Whitney U) and `cyclebench compare
--gbench` (paired, shuffled invocations, the sequential rule), quiet and beside bench/ci_gate.py's
noisy neighbour (docs/revisions.md). Figures, not pass/fail.

    .venv/bin/python bench/gbench.py [--tries 10] [--aa 20] [--budget 3] [--cpu 1] [--conditions quiet,neighbour]

Builds tests/data/gbench_chain.cc four times with Debian's libbenchmark-dev: base (BM_chain 300
dependent adds), base again (a second build of the same source: the A/A pair), +3% (309 adds) and
+1% (303 adds). Per condition it prints, for each method: of ``--tries`` tries, how often BM_chain
was found slower at +3% and at +1%; of ``--aa`` A/A tries, how many gave a verdict (slower or
faster); the median wall time of a try. compare.py "finds" a change when the U test's time p-value
is below 0.05 and the median real time moved up; cyclebench when the verdict is "slower". Both
measure BM_chain alone (--filter / --benchmark_filter), pinned to ``--cpu`` (compare.py and its
binaries under taskset).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ci_gate import neighbour

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "gbench_chain.cc"
COMPARE_PY = Path("/usr/share/benchmark/compare.py")
BUILDS = {"base": [], "base again": [], "+3%": ["-DN=309"], "+1%": ["-DN=303"]}


def build(out: Path) -> dict[str, Path]:
    got = {}
    for name, flags in BUILDS.items():
        got[name] = out / name.replace(" ", "_").replace("%", "pct").replace("+", "plus")
        subprocess.run(["g++", "-O2", *flags, str(SOURCE), "-o", str(got[name]), "-lbenchmark", "-lpthread"],
                       check=True)
    return got


def compare_py(a: Path, b: Path, cpu: int) -> tuple[str | None, float]:
    """compare.py's reading of BM_chain: "slower", "faster" (p < 0.05) or None; and the wall time."""
    t0 = time.monotonic()
    r = subprocess.run(["taskset", "-c", str(cpu), sys.executable, str(COMPARE_PY), "--no-color", "benchmarks",
                        str(a), str(b), "--benchmark_filter=^BM_chain$", "--benchmark_repetitions=10",
                        "--benchmark_min_time=0.01"], capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    p = re.search(r"^BM_chain_pvalue\s+([\d.]+)", r.stdout, re.M)
    med = re.search(r"^BM_chain_median\s+([-+][\d.]+)", r.stdout, re.M)
    if r.returncode != 0 or p is None or med is None:
        raise SystemExit(f"compare.py: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    if float(p[1]) >= 0.05:
        return None, wall
    return ("slower" if float(med[1]) > 0 else "faster"), wall


def cyclebench(a: Path, b: Path, cpu: int, budget: float, work: Path) -> tuple[str | None, float]:
    """`compare --gbench`'s verdict on BM_chain ("slower", "faster", or None: equivalent,
    inconclusive) and the wall time."""
    out = work / "c.json"
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cyclebench", "compare", "--gbench", str(a), str(b), "--filter",
                        "^BM_chain$", "--budget", str(budget), "--cpu", str(cpu), "--json", str(out)],
                       capture_output=True, text=True, check=False,
                       env={**os.environ, "CYCLEBENCH_DB": f"sqlite:///{work / 'db.sqlite'}"})
    wall = time.monotonic() - t0
    if r.returncode not in (0, 1) or not out.is_file():
        raise SystemExit(f"cyclebench: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    rows = json.loads(out.read_text())["rows"]
    verdict = (rows[0].get("comparison") or {}).get("verdict") if rows else None
    return (verdict if verdict in ("slower", "faster") else None), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=10)
    ap.add_argument("--aa", type=int, default=20)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--conditions", default="quiet,neighbour")
    args = ap.parse_args()
    if not COMPARE_PY.is_file() or shutil.which("g++") is None:
        raise SystemExit(f"needs g++, libbenchmark-dev and {COMPARE_PY} (libbenchmark-tools)")
    with tempfile.TemporaryDirectory(prefix="cyclebench-gbench-bench-") as d:
        work = Path(d)
        bins = build(work)
        print(f"{'condition':10} {'method':12} {'+3% found':>10} {'+1% found':>10} {'A/A verdicts':>13} "
              f"{'wall/try s':>11}")
        for condition in args.conditions.split(","):
            tallies: dict[str, dict[str, list]] = {m: {"+3%": [], "+1%": [], "A/A": [], "wall": []}
                                                    for m in ("compare.py", "cyclebench")}
            with neighbour(args.cpu, condition != "neighbour"):
                plan = [("+3%", "+3%")] * args.tries + [("+1%", "+1%")] * args.tries + [("A/A", "base again")] * args.aa
                for what, head in plan:  # the two methods alternate, so the host's drift falls on both alike
                    for method in ("compare.py", "cyclebench"):
                        got, wall = (compare_py(bins["base"], bins[head], args.cpu) if method == "compare.py" else
                                     cyclebench(bins["base"], bins[head], args.cpu, args.budget, work))
                        tallies[method][what].append(got)
                        tallies[method]["wall"].append(wall)
            for method, t in tallies.items():
                found = [f"{sum(v == 'slower' for v in t[k])}/{len(t[k])}" for k in ("+3%", "+1%")]
                aa = f"{sum(v is not None for v in t['A/A'])}/{len(t['A/A'])}"
                print(f"{condition:10} {method:12} {found[0]:>10} {found[1]:>10} {aa:>13} "
                      f"{statistics.median(t['wall']):>11.1f}", flush=True)


if __name__ == "__main__":
    main()
