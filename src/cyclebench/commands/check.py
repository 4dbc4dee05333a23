"""`cyclebench check`: what spoils measurements on this machine, and the command that fixes it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cyclebench.report import check as check_report
from cyclebench.ui.common import (
    UserError,
    err,
    out,
    write_text,
)
from cyclebench.ui.options import (
    valid_cpu,
)


@click.command("check")
@click.option("--cpu", type=click.IntRange(min=0), help="CPU to check (default: the one `run` would pin to).")
@click.option("--fix", is_flag=True, help="Apply the safe, reversible fixes (root only); prints how to revert.")
@click.option("--dry-run", is_flag=True,
              help="With --fix: print each change it would make and the command that reverts it; write nothing.")
@click.option("--sysroot", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None, hidden=True,
              help="Check (and --fix) a copy of / holding proc/ and sys/ instead of this machine (the test fixtures).")
@click.option("--strict", is_flag=True, help="Exit 1 when anything is WARN.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write JSON.")
def check_cmd(cpu: int | None, fix: bool, dry_run: bool, sysroot: Path | None, strict: bool,
              json_path: Path | None) -> None:
    """What spoils measurements on this machine, and the command that fixes each (like pyperf system show)."""
    import json

    from cyclebench.env import check, sysinfo

    if dry_run and not fix:
        raise UserError("--dry-run goes with --fix (check alone changes nothing)")
    root = sysroot if sysroot is not None else Path("/")
    if sysroot is None:
        cpu = valid_cpu(cpu) if cpu is not None else sysinfo.choose_cpu()
    elif cpu is None:
        cpu = sysinfo.choose_cpu(root)
    findings = check.run_checks(cpu, root)
    check_report.render(findings, out)
    if fix and dry_run:  # no privileges needed: nothing is written
        planned = check.planned_fixes(findings)
        for finding in planned:
            err.print(check_report.fix_line(finding, dry_run=True), highlight=False, soft_wrap=True)
        if not planned:
            err.print("nothing that --fix may change needs changing", highlight=False)
    elif fix:
        try:
            applied = check.apply_fixes(findings, root)
        except PermissionError as e:
            raise UserError(str(e)) from None
        for finding, error in applied:
            err.print(check_report.fix_line(finding, error), style="red" if error else None, highlight=False,
                      soft_wrap=True)
        if not applied:
            err.print("nothing that --fix may change needs changing", highlight=False)
    if json_path is not None:
        write_text(json_path, json.dumps([f.to_dict() for f in findings], indent=1) + "\n")
    sys.exit(check.summary_exit_code(findings, strict=strict))
