"""`cyclebench fleet agent` (hidden): what the fleet's playbook runs on each host, with the
cyclebench it installed there (docs/fleet.md; the design: experiments/fleet/agent.py). Exit 0
whatever the command did: the outcome is data in agent.json.

Also where the fleet reads a cyclebench command line with that command's own click options
(``command_line``): on the controller to plan a job, here for the CPU and compilers to check."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from cyclebench.experiments.fleet.agent import AgentJob, run_agent
from cyclebench.experiments.fleet.plan import CommandLine
from cyclebench.ui.common import root_command
from cyclebench.ui.options import FloatRange, take_c_files

# the parameters of a command that write a file where it runs, and their options
_WRITES = (("json_path", "--json"), ("output_path", "-o"), ("plot_path", "--plot"), ("csv_path", "--csv"))


def command_line(args: Sequence[str], resilient: bool = False) -> CommandLine:
    """``args`` (argv after ``cyclebench``) as the command it names parses them, found through
    click's context (the fleet never imports the command line, which imports it). Unknown
    command, or (``resilient``) options it cannot parse: just the args. Otherwise
    click.UsageError for options the command refuses."""
    cmd = root_command(args[0]) if args else None
    if cmd is None:
        return CommandLine(args=tuple(args))
    try:
        params = cmd.make_context(args[0], list(args[1:]), resilient_parsing=resilient).params
    except click.ClickException as e:
        if resilient:
            return CommandLine(args=tuple(args))
        raise click.UsageError(f"-- {args[0]}: {e.format_message()}") from None
    positional = {str(p) for p in params.get("files") or ()} | {  # and FILE.c where benchmarks go (build_options)
        t for key in ("targets", "benches", "bench") if isinstance(params.get(key), tuple)
        for t in take_c_files(params[key])[0]}
    ccs = params.get("cc") or "cc"
    return CommandLine(
        args=tuple(args), gives_db=bool(params.get("db")), writes=tuple(o for k, o in _WRITES if params.get(k)),
        targets=tuple(str(t) for t in params.get("targets") or ()), c_files=frozenset(positional),
        takes_label=any("--label" in getattr(p, "opts", ()) for p in cmd.params),
        cpu=params["cpu"] if isinstance(params.get("cpu"), int) else None,
        ccs=(ccs,) if isinstance(ccs, str) else tuple(ccs))


@click.command("agent", hidden=True, context_settings={"ignore_unknown_options": True})
@click.option("--host", "host", required=True, help="The inventory name runs are stored under.")
@click.option("--job-dir", type=click.Path(file_okay=False, path_type=Path), required=True)
@click.option("--db-stdin", is_flag=True, help="Read the shared database's URL from stdin (never argv).")
@click.option("--timeout", type=FloatRange(1), default=7 * 86400.0, help="Seconds the command may take.")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, required=True)
def agent_cmd(host: str, job_dir: Path, db_stdin: bool, timeout: float, args: tuple[str, ...]) -> None:
    """Run one fleet job's command on this host (started by the fleet's playbook)."""
    url = sys.stdin.readline().strip() if db_stdin else None
    run_agent(AgentJob(host=host, job_dir=job_dir, db_url=url, timeout=timeout,
                       line=command_line(args, resilient=True)))
