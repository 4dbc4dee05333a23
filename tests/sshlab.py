"""A throwaway lab for the fleet's tests: an sshd on 127.0.0.1 at a free high port, with a
generated host key and user key (ssh-keygen) and its own sshd_config (StrictModes no, the pid
file and authorized keys in a private directory), and the wheelhouse built once per session.

Import the fixtures into a test module (``from sshlab import ssh_lab, wheels``). Skipped, with
the reason, when sshd (Debian: openssh-server), ssh-keygen or ansible-runner is missing or the
daemon does not start."""

from __future__ import annotations

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
                "ansible_python_interpreter=/usr/bin/python3")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
