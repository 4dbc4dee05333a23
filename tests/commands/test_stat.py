"""cyclebench stat -- CMD: whole commands like `perf stat -r`, counters enabled at exec."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cyclebench import counters
from cyclebench.build.statexec import build_statexec
from cyclebench.env import sysinfo
from cyclebench.model import Result, StatMetric
from cyclebench.runner.exec import launch
from cyclebench.stats.repetitions import exit_summary
from cyclebench.store import Store

from conftest import cli


def one_line_error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]

def rows_by_metric(db: str) -> dict[str, Result]:
    store = Store(db)
    rid = store.last_run_id()
    assert rid is not None
    return {r["bench"].split("/", 1)[1]: r for r in store.results(rid)}


def stat_of(row: Result) -> StatMetric:
    """A stat row's metric (every stat row has one)."""
    assert row.stat is not None, row
    return row.stat


def test_true_five_runs(db: str) -> None:
    r = cli("stat", "-r", "5", "--", "/bin/true")
    assert r.exit_code == 0, r.output
    for metric in ("wall", "user", "sys", "task-clock", "context-switches", "cpu-migrations", "page-faults"):
        assert metric in r.output
    assert "exit 0 in 5/5 runs" in r.output
    rows = rows_by_metric(db)
    wall = rows["wall"]
    assert wall["bench"] == "stat:true/wall" and wall["unit"] == "ms" and wall["status"] == "ok"
    assert wall["n_samples"] == 5 and wall["per_op"] > 0 and wall["min"] > 0
    assert len(stat_of(wall)["values"]) == 5 and all(v > 0 for v in stat_of(wall)["values"])
    assert len(stat_of(wall)["repetitions"]) == 5  # every raw launcher record is kept
    # software events are countable without a PMU
    assert rows["task-clock"]["status"] == "ok" and rows["task-clock"]["per_op"] > 0
    assert rows["context-switches"]["status"] == "ok" and rows["context-switches"]["per_op"] is not None
    assert rows["page-faults"]["per_op"] > 0
    run = Store(db).get_run(Store(db).last_run_id())
    assert run["status"] == "complete" and run["command"][-2:] == ["--", "/bin/true"]
    assert len(run["summary"]["stat"]["repetitions"]) == 5
    # `show` still makes sense of the stored run
    s = cli("show")
    assert s.exit_code == 0 and "wall" in s.output and "task-clock" in s.output  # show prints stat's table


def test_hardware_event_without_pmu(db: str) -> None:
    r = cli("stat", "-r", "2", "-e", "cycles,task-clock", "--", "/bin/true")
    assert r.exit_code == 0, r.output
    rows = rows_by_metric(db)
    assert rows["task-clock"]["status"] == "ok"
    if sysinfo.pmu_info().get("hardware_pmu"):
        assert rows["cycles"]["status"] == "ok"
    else:
        assert rows["cycles"]["status"] == "skipped"
        assert rows["cycles"]["reason"].startswith("not supported")
        assert "<not supported>" in r.output and "--backend callgrind" in r.output


def test_pre_runs_before_each_repetition(db: str, tmp_path: Path) -> None:
    log, seen = tmp_path / "pre.log", tmp_path / "seen.log"
    r = cli("stat", "-r", "3", "--pre", f"sh -c 'echo x >> {log}'", "--", "sh", "-c", f"wc -l < {log} >> {seen}")
    assert r.exit_code == 0, r.output
    assert log.read_text().count("x") == 3
    assert [int(x) for x in seen.read_text().split()] == [1, 2, 3]  # the command saw one more --pre each time


def test_pre_failing(db: str) -> None:
    r = cli("stat", "-r", "2", "--pre", "false", "--", "/bin/true")
    assert r.exit_code == 2
    assert "--pre command exited 1 before repetition 1" in one_line_error(r.output)


def test_exit_code_reported(db: str) -> None:
    r = cli("stat", "-r", "2", "--", "sh", "-c", "exit 3")
    assert r.exit_code == 1
    assert "exit 3 in 2/2 runs" in r.output
    rows = rows_by_metric(db)
    assert rows["wall"]["status"] == "invalid" and "exit 3" in rows["wall"]["reason"]
    assert [x["exit"] for x in stat_of(rows["wall"])["repetitions"]] == [3, 3]


def test_launcher_json_and_children(tmp_path: Path) -> None:
    """The command's stdout cannot corrupt the JSON; children are counted (inherit); signals are named."""
    exe = build_statexec()
    groups = counters.parse_events("task-clock,{context-switches,page-faults}")
    one = launch(exe, ["sh", "-c", "echo '{not json'; true"], groups)
    assert one["type"] == "stat" and one["exit"] == 0 and one["signal"] is None
    assert [len(g) for g in one["groups"]] == [4, 5] and one["open_errors"] == [None, None]
    many = launch(exe, ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true; done; :"], groups)
    if many["inherit"]:  # page faults of 8 more processes
        assert many["groups"][1][4] > 4 * one["groups"][1][4]
    killed = launch(exe, ["sh", "-c", "kill -SEGV $$"], groups)
    assert killed["exit"] is None and killed["signal"] == "SIGSEGV"
    assert exit_summary([one, killed])[0] in ("exit 0 in 1/2 runs, killed by SIGSEGV in 1/2 runs",
                                              "killed by SIGSEGV in 1/2 runs, exit 0 in 1/2 runs")
    missing = launch(exe, ["/nonexistent/cmd"], groups)
    assert missing["type"] == "exec_error" and "No such file" in missing["error"]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_callgrind_identical(db: str) -> None:
    r = cli("stat", "--backend", "callgrind", "-r", "2", "--", "/bin/true")
    assert r.exit_code == 0, r.output
    assert "simulated" in r.output
    rows = rows_by_metric(db)
    ir = stat_of(rows["Ir"])["values"]
    assert len(ir) == 2 and ir[0] == ir[1] > 1000
    assert stat_of(rows["Ir"])["simulated"] is True and stat_of(rows["Ir"])["stddev"] == 0
    assert stat_of(rows["wall"])["notes"] == ["under valgrind"]


@pytest.mark.timing
def test_a_repetition_that_did_other_work_is_flagged(db: str, tmp_path: Path) -> None:
    """Molnar's alignment study proved each run did the same work by its counts: the third repetition here
    allocates 64 MiB (thousands more page faults) and is named; the others are not."""
    import subprocess

    n = tmp_path / "n"
    n.write_text("0")
    script = (f'k=$(cat {n}); if [ "$k" = 3 ]; then bs=64M; else bs=4k; fi; '
              f'dd if=/dev/zero of=/dev/null bs=$bs count=1 2>/dev/null; echo $((k + 1)) > {n}')
    # once before, as a perf user warms up: a cold first run here faulted ~15 pages more (270 vs 255)
    subprocess.run(["sh", "-c", script], check=True)
    r = cli("stat", "-r", "5", "-e", "page-faults,context-switches", "--", "sh", "-c", script)
    assert r.exit_code == 0, r.output
    assert "repetition 3 did other work: page-faults" in r.output
    assert not [k for k in (1, 2, 4, 5) if f"repetition {k} did other work: page-faults" in r.output]
    assert stat_of(rows_by_metric(db)["page-faults"])["different_work"] == [3]


def test_table_on_stderr_command_stdout_untouched(db: str) -> None:
    """As perf stat: the command's stdout is byte for byte what it writes alone (three repetitions,
    three copies), the table and cyclebench's own lines are on stderr."""
    import subprocess

    from conftest import DATA, cli_subprocess

    cmd = ["ls", "-la", str(DATA)]
    alone = subprocess.run(cmd, capture_output=True, check=True).stdout
    p = cli_subprocess("stat", "-r", "3", "--", *cmd)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 0, stderr
    assert stdout.encode() == alone * 3
    assert "stat #" in stderr and "task-clock" in stderr and "exit 0 in 3/3 runs" in stderr


def test_output_file_takes_the_table(db: str, tmp_path: Path) -> None:
    out = tmp_path / "stat.txt"
    r = cli("stat", "-r", "2", "-o", str(out), "--", "/bin/true")
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "stat #" in text and "page-faults" in text and "\x1b[" not in text
    assert "page-faults" not in r.output and "exit 0 in 2/2 runs" in r.output  # the rest stays on stderr
    r = cli("stat", "-o", str(tmp_path / "missing" / "stat.txt"), "--", "/bin/true")
    assert r.exit_code == 2 and "-o: cannot write" in one_line_error(r.output)
    assert Store(db).last_run_id() == 1  # refused before anything ran


def test_unknown_option_is_named_as_one() -> None:
    r = cli("stat", "--nosuch", "--", "true")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "No such option" in r.output and "--nosuch" in r.output and "command not found" not in r.output
    r = cli("stat", "-r", "2", "--nosuch")
    assert r.exit_code == 2 and "No such option" in r.output


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_callgrind_with_unwritable_tmpdir(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """valgrind writes its client's command line into $TMPDIR: without one it printed 15 lines and
    exited 1; now one line naming TMPDIR, exit 2, nothing run (root may write anywhere, so the
    TMPDIR here does not exist, rather than being read-only)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    r = cli("stat", "--backend", "callgrind", "--", "/bin/true")
    assert r.exit_code == 2
    line = one_line_error(r.output)
    assert "TMPDIR" in line and str(tmp_path / "missing") in line
    assert Store(db).last_run_id() is None
