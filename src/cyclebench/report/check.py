"""The table of `cyclebench check`: one row per finding (env.check.Finding, read by attribute)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

STATUS_STYLE = {"OK": "green", "WARN": "yellow", "INFO": "dim"}



def render(findings: Sequence[Any], console: Console) -> None:
    """A table: check | status (green OK, yellow WARN, dim INFO) | detail | fix.

    Text is printed literally (no rich markup), so commands can be copied as shown. The
    caption names the checks that ``--fix`` would change.
    """
    table = Table(title="cyclebench check", title_justify="left")
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
