#!/usr/bin/env python3
"""How small a difference `cyclebench compare` finds here (a validation script, not a test).

Known effects: chains of 300 + k dependent adds cost exactly k more core cycles than 300
(selftest_chains.c). For each k in {1, 2, 3, 5} the pair (add300, add300+k) is compared
`--reps` times exactly as `cyclebench compare` does (rounds over 4 runner processes,
batches alternating ABBA in each, per-round cycles~ slopes on one clock per round,
Wilcoxon + CI bootstrapped over processes + margin, α = 0.002), and the
power is the fraction of repetitions that report "slower". A/A (add300 vs itself) gives
the false-positive rate. Prints the smallest k detected with ≥ 95% power.

Usage: .venv/bin/python bench/detect.py [--reps 40] [--repeat 60] [--min-time 0.2] [--processes 4] [--cpu N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

import numpy as np

from cyclebench.build import BuildSpec, build
from cyclebench.env import sysinfo
from cyclebench.model import OK
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.ab import paired

DELTAS = (1, 2, 3, 5)


def compare_once(runner: Runner, a: str, b: str, opts: MeasureOptions, processes: int) -> tuple[str, float]:
    (oa, ob), procs = interleave.measure(runner, [(a, None), (b, None)], opts, processes)
    if oa.status != OK or ob.status != OK:
        raise SystemExit(f"{a}/{b}: {oa.status} {ob.status}: {oa.reason or ob.reason}")
    ra, rb = clock.shared_round_ratio([oa.result or {}, ob.result or {}])  # one clock per round, as compare
    ca, _ = clock.round_costs(oa.result or {}, ra)
    cb, _ = clock.round_costs(ob.result or {}, rb)
    ok = np.isfinite(ca) & np.isfinite(cb)
    c = paired(ca[ok], cb[ok], groups=procs[ok] if len(procs) == len(ok) else None)
    return c.verdict, c.diff


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=60, help="rounds per comparison (as `compare --repeat`)")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--processes", type=int, default=4, help="runner processes per comparison (as `compare`)")
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    src = Path(str(resources.files("cyclebench") / "selftest_chains.c"))
    cpu = args.cpu if args.cpu is not None else sysinfo.choose_cpu()
    runner = Runner(build(BuildSpec(sources=(src,), werror=True)).path, cpu)
    opts = MeasureOptions(min_time=args.min_time, repeat=args.repeat, warmup=0.005)
    t0 = time.monotonic()
    model = (sysinfo.cpu_info().get("model_name") or "?").strip()
    print(f"CPU: {model} · CPU {cpu} · {args.reps} repetitions per row · {args.repeat} rounds per comparison "
          f"over {len(interleave.split(args.repeat, args.processes))} processes")
    print(f"{'pair':<22} {'true Δ':>7} {'reported slower':>16} {'power/FP':>9} {'median Δ':>9}")
    result = {"cpu_model": model, "reps": args.reps, "repeat": args.repeat, "rows": []}
    smallest = None
    for k in (0, *DELTAS):
        b = f"selftest/add{300 + k}"
        verdicts, diffs = [], []
        for _ in range(args.reps):
            v, d = compare_once(runner, "selftest/add300", b, opts, args.processes)
            verdicts.append(v)
            diffs.append(d)
        hits = sum(v == "slower" for v in verdicts) if k else sum(v != "~" for v in verdicts)
        rate = hits / args.reps
        label = "A/A (false positives)" if k == 0 else f"add300 vs add{300 + k}"
        print(f"{label:<22} {k:>7} {hits:>10}/{args.reps:<5} {100 * rate:>8.1f}% {np.median(diffs):>9.3f}")
        result["rows"].append({"k": k, "hits": hits, "rate": rate, "median_diff": float(np.median(diffs))})
        if k and rate >= 0.95 and smallest is None:
            smallest = k
    took = time.monotonic() - t0
    print(f"smallest difference found with ≥ 95% power: "
          f"{f'{smallest} cycle(s) on a 300-cycle operation' if smallest else 'none of ' + str(DELTAS)}"
          f" · {took:.0f} s")
    result.update(smallest=smallest, seconds=took)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
