"""The fleet's tables: a `fleet run`'s summary (one row per host) and `fleet status` (each
host's last fleet job)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from cyclebench.report.fit import Column, FitTable
from cyclebench.report.text import safe_text

STYLE = {"ok": "green", "unreachable": "red", "failed": "red", "check failed": "red", "busy": "yellow",
         "interrupted": "yellow"}


def _warns(check: Any) -> str:
    if not isinstance(check, list):
        return ""
    warn = [str(f.get("name")) for f in check if isinstance(f, dict) and f.get("status") == "WARN"]
    return f"{len(warn)} WARN ({', '.join(warn[:4])}{', …' if len(warn) > 4 else ''})" if warn else "OK"


def _host_cell(row: dict[str, Any]) -> str:
    own = (row.get("machine") or {}).get("hostname")
    return str(row["host"]) + (f" ({own})" if own and own != row["host"] else "")


def summary_table(title: str, rows: Sequence[dict[str, Any]], wide: bool = False) -> FitTable:
    """``rows``: host, status, reason, check (findings), run_ids, results (count), machine."""
    table = FitTable([Column("host (machine)", justify="left", fold=24), Column("status", justify="left"),
                      Column("check", justify="left", priority=2, fold=24), Column("runs", justify="left"),
                      Column("results", priority=1), Column("why", justify="left", notes=True)],
                     title=title, title_justify="left", wide=wide)
    for r in rows:
        table.add_row(safe_text(_host_cell(r), multiline=False),
                      Text(r["status"], style=STYLE.get(r["status"], "")), safe_text(_warns(r.get("check"))),
                      ", ".join(f"#{i}" for i in r.get("run_ids") or []) or "-",
                      str(r.get("results", "")), safe_text(r.get("reason") or ""))
    return table


def status_table(rows: Sequence[dict[str, Any]], wide: bool = False) -> FitTable:
    """``rows``: store.fleet.last_per_host."""
    table = FitTable([Column("host", justify="left", fold=24), Column("job"), Column("status", justify="left"),
                      Column("when", justify="left"), Column("runs", justify="left"),
                      Column("command", justify="left", priority=2, fold=24),
                      Column("why", justify="left", notes=True)], title="last fleet job per host",
                     title_justify="left", wide=wide)
    for r in rows:
        command = " ".join(map(str, r.get("command") or []))
        table.add_row(safe_text(_host_cell(r), multiline=False), f"#{r['job_id']}",
                      Text(r["status"], style=STYLE.get(r["status"], "")), r.get("finished_at") or "",
                      ", ".join(f"#{i}" for i in r.get("run_ids") or []) or "-", safe_text(command),
                      safe_text(r.get("reason") or ""))
    return table
