"""Signals in the middle of a command, each landing in the phase its case is about (the build,
the measurement, a child's run): Ctrl-C is exit 130 with what was measured kept, no run is left
'running', and nothing — compiler, runner, temporary file — outlives the command."""

from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from .conftest import NewLab, Shared
from .harness import CASES, EXAMPLES, Lab, Sig, appears, proc_running, run_stored

pytestmark = pytest.mark.audit

INT, TERM, KILL = signal.SIGINT, signal.SIGTERM, signal.SIGKILL


def no_run_left_running(lab: Lab) -> None:
    statuses = lab.run_statuses()
    assert statuses, "no run stored"
    assert "running" not in statuses, statuses


@pytest.mark.audit_slow
def test_ctrl_c_mid_run_keeps_what_was_measured(lab: Lab) -> None:
    r = lab.run("run", sig=Sig(INT, 2, when=run_stored()))
    assert r.rc == 130, r
    assert "interrupted" in r.text
    assert lab.n_runs() >= 1
    no_run_left_running(lab)


@pytest.mark.audit_slow
def test_ctrl_c_mid_compare_is_exit_130_and_says_nothing_is_stored(lab: Lab) -> None:
    """compare measures every set first and stores its run at the end (experiments/compare.execute:
    the store opens while the runners measure), so Ctrl-C among its runners is exit 130 with no run
    left 'running' and a line saying nothing was stored. (Sent once the run was stored, 2 s later,
    the signal came after the command had ended: the run is stored ~0.1 s before compare ends.)"""
    r = lab.run("compare", "copy/memcpy", "copy/rep_movsb", "--min-time", "1",
                sig=Sig(INT, 1, when=proc_running("runner")))
    assert r.rc == 130, r
    assert "nothing stored" in " ".join(r.text.split()), r.text
    assert "running" not in lab.run_statuses()


@pytest.mark.audit_slow
def test_ctrl_c_mid_scale_marks_the_run(lab: Lab) -> None:
    r = lab.run("scale", "contend/padded", "contend/unpadded", "--tasks", "1..2", "--duration", "2", "--cpus", "1,0",
                sig=Sig(INT, 1.5, when=run_stored()))
    assert r.rc == 130, r
    no_run_left_running(lab)


@pytest.mark.audit_slow
def test_ctrl_c_mid_variants_is_exit_130(lab: Lab) -> None:
    r = lab.run("variants", f"{EXAMPLES}/cas_counter.c", "--flags", "-O2", "--flags", "-O1", "--rounds", "30",
                sig=Sig(INT, 1, when=run_stored()))
    assert r.rc == 130, r


@pytest.mark.parametrize("group", [True, False], ids=["to-the-process-group", "to-the-cli-alone"])
def test_ctrl_c_mid_stat_stops_the_command_it_runs(new_lab: NewLab, group: bool) -> None:
    """SIGINT to the CLI alone (as `kill -INT` sends it) left `sleep 100` running."""
    lab = new_lab(limit=30)
    r = lab.run("stat", "-r", "3", "--", "sleep", "100", sig=Sig(INT, 1, group=group, when=proc_running("sleep")))
    assert r.rc == 130, r


@pytest.mark.audit_slow
def test_ctrl_c_mid_selftest_is_exit_130(lab: Lab) -> None:
    r = lab.run("selftest", "--quick", sig=Sig(INT, 4))
    assert r.rc == 130, r


@pytest.mark.audit_slow
def test_ctrl_c_during_a_build_leaves_no_temporary_file_in_the_cache(new_lab: NewLab, shared: Shared) -> None:
    lab = new_lab(fresh_cache=True)
    r = lab.run("run", str(shared.ic20k()), "-q", sig=Sig(INT, 1.5, when=proc_running("cc1")))
    assert r.rc == 130, r
    build = lab.cache / "build"
    assert not list(build.glob(".tmp*")), sorted(p.name for p in build.iterdir())


@pytest.mark.audit_slow
def test_a_killed_cli_leaves_a_readable_database_and_no_run_running(lab: Lab) -> None:
    """SIGKILL runs no handler: the run reads 'abandoned' once its process is gone."""
    lab.run("run", "-q", sig=Sig(KILL, 2, when=run_stored()))
    r = lab.run("runs")
    assert r.rc == 0, r
    no_run_left_running(lab)


@pytest.mark.audit_slow
def test_sigterm_mid_scale_of_processes_marks_the_run(lab: Lab) -> None:
    lab.run("scale", "contend/padded", "--mode", "processes", "--tasks", "1..2", "--duration", "20", "--cpus", "1,0",
            sig=Sig(TERM, 2, when=run_stored()))
    no_run_left_running(lab)


@pytest.mark.audit_slow
def test_debris_of_a_build_killed_with_sigkill_is_swept_by_a_later_build(new_lab: NewLab, shared: Shared) -> None:
    """A SIGKILLed CLI cannot clean up: what it left in the cache (backdated two days here, as a
    sweep may wait for debris to age) goes with the next build in that cache."""
    lab = new_lab(fresh_cache=True)
    lab.run("run", str(shared.ic20k()), "-q", sig=Sig(KILL, 1.5, group=False, when=proc_running("cc1")))
    build = lab.cache / "build"
    old = time.time() - 2 * 86400
    for p in build.glob(".*"):
        os.utime(p, (old, old))
    r = lab.run("run", f"{CASES}/ok.c", "--list")
    assert r.rc == 0, r
    assert not list(build.glob(".tmp*")), sorted(p.name for p in build.iterdir())


@pytest.mark.audit_slow
def test_ctrl_c_during_vfs_mix_removes_its_temporary_directory(new_lab: NewLab) -> None:
    lab = new_lab(timeout=None, limit=40)
    r = lab.run("run", "-b", "vfs/mix", "--min-time", "2", "-q",
                sig=Sig(INT, 0.5, when=appears("tmp/**/cyclebench-vfs-*")))
    assert r.rc == 130, r
    assert lab.tree("tmp") == []


@pytest.mark.audit_slow
def test_vfs_mix_timed_out_removes_its_temporary_directory(lab: Lab) -> None:
    r = lab.run("run", "-b", "vfs/mix", "--min-time", "20", "--max-time", "30", "--timeout", "2", "-q")
    assert r.rc == 1, r
    assert "timeout" in lab.statuses("vfs/mix")
    assert lab.tree("tmp") == []


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed (apt-get install valgrind)")
def test_ctrl_c_under_callgrind_leaves_no_debris(new_lab: NewLab) -> None:
    lab = new_lab(limit=30)
    r = lab.run("run", f"{CASES}/hang.c", "--backend", "callgrind", "--timeout", "2", "-q",
                sig=Sig(INT, 1.5, when=proc_running("--tool=callgrind", as_arg=True)))
    assert r.rc == 130, r
    assert lab.tree("tmp") == []
