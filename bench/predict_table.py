"""Measured beside predicted for the built-in suite (docs/method.md §12): figures, not pass/fail.

    .venv/bin/python bench/predict_table.py [-b GLOB ...] [-p N,...] [--mcpu CPU] [--cpu N] [--db URL]

Runs `cyclebench run --predict --json` on the built-in suite (or the -b globs) and prints, as a
markdown table, every benchmark × parameter with its measured cycles~, llvm-mca's and OSACA's
cycles per op for its hot loop (or block by block), their ratios to the measurement, the loop
trips per op, the share of the op's instructions priced (OSACA's beside it where it priced less:
it leaves out the blocks it has no data for) and what the models do not model; then the CPU and
the models used. Run it on a quiet machine (`cyclebench check`) and say in the figures' caption
whether it was.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def _fmt(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"


def _cell(p: dict[str, Any] | None) -> str:
    if p is None:
        return "–"
    if p["status"] != "ok":
        return f"({p['status']})"
    detail = p.get("detail") or {}
    return (_fmt(p["cycles_per_op"]) + ("\\*" if detail.get("not_modelled") else "")
            + ("?" if detail.get("unpriced") else ""))


def _ratio(p: dict[str, Any] | None, meas: float | None) -> str:
    if p is None or p.get("cycles_per_op") is None or not meas:
        return "–"
    return f"{p['cycles_per_op'] / meas:.2f}"


def table(data: dict[str, Any]) -> str:
    """The markdown table of one run file (run --predict --json)."""
    preds: dict[tuple[str, Any, str], dict[str, dict[str, Any]]] = {}
    for p in data.get("predictions") or []:
        preds.setdefault((p["bench"], p["param"], p.get("variant") or ""), {})[p["tool"]] = p
    lines = ["| benchmark | param | cycles~ | llvm-mca | ×meas | OSACA | ×meas | trips/op | covered | not modelled |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in data["results"]:
        key = (r["bench"], r["param"], r.get("variant") or "")
        if key not in preds:
            continue
        meas = r.get("pmu_cycles_per_op") or r.get("cycles_per_op")
        mca, osaca = preds[key].get("llvm-mca"), preds[key].get("OSACA")
        any_p = mca or osaca or {}
        trips = any_p.get("trips_per_op")
        detail = (mca or any_p).get("detail") or {}
        cov = any_p.get("coverage")
        covered = "-" if cov is None else f"{100 * cov:.0f}%" + (" b" if detail.get("blocks") else "")
        ocov = (osaca or {}).get("coverage")
        if cov is not None and ocov is not None and ocov < cov - 0.005:  # OSACA left out blocks it has no data for
            covered += f", OSACA {100 * ocov:.0f}%"
        lines.append(f"| `{r['bench']}` | {'' if r['param'] is None else r['param']} | {_fmt(meas)} | {_cell(mca)} | "
                     f"{_ratio(mca, meas)} | {_cell(osaca)} | {_ratio(osaca, meas)} | "
                     f"{'1?' if trips is None else f'{trips:g}'} | {covered} | "
                     f"{'; '.join(detail.get('not_modelled') or [])} |")
    first = next(iter(data.get("predictions") or []), None)
    if first:
        by_tool = {p["tool"]: p for p in data["predictions"] if p["status"] == "ok"}
        models = ", ".join(f"{t} {p['tool_version']} ({p['mcpu']}: {(p.get('detail') or {}).get('cpu_reason')})"
                           for t, p in by_tool.items())
        lines.append("")
        lines.append(f"{first['cpu_model']}; {models}. \\*: the loop runs what the models do not model; "
                     "?: the tool has no data for an instruction of the loop (priced 0) or, block by block, of a "
                     "block (left out: its share is in the covered column).")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--bench", action="append", default=[], help="benchmark glob (default: the suite)")
    ap.add_argument("-p", "--param", action="append", default=[])
    ap.add_argument("--mcpu", default=None)
    ap.add_argument("--cpu", default=None)
    ap.add_argument("--db", help="keep the run in this database (default: a temporary one)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        argv = [sys.executable, "-m", "cyclebench", "run", "-q", "--predict", "--json", str(out),
                "--db", a.db or f"sqlite:///{tmp}/p.db"]
        for b in a.bench:
            argv += ["-b", b]
        for p in a.param:
            argv += ["-p", p]
        if a.mcpu:
            argv += ["--mcpu", a.mcpu]
        if a.cpu:
            argv += ["--cpu", a.cpu]
        r = subprocess.run(argv, capture_output=True, text=True, check=False)
        if not out.is_file():
            raise SystemExit(f"run failed: {r.stderr.strip()[-2000:]}")
        print(table(json.loads(out.read_text())))


if __name__ == "__main__":
    main()
