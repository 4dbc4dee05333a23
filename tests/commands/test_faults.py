"""Faults a benchmark or a signal can cause (signals to the CLI, a stderr flood, a forked child
holding the pipes, writes into the protocol, a dropped --fifo, --max-rss): nothing outlives the
CLI, its memory stays bounded, and a benchmark's writes never pass for the protocol."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cyclebench.runner import STDERR_TAIL, run_child
from cyclebench.store import Store

from conftest import DATA, FAST, cli, cli_subprocess

HOSTILE = str(DATA / "hostile.c")


def procs_with(marker: str, *more: str) -> list[int]:
    """PIDs whose command line contains ``marker`` and each of ``more`` (this test process excluded)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and all(m in cmdline for m in more) and "-m cyclebench " not in cmdline:
            found.append(int(entry.name))
    return found


def wait_for(pred, seconds: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return bool(pred())


def rows(db: str) -> dict[str, dict]:  # type: ignore[type-arg]
    store = Store(db)
    rid = store.last_run_id()
    return {r["bench"]: r for r in store.results(rid)}


def measured(row: dict) -> bool:  # type: ignore[type-arg]
    """A result with its number: ok, or disturbed (its batches mostly preempted, as beside the other
    xdist worker: daemon/own_group read disturbed once in a fresh CI's phase 1); what these tests
    ask is that the benchmark was measured, not how quiet the host was."""
    return row["status"] in ("ok", "disturbed") and row["per_op"] is not None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_signal_to_the_cli_leaves_no_runner(db: str, sig: signal.Signals) -> None:
    """What `timeout`, a CI cancel or a closed terminal send reaches only the CLI; the
    runner of a hung benchmark dies with it within 2 s."""
    marker = "--run hostile/hang"
    proc = cli_subprocess("run", HOSTILE, "-b", "hostile/hang", "--timeout", "120", "-q")
    try:
        assert wait_for(lambda: procs_with(marker), 60), proc.stderr.read() if proc.poll() is not None else ""
        time.sleep(0.3)  # into the body's loop
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=30)
        assert wait_for(lambda: not procs_with(marker), 2.0), f"runner outlived the CLI after {sig.name}"
    finally:
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:  # handled like Ctrl-C: exit 130, the run marked, no traceback
        assert proc.returncode == 130, err
        assert "Traceback" not in err and "interrupted" in err
        store = Store(db)
        assert store.get_run(store.last_run_id())["status"] == "interrupted"


def test_stderr_flood_keeps_the_cli_small(db: str) -> None:
    """A body looping on write(2) once drove the CLI to 1.9 GB in 1 s; only a tail is kept."""
    # built first: wait4's peak RSS covers reaped descendants (a cold build's cc1 among them).
    # Linux also records the parent's peak in a child's maxrss when the child execs (the mm it
    # leaves: getrusage(2)), so the CLI is started by a small Python, not by pytest, whose own
    # RSS reached 303–307 MB late in a full suite and read as the CLI's. The bound is for
    # unbounded growth (1.9 GB in a second before the fix): the CLI peaks at 98–113 MB here.
    assert cli_subprocess("run", HOSTILE, "--list").wait() == 0
    probe = ("import os, subprocess, sys\n"
             "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
             "_pid, status, usage = os.wait4(p.pid, 0)\n"
             "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)")
    got = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "cyclebench", "run", HOSTILE, "-b",
                          "hostile/stderr_flood", "--timeout", "3", "-q"], capture_output=True, text=True, timeout=120)
    _code, maxrss_kb = map(int, got.stdout.split())
    assert maxrss_kb < 300 * 1024, f"CLI peak RSS {maxrss_kb / 1024:.0f} MB"
    row = rows(db)["hostile/stderr_flood"]
    assert row["status"] == "timeout"


def test_run_child_keeps_only_a_tail_of_stderr() -> None:
    code = "import sys\nfor i in range(2000): sys.stderr.write(str(i % 10) * 65535 + '\\n')\nprint('done')"
    child = run_child([sys.executable, "-c", code], timeout=60)
    assert child.returncode == 0 and not child.timed_out
    assert child.stdout.strip() == "done"
    assert 0 < len(child.stderr) <= STDERR_TAIL and child.stderr.rstrip().endswith("9" * 100)


def test_run_child_stdin_is_devnull_and_fds_private() -> None:
    child = run_child([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout=30)
    assert child.stdout.strip() == "''"


@pytest.mark.timing
def test_forked_child_holding_the_pipes_costs_no_result(db: str) -> None:
    """The body's forked child keeps stdout/stderr open for 60 s; the finished result
    stands, and the child is killed with the runner's session."""
    t0 = time.monotonic()
    r = cli("run", HOSTILE, "-b", "hostile/fork_holds_pipes", "--timeout", "30", *FAST)
    assert r.exit_code == 0, r.output
    assert time.monotonic() - t0 < 25
    assert rows(db)["hostile/fork_holds_pipes"]["status"] == "ok"
    assert wait_for(lambda: not procs_with("--run hostile/fork_holds_pipes"), 2.0)


def test_benchmark_cannot_write_into_the_protocol_and_reads_no_terminal(db: str) -> None:
    """The protocol fd is close-on-exec and not fd 3; stdin is /dev/null."""
    r = cli("run", HOSTILE, "-b", "hostile/fake_result_on_fd3", "-b", "hostile/stdin_is_null", *FAST)
    assert r.exit_code == 0, r.output
    got = rows(db)
    fake = got["hostile/fake_result_on_fd3"]
    assert measured(fake) and fake["n_samples"]
    assert measured(got["hostile/stdin_is_null"])


@pytest.mark.timing  # SCHED_FIFO takes the CPU whole: another test's runner there would stop
@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root or CAP_SYS_NICE")
def test_fifo_reaches_the_benchmark(db: str) -> None:
    """--fifo was once dropped before the engine; the body's verify hook checks its policy."""
    assert cli("run", HOSTILE, "-b", "hostile/fifo", *FAST).exit_code == 1
    row = rows(db)["hostile/fifo"]
    assert row["status"] == "invalid" and (row.line or {})["sched"] == {"policy": "SCHED_OTHER", "priority": 0}
    r = cli("run", HOSTILE, "-b", "hostile/fifo", "--fifo", "10", *FAST)
    assert r.exit_code == 0, r.output
    row = rows(db)["hostile/fifo"]
    assert row["status"] == "ok" and (row.line or {})["sched"] == {"policy": "SCHED_FIFO", "priority": 10}
    assert "SCHED_FIFO 10" in r.output  # the table says so


def test_max_rss_kills_a_runner_that_grows(db: str) -> None:
    r = cli("run", HOSTILE, "-b", "hostile/touch_300mb", "--max-rss", "100", "--timeout", "30", *FAST)
    assert r.exit_code == 1
    row = rows(db)["hostile/touch_300mb"]
    assert row["status"] == "failed" and "--max-rss 100 MiB" in row["reason"]
    assert cli("run", HOSTILE, "-b", "hostile/touch_300mb", "--max-rss", "1000", *FAST).exit_code == 0




def test_a_killed_benchmark_leaves_nothing_in_tmp(db: str) -> None:
    """vfs/mix's directory once stayed in /tmp whenever its runner was killed; every runner now
    gets a private $TMPDIR that goes with it."""
    import glob
    import tempfile

    pattern = f"{tempfile.gettempdir()}/cyclebench-run-*/debris-*"  # only this benchmark makes these
    r = cli("run", HOSTILE, "-b", "hostile/tmp_debris", "--timeout", "2", *FAST)
    assert r.exit_code == 1 and rows(db)["hostile/tmp_debris"]["status"] == "timeout"
    assert not glob.glob(pattern)


def test_a_name_with_a_quote_is_listed_and_measured(db: str) -> None:
    """The engine once printed names unescaped; a '"' made the line invalid JSON and the
    benchmark vanished without a word."""
    src = str(DATA / "name_with_quote.c")
    r = cli("run", src, "--list")
    assert r.exit_code == 0 and 'weird/qu"ote' in r.output
    r = cli("run", src, "-b", "weird/*", *FAST)
    assert r.exit_code == 0, r.output
    assert measured(rows(db)['weird/qu"ote'])


DAEMON = str(DATA / "daemon.c")


@pytest.mark.parametrize("bench", ["daemon/double_fork", "daemon/own_group"])
def test_a_benchmark_that_daemonizes_leaves_no_process(db: str, bench: str) -> None:
    """A body that daemonizes (fork, setsid, fork: out of the runner's session) or moves a child
    to its own process group left one copy of the runner per runner process after the run, as
    the kill reached only the group. The runner's supervisor is a child subreaper and kills its
    whole tree when the runner ends."""
    marker = f"--run {bench}"
    try:
        r = cli("run", DAEMON, "-b", bench, *FAST)
        assert r.exit_code == 0, r.output
        assert measured(rows(db)[bench]), rows(db)[bench]["reason"]
        assert wait_for(lambda: not procs_with(marker), 2.0), f"left running: {procs_with(marker)}"
    finally:
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(("bench", "status"), [("daemon/then_crash", "crashed"), ("daemon/then_hang", "timeout")])
def test_a_daemon_is_killed_after_a_crash_or_at_the_timeout(db: str, bench: str, status: str) -> None:
    """The runner that daemonized then crashed (SIGSEGV: its supervisor ends the same way, the
    row says so) or hung (killed at --timeout: the tree is stopped, then killed) leaves nothing."""
    marker = f"--run {bench}"
    try:
        r = cli("run", DAEMON, "-b", bench, "--timeout", "3", *FAST)
        assert r.exit_code == 1, r.output
        row = rows(db)[bench]
        assert row["status"] == status, row["reason"]
        if status == "crashed":
            assert "SIGSEGV" in row["reason"]
        assert wait_for(lambda: not procs_with(marker), 2.0), f"left running: {procs_with(marker)}"
    finally:
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_daemon_dies_with_a_killed_cli(db: str) -> None:
    """SIGKILL of the CLI runs no handler: the supervisor's PR_SET_PDEATHSIG (SIGTERM) kills the
    runner and then the daemon it left."""
    marker = "--run daemon/then_hang"
    proc = cli_subprocess("run", DAEMON, "-b", "daemon/then_hang", "--timeout", "120", "-q")
    try:
        assert wait_for(lambda: len(procs_with(marker)) >= 2, 60), proc.stderr.read() if proc.poll() is not None else ""
        time.sleep(0.5)  # the body has daemonized
        proc.kill()
        proc.communicate(timeout=30)
        assert wait_for(lambda: not procs_with(marker), 2.0), f"left running: {procs_with(marker)}"
    finally:
        for pid in procs_with(marker):
            os.kill(pid, signal.SIGKILL)
        proc.kill()


def test_cache_clean_during_a_run_keeps_the_runner_in_use(db: str, tmp_path: Path) -> None:
    """`cache clean --all` while a run measured removed its runner: every later runner process
    failed ("runner: No such file or directory"). The run holds its entry (a shared flock);
    clean skips it, saying so, and the run ends with all its numbers."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = {**os.environ, "CYCLEBENCH_CACHE": str(cache)}
    # two sizes, each its own runner processes; the run is stopped (SIGSTOP) once its first runner
    # measures, so the clean (a new CLI: 1–5 s to start on a loaded 2-core VM) lands mid-run
    # whatever the host does, and the later runners start from the cache after it. Before: 16
    # sizes of ≥ 0.8 s each, so that the clean landed mid-run by time (17.8 s)
    proc = cli_subprocess("run", str(DATA / "slow.c"), "-p", "1,2", "--min-time", "0.2", "--repeat", "5", "--warmup",
                          "0", "-q", env=env)
    try:
        # this run's runner, not another test's slow.c on the other xdist worker: its path is in this cache
        assert wait_for(lambda: procs_with("--run slow/sleep_us", f"{cache}/"), 120), (
            proc.stderr.read() if proc.poll() is not None else "")
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            clean = subprocess.run([sys.executable, "-m", "cyclebench", "cache", "clean", "--all"], env=env,
                                   capture_output=True, text=True, timeout=60)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert clean.returncode == 0, clean.stderr
        assert "in use by a running cyclebench" in clean.stderr
        assert proc.poll() is None, "the run ended before the clean: nothing was tested"
        _out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert "No such file" not in err and proc.returncode in (0, 1), err  # 1: a row judged disturbed (VM)
    store = Store(db)
    got = [r for r in store.results(store.last_run_id()) if r["bench"] == "slow/sleep_us"]
    assert len(got) == 2, err
    assert all(measured(r) for r in got), [
        (r["param"], r["status"], r["reason"]) for r in got]


def test_awkward_file_names_and_encodings_build_and_run(db: str, tmp_path: Path) -> None:
    """A path with a space, '$' or '#' (gcc -M quotes them make's way), a file name that is not
    UTF-8, and a compiler message quoting a Latin-1 line: each used to end in "No such file"
    or a UnicodeDecodeError traceback."""
    import shutil

    d = tmp_path / "My $HOME #1 Benchmarks"
    d.mkdir()
    src = d / "a b.c"
    shutil.copy(DATA / "chain.c", src)
    r = cli("run", str(src), "-b", "chain/add200", *FAST)
    assert r.exit_code == 0, r.output
    assert measured(rows(db)["chain/add200"])
    latin = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.c"))
    shutil.copy(DATA / "chain.c", latin)
    r = cli("run", str(latin), "--list")
    assert r.exit_code == 0 and "chain/add200" in r.output, r.output
    bad = tmp_path / "e.c"
    bad.write_bytes(b"#include <cyclebench.h>\n#error caf\xe9\n")
    p = cli_subprocess("run", str(bad), "--list")
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "Traceback" not in err, err
    assert "caf\ufffd" in err and "does not compile" in err.splitlines()[-1]
