"""Benchmarks that misbehave (tests/data/audit/): each costs its own row with the reason, never
the run, the protocol or the terminal; names and texts a benchmark chooses are shown literally."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import NewLab
from .harness import CASES, Lab, escapes, one_line

pytestmark = pytest.mark.audit


@pytest.mark.audit_slow
def test_a_body_that_never_returns_times_out_at_the_timeout(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/hang.c", "--timeout", "2", "-q")
    assert r.rc == 1, r
    assert r.wall < 12, f"took {r.wall:.1f} s"
    assert "timeout" in lab.statuses("hang/forever")


@pytest.mark.audit_slow
def test_exit_in_the_body_is_a_row_without_a_result(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/exit0.c")
    assert r.rc == 1, r
    assert set(lab.statuses("ex/exit0")) & {"error", "failed"}, lab.statuses("ex/exit0")


@pytest.mark.audit_slow
def test_garbage_and_fake_protocol_lines_on_stdout_do_not_reach_the_protocol(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/garbage.c")
    assert r.rc == 0, r
    assert "ok" in lab.statuses("gb/stdout")


def test_a_result_line_the_body_writes_to_fd_3_is_never_stored(lab: Lab) -> None:
    """fd 3 once was the runner's protocol stream: a body could forge its own result."""
    lab.run("run", f"{CASES}/fd3_write.c")
    assert lab.rows("SELECT count(*) FROM results WHERE extra LIKE '%FORGED_BY_THE_BODY%'") == [(0,)]


@pytest.mark.parametrize("bench", [pytest.param("proc/fork_each", marks=pytest.mark.audit_slow), "proc/fork_exit"])
def test_a_body_that_forks_is_measured(lab: Lab, bench: str) -> None:
    r = lab.run("run", f"{CASES}/fork.c", "-b", bench, "-q")
    assert r.rc == 0, r


def _overcommit_refuses_50_gb() -> bool:
    """The kernel's heuristic overcommit refuses 50 GB (so nothing is ever touched)."""
    try:
        mode = int(Path("/proc/sys/vm/overcommit_memory").read_text())
        mem = sum(int(ln.split()[1]) for ln in Path("/proc/meminfo").read_text().splitlines()
                  if ln.startswith(("MemTotal:", "SwapTotal:")))
    except (OSError, ValueError):
        return False
    return mode == 0 and mem * 1024 < 50 << 30


@pytest.mark.skipif(not _overcommit_refuses_50_gb(), reason="the kernel might grant 50 GB here (it would be touched)")
@pytest.mark.parametrize("bench", ["mem/buf", "mem/huge"], ids=["cb_buffer-in-the-body", "malloc-in-setup"])
def test_a_50_gb_request_is_a_failed_row(lab: Lab, bench: str) -> None:
    r = lab.run("run", f"{CASES}/big.c", "-b", bench, "-q")
    assert r.rc == 1, r
    assert set(lab.statuses(bench)) & {"failed", "invalid"}, lab.statuses(bench)


@pytest.mark.audit_slow
def test_a_runner_killed_like_the_oom_killer_does_is_a_crashed_row(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/oomsim.c", "-q")
    assert r.rc == 1, r
    assert "crashed" in lab.statuses("oom/sigkill")


@pytest.mark.parametrize("source", ["ctor_crash.c", "orphan_hook.c"],
                         ids=["constructor-crashes-before-main", "hook-for-a-benchmark-that-does-not-exist"])
def test_a_file_whose_benchmarks_cannot_be_listed_is_exit_2(lab: Lab, source: str) -> None:
    assert lab.run("run", f"{CASES}/{source}", "-q").rc == 2


@pytest.mark.audit_slow
def test_a_stderr_flood_keeps_the_cli_small(new_lab: NewLab) -> None:
    """A body writing to stderr forever once grew the CLI by gigabytes in seconds."""
    lab = new_lab(timeout=2, limit=40)
    r = lab.run("run", f"{CASES}/spew.c", "-b", "spew/stderr", "-q")
    assert 0 < r.peak_rss_kb / 1024 < 200, f"CLI peak RSS {r.peak_rss_kb / 1024:.0f} MB"
    assert r.rc == 1, r


WEIRD = ("weird/sp ace", "weird/$(touch pwned4)", "weird/café", "weird/dol$lar")


@pytest.mark.audit_slow
def test_names_with_a_space_a_dollar_unicode_and_a_command_substitution_run_and_run_nothing(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/names.c")
    assert r.rc == 0, r
    assert all(n in r.text for n in WEIRD), r.text
    assert not (lab.cwd / "pwned4").exists()


def test_b_selects_exactly_the_weird_names_given(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/names.c", "-b", "weird/sp ace", "-b", "weird/café", "-b", "weird/$(touch pwned4)")
    assert r.rc == 0, r
    assert all(n in r.text for n in WEIRD[:3]) and "dol$lar" not in r.text, r.text
    assert not (lab.cwd / "pwned4").exists()


@pytest.mark.audit_slow
def test_shell_metacharacters_and_control_bytes_in_b_run_nothing(lab: Lab) -> None:
    r = lab.run("run", "-b", "timer/*; touch pwned6")
    assert r.rc == 2 and one_line(r), r
    assert not (lab.cwd / "pwned6").exists()
    assert lab.run("run", "-b", "timer/[\x01").rc == 2


# Rich markup and terminal escapes a benchmark chooses (a reason, a name, its stderr) once raised
# MarkupError tracebacks or reached the terminal raw.

@pytest.mark.audit_slow
def test_a_failure_reason_that_is_markup_is_printed_literally(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/markup.c", "-b", "mk/reason")
    assert r.rc == 1, r
    assert "[/x]" in r.text


def test_show_prints_a_markup_reason_literally(lab: Lab) -> None:
    lab.run("run", f"{CASES}/markup.c", "-b", "mk/reason", "-q")
    r = lab.run("show")
    assert r.rc == 0, r
    assert "[/x]" in r.text


def test_a_crash_whose_stderr_holds_brackets_is_a_crashed_row_shown_literally(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/realistic.c")
    assert r.rc == 1, r
    assert "msr-nope" in r.text
    assert "crashed" in lab.statuses("mk/msr")
    s = lab.run("show")
    assert s.rc == 0 and "msr-nope" in s.text, s


def test_a_benchmark_named_with_markup_is_listed_and_run(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/markup_name.c", "--list")
    assert r.rc == 0 and "mk/[/x]" in r.text, r
    assert lab.run("run", f"{CASES}/markup_name.c").rc == 0


def test_escape_sequences_in_a_reason_never_reach_the_terminal(lab: Lab) -> None:
    r = lab.run("run", f"{CASES}/markup.c", "-b", "mk/esc")
    assert r.rc == 1, r
    assert escapes(r.text) == 0, repr(r.text)


@pytest.mark.parametrize("cflags", [("--cflags", "-O2; touch pwned"), ("--cflags", "$(touch pwned)"),
                                    ("--cflags", "-O2 `touch pwned`"), ("--ldflags", "-lm; touch pwned")],
                         ids=["semicolon", "command-substitution", "backticks", "ldflags-semicolon"])
def test_compiler_flags_never_reach_a_shell(lab: Lab, cflags: tuple[str, str]) -> None:
    lab.run("run", f"{CASES}/ok.c", *cflags, "-q")
    assert not list(lab.dir.rglob("pwned")), "a shell ran the flags"
