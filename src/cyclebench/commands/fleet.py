"""`cyclebench fleet run|status`: the same cyclebench command on every host of an Ansible
inventory, results into one database (docs/fleet.md). The design is experiments/fleet/ (the
plan, the inventory, ansible-runner driving the playbook in cyclebench/fleet/, each host's
outcome landed); each host runs `fleet agent` (fleet_agent.py) with the cyclebench installed
there from the controller's wheelhouse (build/wheelhouse.py)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from cyclebench.build.wheelhouse import WheelhouseError, wheelhouse
from cyclebench.commands.fleet_agent import agent_cmd, command_line
from cyclebench.experiments.fleet.inventory import inventory_hosts
from cyclebench.experiments.fleet.job import Job, run_job
from cyclebench.experiments.fleet.plan import CommandLine, Plan, check_command, plan
from cyclebench.report import fleet as report
from cyclebench.store import fleet as jobs
from cyclebench.ui.common import UserError, err, open_store, out, write_text
from cyclebench.ui.options import FloatRange, db_option, expand_files, json_option, wide_option
from cyclebench.ui.progress import Notes
from cyclebench.ui.record import argument, group, option, takes


@click.group("fleet")
def fleet_group() -> None:
    """Run cyclebench on every host of an Ansible inventory; results into one database."""


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
    wait: float = option("--wait", type=FloatRange(0), default=300.0, show_default=True, metavar="SECONDS",
                         help="How long a host's job waits for another fleet job on the same machine (two inventory "
                         "names of one machine, another controller) before its row says 'busy' and what held it.")
    artifacts: Path | None = option("--artifacts", type=click.Path(file_okay=False, path_type=Path),
                                    help="Keep Ansible's artifacts (events, output, fetched bundles) in DIR (default: "
                                    "removed).")
    db: str | None = group(db_option)
    json_path: Path | None = group(json_option)
    wide: bool = group(wide_option)
    args: tuple[str, ...] = argument(nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- COMMAND [OPTIONS]")


def job_plan(args: Sequence[str]) -> tuple[CommandLine, Plan]:
    """``args`` (the command after --) as the command it names parses them, and what every host
    gets of it. ExperimentError, click.UsageError for what a fleet cannot run alike everywhere."""
    check_command(args)
    line = command_line(args)
    return line, plan(line, lambda pattern: expand_files([pattern]))


@fleet_group.command("run")
@takes(FleetArgs)
def fleet_run(a: FleetArgs) -> None:
    """Run a cyclebench COMMAND (run, compare A B, scale, ...) on every host of INVENTORY, in
    parallel across hosts; each host's runs carry its inventory name and land in --db."""
    line, sent = job_plan(a.args)  # bad input is said before anything is recorded or built
    url = a.db or os.environ.get("CYCLEBENCH_DB") or ""
    if a.direct and not url.startswith("postgresql"):
        raise click.UsageError("--direct: hosts write into --db, so it must be a database they reach (a "
                               "postgresql:// URL)")
    inventory_hosts(a.inventory)  # an inventory Ansible cannot parse is said, not read as no host
    store = open_store(a.db)
    try:
        with err.status("building the wheelhouse (pip wheel, once per cyclebench)", spinner="dots"):
            wh = wheelhouse()
    except WheelhouseError as e:
        raise UserError(str(e)) from None
    job = Job(inventory=a.inventory, limit=a.limit, direct=a.direct, db_url=url, forks=a.forks, wait=a.wait,
              artifacts=a.artifacts)
    done = run_job(store, job, line, sent, wh, Notes())
    ok = sum(h.status == "ok" for h in done.hosts)
    title = f"fleet job #{done.job_id} · {' '.join(a.args)} · {ok}/{len(done.hosts)} hosts"
    out.print(report.summary_table(title, done.hosts, wide=a.wide))
    if a.json_path is not None:
        write_text(a.json_path, report.summary_json(done.job_id, done.hosts), f"fleet job #{done.job_id}")
    if done.canceled:
        err.print("cyclebench: interrupted: the hosts that finished are stored", highlight=False)
        sys.exit(130)
    if ok < len(done.hosts):
        sys.exit(1)


@fleet_group.command("status")
@click.option("-i", "--inventory", type=click.Path(exists=True, path_type=Path), default=None,
              help="Only the hosts of this inventory (default: every host a fleet job ran on).")
@db_option
@wide_option
def fleet_status(inventory: Path | None, db: str | None, wide: bool) -> None:
    """Per host: its last fleet job, the outcome and when (from --db's fleet records)."""
    hosts = inventory_hosts(inventory) if inventory is not None else None
    store = open_store(db, create=False)
    rows = jobs.last_per_host(store, hosts)
    if not rows:
        raise UserError(f"no fleet job in {store.url}" + (f" for the hosts of {inventory}" if inventory else ""))
    out.print(report.status_table(rows, wide=wide))
    if hosts is not None:
        never = sorted(set(hosts) - {r.host for r in rows})
        if never:
            err.print(f"no fleet job yet: {', '.join(never)}", highlight=False)


fleet_group.add_command(agent_cmd)
