"""Revisions run confined (runner/sandbox.py, docs/revisions.md "Sandbox"): `compare --rev` of a
repository whose history holds a hostile Makefile, a hostile benchmark and a build that never ends.
Real git, real make, real bubblewrap (skipped, saying so, where it cannot run)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cyclebench
from cyclebench.runner.sandbox import unavailable
from gitlib import HEADER, source

pytestmark = [pytest.mark.skipif(unavailable() is not None, reason=f"no sandbox here: {unavailable()}"),
              pytest.mark.skipif(not all(os.path.exists(f"/usr/bin/{t}") for t in ("git", "make")),
                                 reason="needs git and make")]

GOOD_MAKE = "libwork.a: lib/work.c lib/work.h\n\t$(CC) -O2 -c lib/work.c -o work.o\n\tar rcs libwork.a work.o\n"
BENCH = """#include <cyclebench.h>
#include <stdio.h>
#include <stdlib.h>
#include "work.h"
CB_GROUP_SETUP(lib) {  /* %s */
    const char *home = getenv("HOME");
    char path[4096];
    snprintf(path, sizeof path, "%%s/bench-was-here", home ? home : "/nonexistent");
    FILE *f = fopen(path, "w");
    if (f) { fputs("pwned\\n", f); fclose(f); }
    f = fopen("%s/bench-was-here", "w");
    if (f) { fputs("pwned\\n", f); fclose(f); }
}
CB_BENCH(lib, work) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = work(x);
    cb_do_not_optimize(x);
}
"""


def _repo(root: Path, victim: Path) -> dict[str, str]:
    """good: builds; hostile: its Makefile deletes ``victim`` and writes into $HOME and the work
    tree; sleepy: its build sleeps for a minute; bench: builds, its benchmark writes at set-up."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    (root / "lib").mkdir(parents=True)
    (root / "lib" / "work.h").write_text(HEADER)
    (root / "lib" / "work.c").write_text(source(1))
    (root / "bench.c").write_text(BENCH % ("quiet", root))
    git("init", "-q", "-b", "main")
    shas = {}
    for name, make in [
        ("good", GOOD_MAKE),
        ("hostile", GOOD_MAKE.replace("\tar rcs", f"\trm -f {victim}\n\techo pwned > $(HOME)/make-was-here\n"
                                      f"\techo pwned > {root}/make-was-here\n\tar rcs")),
        ("sleepy", GOOD_MAKE.replace("\tar rcs", "\tsleep 67.25\n\tar rcs")),
        ("bench", GOOD_MAKE),
    ]:
        (root / "Makefile").write_text(make)
        if name == "bench":
            (root / "bench.c").write_text(BENCH % ("hostile", root))
        git("add", "-A")
        git("commit", "-q", "-m", name)
        shas[name] = git("rev-parse", "HEAD")
    return shas


def _cb(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    src = str(Path(cyclebench.__file__).resolve().parents[1])
    env = {**os.environ, "HOME": str(home), "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "cyclebench", *args], env=env, text=True, capture_output=True,
                          timeout=600, check=False)


@pytest.fixture
def lab(tmp_path: Path, db: str) -> tuple[Path, Path, Path, dict[str, str]]:
    home, victim = tmp_path / "home", tmp_path / "outside" / "keep.txt"
    home.mkdir()
    victim.parent.mkdir()
    victim.write_text("keep me\n")
    repo = tmp_path / "repo"
    return repo, home, victim, _repo(repo, victim)


def _opts(repo: Path, *more: str) -> list[str]:
    return ["--repo", str(repo), "-f", str(repo / "bench.c"), "--build", "make", "--ldflags", "libwork.a",
            "-I", str(repo / "lib"), "--budget", "0.5", *more]


def test_a_hostile_makefile_writes_nothing_outside_its_checkout(lab: tuple[Path, Path, Path, dict[str, str]]
                                                                 ) -> None:
    repo, home, victim, shas = lab
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["hostile"], *_opts(repo))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "does not build" in r.stderr and "cannot create" in r.stderr and "in a sandbox" in r.stderr, r.stderr
    assert victim.read_text() == "keep me\n"
    assert not (home / "make-was-here").exists() and not (repo / "make-was-here").exists()
    # the same history unconfined: what the sandbox prevented
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["hostile"], *_opts(repo, "--no-sandbox"))
    assert not victim.exists() and (home / "make-was-here").exists() and (repo / "make-was-here").exists()
    # and its run says so for as long as it is kept (the only run: the confined build stored none)
    shown = _cb(home, "show")
    assert shown.returncode == 0, shown.stderr
    assert "revisions built and run UNCONFINED, with the user's rights and the network: --no-sandbox" in shown.stderr


def test_a_hostile_benchmark_writes_nothing_outside_its_checkout(lab: tuple[Path, Path, Path, dict[str, str]]
                                                                  ) -> None:
    repo, home, _, shas = lab
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["bench"], *_opts(repo, "-b", "lib/work"))
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert not (home / "bench-was-here").exists() and not (repo / "bench-was-here").exists()
    shown = _cb(home, "show")  # the run says it was confined
    assert "revisions built and run in a bwrap sandbox (no network;" in shown.stderr, shown.stderr


def test_a_build_past_its_timeout_is_unbuildable_and_gone(lab: tuple[Path, Path, Path, dict[str, str]]) -> None:
    repo, home, _, shas = lab
    t0 = time.monotonic()
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["sleepy"], *_opts(repo, "--build-timeout", "2"))
    took = time.monotonic() - t0
    assert r.returncode == 2 and "ran past --build-timeout 2 s and was stopped (" in r.stderr, r.stderr
    build_s = float(r.stderr.split("was stopped (")[1].split(" s)")[0])
    assert build_s <= 5, r.stderr  # the build, from its start to its whole tree gone
    # the good revision's build and runner are made first: the sleepy one's ends at its limit
    assert took < 60, took
    left = subprocess.run(["pgrep", "-f", "sleep 67.25"], capture_output=True, text=True).stdout.split()
    assert not left, left
    checkouts = [p for p in Path(os.environ["CYCLEBENCH_CACHE"], "revisions").glob("*/src")
                 if (p / "Makefile").is_file() and "sleep 67.25" in (p / "Makefile").read_text()]
    assert not checkouts


def test_sandbox_require_and_no_sandbox(lab: tuple[Path, Path, Path, dict[str, str]],
                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Where no sandbox can be made (bwrap not on PATH): one line and on, the run recording why it
    was unconfined; or exit 2 with require."""
    repo, home, _, shas = lab
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "make", "cc", "ar", "as", "ld", "gcc", "objdump", "nproc", "sh", "rm"):
        for d in ("/usr/bin", "/bin"):
            if Path(d, tool).exists():
                (bin_dir / tool).symlink_to(Path(d, tool))
                break
    monkeypatch.setenv("PATH", str(bin_dir))
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["good"], *_opts(repo, "--sandbox", "require"))
    assert r.returncode == 2 and "--sandbox require: no sandbox can be made here: bwrap is not installed" in r.stderr
    r = _cb(home, "compare", "--rev", shas["good"], "--rev", shas["good"], *_opts(repo))
    assert "revisions build and run unconfined: bwrap is not installed" in r.stderr, r.stderr
    # not only that line, which scrolls away: the run stored it, and show says it
    shown = _cb(home, "show")
    assert shown.returncode == 0, shown.stderr
    assert ("revisions built and run UNCONFINED, with the user's rights and the network: bwrap is not installed "
            "(apt-get install bubblewrap)") in " ".join(shown.stderr.split()), shown.stderr


def test_a_hidden_directory_in_tmp_leaves_tmp_writable(tmp_path: Path) -> None:
    """A database under /tmp is hidden from a revision's code; the private /tmp hides it already,
    and stays writable (valgrind could not start when /tmp itself was remounted read-only)."""
    from cyclebench.runner.sandbox import Sandbox

    secret = tmp_path / "db"
    secret.mkdir()
    (secret / "lab.db").write_text("x")
    for hidden in (Path("/tmp"), secret):
        script = f"echo ok > /tmp/w && cat /tmp/w && ! test -e {secret}/lab.db"
        argv = [*Sandbox(hidden=(hidden,)).prefix(), "sh", "-c", script]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip() == "ok", (hidden, r.stderr)
