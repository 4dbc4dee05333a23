"""A `fleet run` from the controller's side (docs/fleet.md): the job recorded in the store, the
playbook driven over the inventory with the plan's command and files, each host's outcome
landed — its fetched run files imported (or, ``--direct``, its runs already in the database) and
its row recorded — and the job finished, whatever stopped it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cyclebench import __version__
from cyclebench.build.wheelhouse import Wheelhouse
from cyclebench.experiments.errors import ExperimentError
from cyclebench.experiments.fleet.agent import AGENT_JSON, read_report
from cyclebench.experiments.fleet.ansible import Drive, ExtraVars, FileCopy, HostState, drive
from cyclebench.experiments.fleet.plan import CommandLine, Plan, labelled
from cyclebench.experiments.progress import Progress
from cyclebench.lifetime import owner_tag, sweep
from cyclebench.model import FleetHost
from cyclebench.store import fleet as jobs
from cyclebench.store import runfile as run_file

if TYPE_CHECKING:
    from cyclebench.store import Store

PRIVATE_PREFIX = "cyclebench-fleet-"  # + owner tag: a job's Ansible artifacts and fetched files
SECRET_PREFIX = "cyclebench-fleet-db-"  # + owner tag: the database URL a direct job sends
CONTROL_PREFIX = "cyclebench-"  # + owner tag, in Ansible's control_path_dir: the job's own ssh masters

# the playbook's tasks not worth a line of progress
QUIET_TASKS = ("", "paths", "results", "fetch agent.json")


@dataclass(frozen=True, kw_only=True)
class Job:
    """What `fleet run` was asked: the inventory, an Ansible ``limit`` pattern, ``direct`` (the
    hosts write ``db_url`` themselves) or bundles back to the controller, hosts at once
    (``forks``), seconds a host waits for its machine's lock, where Ansible's artifacts are kept
    (None: a temporary directory, removed)."""

    inventory: Path
    limit: str | None = None
    direct: bool = False
    db_url: str = ""
    forks: int = 10
    wait: float = 300.0
    artifacts: Path | None = None


@dataclass(frozen=True)
class JobOutcome:
    """The job's id, each host's outcome by inventory name, and whether a stop signal cut it short."""

    job_id: int
    hosts: tuple[FleetHost, ...]
    canceled: bool


def land(store: Store, job_id: int, host: str, hs: HostState, fetched: Path, direct: bool,
         canceled: bool) -> FleetHost:
    """One host's outcome: its runs imported from the run files fetched to ``fetched/host`` (or,
    ``direct``, already in the database), its row recorded in fleet_hosts."""
    agent = read_report(fetched / host / AGENT_JSON, host)
    status, reason, run_ids = hs.status, hs.reason, list(agent.runs if agent and direct else ())
    if agent is not None:
        for name in agent.bundles:
            try:
                run_ids.append(run_file.import_run(store, run_file.load(fetched / host / name)))
            except (run_file.ExportError, OSError) as e:
                status, reason = "failed", f"{name}: {e}"
        if agent.fatal:
            status = "busy" if agent.fatal.startswith("busy") else "check failed"
            reason = agent.fatal
        elif agent.returncode not in (0, None) and status is None:
            status, reason = "failed", f"exit {agent.returncode}: {agent.stderr_tail or ''}".strip()
    if status is None:
        status, reason = ("ok", None) if agent is not None else ("interrupted" if canceled else "failed",
                                                                  reason or f"stopped in task '{hs.task}'")
    elif status == "failed" and canceled and agent is None:
        status = "interrupted"
    outcome = FleetHost(host=host, status=status, reason=reason, check=agent.check if agent else None,
                        run_ids=tuple(run_ids), machine=agent.machine if agent else None,
                        results=sum(len(store.results(i)) for i in run_ids))
    jobs.record_host(store, job_id, outcome)
    return outcome


def _extravars(job: Job, job_id: int, wh: Wheelhouse, sent: Plan, fetched: Path) -> ExtraVars:
    return ExtraVars(
        cyclebench_wheelhouse=str(wh.archive), cyclebench_wheel=wh.wheel, cyclebench_key=wh.key,
        cyclebench_version=__version__, cyclebench_target=wh.target, cyclebench_args=list(sent.args),
        cyclebench_job=f"{job_id}-{os.getpid()}", cyclebench_wait=job.wait, cyclebench_fetch=str(fetched),
        cyclebench_direct=job.direct,
        cyclebench_files=[FileCopy(src=str(s) + ("/" if s.is_dir() else ""), dest=d) for s, d in sent.files])


def _control_dir() -> Path:
    """A directory of this job's own in Ansible's control_path_dir ($ANSIBLE_SSH_CONTROL_PATH_DIR,
    default ~/.ansible/cp; mode 0700), where Ansible's ssh puts its ControlMaster sockets
    (ssh_config(5) ControlPath, ControlPersist); those of killed controllers are removed first.
    Not shared: the ssh masters a job starts detach from Ansible and come back to its subreaper,
    which kills them when the run ends (ansible.drive). Sockets in the shared directory served every
    Ansible of this user to the same host, port and user, so one job's end cut another's sessions
    mid-task: its tethered agents ended, and Ansible's retry of a copy cut after the move found
    its source gone. ExperimentError when the directory cannot be made."""
    parent = Path(os.environ.get("ANSIBLE_SSH_CONTROL_PATH_DIR") or "~/.ansible/cp").expanduser()
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        sweep(parent, CONTROL_PREFIX)
        return Path(tempfile.mkdtemp(prefix=f"{CONTROL_PREFIX}{owner_tag()}-", dir=parent))
    except OSError as e:
        raise ExperimentError(f"cannot make the job's ssh control directory in {parent}: "
                              f"{e.strerror or e}") from None


def run_job(store: Store, job: Job, line: CommandLine, plan: Plan, wh: Wheelhouse, progress: Progress) -> JobOutcome:
    """Run ``plan`` (checked from ``line``: plan.plan) on every host of the job's inventory with
    the cyclebench of ``wh``; each host's task in progress is a ``progress.note``. The job and each
    host's row are recorded in ``store``; a job cut short (a database error, a bug, Ctrl-C
    reaching here) is finished ``failed`` or ``interrupted`` before the error goes on.
    ExperimentError when Ansible could not start or no host matched."""
    control = _control_dir()  # before the job's row: a job that cannot start leaves none 'running'
    job_id = jobs.begin_job(store, str(job.inventory), line.args, "direct" if job.direct else "bundles")
    sent = labelled(plan, line, f"fleet={job_id}")
    # named with this process's tag (lifetime.owner_tag): a killed controller's are removed by the next
    tmp = Path(tempfile.gettempdir())
    for prefix in (SECRET_PREFIX, PRIVATE_PREFIX):
        sweep(tmp, prefix)
    private = job.artifacts or Path(tempfile.mkdtemp(prefix=f"{PRIVATE_PREFIX}{owner_tag()}-", dir=tmp))
    fetched = private / "fetched"
    fetched.mkdir(parents=True, exist_ok=True)
    extravars = _extravars(job, job_id, wh, sent, fetched)
    envvars = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               # one ssh round trip a task instead of three, unless the user's environment says otherwise
               "ANSIBLE_PIPELINING": os.environ.get("ANSIBLE_PIPELINING", "True"),
               "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control)}
    secret_dir = Path(tempfile.mkdtemp(prefix=f"{SECRET_PREFIX}{owner_tag()}-", dir=tmp))  # 0700, not Ansible's
    if job.direct:  # read by the playbook's file lookup into the agent's stdin under no_log: never argv, env or a log
        (secret_dir / "url").touch(mode=0o600)
        (secret_dir / "url").write_text(job.db_url)
        extravars["cyclebench_db_file"] = str(secret_dir / "url")

    def say(host: str, task: str) -> None:
        if task not in QUIET_TASKS:
            progress.note(f"{host}: {task}")

    state = Drive()
    try:
        state = drive(private, job.inventory, extravars, job.limit, job.forks, say, envvars)
        hosts = tuple(land(store, job_id, h, hs, fetched, job.direct, state.canceled)
                      for h, hs in sorted(state.hosts.items()))
    except ExperimentError:
        jobs.finish_job(store, job_id, "failed")
        raise
    except BaseException:  # a database error, a bug: the job is not left 'running'; what was imported stays
        jobs.finish_job(store, job_id, "interrupted" if state.canceled else "failed")
        raise
    finally:
        shutil.rmtree(secret_dir, ignore_errors=True)
        shutil.rmtree(control, ignore_errors=True)  # the masters were reaped with the run (drive)
        if job.artifacts is None:
            shutil.rmtree(private, ignore_errors=True)
    if not hosts and not state.canceled:
        jobs.finish_job(store, job_id, "failed")
        raise ExperimentError(f"no host of {job.inventory} matches" + (f" --limit {job.limit}" if job.limit else ""))
    jobs.finish_job(store, job_id, "interrupted" if state.canceled else "complete")
    return JobOutcome(job_id, hosts, state.canceled)
