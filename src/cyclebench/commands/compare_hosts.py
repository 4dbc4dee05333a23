"""`cyclebench compare --by host [RUN...]`: the same benchmarks on different machines, one
column per host (as Molnar's alignment thread tabled eleven kernels on an Intel and an AMD box,
docs/references.md#icache-alignment-linux-2015), over the
shared database a fleet fills (docs/fleet.md). Without run ids each host's newest complete run is
its side; several runs of one host are averaged (the ± is their sd, else the run's own CI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from cyclebench.commands._common import UserError, err, out, write_text
from cyclebench.experiments.history import estimate_of
from cyclebench.model import OK
from cyclebench.report import hosts as report
from cyclebench.store import Store


def host_sides(store: Store, run_ids: list[int]) -> dict[str, list[dict[str, Any]]]:
    """Host name → its runs: those given, or each host's newest complete run."""
    if run_ids:
        runs = []
        for rid in run_ids:
            run = store.get_run(rid)
            if run is None:
                raise UserError(f"no run {rid} in {store.url}")
            runs.append(run)
    else:
        seen: set[str] = set()
        runs = []
        for run in store.list_runs(None):  # newest first
            name = run.get("host") or run.get("host_id") or "?"
            if run.get("status") == "complete" and name not in seen:
                seen.add(name)
                runs.append(run)
    sides: dict[str, list[dict[str, Any]]] = {}
    for run in sorted(runs, key=lambda r: r["id"]):
        sides.setdefault(str(run.get("host") or run.get("host_id") or "?"), []).append(run)
    if len(sides) < 2:
        raise UserError(f"compare --by host needs runs of two hosts or more; {store.url} has "
                        f"{len(sides)} among the runs chosen ({', '.join(sides) or 'none'})")
    return sides


def host_rows(store: Store, sides: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (benchmark, param, variant) measured validly on any host: per host its mean
    estimate, ± (sd over its runs, or the run's own 95% CI half-width), unit; '-' where absent."""
    results = store.results_of([r["id"] for side in sides.values() for r in side])
    cells: dict[tuple[Any, ...], dict[str, list[tuple[float, float | None, str]]]] = {}
    for host, side in sides.items():
        for run in side:
            for row in results[run["id"]]:
                v, unit = estimate_of(row)
                if row["status"] != OK or v is None:
                    continue
                lo, hi = ((row.get("cycles_ci_low"), row.get("cycles_ci_high")) if unit == "cycles~"
                          else (row.get("ci_low"), row.get("ci_high")))
                half = (hi - lo) / 2 if lo is not None and hi is not None else None
                key = (row["bench"], row["param"], row.get("variant") or "")
                cells.setdefault(key, {}).setdefault(host, []).append((float(v), half, unit))
    rows = []
    for (bench, param, variant), by_host in cells.items():
        row: dict[str, Any] = {"bench": bench, "param": param, "variant": variant, "hosts": {}}
        for host, vals in by_host.items():
            xs = [v for v, _, _ in vals]
            spread = float(np.std(xs, ddof=1)) if len(xs) > 1 else vals[0][1]
            row["hosts"][host] = {"mean": float(np.mean(xs)), "spread": spread, "unit": vals[0][2], "runs": len(xs)}
        rows.append(row)
    return rows


def compare_by_host(store: Store, run_ids: list[int], wide: bool, json_path: Path | None) -> None:
    sides = host_sides(store, run_ids)
    rows = host_rows(store, sides)
    if not rows:
        raise UserError("the runs chosen have no valid result")
    cpu = {h: next((r.get("cpu_model") for r in side if r.get("cpu_model")), None) for h, side in sides.items()}
    out.print(report.hosts_table(list(sides), rows, cpu, wide=wide))
    err.print("runs: " + "; ".join(f"{h} #{','.join(str(r['id']) for r in side)}" for h, side in sides.items()),
              highlight=False, soft_wrap=True)
    if json_path is not None:
        write_text(json_path, json.dumps({"hosts": {h: {"runs": [r["id"] for r in side], "cpu_model": cpu[h]}
                                                    for h, side in sides.items()}, "rows": rows}, indent=1) + "\n")
