"""A throwaway lab for the fleet's tests: an sshd on 127.0.0.1 at a free high port, with a
generated host key and user key (ssh-keygen) and its own sshd_config (StrictModes no, the pid
file and authorized keys in a private directory), the wheelhouse built once per session, and
one venv installed from it once per test run (``installed_venv``) that ``seed`` gives a host's
fleet directory, so a host skips the install as docs/fleet.md says one whose venv holds the key does.

Import the fixtures into a test module (``from sshlab import ssh_lab, wheels, installed_venv``). Skipped, with
the reason, when sshd (Debian: openssh-server), ssh-keygen or ansible-runner is missing or the
daemon does not start."""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# The hosts' Python: every inventory line of the fleet's tests names it (ansible_python_interpreter)
HOST_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class Lab:
    root: Path
    port: int
    key: Path

    def host_line(self, name: str, workdir: Path, port: int | None = None) -> str:
        """An inventory line for ``name``: this machine over ssh, its own cyclebench directory."""
        return (f"{name} ansible_host=127.0.0.1 ansible_port={port or self.port} ansible_user=root "
                f"ansible_ssh_private_key_file={self.key} cyclebench_dir={workdir} "
                "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null' "
                f"ansible_python_interpreter={HOST_PYTHON}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Ansible as the fleet's tests run it. The strategy's loop polls its workers every
# internal_poll_interval (default 0.001 s, and no environment variable sets it): 0.11 s of CPU per
# second a playbook runs (2.1 vs 1.2 s for one 8 s task on two hosts), some 20 s of the module's
# playbook-minutes on a 2-CPU machine; at 0.02 s a task's result is seen 20 ms later at most.
# ssh without -C (Ansible's default ssh_args compress): the wheelhouse is ~90 MB of zips that do
# not compress, deflated by one ssh and inflated by sshd all the same.
# No ssh retries (Ansible's default, 0): a retry hid the fault that cut sessions ("Data could not
# be sent to remote host", then a retried copy's "Source … not found"), one job's reaping of the
# ssh master the module's jobs shared; each job has its own now (fleet.job._control_dir).
ANSIBLE_CFG = """[defaults]
internal_poll_interval = 0.02
[ssh_connection]
ssh_args = -o ControlMaster=auto -o ControlPersist=60s
"""


@pytest.fixture(scope="module")
def ansible_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """$ANSIBLE_CONFIG while the module runs (every fleet command and ansible-playbook its tests
    start inherits it; a module's ``pytest.mark.usefixtures`` sets it up before its other
    module fixtures): ``ANSIBLE_CFG``."""
    path = tmp_path_factory.mktemp("ansible") / "ansible.cfg"
    path.write_text(ANSIBLE_CFG)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANSIBLE_CONFIG", str(path))
        yield path


@pytest.fixture(scope="session")
def ssh_lab() -> Iterator[Lab]:
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
    if sshd is None or shutil.which("ssh-keygen") is None or shutil.which("ssh") is None:
        pytest.skip("no sshd/ssh/ssh-keygen here (Debian: apt-get install openssh-server openssh-client)")
    if os.geteuid() != 0:
        pytest.skip("the test sshd logs in as root: run as root")
    pytest.importorskip("ansible_runner", reason="ansible-runner not installed (pip install 'cyclebench[fleet]')")
    root = Path(tempfile.mkdtemp(prefix="cyclebench-sshlab-"))
    os.chmod(root, 0o700)
    for name in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)], check=True)
    shutil.copy(root / "user_key.pub", root / "authorized_keys")
    port = free_port()
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\nPidFile {root / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nStrictModes no\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nSubsystem sftp internal-sftp\n"
        "MaxStartups 50\nMaxSessions 50\n")
    Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation directory
    with open(root / "sshd.log", "w") as log_file:
        proc = subprocess.Popen([sshd, "-D", "-e", "-f", str(root / "sshd_config")], stderr=log_file)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    else:
        proc.kill()
    if proc.poll() is not None:
        log = (root / "sshd.log").read_text()[-300:]
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"sshd did not start: {log}")
    yield Lab(root, port, root / "user_key")
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def wheels() -> Path:
    """The wheelhouse of this cyclebench, built once per session (pip wheel; seconds with pip's
    cache, minutes without)."""
    from cyclebench.build.wheelhouse import WheelhouseError, wheelhouse

    t0 = time.monotonic()
    try:
        wh = wheelhouse()
    except WheelhouseError as e:  # offline, no pip cache: the hosts would have nothing to install
        pytest.skip(f"cannot build the wheelhouse here: {e}")
    print(f"wheelhouse: {wh.path.name} in {time.monotonic() - t0:.1f} s")
    return wh.path


@pytest.fixture(scope="session")
def installed_venv(wheels: Path) -> Path:
    """A host's venv with the session's wheelhouse installed, made once per test run: by the
    hosts' own code (fleet/bootstrap.py ``install``, run with the hosts' Python) and kept in the
    run's cache beside the wheelhouse, under its key, so both phases of `bash dev.sh test` share it.
    Each fleet directory the tests made installed its own: five installs, 25-30 s each, were
    ~125 s of the module's 236 s on the 2-vCPU VM (load 1.2-3.8). One test still installs from
    scratch (test_fleet.py's bundles test). Its first agent run is made here too, so
    the copies hold the bytecode of what a host imports (``_warm``).
    """
    import cyclebench
    from cyclebench.build.wheelhouse import wheelhouse
    from cyclebench.fleet import bootstrap

    wh = wheelhouse()  # the same, cached: its key, version and wheel name
    seed = wheels.parent.parent / "fleet-venv" / wheels.name
    if (seed / "venv" / bootstrap.MARKER).is_file():  # written last by install: a whole install
        return seed / "venv"
    seed.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=seed.parent, prefix=f".{seed.name}."))
    os.chmod(tmp, 0o755)
    job = tmp / "jobs" / "seed"
    job.mkdir(parents=True)
    os.link(wh.archive, job / "wheels.tar")  # install() removes the job's copy once unpacked
    t0 = time.monotonic()
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import bootstrap; "
            "bootstrap.install(*map(bootstrap.Path, sys.argv[2:4]), *sys.argv[4:])")
    r = subprocess.run([HOST_PYTHON, "-c", code, str(Path(bootstrap.__file__).parent), str(tmp), str(job),
                        wh.key, cyclebench.__version__, wh.wheel], capture_output=True, text=True)
    if r.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.fail(f"installing the wheelhouse as a host does failed: {r.stderr[-2000:]}")
    shutil.rmtree(tmp / "wheels")  # unpacked wheels: seeded hosts never install
    _warm(tmp)
    shutil.rmtree(tmp / "jobs")
    try:
        tmp.rename(seed)
    except OSError as e:  # another session's install of the same key won
        if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"host venv installed in {time.monotonic() - t0:.1f} s")
    return seed / "venv"


def _warm(host_dir: Path) -> None:
    """One agent run in the fresh venv, so it holds the bytecode of what a host imports: install()
    compiles nothing (--no-compile), a host writes its .pyc on first use, and a seeded copy of a
    cold venv paid that first use in every test's fleet directory — local hosts in every run, as
    the tests' environment may carry PYTHONDONTWRITEBYTECODE=1 (it does here): an agent (check,
    run, bundles) took 3.3 s of CPU cold, 1.8 s warm. The .pyc files, hard links in the copies,
    stay valid there (same source mtime and size)."""
    from conftest import DATA

    job = host_dir / "jobs" / "warm"
    job.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "CYCLEBENCH_DB")}
    env["CYCLEBENCH_CACHE"] = str(host_dir / "cache")
    py = str(host_dir / "venv" / "bin" / "python")
    r = subprocess.run([py, "-m", "cyclebench", "fleet", "agent", "--host", "warm", "--job-dir", str(job), "--",
                        "run", "-f", str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat",
                        "3", "--processes", "1", "--target-ci", "0"], capture_output=True, text=True, env=env)
    if r.returncode != 0 or json.loads((job / "agent.json").read_text()).get("returncode") != 0:
        pytest.fail(f"the installed venv's first agent run failed: {r.stderr[-2000:]}")
    shutil.rmtree(host_dir / "cache")


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem
        shutil.copy2(src, dst)


def seed(fleet_dir: Path, venv: Path) -> Path:
    """``fleet_dir`` as a host leaves it after installing: the machine's venv (hard links to
    ``venv``'s files: a second or so, not an install) with the installed key. Returns the
    machine's directory (``hosts/<machine key>``)."""
    from cyclebench.fleet import bootstrap

    host_dir = fleet_dir / "hosts" / bootstrap.machine_key()
    host_dir.mkdir(mode=0o755, parents=True)
    for d in (fleet_dir, fleet_dir / "hosts"):
        os.chmod(d, 0o755)
    shutil.copytree(venv, host_dir / "venv", symlinks=True, copy_function=_link_or_copy)
    return host_dir
