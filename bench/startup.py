"""How fast the command line starts: figures, not pass/fail.

    .venv/bin/python bench/startup.py [--repeat 10]

Prints the median and the range over ``--repeat`` runs of ``cyclebench --help`` and of
``cyclebench runs`` on a database of 100 stored runs (made once, in a temporary directory),
beside ``python3 -c pass`` (the interpreter's own start, which no import order can remove).
Goal: --help ≤ 0.25 s, runs ≤ 0.4 s (median). The host's load moves every figure, the
interpreter's too: compare the rows of one invocation, not figures across days.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CB = [sys.executable, "-m", "cyclebench"]


def timed(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        out.append(time.perf_counter() - t0)
    return out


def fill(db: Path, runs: int = 100) -> None:
    """``runs`` complete runs of a few results each, written through the store (no measuring)."""
    from cyclebench.store import Store

    store = Store(f"sqlite:///{db}")
    for i in range(runs):
        rid = store.begin_run(command=["cyclebench", "run"], host="bench-host", cpu_model="bench CPU",
                              labels={"i": str(i)})
        for b in ("syscall/getpid", "copy/memcpy", "loop/empty"):
            store.add_result(rid, {"bench": b, "status": "ok", "unit": "ref-cycles", "per_op": 100.0 + i,
                                   "ci_low": 99.0 + i, "ci_high": 101.0 + i})
        store.finish_run(rid, "complete")
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.db"
        fill(db)
        rows = [("python3 -c pass", timed([sys.executable, "-c", "pass"], args.repeat)),
                ("cyclebench --help", timed([*CB, "--help"], args.repeat)),
                ("cyclebench runs (100 runs)", timed([*CB, "runs", "--db", f"sqlite:///{db}", "-n", "100"],
                                                     args.repeat))]
    print(f"{'command':<28} {'median s':>9} {'min–max s':>13}   ({args.repeat} runs each)")
    for name, t in rows:
        print(f"{name:<28} {statistics.median(t):9.3f} {min(t):6.3f}–{max(t):.3f}")


if __name__ == "__main__":
    main()
