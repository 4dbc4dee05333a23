"""The revisions cache (experiments.revisions; docs/revisions.md): a checkout that cannot be
made (a full disk) is one line and leaves nothing half made; a half-made checkout whose maker is
gone (killed mid-build) is swept by the next prepare, one a live process holds never; `cache
info` and `cache clean` know the checkouts."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from cyclebench.cli import main
from cyclebench.experiments.options import BuildOptions
from cyclebench.experiments.revisions import Recipe, Repo, RevisionError, prepare

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README").write_text("one\n")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "one")):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})
    return Repo(root)


def _recipe(repo: Repo) -> Recipe:
    return Recipe(BuildOptions(files=(repo.root / "absent.c",)))  # no compiler needed: "not in this revision"


def _checkouts(tmp_path: Path) -> list[str]:
    d = tmp_path / "cache" / "revisions"
    return sorted(p.name for p in d.iterdir() if p.is_dir()) if d.is_dir() else []


def test_a_full_disk_is_one_line_and_leaves_no_checkout(repo: Repo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tarfile.TarFile, "extractall", full)
    with pytest.raises(RevisionError, match="No space left on device"):
        prepare(repo, repo.resolve("HEAD"), _recipe(repo))
    assert _checkouts(tmp_path) == []


def test_a_half_made_checkout_is_swept_when_its_maker_is_gone(repo: Repo, tmp_path: Path) -> None:
    built = prepare(repo, repo.resolve("HEAD"), _recipe(repo))
    assert built.reason and "not in this revision" in built.reason
    d = tmp_path / "cache" / "revisions"
    dead, live = d / "deadbeef", d / "cafef00d"
    for e in (dead, live):
        (e / "src").mkdir(parents=True)  # no status.json: a build killed half-way
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(live) + '.lock'!r}, os.O_RDWR | os.O_CREAT)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX); print(flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline()  # it holds the lock now
        prepare(repo, repo.resolve("HEAD"), _recipe(repo))
        assert not dead.exists() and live.is_dir()
    finally:
        holder.kill()
        holder.wait()
    fd = os.open(str(live) + ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with its holder
    os.close(fd)


def test_cache_info_and_clean_know_the_checkouts(repo: Repo, tmp_path: Path) -> None:
    prepare(repo, repo.resolve("HEAD"), _recipe(repo))
    assert len(_checkouts(tmp_path)) == 1
    r = CliRunner().invoke(main, ["cache", "info"], env={"CYCLEBENCH_CACHE": str(tmp_path / "cache")})
    assert r.exit_code == 0 and "revisions: 1 checkout," in r.output, r.output
    r = CliRunner().invoke(main, ["cache", "clean", "--all"], env={"CYCLEBENCH_CACHE": str(tmp_path / "cache")})
    assert r.exit_code == 0, r.output
    assert _checkouts(tmp_path) == []
