"""Validation of `cyclebench selftest`'s verdicts: figures, not pass/fail (docs/method.md §11).

    .venv/bin/python bench/selftest.py [--runs 20] [--quick] [--cpu 1] [--conditions idle,busy,calibration,timer-skip]
        [--keep DIR]

Runs the selftest ``--runs`` times in each condition and prints the tally of PASS, FAIL and
INCONCLUSIVE per condition, with the checks that ended INCONCLUSIVE or FAIL and how busy the
host was (the median of the other CPUs' busy fraction over the attempts):

* ``idle`` — nothing added (whatever else runs on the machine runs: say so with the figures);
* ``busy`` — a Python busy loop (``taskset -c OTHER python -c 'while 1: pass'``) on another CPU
  than the selftest's for each whole run, killed afterwards;
* ``neighbour`` — bench/ci_gate.py's noisy neighbour for each whole run: that busy loop, 5 ms
  bursts on the selftest's CPU and an fsync'd writer;
* ``calibration``, ``timer-skip`` — the injected faults (CYCLEBENCH_FAULT): a tool that is wrong.

Goal: idle PASS ≥ 19 of 20; busy and neighbour never FAIL; each fault FAIL 20 of 20. Beside the
tally: how many attempts the host watch counted busy because the add chain ran slower than the
imul chain beside it (a neighbour the guest cannot see; experiments/selftest.py SPLIT_MAX), and the
median of the attempts' clock splits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
from ci_gate import neighbour

CONDITIONS = ("idle", "busy", "neighbour", "calibration", "timer-skip")


def one(cpu: int, other: int, condition: str, quick: bool, out: Path) -> dict:
    env = dict(os.environ)
    env.pop("CYCLEBENCH_FAULT", None)
    if condition in ("calibration", "timer-skip"):
        env["CYCLEBENCH_FAULT"] = condition
    loop = None
    if condition == "busy":
        taskset = shutil.which("taskset")
        argv = [sys.executable, "-c", "while 1: pass"]
        loop = subprocess.Popen([taskset, "-c", str(other), *argv] if taskset else argv)
        if not taskset:
            os.sched_setaffinity(loop.pid, {other})
    try:
        argv = [sys.executable, "-m", "cyclebench", "selftest", "--cpu", str(cpu), "--json", str(out)]
        with neighbour(cpu, condition != "neighbour"):
            r = subprocess.run(argv + (["--quick"] if quick else []), env=env, capture_output=True, text=True,
                               check=False)
    finally:
        if loop is not None:
            loop.kill()
            loop.wait()
    if r.returncode not in (0, 1, 3):
        raise SystemExit(f"selftest exited {r.returncode}: {r.stderr.strip()[-500:]}")
    data = json.loads(out.read_text())
    data["exit"] = r.returncode
    return data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="selftest --quick (what the test suite runs)")
    ap.add_argument("--cpu", type=int, default=None, help="the selftest's CPU (default: the last allowed)")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--keep", type=Path, default=None,
                    help="copy the JSON of every run that did not PASS into this directory")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    cpu = a.cpu if a.cpu is not None else cpus[-1]
    others = [c for c in cpus if c != cpu]
    conditions = a.conditions.split(",")
    if ("busy" in conditions or "neighbour" in conditions) and not others:
        raise SystemExit("the busy and neighbour conditions need a second CPU")
    tally: dict[str, Counter] = {c: Counter() for c in conditions}
    spoiled: dict[str, Counter] = {c: Counter() for c in conditions}
    busy: dict[str, list[float]] = {c: [] for c in conditions}
    unseen: Counter = Counter()
    splits: dict[str, list[float]] = {c: [] for c in conditions}
    secs: dict[str, list[float]] = {c: [] for c in conditions}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            for cond in conditions:  # interleaved, so a change of the host's load hits every condition
                t0 = time.monotonic()
                d = one(cpu, others[0] if others else cpu, cond, a.quick, Path(tmp) / f"{cond}-{i}.json")
                secs[cond].append(time.monotonic() - t0)
                tally[cond][d["status"]] += 1
                if a.keep is not None and d["status"] != "PASS":
                    a.keep.mkdir(parents=True, exist_ok=True)
                    (a.keep / f"{cond}-{i}.json").write_text(json.dumps(d, indent=1))
                for c in d["checks"]:
                    if c["status"] in ("FAIL", "INCONCLUSIVE"):
                        spoiled[cond][f"{c['status']} {c['name'].split(':')[0]}"] += 1
                    busy[cond] += [h["others"] for h in c["host"]["attempts"] if h.get("others") is not None]
                    for h in c["host"]["attempts"]:
                        unseen[cond] += any("imul chain" in b for b in h.get("busy") or ())
                        if h.get("split") is not None:
                            splits[cond].append(h["split"])
                print(f"run {i + 1}/{a.runs} {cond}: {d['status']} (exit {d['exit']}, "
                      f"{secs[cond][-1]:.0f} s)", file=sys.stderr)
    load = os.getloadavg()
    print(f"selftest{' --quick' if a.quick else ''} on CPU {cpu}, {a.runs} runs a condition; "
          f"load average now {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'condition':12} {'PASS':>5} {'INCONCL':>8} {'FAIL':>5} {'others busy':>12} {'s/run':>6} "
          f"{'split':>7} {'unseen':>6}  checks not passed")
    for cond in conditions:
        t = tally[cond]
        ob = f"{100 * np.median(busy[cond]):.0f}%" if busy[cond] else "-"
        notes = ", ".join(f"{k} ×{v}" for k, v in spoiled[cond].most_common())
        sp = f"{100 * np.median(splits[cond]):+.2f}%" if splits[cond] else "-"
        print(f"{cond:12} {t['PASS']:>5} {t['INCONCLUSIVE']:>8} {t['FAIL']:>5} {ob:>12} "
              f"{np.median(secs[cond]):6.0f} {sp:>7} {unseen[cond]:>6}  {notes}")


if __name__ == "__main__":
    main()
