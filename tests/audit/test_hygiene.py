"""What commands leave on the machine: no files in $TMPDIR or the working directory, no
lasting zombies, a build cache that can be cleaned and is private to its owner."""

from __future__ import annotations

import re

import pytest

from .conftest import NewLab
from .harness import CASES, Lab

pytestmark = pytest.mark.audit


@pytest.mark.audit_slow
def test_run_and_stat_leave_nothing_in_tmpdir_or_the_working_directory(lab: Lab) -> None:
    for argv in (("run", "-b", "vfs/mix", "-b", "timer/rdtsc", "-q"), ("stat", "-r", "2", "--", "true")):
        r = lab.run(*argv)
        assert r.rc == 0, r
    assert lab.tree("tmp") == [] and lab.tree("cwd") == []


@pytest.mark.audit_slow
def test_scale_with_processes_leaves_no_lasting_zombies(new_lab: NewLab) -> None:
    lab = new_lab(watch=True)
    r = lab.run("scale", "contend/padded", "--mode", "processes", "--tasks", "1..3", "--duration", "0.6", "--passes",
                "1", "--warmup", "0.2", "--retries", "0")
    assert r.rc == 0, r
    stuck = [pid for pid, n in r.zombie_samples.items() if n >= 4]
    assert not stuck, f"zombie(s) for ≥ 0.2 s: {stuck}"


def test_the_build_cache_can_be_cleaned_from_the_cli(lab: Lab) -> None:
    """The cache grew without bound and nothing said how to clean it."""
    r = lab.run("--help")
    assert re.search(r"^\s+(clean|prune|gc|cache)\b", r.text, re.M), r.text


@pytest.mark.audit_slow
def test_build_cache_entries_are_private(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/ok.c", "-q", "--json", "{T}/r.json")
    assert r.rc == 0, r
    shared = [f"{p.name} {p.stat().st_mode & 0o777:o}" for p in (lab.cache / "build").iterdir()
              if p.is_dir() and p.stat().st_mode & 0o077]
    assert not shared, shared
