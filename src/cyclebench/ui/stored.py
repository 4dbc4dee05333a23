"""`cyclebench compare RUN RUN...` and `compare --by host`: stored runs compared (the design:
experiments/stored.py), their errors as one line; with more than two sides the ranked table per
benchmark (report/ranked.py); by host, one column per host (report/hosts.py): without run ids each
host's newest complete run is its side, several runs of one host are averaged (the ± is their sd,
else the run's own CI)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import click

from cyclebench.experiments.comparison import CompareError, Row
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.stored import host_rows, host_sides
from cyclebench.experiments.stored import judge_stored as judge
from cyclebench.report import hosts as report
from cyclebench.report.ranked import ranked_table
from cyclebench.report.text import safe_text
from cyclebench.ui.common import UserError, err, open_store, out, write_text
from cyclebench.ui.options import OutputOptions

if TYPE_CHECKING:
    from cyclebench.store import Store


def judge_stored(targets: Sequence[str], store: Store, baseline: str | None, alpha: float, include_disturbed: bool,
                 wide: bool, quiet_table: bool) -> tuple[list[Row], str]:
    """`compare RUN RUN …` / `gN gM`: every side's stored results judged against the first (or
    ``baseline``); with more than two sides, the ranked table (report.ranked) per benchmark (not when
    stdout carries an export: ``quiet_table``). What of a side was not compared, and why, is a
    note line each on stderr. Returns (rows, the table's title); UserError (exit 2) for what the
    user can fix: a run or group not stored, a run given twice, a baseline not among the sides,
    nothing comparable."""
    try:
        judged = judge(targets, store, baseline, alpha, include_disturbed)
    except (CompareError, ExperimentError) as e:
        raise UserError(str(e)) from None
    for line in judged.left_out:  # never silently dropped: each side left out of a benchmark is named
        err.print(safe_text(f"cyclebench: note: {line}"), highlight=False, soft_wrap=True)
    if len(judged.sides) > 2 and not quiet_table:  # every side on one line per benchmark, ranked
        for r in judged.ranked:
            out.print(ranked_table(r.label + ("" if r.param is None else f" [{r.param}]"), r.unit, r.sides,
                                   wide=wide))
    return list(judged.rows), judged.title


class ByHost(Protocol):
    """What `compare --by host` reads of compare's options."""

    targets: tuple[str, ...]
    label_args: tuple[str, ...]
    output: OutputOptions
    db: str | None
    wide: bool
    json_path: Path | None


def compare_by_host(a: ByHost) -> None:
    """The table on stdout, each host's runs on stderr, with ``--json`` the hosts and rows as
    JSON. click.UsageError: targets that are not run ids, an export format or labels asked;
    UserError (exit 2): a run not stored, fewer than two hosts, no valid result."""
    if not all(t.isdigit() for t in a.targets):
        raise click.UsageError("compare --by host takes stored run ids (or none: each host's newest run)")
    if a.output.asked or a.label_args:
        raise click.UsageError("compare --by host measures nothing and exports no format: use --json FILE")
    store, run_ids, wide, json_path = open_store(a.db, create=False), [int(t) for t in a.targets], a.wide, a.json_path
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
