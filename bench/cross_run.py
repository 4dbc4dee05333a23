"""Validation of verdicts between stored runs (docs/method.md §7): figures, not pass/fail.

    .venv/bin/python bench/cross_run.py [--trials 10] [--db sqlite:////tmp/cross.db]

1. A/A across runs: six separate `run -b syscall/getpid -b counter/lock_add`, then all 15
   pairs compared one run against one (30 comparisons): how many verdicts (goal 0).
2. A real change across runs: a user benchmark doing getpid plus a chain of -D EXTRA=N reg-reg
   adds; `run --runs 3` per side (EXTRA=0 vs EXTRA=40, about +9.5%), compared group against
   group, ``--trials`` times: how often `slower` (goal ≥ 9 of 10); and 3-vs-3 groups of
   identical builds: how many verdicts (goal ≤ 1 in 10).
3. The ± a user reads: for each of the six runs of (1), does the host's run-to-run interval
   (mean ± 1.96 sd of the other runs' spread) contain the other runs' median?

Every run goes into its own database; the host is noisy (a KVM guest): say so with the figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = r"""
#include <unistd.h>
#include <sys/syscall.h>
#include <cyclebench.h>
/* reg-reg: Golden Cove and later (Sapphire/Emerald Rapids) fold add $imm at rename */
#ifndef EXTRA
#define EXTRA 0
#endif
CB_BENCH(cross, getpid_chain) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t x = i;
        syscall(SYS_getpid);
        for (int k = 0; k < EXTRA; k++) __asm__ volatile("add %0, %0" : "+r"(x));
        __asm__ volatile("" : : "r"(x));
    }
}
"""


def cli(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cyclebench", *args, "--db", db], text=True,
                          capture_output=True, check=False)


def compare_json(db: str, *sides: str) -> list[dict]:
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        r = cli("compare", *sides, "--json", f.name, db=db)
        if r.returncode != 0:
            raise SystemExit(f"compare {sides} failed: {r.stderr.strip()}")
        return json.loads(Path(f.name).read_text())


def aa_six_runs(db: str, work: Path) -> None:
    """(1) and (3). Two replicate groups first (`run --runs 3` twice), so the host's run-to-run
    spread is known (df 4) and every single run's table shows it; the 15 pairs are then
    judged with it, as a user with a history would be."""
    benches = ["-b", "syscall/getpid", "-b", "counter/lock_add"]
    for _ in range(2):
        cli("run", *benches, "--runs", "3", "--cpu", "1", "-q", db=db)
    ids, rows = [], []
    for i in range(6):
        out = work / f"aa{i}.json"
        cli("run", *benches, "--cpu", "1", "-q", "--json", str(out), db=db)
        data = json.loads(out.read_text())
        ids.append(str(data["source"]["run_id"]))
        rows.append({r["bench"]: r for r in data["results"]})
    verdicts, total = 0, 0
    for a, b in itertools.combinations(ids, 2):
        for row in compare_json(db, a, b):
            if row["a"].startswith("loop/empty"):
                continue
            total += 1
            verdicts += (row["comparison"] or {}).get("verdict", "~") != "~"
    print(f"1. A/A, six separate runs, 15 pairs one run against one (host history: 2 groups of 3): "
          f"{verdicts} verdict(s) in {total} comparisons")
    for bench in ("syscall/getpid", "counter/lock_add"):
        est = [r[bench]["cycles_per_op"] for r in rows]
        observed = statistics.stdev(est)
        held, widths = 0, []
        for i, r in enumerate(rows):
            sd = (r[bench].get("run_to_run") or {}).get("sd")
            if sd is None:
                continue
            others = statistics.median(est[:i] + est[i + 1:])
            held += abs(others - est[i]) <= 1.96 * sd
            widths.append(sd / observed)
        print(f"3. {bench}: run ± 1.96 × shown run-to-run sd holds the other runs' median in {held}/{len(widths)}; "
              f"shown sd / observed sd of the six: {min(widths, default=float('nan')):.2f}–"
              f"{max(widths, default=float('nan')):.2f} (goal ≥ 5/6 and ≤ 3); six runs: "
              + ", ".join(f"{x:.1f}" for x in est))


def groups(db: str, trials: int, work: Path) -> None:
    src = work / "cross.c"
    src.write_text(SRC)
    found = aa = 0
    t0 = time.monotonic()
    for i in range(trials):
        ids = []
        for extra in ("0", "40", "0"):
            r = cli("run", str(src), "-D", f"EXTRA={extra}", "--runs", "3", "--cpu", "1", "-q", db=db)
            line = next((ln for ln in r.stderr.splitlines() if ln.startswith("replicate group")), None)
            if line is None:
                raise SystemExit(f"run -D EXTRA={extra} failed: {r.stderr.strip()[-500:]}")
            ids.append(line.split()[2].rstrip(":"))
        change = next(x for x in compare_json(db, ids[0], ids[1]) if x["a"].startswith("cross/"))
        same = next(x for x in compare_json(db, ids[0], ids[2]) if x["a"].startswith("cross/"))
        found += change["comparison"]["verdict"] == "slower"
        aa += same["comparison"]["verdict"] != "~"
        print(f"   trial {i + 1}: EXTRA 0→40 {change['comparison']['verdict']} "
              f"{100 * change['comparison']['rel']:+.2f}%; 0 vs 0 {same['comparison']['verdict']} "
              f"{100 * same['comparison']['rel']:+.2f}% ({change.get('note', '')})", flush=True)
    print(f"2. EXTRA=0 vs 40, 3 runs a side: slower in {found}/{trials}; identical builds 3 vs 3: {aa} verdict(s) "
          f"in {trials} ({time.monotonic() - t0:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--only", choices=["aa", "groups"], default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        if args.only in (None, "aa"):
            aa_six_runs(f"sqlite:///{work}/aa.db", work)
        if args.only in (None, "groups"):
            groups(f"sqlite:///{work}/groups.db", args.trials, work)


if __name__ == "__main__":
    main()
