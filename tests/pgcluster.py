"""A throwaway PostgreSQL cluster for tests: ``initdb`` + ``pg_ctl`` in a private temporary
directory, listening only on a unix socket there (no TCP), trust authentication.

Import the fixtures into a test module (``from pgcluster import pg_cluster, pg_url``) and
take ``pg_url`` (a fresh, empty database per test). Skipped, with the reason, when the
server (Debian: ``apt-get install postgresql``) or psycopg (``pip install 'cyclebench[postgres]'``)
is missing. Run as root, the cluster belongs to the ``postgres`` user (initdb refuses root).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Cluster:
    bindir: Path
    root: Path  # private directory: data/, the socket, the log
    port: int
    user: str = "postgres"

    def url(self, database: str) -> str:
        return f"postgresql://{self.user}@/{database}?host={self.root}&port={self.port}"


def find_bindir() -> Path | None:
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).parent
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(argv: list[str], owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--", *argv] if owner else argv


@dataclass(frozen=True)
class Owned:
    """A cluster a test may stop: ``stop()`` is pg_ctl stop -m fast (what a server shutdown does
    to every connected client: FATAL 57P01, then the socket closes)."""

    cluster: Cluster
    data: Path
    owner: str | None

    def stop(self) -> None:
        subprocess.run(_as_owner([str(self.cluster.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                                  "stop"], self.owner), capture_output=True, timeout=60)


@contextlib.contextmanager
def _started() -> Iterator[Owned]:
    bindir = find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server not installed: initdb not found (Debian/Ubuntu: apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg not installed (pip install 'cyclebench[postgres]')")
    owner = None
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to own the test cluster")
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
        owner = "postgres"
    root = Path(tempfile.mkdtemp(prefix="cyclebench-pg-"))
    if owner:
        os.chown(root, pw.pw_uid, pw.pw_gid)
    user = "postgres" if owner else pwd.getpwuid(os.geteuid()).pw_name
    cluster = Cluster(bindir, root, _free_port(), user)
    data, log = root / "data", root / "log"
    try:
        subprocess.run(_as_owner([str(bindir / "initdb"), "-D", str(data), "-U", user, "--auth=trust",
                                  "-E", "UTF8", "--locale=C", "--no-sync"], owner),
                       check=True, capture_output=True, text=True, timeout=120)
        opts = (f"-k {root} -p {cluster.port} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                "-c full_page_writes=off -c max_connections=40 -c shared_buffers=16MB")
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", opts, "-w",
                                  "-t", "60", "start"], owner),
                       check=True, capture_output=True, text=True, timeout=90)
    except subprocess.CalledProcessError as e:
        tail = log.read_text()[-2000:] if log.exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"cannot start the test PostgreSQL: {e.stderr or e.stdout}\n{tail}") from e
    try:
        yield Owned(cluster, data, owner)
    finally:
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], owner),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    with _started() as owned:
        yield owned.cluster


@pytest.fixture
def pg_own_cluster() -> Iterator[Owned]:
    """A cluster of this test alone, which it may stop (``.stop()``); its database ``postgres``."""
    with _started() as owned:
        yield owned


_numbers = itertools.count()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A new empty database in the test cluster; dropped afterwards."""
    import psycopg

    name = f"cb_test_{os.getpid()}_{next(_numbers)}"
    admin = {"host": str(pg_cluster.root), "port": pg_cluster.port, "user": pg_cluster.user, "dbname": "postgres",
             "autocommit": True}
    with psycopg.connect(**admin) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_cluster.url(name)
    finally:
        with psycopg.connect(**admin) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
