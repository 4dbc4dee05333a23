"""`cyclebench check`: what spoils measurements on this machine, and the command that fixes it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cyclebench.commands._common import (
    UserError,
    err,
    out,
    write_text,
)
from cyclebench.commands._options import (
    valid_cpu,
)
from cyclebench.report import check as check_report


@click.command("check")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to check (default: the one `run` would pin to).")
@click.option("--fix", is_flag=True, help="Apply the safe, reversible fixes (root only); prints how to revert.")
@click.option("--strict", is_flag=True, help="Exit 1 when anything is WARN.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def check_cmd(cpu: int | None, fix: bool, strict: bool, json_path: Path | None) -> None:
    """What spoils measurements on this machine, and the command that fixes each (like pyperf system show)."""
    import json

    from cyclebench.env import check, sysinfo

    cpu = valid_cpu(cpu) if cpu is not None else sysinfo.choose_cpu()
    findings = check.run_checks(cpu)
    check_report.render(findings, out)
    if fix:
        try:
            applied = check.apply_fixes(findings)
        except PermissionError as e:
            raise UserError(str(e)) from None
        for finding, error in applied:
            if error:
                err.print(f"{finding.name}: not fixed: {error}", style="red", highlight=False)
            else:
                undo = "; ".join(f"echo {v} > {p}" for p, v in finding.revert_writes)
                err.print(f"{finding.name}: fixed (revert: {undo})", highlight=False)
        if not applied:
            err.print("nothing that --fix may change needs changing", highlight=False)
    if json_path is not None:
        write_text(json_path, json.dumps([f.to_dict() for f in findings], indent=1) + "\n")
    sys.exit(check.summary_exit_code(findings, strict=strict))
