"""The table of `cyclebench check`: one row per finding (env.check.Finding, read by attribute)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from cyclebench.report.fit import BOX

STATUS_STYLE = {"OK": "green", "WARN": "yellow", "INFO": "dim"}


def _echo(writes: Sequence[tuple[str, str]]) -> str:
    return "; ".join(f"echo {v} > {p}" for p, v in writes)


def fix_line(finding: Any, error: str | None = None, dry_run: bool = False) -> str:
    """One line per finding ``--fix`` changes: ``dry_run``, what it would write (the shell
    command) and the command that puts back the value read now; else what it did, or why not."""
    revert = _echo(finding.revert_writes)
    if dry_run:
        return f"{finding.name}: would run: {_echo(finding.fix_writes)} (revert: {revert})"
    if error:
        return f"{finding.name}: not fixed: {error}"
    return f"{finding.name}: fixed (revert: {revert})"


def render(findings: Sequence[Any], console: Console) -> None:
    """A table: check | status (green OK, yellow WARN, dim INFO) | detail | fix.

    Text is printed literally (no rich markup), so commands can be copied as shown. The
    caption names the checks that ``--fix`` would change.
    """
    # the box every other table has (report.fit.BOX: a rule under the header, no vertical lines)
    table = Table(title="cyclebench check", title_justify="left", box=BOX)
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=3)
    table.add_column("fix", overflow="fold", ratio=2)
    for f in findings:
        table.add_row(Text(f.name), Text(f.status, style=STATUS_STYLE.get(f.status, "")), Text(f.detail),
                      Text(f.fix) if f.fix else Text("-", style="dim"))
    fixable = [f.name for f in findings if f.status == "WARN" and f.fix_writes]
    if fixable:
        table.caption = f"--fix (as root) changes: {', '.join(fixable)}"
        table.caption_justify = "left"
    console.print(table)
