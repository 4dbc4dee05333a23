"""`cyclebench fleet run|status`: the same cyclebench command on every host of an Ansible
inventory, results into one database (docs/fleet.md). Ansible does the ssh, the
parallelism and the facts (the playbook in cyclebench/fleet/, driven by ansible-runner:
_fleet_ansible); each host runs `fleet agent` (fleet_agent.py) with the cyclebench installed
there from the controller's wheelhouse (build/wheelhouse.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench import __version__
from cyclebench.build.wheelhouse import WheelhouseError, wheelhouse
from cyclebench.commands import _fleet
from cyclebench.commands._common import UserError, err, open_store, out, write_text
from cyclebench.commands._fleet_ansible import Drive, FleetError, drive
from cyclebench.commands._options import db_option, json_option, wide_option
from cyclebench.commands._record import argument, group, option, takes
from cyclebench.commands.fleet_agent import agent_cmd
from cyclebench.report import fleet as report
from cyclebench.store import fleet as jobs


@click.group("fleet")
def fleet_group() -> None:
    """Run cyclebench on every host of an Ansible inventory; results into one database."""


def _progress(host: str, task: str) -> None:
    if task and task not in ("paths", "results", "fetch agent.json"):
        err.print(f"{host}: {task}", highlight=False, soft_wrap=True)


@dataclass(frozen=True, kw_only=True)
class FleetArgs:
    """`fleet run`'s options (--help gives each one's meaning)."""

    inventory: Path = option("-i", "--inventory", type=click.Path(exists=True, path_type=Path), required=True,
                             help="Ansible inventory (file or directory): the hosts, how to reach them, their "
                             "variables.")
    limit: str | None = option("--limit", metavar="PATTERN", help="Only the hosts matching this Ansible pattern "
                               "(e.g. 'amd:&lab').")
    direct: bool = option("--direct", is_flag=True, help="Hosts write straight into --db (a PostgreSQL they can "
                          "reach; its URL goes to them on stdin, never in argv or logs).")
    forks: int = option("--forks", type=click.IntRange(1, 500), default=10, show_default=True,
                        help="Hosts worked on at once (Ansible's forks); each host runs one job at a time.")
    wait: float = option("--wait", type=click.FloatRange(0), default=300.0, show_default=True, metavar="SECONDS",
                         help="How long a host's job waits for another fleet job on the same machine (two inventory "
                         "names of one machine, another controller) before its row says 'busy' and what held it.")
    artifacts: Path | None = option("--artifacts", type=click.Path(file_okay=False, path_type=Path),
                                    help="Keep Ansible's artifacts (events, output, fetched bundles) in DIR (default: "
                                    "removed).")
    db: str | None = group(db_option)
    json_path: Path | None = group(json_option)
    wide: bool = group(wide_option)
    args: tuple[str, ...] = argument(nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- COMMAND [OPTIONS]")


@fleet_group.command("run")
@takes(FleetArgs)
def fleet_run(a: FleetArgs) -> None:
    """Run a cyclebench COMMAND (run, compare A B, scale, ...) on every host of INVENTORY, in
    parallel across hosts; each host's runs carry its inventory name and land in --db."""
    _fleet.plan(list(a.args))  # bad input is said before anything is recorded or built
    url = a.db or os.environ.get("CYCLEBENCH_DB") or ""
    if a.direct and not url.startswith("postgresql"):
        raise click.UsageError("--direct: hosts write into --db, so it must be a database they reach (a "
                               "postgresql:// URL)")
    _fleet.inventory_hosts(a.inventory)  # an inventory Ansible cannot parse is said, not read as no host
    store = open_store(a.db)
    try:
        with err.status("building the wheelhouse (pip wheel, once per cyclebench)", spinner="dots"):
            wh = wheelhouse()
    except WheelhouseError as e:
        raise UserError(str(e)) from None
    job_id = jobs.begin_job(store, str(a.inventory), list(a.args), "direct" if a.direct else "bundles")
    plan = _fleet.plan(list(a.args), f"fleet={job_id}")
    private = a.artifacts or Path(tempfile.mkdtemp(prefix="cyclebench-fleet-"))
    fetched = private / "fetched"
    fetched.mkdir(parents=True, exist_ok=True)
    extravars = {
        "cyclebench_wheelhouse": str(wh.archive), "cyclebench_wheel": wh.wheel, "cyclebench_key": wh.key,
        "cyclebench_version": __version__, "cyclebench_target": wh.target, "cyclebench_args": plan.args,
        "cyclebench_job": f"{job_id}-{os.getpid()}", "cyclebench_wait": a.wait,
        "cyclebench_fetch": str(fetched), "cyclebench_direct": a.direct,
        "cyclebench_files": [{"src": str(s) + ("/" if s.is_dir() else ""), "dest": d} for s, d in plan.files],
    }
    envvars = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               # one ssh round trip a task instead of three, unless the user's environment says otherwise
               "ANSIBLE_PIPELINING": os.environ.get("ANSIBLE_PIPELINING", "True")}
    secret_dir = Path(tempfile.mkdtemp(prefix="cyclebench-fleet-db-"))  # 0700, outside Ansible's artifacts
    if a.direct:  # read by the playbook's file lookup into the agent's stdin under no_log: never argv, env or a log
        (secret_dir / "url").touch(mode=0o600)
        (secret_dir / "url").write_text(url)
        extravars["cyclebench_db_file"] = str(secret_dir / "url")
    state = Drive()
    try:
        state = drive(private, a.inventory, extravars, a.limit, a.forks, _progress, envvars)
        rows = [_fleet.land(store, job_id, h, hs, fetched, a.direct, state.canceled)
                for h, hs in sorted(state.hosts.items())]
    except FleetError as e:
        jobs.finish_job(store, job_id, "failed")
        raise UserError(str(e)) from None
    except BaseException:  # a database error, a bug: the job is not left 'running'; what was imported stays
        jobs.finish_job(store, job_id, "interrupted" if state.canceled else "failed")
        raise
    finally:
        shutil.rmtree(secret_dir, ignore_errors=True)
        if a.artifacts is None:
            shutil.rmtree(private, ignore_errors=True)
    if not rows and not state.canceled:
        jobs.finish_job(store, job_id, "failed")
        raise UserError(f"no host of {a.inventory} matches" + (f" --limit {a.limit}" if a.limit else ""))
    jobs.finish_job(store, job_id, "interrupted" if state.canceled else "complete")
    title = f"fleet job #{job_id} · {' '.join(a.args)} · {sum(r['status'] == 'ok' for r in rows)}/{len(rows)} hosts"
    out.print(report.summary_table(title, rows, wide=a.wide))
    if a.json_path is not None:
        write_text(a.json_path, json.dumps({"job": job_id, "hosts": rows}, indent=1) + "\n", f"fleet job #{job_id}")
    if state.canceled:
        err.print("cyclebench: interrupted: the hosts that finished are stored", highlight=False)
        sys.exit(130)
    if any(r["status"] != "ok" for r in rows):
        sys.exit(1)


@fleet_group.command("status")
@click.option("-i", "--inventory", type=click.Path(exists=True, path_type=Path), default=None,
              help="Only the hosts of this inventory (default: every host a fleet job ran on).")
@db_option
@wide_option
def fleet_status(inventory: Path | None, db: str | None, wide: bool) -> None:
    """Per host: its last fleet job, the outcome and when (from --db's fleet records)."""
    hosts = _fleet.inventory_hosts(inventory) if inventory is not None else None
    store = open_store(db, create=False)
    rows = jobs.last_per_host(store, hosts)
    if not rows:
        raise UserError(f"no fleet job in {store.url}" + (f" for the hosts of {inventory}" if inventory else ""))
    out.print(report.status_table(rows, wide=wide))
    if hosts is not None:
        never = sorted(set(hosts) - {r["host"] for r in rows})
        if never:
            err.print(f"no fleet job yet: {', '.join(never)}", highlight=False)


fleet_group.add_command(agent_cmd)
