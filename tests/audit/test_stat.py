"""`cyclebench stat -- CMD`: a command that fails or dies is reported with exit 1 (and stored);
one that cannot be started, and a --pre that fails, are exit 2."""

from __future__ import annotations

import pytest

from .harness import Lab

pytestmark = pytest.mark.audit

REFUSED = {
    "command-missing": ("stat", "--", "{T}/nonexistent"),
    "no-command": ("stat",),
    "pre-missing": ("stat", "--pre", "nosuchcmd", "--", "true"),
    "pre-fails": ("stat", "--pre", "false", "-r", "2", "--", "true"),
    "command-is-a-directory": ("stat", "--", "{T}"),
}


@pytest.mark.parametrize("argv", REFUSED.values(), ids=REFUSED.keys())
def test_a_command_that_cannot_be_started_is_exit_2(lab: Lab, argv: tuple[str, ...]) -> None:
    r = lab.run(*argv)
    assert r.rc == 2, r


def test_a_failing_command_is_exit_1_and_stored(lab: Lab) -> None:
    r = lab.run("stat", "--", "false")
    assert r.rc == 1, r
    assert lab.n_runs() >= 1


@pytest.mark.parametrize(("argv", "rc"), [(("stat", "-r", "3", "--", "false"), 1),
                                          (("stat", "-r", "2", "--", "true"), 0)],
                         ids=["repeated-false", "repeated-true"])
def test_the_exit_status_follows_the_command(lab: Lab, argv: tuple[str, ...], rc: int) -> None:
    r = lab.run(*argv)
    assert r.rc == rc, r


def test_a_command_killed_by_a_signal_is_named(lab: Lab) -> None:
    r = lab.run("stat", "--", "sh", "-c", "kill -SEGV $$")
    assert r.rc == 1, r
    assert "SIGSEGV" in r.text
