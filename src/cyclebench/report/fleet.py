"""The fleet's tables: a `fleet run`'s summary (one row per host) and `fleet status` (each
host's last fleet job), and the summary as JSON (`fleet run --json`; docs/fleet.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.text import Text

from cyclebench.model import CheckFinding, FleetHost, FleetHostRow, Machine
from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

STYLE = {"ok": "green", "unreachable": "red", "failed": "red", "check failed": "red", "busy": "yellow",
         "interrupted": "yellow"}


def _warns(check: Sequence[CheckFinding] | None) -> str:
    if check is None:
        return ""
    warn = [str(f.get("name")) for f in check if isinstance(f, dict) and f.get("status") == "WARN"]
    return f"{len(warn)} WARN ({', '.join(warn[:4])}{', …' if len(warn) > 4 else ''})" if warn else "OK"


def _host_cell(host: str, machine: Machine | None) -> str:
    own = machine.hostname if machine else None
    return host + (f" ({own})" if own and own != host else "")


def _runs(run_ids: Sequence[int]) -> str:
    return ", ".join(f"#{i}" for i in run_ids) or "-"


def summary_table(title: str, hosts: Sequence[FleetHost], wide: bool = False) -> FitTable:
    """One row per host of a `fleet run`: host (machine), status, the check's WARNs, runs,
    results, why."""
    table = FitTable([Column("host (machine)", justify="left", fold=24), Column("status", justify="left"),
                      Column("check", justify="left", priority=2, fold=24), Column("runs", justify="left"),
                      Column("results", priority=1), Column("why", justify="left", notes=True)],
                     title=title, title_justify="left", wide=wide)
    for h in hosts:
        table.add_row(safe_text(_host_cell(h.host, h.machine), multiline=False),
                      Text(h.status, style=STYLE.get(h.status, "")), safe_text(_warns(h.check)),
                      _runs(h.run_ids), str(h.results), safe_text(h.reason or ""))
    return table


def status_table(rows: Sequence[FleetHostRow], wide: bool = False) -> FitTable:
    """``rows``: store.fleet.last_per_host — per host its job, status, when, runs, command, why."""
    table = FitTable([Column("host", justify="left", fold=24), Column("job"), Column("status", justify="left"),
                      Column("when", justify="left"), Column("runs", justify="left"),
                      Column("command", justify="left", priority=2, fold=24),
                      Column("why", justify="left", notes=True)], title="last fleet job per host",
                     title_justify="left", wide=wide)
    for r in rows:
        table.add_row(safe_text(_host_cell(r.host, r.machine), multiline=False), f"#{r.job_id}",
                      Text(r.status, style=STYLE.get(r.status, "")), r.finished_at or "", _runs(r.run_ids),
                      safe_text(" ".join(r.command)), safe_text(r.reason or ""))
    return table


def summary_json(job_id: int, hosts: Sequence[FleetHost]) -> str:
    """`fleet run --json`: ``{"job": id, "hosts": [{host, status, reason, check, run_ids, machine,
    results}, ...]}``, indented, one trailing newline."""
    return json.dumps({"job": job_id, "hosts": [
        {"host": h.host, "status": h.status, "reason": h.reason, "check": None if h.check is None else list(h.check),
         "run_ids": list(h.run_ids), "machine": h.machine.to_json() if h.machine else None, "results": h.results}
        for h in hosts]}, indent=1) + "\n"
