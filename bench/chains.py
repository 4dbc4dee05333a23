"""Validation of cycles~ against known truths (docs/method.md §3): figures, not pass/fail.

    .venv/bin/python bench/chains.py [--runs 20] [--processes 3] [--sandbox]

Runs the selftest chains (reg-reg add chains of 200/300/400/800, 100 imuls = 300 cycles,
300 xors with a second register) ``--runs`` times as separate `cyclebench run`s and prints,
per chain: the mean bias in %, how many 95% CIs contain the true count, the median CI
half-width, and the run-to-run sd. Goal: coverage ≥ 90%, |bias| ≤ 0.1%. The host is
noisy (a KVM guest): say so with the figures. ``--sandbox``: every run twice in one sitting,
alternating, outside and inside the bubblewrap sandbox revisions run in (runner/sandbox.py,
docs/revisions.md), a table for each: the sandbox must move neither cycles~ nor the CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np

TRUTH = {"selftest/add200": 200, "selftest/add300": 300, "selftest/add400": 400, "selftest/add800": 800,
         "selftest/imul100": 300, "selftest/xor300": 300}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--db", help="keep the runs in this database (default: a temporary one)")
    ap.add_argument("--sandbox", action="store_true", help="each run also inside the revisions' sandbox, alternating")
    a = ap.parse_args()
    src = str(resources.files("cyclebench") / "suite" / "selftest" / "chains.c")
    places = ["outside", "inside"] if a.sandbox else ["outside"]
    got: dict[str, dict[str, list[tuple[float, float, float]]]] = {p: {b: [] for b in TRUTH} for p in places}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            for place in places:
                out = Path(tmp) / f"{i}-{place}.json"
                argv = [sys.executable, "-m", "cyclebench", "run", src, "--cpu", a.cpu, "-q", "--processes",
                        str(a.processes), "--db", a.db or f"sqlite:///{tmp}/c.db", "--json", str(out)]
                for b in TRUTH:
                    argv += ["-b", b]
                if place == "inside":  # the whole command in the room a revision's runner gets
                    from cyclebench.build.compile import cache_root
                    from cyclebench.runner.sandbox import Sandbox

                    python = Path(sys.executable).resolve().parents[1]  # pyenv's lives under $HOME
                    argv = [*Sandbox(writable=(Path(tmp), cache_root()), readable=(python,),
                                     hidden=(Path.home(),)).prefix(), *argv]
                r = subprocess.run(argv, capture_output=True, text=True, check=False)
                if r.returncode != 0:
                    raise SystemExit(f"run failed ({place}): {r.stderr.strip()}")
                for row in json.loads(out.read_text())["results"]:
                    if row["bench"] in TRUTH and row.get("cycles_per_op") is not None:
                        got[place][row["bench"]].append((row["cycles_per_op"], row["cycles_ci_low"],
                                                         row["cycles_ci_high"]))
            print(f"run {i + 1}/{a.runs}", file=sys.stderr)
    for place in places:
        if a.sandbox:
            print(f"\n{place} the sandbox")
        table(got[place])


def table(got: dict[str, list[tuple[float, float, float]]]) -> None:
    print(f"{'chain':18} {'truth':>6} {'mean':>9} {'bias %':>8} {'covered':>8} {'±CI med':>8} {'sd runs':>8}")
    for b, rows in got.items():
        x = np.array(rows)
        t = TRUTH[b]
        cov = int(np.sum((x[:, 1] <= t) & (t <= x[:, 2])))
        print(f"{b:18} {t:6} {x[:, 0].mean():9.2f} {100 * (x[:, 0].mean() / t - 1):+8.3f} "
              f"{cov:>4}/{len(x):<3} {np.median((x[:, 2] - x[:, 1]) / 2):8.2f} {x[:, 0].std(ddof=1):8.2f}")


if __name__ == "__main__":
    main()
