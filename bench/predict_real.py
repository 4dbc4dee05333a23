#!/usr/bin/env python3
"""Predictions on real code beside what it measures (docs/method.md §12, "Real code"): lz4's block
compression and decompression (tests/data/lz4_bench.c), xxHash's XXH32 and XXH64 and zlib's crc32
(tests/data/hash_bench.c, linked with Debian's libz), each `run --predict`, printed as the
Markdown table of §12 — measured cycles~, llvm-mca's figure and its ratio, the resource bound,
OSACA's figure, its ratio and the share of the op's instructions it priced (block by block it
leaves out the blocks it has no data for), how it was priced (one loop, or block by block), the
share llvm-mca priced, and callgrind's mispredicted branches per op (what no throughput model
prices).

    .venv/bin/python bench/predict_real.py [--cpu N] [--min-time 0.2]

Figures, not pass/fail: the host's load moves the cycles~; say it with them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FILES = ((DATA / "lz4_bench.c", ["-b", "lz4/*"]), (DATA / "hash_bench.c", ["-b", "hash/*", "--ldflags", "-lz"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    ap.add_argument("--min-time", type=float, default=0.2)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="cb-real-") as tmp:
        env = {**os.environ, "CYCLEBENCH_DB": f"sqlite:///{tmp}/real.db"}
        load = os.getloadavg()[0]
        for src, args in FILES:
            out = Path(tmp) / "run.json"
            r = subprocess.run([sys.executable, "-m", "cyclebench", "run", str(src), *args, "--cpu", str(a.cpu),
                                "--min-time", str(a.min_time), "--predict", "--json", str(out)],
                               capture_output=True, text=True, env=env)
            if r.returncode != 0:
                raise SystemExit(f"{src.name}: {r.stderr.strip()}")
            data = json.loads(out.read_text())
            measured = {x["bench"]: x.get("cycles_per_op") for x in data["results"]}
            by = {(p["bench"], p["tool"]): p for p in data.get("predictions") or []}
            for (bench, tool), p in by.items():
                if tool != "llvm-mca" or bench == "loop/empty":
                    continue
                d = p.get("detail") or {}
                totals = d.get("block_totals") or {}
                events = totals.get("events") or {}
                meas, pred = measured.get(bench), p.get("cycles_per_op")
                thr = totals.get("throughput_per_op")
                if thr is None and p.get("throughput") is not None:
                    thr = p["throughput"] * (p.get("trips_per_op") or 1)
                o = by.get((bench, "OSACA")) or {}
                opred = o.get("cycles_per_op")
                rows.append((bench, meas, pred, None if not (meas and pred) else pred / meas, thr,
                             "blocks" if d.get("blocks") else "one loop", p.get("coverage"),
                             None if not events else events.get("Bcm", 0) + events.get("Bim", 0),
                             opred, None if not (meas and opred) else opred / meas, o.get("coverage"),
                             o.get("mcpu")))
        load_after = os.getloadavg()[0]

    def f(x: float | None, pat: str = "{:,.0f}") -> str:
        return "-" if x is None else pat.format(x)

    print("| benchmark | cycles~ | llvm-mca | ×meas | resource bound | OSACA | ×meas | OSACA covered | priced "
          "| covered | mispredicted/op |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for bench, meas, pred, ratio, thr, how, cov, bm, opred, oratio, ocov, arch in rows:
        print(f"| `{bench}` | {f(meas)} | {f(pred)} | {f(ratio, '{:.2f}')} | {f(thr)} | {f(opred)} | "
              f"{f(oratio, '{:.2f}')} | {f(None if ocov is None else 100 * ocov, '{:.0f}%')} ({arch or '-'}) | {how} | "
              f"{f(None if cov is None else 100 * cov, '{:.0f}%')} | {f(bm)} |")
    print(f"\nload average {load:.2f} before, {load_after:.2f} after; CPU {a.cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
