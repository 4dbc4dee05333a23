"""`cyclebench fleet agent` (hidden): what the fleet's playbook runs on each host, with the
cyclebench it installed there (commands/fleet.py drives it; docs/fleet.md).

It starts holding its machine's fleet lock (taken by fleet/bootstrap.py, which installed it
and became it: one job per machine at a time). In the job's directory it (1) runs
`cyclebench check --json check.json` and the fleet's own checks — the C compiler answers,
the CPU to pin exists — and stops only on those (a VM's WARNs are recorded, not fatal),
(2) runs the command with ``$CYCLEBENCH_HOST`` = the inventory name, tethered to its ssh
session (runner/tether.py), (3) writes each run it made as a JSON bundle (store/runfile)
unless the host wrote straight into the shared database, and (4) says all of it in
``agent.json``, which the controller reads. Exit 0 whatever the command did: the outcome is
data in agent.json. Stopped (SIGTERM from its tether or the playbook's stop play, Ctrl-C), it
removes the job's directory: its controller is gone and will fetch nothing from it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from cyclebench.commands._common import HOST_ENV
from cyclebench.env import identity, sysinfo
from cyclebench.runner.child import run_child
from cyclebench.runner.tether import CHAIN_ENV, inherited, tether
from cyclebench.store import Store, StoreError, liveness
from cyclebench.store import runfile as run_file

CHECK_TIMEOUT_S = 300.0
AGENT_JSON = "agent.json"


def _tail(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def _parsed(args: list[str]) -> dict[str, Any]:
    """The options of the command ``args`` as its click command reads them ({} when unknown)."""
    from cyclebench.commands._common import root_command

    cmd = root_command(args[0]) if args else None
    if cmd is None:
        return {}
    try:
        return cmd.make_context(args[0], list(args[1:]), resilient_parsing=True).params
    except click.ClickException:
        return {}


def preflight(args: list[str], job: Path) -> tuple[list[dict[str, Any]], str | None]:
    """check.json's findings plus the fleet's own (status FATAL when measuring is impossible),
    and the reason to stop (None: go on)."""
    params = _parsed(args)
    cpu = params.get("cpu")
    argv = [sys.executable, "-m", "cyclebench", "check", "--json", str(job / "check.json")]
    if isinstance(cpu, int):
        argv += ["--cpu", str(cpu)]
    child = run_child(argv, CHECK_TIMEOUT_S)
    findings: list[dict[str, Any]] = []
    if child.returncode == 0 and (job / "check.json").is_file():
        findings = json.loads((job / "check.json").read_text())
    else:
        why = _tail(child.stderr) or f"exit {child.returncode}"
        fatal = f"CPU {cpu} to pin is missing: {why}" if "not available here" in why else f"cyclebench check: {why}"
        return [{"name": "cyclebench", "status": "FATAL", "detail": fatal}], fatal
    ccs = params.get("cc") or "cc"
    for cc in [ccs] if isinstance(ccs, str) else list(ccs):
        try:
            child = run_child([cc, "--version"], 30.0)
            ok, detail = child.returncode == 0, _tail(child.stdout.splitlines()[0] if child.stdout else child.stderr)
        except OSError as e:
            ok, detail = False, e.strerror or str(e)
        findings.append({"name": "compiler", "status": "OK" if ok else "FATAL", "detail": f"{cc}: {detail}"})
        if not ok:
            return findings, f"no C compiler {cc!r} ({detail})"
    return findings, None


def machine() -> dict[str, Any]:
    """The machine's own names, whatever inventory name it measured under."""
    import socket

    return {"hostname": socket.gethostname(), "host_id": liveness.host_id(), "boot_id": identity.boot_id(),
            "cpu_model": sysinfo.cpu_info().get("model_name")}


def bundles(host: str, since: str, job: Path) -> tuple[list[int], list[str]]:
    """The runs this job made on this machine ($CYCLEBENCH_DB), written as run files in ``job``
    unless the database is shared (direct): (ids, file names)."""
    store = Store(None, create=False)
    mine = [r for r in store.list_runs(None, host=host) if r.get("host_id") == store.host_id
            and (r.get("started_at") or "") >= since]
    ids = sorted(int(r["id"]) for r in mine)
    names = []
    if os.environ.get("CYCLEBENCH_FLEET_MODE") != "direct":
        for rid in ids:
            run_file.dump(run_file.run_to_dict(store, rid), job / f"run-{rid}.json")
            names.append(f"run-{rid}.json")
    store.close()
    return ids, names


@click.command("agent", hidden=True, context_settings={"ignore_unknown_options": True})
@click.option("--host", "host", required=True, help="The inventory name runs are stored under.")
@click.option("--job-dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--db-stdin", is_flag=True, help="Read the shared database's URL from stdin (never argv).")
@click.option("--timeout", type=click.FloatRange(1), default=7 * 86400.0, help="Seconds the command may take.")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, required=True)
def agent_cmd(host: str, job_dir: Path, db_stdin: bool, timeout: float, args: tuple[str, ...]) -> None:
    """Run one fleet job's command on this host (started by the fleet's playbook)."""
    from cyclebench.store.db import now

    job_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"host": host, "machine": machine(), "command": list(args), "fatal": None,
                              "check": [], "returncode": None, "runs": [], "bundles": []}
    stop = tether(chain=inherited(os.environ.pop(CHAIN_ENV, None)))
    interrupted = False
    try:
        os.environ[HOST_ENV] = host
        if db_stdin:
            os.environ["CYCLEBENCH_DB"] = sys.stdin.readline().strip()
            os.environ["CYCLEBENCH_FLEET_MODE"] = "direct"
        else:
            os.environ["CYCLEBENCH_DB"] = f"sqlite:///{(job_dir / 'results.db').resolve()}"
        report["check"], report["fatal"] = preflight(list(args), job_dir)
        if report["fatal"]:
            return
        since = now()
        os.chdir(job_dir)  # the user's C files were copied here; the command names them relatively
        try:
            child = run_child([sys.executable, "-m", "cyclebench", *args], timeout)
        finally:
            try:
                report["runs"], report["bundles"] = bundles(host, since, job_dir)
            except StoreError as e:
                report["store_error"] = str(e)
        (job_dir / "stdout.txt").write_text(child.stdout)
        (job_dir / "stderr.txt").write_text(child.stderr)
        report["returncode"] = child.returncode
        report["stderr_tail"] = _tail(child.stderr)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        stop.set()
        if interrupted:
            shutil.rmtree(job_dir, ignore_errors=True)
        else:
            (job_dir / AGENT_JSON).write_text(json.dumps(report, indent=1) + "\n")
