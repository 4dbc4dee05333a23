"""Validation of cycles~ against known truths (docs/method.md §3): figures, not pass/fail.

    .venv/bin/python bench/chains.py [--runs 20] [--processes 3] [--sandbox] [--beside quiet,busy,neighbour]

Runs the selftest chains (reg-reg add chains of 200/300/400/800, 100 imuls = 300 cycles,
300 xors with a second register; on x86-64 also 300 shifts, 100 crc32 = 300 and 100 FMAs = 400
cycles, tabled apart) ``--runs`` times as separate `cyclebench run`s and prints,
per chain: the mean bias in %, how many 95% CIs contain the true count, the median CI
half-width, and the run-to-run sd; beside them the same for Student's t interval over the run's
processes (``t_interval``), the alternative docs/method.md §6 weighs (``--processes`` sets how
many: more, shorter processes for the same rounds). Goal: coverage ≥ 90%, |bias| ≤ 0.1%. The host is
noisy (a KVM guest): say so with the figures. ``--sandbox``: every run twice in one sitting,
alternating, outside and inside the bubblewrap sandbox revisions run in (runner/sandbox.py,
docs/revisions.md), a table for each: the sandbox must move neither cycles~ nor the CI.
``--beside``: conditions taken in turn within every run, a table each — ``quiet`` (nothing
added), bench/ci_gate.py's noisy ``neighbour``, or one of its parts alone (``busy``: a loop on
the other CPU; ``bursts``: 5 ms in every 50 on the measured CPU; ``writer``: fsync'd writes).
Under each table: the share of all CIs that held their truth with its Wilson 95% interval
(scipy's ``binomtest(...).proportion_ci``).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
from ci_gate import NEIGHBOUR, neighbour
from scipy.stats import binomtest

TRUTH = {"selftest/add200": 200, "selftest/add300": 300, "selftest/add400": 400, "selftest/add800": 800,
         "selftest/imul100": 300, "selftest/xor300": 300}
# Truths beyond the selftest's, x86-64 only (suite/selftest/chains.c, docs/references.md): 300 shifts
# by 1, 100 crc32 of 3 cycles, 100 scalar FMAs of 4 cycles on their accumulator. Tabled apart.
MORE = {"selftest/shl300": 300, "selftest/crc100": 300, "selftest/fma100": 400} if platform.machine() == "x86_64" \
    else {}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--db", help="keep the runs in this database (default: a temporary one)")
    ap.add_argument("--sandbox", action="store_true", help="each run also inside the revisions' sandbox, alternating")
    ap.add_argument("--beside", default="quiet",
                    help="conditions taken in turn each run, comma-separated: quiet, neighbour," + ",".join(NEIGHBOUR))
    a = ap.parse_args()
    src = str(resources.files("cyclebench") / "suite" / "selftest" / "chains.c")
    beside = a.beside.split(",")
    if bad := [b for b in beside if b not in ("quiet", "neighbour", *NEIGHBOUR)]:
        raise SystemExit(f"--beside: unknown condition {bad[0]!r}")
    places = [f"{b}/{p}" for b in beside for p in (["outside", "inside"] if a.sandbox else ["outside"])]
    chains = {**TRUTH, **MORE}
    got: dict[str, dict[str, list[tuple[float, ...]]]] = {p: {b: [] for b in chains} for p in places}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            for place in places:
                out = Path(tmp) / f"{i}-{place.replace('/', '-')}.json"
                argv = [sys.executable, "-m", "cyclebench", "run", src, "--cpu", a.cpu, "-q", "--processes",
                        str(a.processes), "--db", a.db or f"sqlite:///{tmp}/c.db", "--json", str(out)]
                for b in chains:
                    argv += ["-b", b]
                if place.endswith("/inside"):  # the whole command in the room a revision's runner gets
                    from cyclebench.build.compile import cache_root
                    from cyclebench.runner.sandbox import Sandbox

                    python = Path(sys.executable).resolve().parents[1]  # pyenv's lives under $HOME
                    argv = [*Sandbox(writable=(Path(tmp), cache_root()), readable=(python,),
                                     hidden=(Path.home(),)).prefix(), *argv]
                cond = place.split("/")[0]
                parts = () if cond == "quiet" else NEIGHBOUR if cond == "neighbour" else (cond,)
                with neighbour(int(a.cpu), False, parts):
                    r = subprocess.run(argv, capture_output=True, text=True, check=False)
                if r.returncode != 0:
                    raise SystemExit(f"run failed ({place}): {r.stderr.strip()}")
                for row in json.loads(out.read_text())["results"]:
                    if row["bench"] in chains and row.get("cycles_per_op") is not None:
                        got[place][row["bench"]].append((row["cycles_per_op"], row["cycles_ci_low"],
                                                         row["cycles_ci_high"], *t_interval(row)))
            print(f"run {i + 1}/{a.runs}", file=sys.stderr)
    for place in places:
        if len(places) > 1:
            cond, where = place.split("/")
            print(f"\n{cond}" + (f", {where} the sandbox" if a.sandbox else ""))
        table({b: r for b, r in got[place].items() if b in TRUTH}, TRUTH)
        if MORE:
            print("beyond the selftest's chains:")
            table({b: r for b, r in got[place].items() if b in MORE}, MORE)


def t_interval(row: dict) -> tuple[float, float]:
    """The alternative to the tool's interval that docs/method.md §6 weighs: Student's t over the
    run's processes (their own cycles~ medians, ``per_process``: k − 1 degrees of freedom), the
    calibration's relative uncertainty added in quadrature as the tool adds it; (nan, nan) with
    fewer than two processes."""
    from scipy.stats import t as student

    per = ((row.get("extra") or {}).get("per_process") or {}).get("cycles_per_op") or []
    if len(per) < 2:
        return float("nan"), float("nan")
    x = np.asarray(per, dtype=float)
    m, k = float(x.mean()), len(x)
    half = float(student.ppf(0.975, k - 1) * x.std(ddof=1) / np.sqrt(k))
    rse = float((row.get("extra") or {}).get("calibration_rse") or 0.0)
    half = float(np.hypot(half, 1.96 * m * rse))
    return m - half, m + half


def table(got: dict[str, list[tuple[float, ...]]], truth: dict[str, int]) -> None:
    print(f"{'chain':18} {'truth':>6} {'mean':>9} {'bias %':>8} {'covered':>8} {'±CI med':>8} {'sd runs':>8} "
          f"{'t covered':>10} {'±t med':>7}")
    for b, rows in got.items():
        if not rows:  # its CB_REQUIRE gate skipped it on this CPU
            print(f"{b:18} {truth[b]:6}  skipped here")
            continue
        x = np.array(rows)
        t = truth[b]
        cov = int(np.sum((x[:, 1] <= t) & (t <= x[:, 2])))
        has_t = np.isfinite(x[:, 3])
        tcov = int(np.sum((x[has_t, 3] <= t) & (t <= x[has_t, 4])))
        twide = f"{np.median((x[has_t, 4] - x[has_t, 3]) / 2):7.2f}" if has_t.any() else f"{'-':>7}"
        print(f"{b:18} {t:6} {x[:, 0].mean():9.2f} {100 * (x[:, 0].mean() / t - 1):+8.3f} "
              f"{cov:>4}/{len(x):<3} {np.median((x[:, 2] - x[:, 1]) / 2):8.2f} {x[:, 0].std(ddof=1):8.2f} "
              f"{tcov:>5}/{int(has_t.sum()):<4} {twide}")
    held = sum(int(np.sum((np.array(r)[:, 1] <= truth[b]) & (truth[b] <= np.array(r)[:, 2])))
               for b, r in got.items() if r)
    n = sum(len(r) for r in got.values())
    if n:
        ci = binomtest(held, n).proportion_ci(method="wilson")
        print(f"covered: {held}/{n} = {100 * held / n:.1f}% (Wilson 95% [{100 * ci.low:.1f}, {100 * ci.high:.1f}])")
    rows = [(r, truth[b]) for b, rs in got.items() for r in rs if np.isfinite(r[3])]
    if rows:
        th = sum(lo <= t <= hi for (_e, _l, _h, lo, hi), t in rows)
        ci = binomtest(th, len(rows)).proportion_ci(method="wilson")
        print(f"t over processes covered: {th}/{len(rows)} = {100 * th / len(rows):.1f}% "
              f"(Wilson 95% [{100 * ci.low:.1f}, {100 * ci.high:.1f}])")


if __name__ == "__main__":
    main()
