"""`cyclebench compare --by host [RUN...]`: the same benchmarks on different machines, one
column per host (the design: experiments/stored.py, host_sides and host_rows; the table:
report/hosts.py). Without run ids each host's newest complete run is its side; several runs of
one host are averaged (the ± is their sd, else the run's own CI)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from cyclebench.commands._common import UserError, err, out, write_text
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.stored import host_rows, host_sides
from cyclebench.report import hosts as report
from cyclebench.store import Store


def compare_by_host(store: Store, run_ids: list[int], wide: bool, json_path: Path | None) -> None:
    """The table on stdout, each host's runs on stderr, with ``json_path`` the hosts and rows
    as JSON. UserError (exit 2): a run not stored, fewer than two hosts, no valid result."""
    try:
        sides = host_sides(store, run_ids)
    except ExperimentError as e:
        raise UserError(str(e)) from None
    rows = host_rows(store, sides)
    if not rows:
        raise UserError("the runs chosen have no valid result")
    cpu = {h: next((r.cpu_model for r in side if r.cpu_model), None) for h, side in sides.items()}
    out.print(report.hosts_table(list(sides), rows, cpu, wide=wide))
    err.print("runs: " + "; ".join(f"{h} #{','.join(str(r.id) for r in side)}" for h, side in sides.items()),
              highlight=False, soft_wrap=True)
    if json_path is not None:
        write_text(json_path, json.dumps({"hosts": {h: {"runs": [r.id for r in side], "cpu_model": cpu[h]}
                                                    for h, side in sides.items()},
                                          "rows": [asdict(r) for r in rows]}, indent=1) + "\n")
