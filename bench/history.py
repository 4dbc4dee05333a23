"""Validation of `cyclebench history` on real runs (docs/method.md §9): figures, not pass/fail.

    .venv/bin/python bench/history.py [--before 4] [--after 4] [--extra 40]

A user benchmark doing getpid plus a chain of -D EXTRA=N reg-reg adds is run ``--before``
times with EXTRA=0, then ``--after`` times with EXTRA=N (one run each, into one database).
After every run, `history --fail-on-regression` is asked; the script prints its exit status
and, at the end, the history table and where the change point fell (it must be the first
EXTRA=N run and no other).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from cross_run import SRC, cli  # the same getpid + EXTRA reg-reg adds benchmark (bench/ is on sys.path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=int, default=4)
    ap.add_argument("--after", type=int, default=4)
    ap.add_argument("--extra", type=int, default=40)
    ap.add_argument("--cpu", default="1")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src, db, js = Path(d) / "cross.c", f"sqlite:///{d}/h.db", Path(d) / "h.json"
        src.write_text(SRC)
        first_after = None
        for i in range(a.before + a.after):
            extra = "0" if i < a.before else str(a.extra)
            r = cli("run", str(src), "-D", f"EXTRA={extra}", "--cpu", a.cpu, "-q", "--label", f"extra={extra}", db=db)
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            h = cli("history", "cross/getpid_chain", "--fail-on-regression", "--json", str(js), db=db)
            data = json.loads(js.read_text()) if h.returncode in (0, 1) and js.exists() else {}
            last = data.get("points", [{}])[-1]
            if i == a.before:
                first_after = last.get("run")
            print(f"after run {i + 1} (EXTRA={extra}): {last.get('estimate', float('nan')):.1f} {data.get('unit')}; "
                  f"history --fail-on-regression exit {h.returncode}; change points at runs "
                  f"{[c['run'] for c in data.get('changes', [])]}", flush=True)
        print(cli("history", "cross/getpid_chain", db=db).stdout)
        changes = [c["run"] for c in json.loads(js.read_text())["changes"]]
        print(f"change point(s) at run(s) {changes}; first EXTRA={a.extra} run: #{first_after} -> "
              f"{'as expected' if changes == [first_after] else 'NOT as expected'}")


if __name__ == "__main__":
    main()
