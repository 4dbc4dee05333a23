"""Driving the fleet's playbook with ansible-runner (the engine; cyclebench writes no ssh or
scheduling of its own): the run's events become each host's state, Ctrl-C/SIGTERM/SIGHUP
cancel it through ansible-runner's cancel callback (it kills ansible-playbook's process group,
ssh clients included, so the remote agents lose their session and stop: runner/tether.py).

ansible-runner: https://ansible.readthedocs.io/projects/runner/en/stable/python_interface/
(``run``, ``cancel_callback``, ``event_handler``; event names runner_on_ok, runner_on_failed,
runner_on_unreachable, playbook_on_stats)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cyclebench.fleet import PLAYBOOK


class FleetError(Exception):
    """ansible-runner or ansible-core is not installed, or ansible-playbook could not start
    (a bad inventory, a --limit matching no host)."""


@dataclass
class HostState:
    """What the events said of one host: its status (None: nothing went wrong so far), why,
    the task it was in, and whether it finished the play."""

    status: str | None = None
    reason: str | None = None
    task: str = ""
    done: bool = False


@dataclass
class Drive:
    hosts: dict[str, HostState] = field(default_factory=dict)
    status: str = ""  # ansible-runner's: successful | failed | canceled | timeout
    canceled: bool = False


def _message(res: Mapping[str, Any]) -> str:
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


def on_event(state: Drive, progress: Callable[[str, str], None]) -> Callable[[dict[str, Any]], bool]:
    def handle(ev: dict[str, Any]) -> bool:
        kind, data = ev.get("event", ""), ev.get("event_data") or {}
        host = data.get("host")
        if not host:
            return True
        hs = state.hosts.setdefault(host, HostState())
        task = str(data.get("task") or "")
        res = data.get("res") or {}
        if kind == "runner_on_start":
            hs.task = task
            progress(host, task)
        elif kind == "runner_on_unreachable":
            hs.status, hs.reason = "unreachable", _message(res)
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            hs.status, hs.reason = "failed", f"{task}: {_message(res)}"
        elif kind == "runner_on_ok" and task == "clean up":
            hs.done = True
        return True

    return handle


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


def stop_agents(private_dir: Path, inventory: Path, extravars: dict[str, Any], hosts: list[str],
                envvars: Mapping[str, str] | None = None) -> None:
    """Stop the agents of ``hosts`` now and remove their job directories (the playbook's `stop`
    play): Ansible detaches its workers (setsid), so their ssh sessions, and the agents tethered
    to them, outlive a cancel."""
    import ansible_runner

    ansible_runner.run(private_data_dir=str(private_dir), playbook=str(PLAYBOOK), inventory=str(inventory.resolve()),
                       limit=",".join(hosts), extravars=extravars, tags="stop", quiet=True,
                       envvars=dict(envvars or {}), settings={"suppress_ansible_output": True})


def drive(private_dir: Path, inventory: Path, extravars: dict[str, Any], limit: str | None, forks: int,
          progress: Callable[[str, str], None], envvars: Mapping[str, str] | None = None) -> Drive:
    """Run the playbook over ``inventory`` (ansible-runner, artifacts in ``private_dir``) and
    return each host's state; a stop signal cancels the run and returns what happened."""
    try:
        import ansible_runner
    except ImportError as e:
        raise FleetError(f"the fleet needs ansible-runner and ansible-core ({e.name}): pip install "
                             "'cyclebench[fleet]'") from None
    state = Drive()
    stop = threading.Event()
    with _stopping(stop):
        r = ansible_runner.run(
            private_data_dir=str(private_dir), playbook=str(PLAYBOOK), inventory=str(inventory.resolve()),
            limit=limit, extravars=extravars, forks=forks, quiet=True, envvars=dict(envvars or {}),
            event_handler=on_event(state, progress), cancel_callback=stop.is_set,
            settings={"pexpect_timeout": 0.5, "suppress_ansible_output": True},
        )
    state.status, state.canceled = str(r.status), stop.is_set() or r.status == "canceled"
    # every host still in its play: one measuring has an agent to stop, one copying files a job
    # directory to remove (the stop play does both)
    busy = [h for h, hs in state.hosts.items() if hs.status is None and not hs.done]
    if state.canceled and busy:
        progress(",".join(busy), "stopping the agents")
        with _stopping(threading.Event()):  # a second Ctrl-C does not leave them running
            stop_agents(private_dir, inventory, extravars, busy, envvars)
    if not state.hosts and r.status == "failed":  # nothing ran: the inventory or the playbook is wrong
        text = "".join(r.stdout.readlines()) if r.stdout else ""
        raise FleetError(text.strip().splitlines()[-1] if text.strip() else "ansible-playbook failed")
    return state
