#!/usr/bin/env python3
"""How small a difference `cyclebench compare` finds here, and how fast (a validation script,
not a test).

Known effects: chains of 300 + k dependent adds cost exactly k more core cycles than 300
(suite/selftest/chains.c). For k in {0 (A/A), 1, 30} the pair (add300, add300+k) is compared
``--reps`` times by both designs of `cyclebench compare`:
  * fixed (`--repeat 60`): rounds over 4 runner processes, Wilcoxon + CI bootstrapped over
    processes + margin, α = 0.002;
  * sequential (the default, `--budget`): processes of 10 rounds (sized as compare sizes them:
    experiments/options.Budget) looked at one by one, alpha spending, repeated CIs
    (stats/sequential.py).
Power is the fraction that report "slower"; for A/A, any verdict is a false one. The seconds
are of measuring only (the command adds its start-up: bench/startup.py). Each sequential
comparison that ends otherwise than it should (A/A not "equivalent", +k not "slower") is printed
with its looks and its processes' own median differences, to see why.

Usage: .venv/bin/python bench/detect.py [--reps 40] [--budget 2] [--cpu N] [--only fixed|sequential]
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
from cyclebench.experiments.options import Budget
from cyclebench.experiments.sequential import Sequential, measure_until_known
from cyclebench.model import OK
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock
from cyclebench.stats.ab import paired

DELTAS = (0, 1, 30)


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


def sequential_once(runner: Runner, a: str, b: str, budget: float) -> tuple[str, float, str]:
    """compare's sequential design as the command runs it: its rounds (Budget.min_time over 60,
    Budget.warmup), α 0.002, ±1% equivalence, the first look after 4 processes. Returns the
    decision, the seconds of measuring and its looks in one line (``looks_line``)."""
    opts = MeasureOptions(min_time=Budget.min_time, repeat=60, warmup=Budget.warmup)
    seq = measure_until_known(runner, [(a, None), (b, None)], opts, budget, 0.002, Budget.equivalence, 4)
    look = seq.final.get(1)
    return (look.decision if look else "failed"), seq.decided_s.get(1, seq.seconds), looks_line(seq)


def looks_line(seq: Sequential) -> str:
    """A comparison's looks, to see why one ended as it should not: each look's information
    fraction t, Δ, its SE and boundary c; then the processes' own median differences (a process
    whose rounds all lean one way shows there)."""
    looks = " ".join(f"t{lk.fraction:.2f}:Δ{lk.diff:+.2f}±{lk.se:.2f}|c{lk.boundary:.1f}"
                     for lk in seq.looks.get(1, ()))
    ra, rb = clock.shared_round_ratio([o.result or {} for o in seq.outs])
    ca, _ = clock.round_costs(seq.outs[0].result or {}, ra)
    cb, _ = clock.round_costs(seq.outs[1].result or {}, rb)
    d = cb - ca
    per = [float(np.nanmedian(d[seq.procs == p])) for p in np.unique(seq.procs)]
    return f"{looks}  per-process Δ: {' '.join(f'{x:+.2f}' for x in per)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--budget", type=float, default=2.0)
    ap.add_argument("--cpu", type=int, default=None)
    ap.add_argument("--only", choices=["fixed", "sequential"], default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    src = Path(str(resources.files("cyclebench") / "suite" / "selftest" / "chains.c"))
    cpu = args.cpu if args.cpu is not None else sysinfo.choose_cpu()
    runner = Runner(build(BuildSpec(sources=(src,), werror=True)).path, cpu)
    fixed = MeasureOptions(min_time=0.2, repeat=60, warmup=0.005)
    model = (sysinfo.cpu_info().get("model_name") or "?").strip()
    print(f"CPU: {model} · CPU {cpu} · {args.reps} repetitions per row · budget {args.budget:g} s")
    print(f"{'design':<11} {'pair':<18} {'outcomes':<44} {'power/FP':>8} {'median s':>9} {'max s':>6}")
    result: dict = {"cpu_model": model, "reps": args.reps, "budget": args.budget, "rows": []}
    for design in ("fixed", "sequential"):
        if args.only and design != args.only:
            continue
        for k in DELTAS:
            b = f"selftest/add{300 + k}"
            label = "A/A (false)" if k == 0 else f"add300 vs {300 + k}"
            outcomes, secs = [], []
            for _ in range(args.reps):
                t = time.monotonic()
                if design == "fixed":
                    v, _d = compare_once(runner, "selftest/add300", b, fixed, 4)
                    s = time.monotonic() - t
                else:
                    v, s, why = sequential_once(runner, "selftest/add300", b, args.budget)
                    if v != ("equivalent" if k == 0 else "slower"):  # the looks of each one that missed
                        print(f"  {v} ({label}): {why}", flush=True)
                outcomes.append(v)
                secs.append(s)
            hits = sum(v == "slower" for v in outcomes) if k else sum(v in ("slower", "faster") for v in outcomes)
            counts = ", ".join(f"{v} {outcomes.count(v)}" for v in sorted(set(outcomes)))
            print(f"{design:<11} {label:<18} {counts:<44} {100 * hits / args.reps:>7.1f}% "
                  f"{np.median(secs):>9.2f} {max(secs):>6.2f}", flush=True)
            result["rows"].append({"design": design, "k": k, "outcomes": outcomes, "hits": hits,
                                   "median_s": float(np.median(secs)), "max_s": float(max(secs))})
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
