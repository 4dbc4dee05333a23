"""Driving the fleet's playbook with ansible-runner (the engine; cyclebench writes no ssh or
scheduling of its own): the run's events become each host's state, Ctrl-C/SIGTERM/SIGHUP
cancel it through ansible-runner's cancel callback (it kills ansible-playbook's process group,
ssh clients included, so the remote agents lose their session and stop: runner/tether.py).

ansible-runner: https://ansible.readthedocs.io/projects/runner/en/stable/python_interface/
(``run``, ``cancel_callback``, ``event_handler``; event names runner_on_ok, runner_on_failed,
runner_on_unreachable, playbook_on_stats; an event's fields:
https://ansible.readthedocs.io/projects/runner/en/stable/intro/#runner-artifact-job-events-host-and-playbook-events)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

from cyclebench.experiments.errors import ExperimentError
from cyclebench.fleet import PLAYBOOK
from cyclebench.lifetime import reaping


class FleetError(ExperimentError):
    """ansible-runner or ansible-core is not installed, or ansible-playbook could not start
    (a bad inventory, a --limit matching no host)."""


class FileCopy(TypedDict):
    """One entry of the playbook's ``cyclebench_files``: a controller path (a directory's ends in
    ``/``: its contents) and where it goes in the job's directory."""

    src: str
    dest: str


class ExtraVars(TypedDict, total=False):
    """The ``cyclebench_*`` variables the playbook takes (fleet/playbook.yml lists them; ``fleet run
    --artifacts DIR`` keeps them in ``DIR/env/extravars``): JSON handed to Ansible, kept in this
    shape so the playbook runs alike under plain ansible-playbook."""

    cyclebench_wheelhouse: str
    cyclebench_wheel: str
    cyclebench_key: str
    cyclebench_version: str
    cyclebench_target: str
    cyclebench_args: list[str]
    cyclebench_job: str
    cyclebench_wait: float
    cyclebench_fetch: str
    cyclebench_direct: bool
    cyclebench_files: list[FileCopy]
    cyclebench_db_file: str


class TaskResult(TypedDict, total=False):
    """What a task's module returned (an event's ``res``), in the keys read here."""

    censored: str
    results: list[TaskResult]
    failed: bool
    stderr: str
    msg: str
    stdout: str
    module_stderr: str
    rc: int


class EventData(TypedDict, total=False):
    """An event's ``event_data``: the inventory name, the task's name, its result, and whether the
    task ignores its errors."""

    host: str
    task: str
    res: TaskResult
    ignore_errors: bool


class RunnerEvent(TypedDict, total=False):
    """One ansible-runner event, in the keys read here."""

    event: str
    event_data: EventData


@dataclass(frozen=True)
class HostState:
    """What the events said of one host: its status (None: nothing went wrong so far), why,
    the task it was in, and whether it finished the play."""

    status: str | None = None
    reason: str | None = None
    task: str = ""
    done: bool = False


@dataclass(frozen=True)
class Drive:
    """A playbook run: each host's state by inventory name, ansible-runner's status (successful |
    failed | canceled | timeout), and whether a stop signal cancelled it."""

    hosts: Mapping[str, HostState] = field(default_factory=dict)
    status: str = ""
    canceled: bool = False


def _message(res: TaskResult) -> str:
    """The shortest honest line from a task result."""
    if res.get("censored"):
        return "output hidden (no_log)"
    failed_items = [x for x in res.get("results") or [] if isinstance(x, dict) and x.get("failed")]
    if failed_items:  # a loop: the first item that failed says why
        return _message(failed_items[0])
    for key in ("stderr", "msg", "stdout", "module_stderr"):
        text = str(res.get(key) or "").strip()
        if text:
            return [x for x in text.splitlines() if x.strip()][-1].strip()[:300]
    return f"exit {res.get('rc')}" if res.get("rc") is not None else "failed"


def fold(hosts: dict[str, HostState], ev: RunnerEvent) -> str | None:
    """``ev`` folded into ``hosts`` (each host's state replaced by the one the event makes): the
    host whose task starts, for progress, else None."""
    kind, data = ev.get("event", ""), ev.get("event_data") or EventData()
    host = data.get("host")
    if not host:
        return None
    hs = hosts.get(host, HostState())
    task = str(data.get("task") or "")
    res = data.get("res") or TaskResult()
    started = None
    if kind == "runner_on_start":
        hs, started = replace(hs, task=task), host
    elif kind == "runner_on_unreachable":
        hs = replace(hs, status="unreachable", reason=_message(res))
    elif kind == "runner_on_failed" and not data.get("ignore_errors"):
        hs = replace(hs, status="failed", reason=f"{task}: {_message(res)}")
    elif kind == "runner_on_ok" and task == "clean up":
        hs = replace(hs, done=True)
    hosts[host] = hs
    return started


@contextlib.contextmanager
def _stopping(event: threading.Event) -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP set ``event`` (ansible-runner polls it) instead of raising."""
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.getsignal(s) for s in sigs}
    for s in sigs:
        signal.signal(s, lambda *_: event.set())
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def stop_agents(private_dir: Path, inventory: Path, extravars: ExtraVars, hosts: Sequence[str],
                envvars: Mapping[str, str] | None = None) -> None:
    """Stop the agents of ``hosts`` now and remove their job directories (the playbook's `stop`
    play): Ansible detaches its workers (setsid), so their ssh sessions, and the agents tethered
    to them, outlive a cancel."""
    import ansible_runner

    ansible_runner.run(private_data_dir=str(private_dir), playbook=str(PLAYBOOK), inventory=str(inventory.resolve()),
                       limit=",".join(hosts), extravars=dict(extravars), tags="stop", quiet=True,
                       envvars=dict(envvars or {}), settings={"suppress_ansible_output": True})


def drive(private_dir: Path, inventory: Path, extravars: ExtraVars, limit: str | None, forks: int,
          progress: Callable[[str, str], None], envvars: Mapping[str, str] | None = None) -> Drive:
    """Run the playbook over ``inventory`` (ansible-runner, artifacts in ``private_dir``, ``forks``
    hosts at once) and return each host's state; ``progress(host, task)`` as each task starts. A
    stop signal cancels the run, stops the agents still at work and returns what happened.
    FleetError when ansible-runner is missing or nothing ran."""
    try:
        import ansible_runner
    except ImportError as e:
        raise FleetError(f"the fleet needs ansible-runner and ansible-core ({e.name}): pip install "
                         "'cyclebench[fleet]'") from None
    hosts: dict[str, HostState] = {}

    def handle(ev: RunnerEvent) -> bool:
        host = fold(hosts, ev)
        if host is not None:
            progress(host, hosts[host].task)
        return True

    stop = threading.Event()
    # A cancel kills ansible-playbook's process group, but its workers detached (setsid) and
    # would run on under PID 1, a queued host waiting minutes for its machine: as their
    # subreaper, cyclebench gets them back and ends them once the stop play is done.
    # a Ctrl-C after the run (a second one) neither leaves the agents running nor stops the reaping
    with _stopping(threading.Event()), reaping():
        with _stopping(stop):
            r = ansible_runner.run(
                private_data_dir=str(private_dir), playbook=str(PLAYBOOK), inventory=str(inventory.resolve()),
                limit=limit, extravars=dict(extravars), forks=forks, quiet=True, envvars=dict(envvars or {}),
                event_handler=handle, cancel_callback=stop.is_set,
                settings={"pexpect_timeout": 0.5, "suppress_ansible_output": True},
            )
        state = Drive(dict(hosts), str(r.status), stop.is_set() or r.status == "canceled")
        # every host still in its play: one measuring has an agent to stop, one copying files a job
        # directory to remove (the stop play does both)
        busy = [h for h, hs in state.hosts.items() if hs.status is None and not hs.done]
        if state.canceled and busy:
            progress(",".join(busy), "stopping the agents")
            stop_agents(private_dir, inventory, extravars, busy, envvars)
    if not state.hosts and r.status == "failed":  # nothing ran: the inventory or the playbook is wrong
        text = "".join(r.stdout.readlines()) if r.stdout else ""
        raise FleetError(text.strip().splitlines()[-1] if text.strip() else "ansible-playbook failed")
    return state
