"""A run's identity (env.identity): the boot id, the sources' git revision and its
dirty flag, and the identity as the runs columns."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cyclebench.env import identity, sysinfo

from conftest import FIXTURES

METAL = FIXTURES / "sysroot_baremetal"
BOOT = "0f8c2d6e-3b1a-4c5d-9e7f-1a2b3c4d5e6f"

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_boot_id_from_proc(tmp_path: Path) -> None:
    assert identity.boot_id(METAL) == BOOT
    assert identity.boot_id(tmp_path) is None  # no /proc here: unknown, not an error
    live = identity.boot_id()
    assert live is None or len(live) == 36


def test_capture_records_the_boot_id() -> None:
    env = sysinfo.capture(3, cc="/nonexistent/cc", root=METAL)
    assert env["boot_id"] == BOOT


def test_columns_from_a_captured_environment() -> None:
    env = sysinfo.capture(3, cc="/nonexistent/cc", root=METAL)
    cols = identity.columns(env, "gcc (Debian 12.2.0-14) 12.2.0", identity.CodeRevision("v1-3-gabc123-dirty", True))
    assert cols == {"kernel_release": "6.1.0-18-amd64", "kernel_version": env["kernel"]["version"],
                    "boot_id": BOOT, "microcode": "0xf4", "compiler": "gcc (Debian 12.2.0-14) 12.2.0",
                    "code_rev": "v1-3-gabc123-dirty", "code_dirty": True}
    assert cols["kernel_version"]
    # nothing known: all None; strings cut to their columns
    assert set(identity.columns({}, None, identity.CodeRevision()).values()) == {None}
    assert len(identity.columns({"boot_id": "x" * 100}, "c" * 300, identity.CodeRevision())["compiler"]) == 255


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    _git(r, "init", "-q")
    _git(r, "config", "user.email", "t@example.com")
    _git(r, "config", "user.name", "t")
    (r / "bench.c").write_text("int x;\n")
    (r / "other.c").write_text("int y;\n")
    (r / ".gitignore").write_text("ignored.c\n")
    _git(r, "add", ".")
    _git(r, "commit", "-q", "-m", "one")
    return r


@needs_git
def test_clean_sources_are_the_revision(repo: Path) -> None:
    head = _git(repo, "rev-parse", "--short", "HEAD")
    assert identity.code_identity([repo / "bench.c"]) == identity.CodeRevision(head, False)
    assert identity.code_revision([repo / "bench.c"]) == head


@needs_git
@pytest.mark.parametrize("change", ["modify tracked", "modify another tracked", "untracked source", "ignored source",
                                    "source outside the repository"])
def test_dirty_when_the_revision_would_not_give_back_the_sources(repo: Path, tmp_path: Path, change: str) -> None:
    head = _git(repo, "rev-parse", "--short", "HEAD")
    sources = [repo / "bench.c"]
    if change == "modify tracked":
        (repo / "bench.c").write_text("int x = 1;\n")
    elif change == "modify another tracked":  # a header may come from anywhere in the repository
        (repo / "other.c").write_text("int y = 2;\n")
    elif change == "untracked source":
        (repo / "new.c").write_text("int z;\n")
        sources.append(repo / "new.c")
    elif change == "ignored source":
        (repo / "ignored.c").write_text("int z;\n")
        sources.append(repo / "ignored.c")
    else:
        (tmp_path / "elsewhere.c").write_text("int z;\n")
        sources.append(tmp_path / "elsewhere.c")
    assert identity.code_identity(sources) == identity.CodeRevision(f"{head}-dirty", True)


@needs_git
def test_an_untracked_file_that_is_not_measured_does_not_make_it_dirty(repo: Path) -> None:
    (repo / "notes.txt").write_text("x\n")
    assert identity.code_identity([repo / "bench.c"]).dirty is False


def test_outside_any_repository(tmp_path: Path) -> None:
    (tmp_path / "b.c").write_text("int x;\n")
    assert identity.code_identity([tmp_path / "b.c"]) == identity.CodeRevision(None, None)
    assert identity.code_identity([]) == identity.CodeRevision(None, None)
