"""What runs on each host of a fleet job (`cyclebench fleet agent`, started by the playbook with
the cyclebench installed there; docs/fleet.md) and what it answers with: ``agent.json``.

It starts holding its machine's fleet lock (taken by fleet/bootstrap.py, which installed it
and became it: one job per machine at a time). In the job's directory it (1) runs
`cyclebench check --json check.json` and the fleet's own checks — the C compiler answers,
the CPU to pin exists — and stops only on those (a VM's WARNs are recorded, not fatal),
(2) runs the command with ``$CYCLEBENCH_HOST`` = the inventory name, tethered to its ssh
session (runner/tether.py), (3) writes each run it made as a JSON bundle (store/runfile)
unless the host wrote straight into the shared database, and (4) says all of it in
``agent.json``, which the controller reads (``read_report``). Stopped (SIGTERM from its tether
or the playbook's stop play, Ctrl-C), it removes the job's directory: its controller is gone
and will fetch nothing from it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypedDict

from cyclebench.env import identity, sysinfo
from cyclebench.experiments.fleet.plan import CommandLine
from cyclebench.experiments.session import HOST_ENV
from cyclebench.model import FLEET, PURPOSE_ENV, CheckFinding, Machine
from cyclebench.runner.child import run_child
from cyclebench.runner.tether import CHAIN_ENV, inherited, tether
from cyclebench.store import Store, StoreError, liveness
from cyclebench.store import runfile as run_file

CHECK_TIMEOUT_S = 300.0
AGENT_JSON = "agent.json"  # fleet/bootstrap.py writes one of the same shape when it refuses a job


class MachineJSON(TypedDict, total=False):
    """agent.json's ``machine`` (model.Machine.to_json: the keys the host knew)."""

    hostname: str
    host_id: str
    boot_id: str
    cpu_model: str | None


class AgentJSON(TypedDict, total=False):
    """``agent.json`` as it crosses from the host to the controller (the playbook fetches it):
    ``stderr_tail`` once the command ran, ``store_error`` when its runs could not be read."""

    host: str
    machine: MachineJSON
    command: list[str]
    fatal: str | None
    check: list[CheckFinding] | None
    returncode: int | None
    runs: list[int]
    bundles: list[str]
    stderr_tail: str
    store_error: str


@dataclass(frozen=True, kw_only=True)
class AgentReport:
    """One host's answer to its job: the inventory name, the machine, the command (argv after
    ``cyclebench``), ``fatal``: why it did not run (a check that makes measuring impossible, a
    machine busy with another job; None: it ran), the check's findings, the command's exit
    status (None: it did not run), the runs it stored (ids in the database it wrote), the run
    files written for the controller, its stderr's last line, and why its runs could not be read."""

    host: str
    machine: Machine | None = None
    command: tuple[str, ...] = ()
    fatal: str | None = None
    check: tuple[CheckFinding, ...] | None = ()
    returncode: int | None = None
    runs: tuple[int, ...] = ()
    bundles: tuple[str, ...] = ()
    stderr_tail: str | None = None
    store_error: str | None = None

    def to_json(self) -> AgentJSON:
        """agent.json's document (``read_report`` reads it back to an equal record)."""
        doc = AgentJSON(host=self.host, machine=MachineJSON(**self.machine.to_json()) if self.machine else
                        MachineJSON(), command=list(self.command), fatal=self.fatal,
                        check=None if self.check is None else list(self.check), returncode=self.returncode,
                        runs=list(self.runs), bundles=list(self.bundles))
        if self.stderr_tail is not None:
            doc["stderr_tail"] = self.stderr_tail
        if self.store_error is not None:
            doc["store_error"] = self.store_error
        return doc


def read_report(path: Path, host: str) -> AgentReport | None:
    """The ``agent.json`` fetched to ``path`` (for inventory name ``host``), None when none came
    back. OSError, ValueError (not JSON) as reading it raises them."""
    if not path.is_file():
        return None
    doc: AgentJSON = json.loads(path.read_text())
    check = doc.get("check")
    return AgentReport(
        host=str(doc.get("host") or host), machine=Machine.from_json(doc.get("machine")),
        command=tuple(doc.get("command") or ()), fatal=doc.get("fatal"),
        check=tuple(check) if isinstance(check, list) else None, returncode=doc.get("returncode"),
        runs=tuple(int(i) for i in doc.get("runs") or ()), bundles=tuple(doc.get("bundles") or ()),
        stderr_tail=doc.get("stderr_tail"), store_error=doc.get("store_error"))


def _tail(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


def preflight(line: CommandLine, job: Path) -> tuple[tuple[CheckFinding, ...], str | None]:
    """check.json's findings plus the fleet's own (status FATAL when measuring is impossible),
    and the reason to stop (None: go on)."""
    argv = [sys.executable, "-m", "cyclebench", "check", "--json", str(job / "check.json")]
    if line.cpu is not None:
        argv += ["--cpu", str(line.cpu)]
    child = run_child(argv, CHECK_TIMEOUT_S)
    findings: list[CheckFinding] = []
    if child.returncode == 0 and (job / "check.json").is_file():
        findings = json.loads((job / "check.json").read_text())
    else:
        why = _tail(child.stderr) or f"exit {child.returncode}"
        fatal = (f"CPU {line.cpu} to pin is missing: {why}" if "not available here" in why
                 else f"cyclebench check: {why}")
        return (CheckFinding(name="cyclebench", status="FATAL", detail=fatal),), fatal
    for cc in line.ccs:
        try:
            child = run_child([cc, "--version"], 30.0)
            ok, detail = child.returncode == 0, _tail(child.stdout.splitlines()[0] if child.stdout else child.stderr)
        except OSError as e:
            ok, detail = False, e.strerror or str(e)
        findings.append(CheckFinding(name="compiler", status="OK" if ok else "FATAL", detail=f"{cc}: {detail}"))
        if not ok:
            return tuple(findings), f"no C compiler {cc!r} ({detail})"
    return tuple(findings), None


def machine() -> Machine:
    """The machine's own names, whatever inventory name it measured under."""
    import socket

    return Machine(hostname=socket.gethostname(), host_id=liveness.host_id(), boot_id=identity.boot_id(),
                   cpu_model=sysinfo.cpu_info().get("model_name"))


def bundles(host: str, since: str, job: Path, direct: bool) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The runs this job made on this machine ($CYCLEBENCH_DB), written as run files in ``job``
    unless the database is shared (``direct``): (ids, file names)."""
    store = Store(None, create=False)
    mine = [r for r in store.list_runs(None, host=host) if r.get("host_id") == store.host_id
            and (r.get("started_at") or "") >= since]
    ids = tuple(sorted(int(r["id"]) for r in mine))
    names = []
    if not direct:
        for rid in ids:
            run_file.dump(run_file.run_to_dict(store, rid), job / f"run-{rid}.json")
            names.append(f"run-{rid}.json")
    store.close()
    return ids, tuple(names)


@dataclass(frozen=True, kw_only=True)
class AgentJob:
    """One host's part of a fleet job: the inventory name runs are stored under, the job's
    directory, the shared database's URL (``--direct``; None: a database in the job's directory,
    sent back as run files), the seconds the command may take, and the command."""

    host: str
    job_dir: Path
    db_url: str | None
    timeout: float
    line: CommandLine


def run_agent(job: AgentJob) -> AgentReport:
    """Do ``job`` on this host and write its ``agent.json`` (the report returned) in the job's
    directory, whatever the command did; stopped (KeyboardInterrupt, as SIGTERM makes it),
    remove the job's directory and re-raise. Sets ``$CYCLEBENCH_HOST`` and ``$CYCLEBENCH_DB`` and
    works in the job's directory: the user's C files were copied there."""
    from cyclebench.store.db import now

    job.job_dir.mkdir(parents=True, exist_ok=True)
    report = AgentReport(host=job.host, machine=machine(), command=job.line.args)
    stop = tether(chain=inherited(os.environ.pop(CHAIN_ENV, None)))
    interrupted = False
    try:
        os.environ[HOST_ENV] = job.host
        os.environ[PURPOSE_ENV] = FLEET  # the runs the command opens are this job's (model.series_key)
        direct = job.db_url is not None
        if direct:
            os.environ["CYCLEBENCH_DB"], os.environ["CYCLEBENCH_FLEET_MODE"] = str(job.db_url), "direct"
        else:
            os.environ["CYCLEBENCH_DB"] = f"sqlite:///{(job.job_dir / 'results.db').resolve()}"
        check, fatal = preflight(job.line, job.job_dir)
        report = replace(report, check=check, fatal=fatal)
        if fatal:
            return report
        since = now()
        os.chdir(job.job_dir)
        try:
            child = run_child([sys.executable, "-m", "cyclebench", *job.line.args], job.timeout)
        finally:
            try:
                runs, names = bundles(job.host, since, job.job_dir, direct)
                report = replace(report, runs=runs, bundles=names)
            except StoreError as e:
                report = replace(report, store_error=str(e))
        (job.job_dir / "stdout.txt").write_text(child.stdout)
        (job.job_dir / "stderr.txt").write_text(child.stderr)
        report = replace(report, returncode=child.returncode, stderr_tail=_tail(child.stderr))
        return report
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        stop.set()
        if interrupted:
            shutil.rmtree(job.job_dir, ignore_errors=True)
        else:
            (job.job_dir / AGENT_JSON).write_text(json.dumps(report.to_json(), indent=1) + "\n")
