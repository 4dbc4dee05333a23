"""`cyclebench delete RUN...`: remove stored runs — a bad import, a botched run — with their
results and samples.

Every id is checked before anything goes: an id not in the database, or a run still running
(store.liveness: its process alive here, or its heartbeat fresh) without ``--force``, is one
line and exit 2 with nothing deleted. The runs are listed and the user asked on the terminal
(``--yes``: not asked; declining exits 1, nothing deleted; without a terminal on stdin there is
no one to ask: one line, exit 2, nothing deleted); then all of them go in one transaction.
"""

from __future__ import annotations

import sys

import click

from cyclebench.report.console import labels_text
from cyclebench.report.text import safe_text
from cyclebench.store import liveness
from cyclebench.ui.common import UserError, err, open_store
from cyclebench.ui.options import RUN_ID, db_option


@click.command("delete")
@click.argument("run_ids", nargs=-1, required=True, type=RUN_ID, metavar="RUN...")
@click.option("-y", "--yes", is_flag=True, help="Delete without asking.")
@click.option("--force", is_flag=True, help="Delete runs that are still running too (their process then fails to "
                                            "store what it measures next).")
@db_option
def delete_cmd(run_ids: tuple[int, ...], yes: bool, force: bool, db: str | None) -> None:
    """Delete stored runs RUN... with their results and samples (asks first unless --yes)."""
    store = open_store(db, create=False)
    ids = list(dict.fromkeys(run_ids))
    runs = {rid: store.get_run(rid) for rid in ids}
    missing = [rid for rid, run in runs.items() if run is None]
    if missing:
        raise UserError(f"no run {', '.join(f'#{rid}' for rid in missing)} in {store.url}: nothing deleted")
    running = [rid for rid, run in runs.items() if run is not None and run["status"] == liveness.RUNNING]
    if running and not force:
        where = ", ".join(f"#{rid} (host {runs[rid].get('host') or '?'}, pid {runs[rid].get('pid') or '?'})"
                          for rid in running)
        raise UserError(f"run {where} is still running: nothing deleted (--force deletes it anyway)")
    if not yes and (sys.stdin is None or sys.stdin.closed or not sys.stdin.isatty()):
        raise UserError("delete asks before deleting and stdin is not a terminal: nothing deleted (--yes deletes "
                        "without asking)")
    for rid, run in runs.items():
        assert run is not None
        command = run.get("command")
        command = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        labels = labels_text(run.get("labels"))
        err.print(safe_text(f"run #{rid} · {run['status']} · {run['started_at']} · {len(store.results(rid))} "
                            f"result(s){' · ' + labels if labels else ''} · {command}", multiline=False),
                  highlight=False, soft_wrap=True)
    if not yes:
        try:
            sure = click.confirm(f"delete {len(ids)} run(s) with their results?", default=False, err=True)
        except click.Abort:  # end of input: no answer is no
            sure = False
        if not sure:
            err.print("cyclebench: nothing deleted", highlight=False)
            sys.exit(1)
    n_runs, n_results, n_samples = store.delete_runs(ids)
    err.print(f"deleted {n_runs} run(s), {n_results} result(s) and {n_samples} sample(s) from {store.url}",
              highlight=False)
    for rid in running:  # --force: say what its process now does
        run = runs[rid] or {}
        err.print(f"run #{rid} was still running (host {run.get('host') or '?'}, pid {run.get('pid') or '?'}): its "
                  "process stops at its next write, and nothing it measured is kept", highlight=False)
