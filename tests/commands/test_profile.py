"""`cyclebench profile`: exact call counts (uftrace on a -pg build, callgrind on a plain one) and
per-call costs with the probe's measured cost subtracted, against known truth (tests/data/profile_prog.c)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.profile_rules import adds_up

from conftest import DATA, cli

NO_UFTRACE = shutil.which("uftrace") is None
NO_VALGRIND = shutil.which("valgrind") is None


@pytest.fixture(autouse=True)
def _own_database(db: str) -> str:
    """profile stores a run: into each test's own database, never the user's."""
    return db


def _build(tmp_path: Path, *flags: str) -> Path:
    exe = tmp_path / ("prog_pg" if "-pg" in flags else "prog")
    subprocess.run(["cc", "-O2", *flags, str(DATA / "profile_prog.c"), "-o", str(exe)], check=True)
    return exe


def _profile(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "p.json"
    r = cli("profile", "--json", str(out), *args)
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    rows = {f["function"]: f for f in data["functions"]}
    if data["unit"] != "Ir":
        adds_up(rows)
    return {"rows": rows, **data}


def _instrumented(tmp_path: Path, source: str, *flags: str) -> Path:
    exe = tmp_path / (Path(source).stem + "_fi")
    subprocess.run(["cc", "-O2", "-finstrument-functions", *flags, str(DATA / source), "-o", str(exe)], check=True)
    return exe


@pytest.mark.timing
@pytest.mark.skipif(NO_UFTRACE, reason="uftrace not installed (apt-get install uftrace)")
def test_uftrace_counts_calls_exactly_and_subtracts_the_probe(tmp_path: Path) -> None:
    p = _profile(tmp_path, "--", str(_build(tmp_path, "-pg")))
    rows, probe = p["rows"], p["probe"]
    assert (rows["f"]["calls"], rows["g"]["calls"]) == (1000, 3000)
    assert rows["chain3000"]["calls"] == rows["chain30"]["calls"] == 2000
    assert p["unit"] == "cycles~" and "add chains before" in p["clock"]
    assert probe["inner_hi"] >= probe["inner_lo"] > 0 and probe["outer"] > 0
    # The 3000-add figure (3000 cycles~ within 5%) is bench/profile.py's to report over many runs:
    # a host that slows a whole process for a second moves it past any tolerance (a median of
    # 3,598 seen), since the clock is calibrated before and after the program, not during it.
    c30, c3000 = rows["chain30"], rows["chain3000"]
    assert c3000["self"] > c30["self_raw"] > c30["self"]
    for r in (c30, c3000, rows["f"]):  # a leaf: exactly the inner part comes off, and the ± is the probe's
        assert r["self_raw"] - r["self"] == pytest.approx(probe["inner"])
        assert r["self_pm"] == pytest.approx(probe["inner_pm"])
    # main: each of its 8000 child calls takes its part of a probe out of main's self time
    main = rows["main"]
    assert main["self_raw"] - main["self"] == pytest.approx(probe["inner"] + 8000 * probe["outer"])


def _nest(tmp_path: Path) -> dict:
    exe = tmp_path / "nest_pg"
    subprocess.run(["cc", "-O2", "-pg", str(DATA / "profile_nest.c"), "-o", str(exe)], check=True)
    return _profile(tmp_path, "--", str(exe))


@pytest.mark.timing
@pytest.mark.skipif(NO_UFTRACE, reason="uftrace not installed (apt-get install uftrace)")
def test_a_call_tree_adds_up_against_known_truth(tmp_path: Path) -> None:
    """tests/data/profile_nest.c: outer() calls an empty leaf() 10 times, then chain300(), a
    300-add dependent chain (300 cycles~ on any x86 core), 1000 times. What holds whatever the
    host does: exact calls, totals that hold their children's (by construction), % from the
    figures shown, and the orderings of a 300-add body against an empty one. How close chain300
    comes to 300 is a figure, not a pass/fail: bench/profile.py measures it over repeated runs
    (docs/method.md §10) — a loaded 2-CPU host moved it by 13% here (261 ± 10 on an AMD EPYC
    guest while a CI and two builds ran; the empty leaf 41 ± 7), beyond any tolerance a test
    could keep."""
    rows = _nest(tmp_path)["rows"]
    chain, outer, leaf = rows["chain300"], rows["outer"], rows["leaf"]
    assert (chain["calls"], outer["calls"], leaf["calls"]) == (1000, 1000, 10000)
    for r in rows.values():  # no total below the self
        assert r["total"] >= max(r["self"], 0), r
    assert leaf["self"] < 0.5 * chain["self"]  # an empty body against a 300-add one (41 ± 7 under a CI's load)
    assert chain["self"] > 0.5 * chain["self_raw"]  # the probe is not most of a 300-add body
    # a parent's total holds its children's, by construction (per call, so per median here)
    assert outer["total"] >= chain["total"] + 10 * leaf["total"] - 1e-9
    assert rows["main"]["total"] >= 1000 * outer["total"]
    # % from the figures shown. Not an ordering of the shares: outer's self is its raw self less 11
    # probes measured in other processes, so a process the host slows moves it by hundreds of
    # cycles~ (outer 46% against chain300's 27% in a fresh CI; 0–22% in 45 quiet runs), and the
    # empty leaf read 48–60 in 2 of 45 quiet runs: bench/profile.py reports both over repeated runs
    whole = sum(r["calls"] * max(r["self"], 0.0) for r in rows.values())
    assert chain["pct"] == pytest.approx(100 * chain["calls"] * max(chain["self"], 0.0) / whole)
    assert leaf["compensated"] and not chain["compensated"]  # the probe is 95% of an empty call's raw self


@pytest.mark.skipif(NO_UFTRACE or NO_VALGRIND, reason="needs uftrace and valgrind (apt-get install uftrace valgrind)")
def test_ir_per_call_beside_the_time(tmp_path: Path) -> None:
    rows = _nest(tmp_path)["rows"]
    # exact and compensable: 300 adds and the prologue, -pg's call to mcount, the return (306 here)
    assert 300 < rows["chain300"]["ir_self"] < 320 and rows["leaf"]["ir_self"] < 10
    assert rows["outer"]["ir_total"] > rows["chain300"]["ir_total"] + 10 * rows["leaf"]["ir_total"]
    assert not list(tmp_path.glob("gmon.out*")) and not list(Path.cwd().glob("gmon.out*"))  # gprof's file in scratch


@pytest.mark.skipif(NO_VALGRIND, reason="valgrind not installed (apt-get install valgrind)")
def test_callgrind_counts_calls_of_a_plain_build(tmp_path: Path) -> None:
    p = _profile(tmp_path, "--backend", "callgrind", "--", str(_build(tmp_path)), "200")
    rows = p["rows"]
    assert (rows["f"]["calls"], rows["g"]["calls"], rows["chain3000"]["calls"]) == (1000, 3000, 200)
    assert rows["chain3000"]["self"] == pytest.approx(3001, abs=2)  # 3000 adds, a ret: exact, simulated
    assert p["probe"] is None and p["unit"] == "Ir"


def test_profile_a_suite_benchmark(tmp_path: Path) -> None:
    p = _profile(tmp_path, "counter/plain_add", "--cpu", "1")
    assert p["rows"]["cb_body_counter_plain_add"]["calls"] > 0 and p["probe"]["source"] == "in-process"
    # the engine's accessors carry no probe (cyclebench.h: CB_ACCESSOR), though inlined into the body
    assert "cb_iters" not in p["rows"]
    assert not [f for f in p["rows"] if f.startswith("cb_reg_")]  # start-up constructors left out
    # no Ir beside it: the runner sizes its batches by time, so a body's call under callgrind is another
    assert all("ir_self" not in r for r in p["rows"].values())


def test_profile_bad_input(tmp_path: Path) -> None:
    for args, why in ((["--", str(tmp_path / "missing")], "not found"),
                      (["no/such_bench"], "unknown benchmark 'no/such_bench'"),
                      ([], "nothing to profile")):
        r = cli("profile", *args)
        assert r.exit_code == 2 and why in r.output, r.output
    # a build with no instrumentation: the preloaded probe records no call, and says how to build it
    r = cli("profile", "--", str(_build(tmp_path)))
    assert r.exit_code == 2 and "-finstrument-functions" in r.output and "-pg" in r.output, r.output
    assert "Traceback" not in r.output


def test_the_probe_reaches_a_program_started_by_a_wrapper(tmp_path: Path) -> None:
    """The preload is inherited: sh -c starting an instrumented program is profiled as the program."""
    exe = _instrumented(tmp_path, "profile_prog.c")
    p = _profile(tmp_path, "--", "sh", "-c", f"{exe} 100")
    assert (p["rows"]["f"]["calls"], p["rows"]["chain3000"]["calls"]) == (1000, 100)


@pytest.mark.skipif(NO_UFTRACE, reason="uftrace not installed (apt-get install uftrace)")
def test_a_sigkilled_profile_leaves_no_scratch_behind(tmp_path: Path) -> None:
    """SIGKILL runs no cleanup: the scratch directory carries the pid, and the next profile
    removes those of processes that are gone."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    src = tmp_path / "long.c"  # runs on for a minute: it is still running when cyclebench is killed
    src.write_text("#include <unistd.h>\n__attribute__((noinline)) int step(int i) { return i + 1; }\n"
                   "int main(void) { int x = 0; for (int i = 0; i < 600; i++) { x = step(x); usleep(100000); }\n"
                   "return x == 0; }\n")
    exe = tmp_path / "long_pg"
    subprocess.run(["cc", "-O2", "-pg", str(src), "-o", str(exe)], check=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "cyclebench", "profile", "--", str(exe)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(tmp.glob("cyclebench-profile-*/*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp.glob("cyclebench-profile-*/*")), "the profile never wrote its scratch"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)  # its uftrace dies with it (PR_SET_PDEATHSIG), and the program too (lifetime.supervised)
    left = subprocess.run(["pgrep", "-f", str(exe)], capture_output=True, text=True).stdout.split()
    assert not left, f"the profiled program outlived a SIGKILLed profile: {left}"
    assert list(tmp.glob("cyclebench-profile-*"))  # left behind: nothing ran to remove it
    r = subprocess.run([sys.executable, "-m", "cyclebench", "profile", "--", str(tmp_path / "missing")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert not list(tmp.glob("cyclebench-profile-*"))


@pytest.mark.timing
def test_the_in_process_probe_counts_exactly_and_subtracts_its_own_cost(tmp_path: Path) -> None:
    """A -finstrument-functions build is read by cyclebench's own probe, preloaded: exact calls,
    and the probe's cost measured in the program's own process (engine/probe.c) taken off each
    call's span once and off its caller's once per child call."""
    p = _profile(tmp_path, "--cpu", "1", "--", str(_instrumented(tmp_path, "profile_prog.c")))
    rows, probe = p["rows"], p["probe"]
    assert (rows["f"]["calls"], rows["g"]["calls"], rows["chain3000"]["calls"], rows["main"]["calls"]) == \
        (1000, 3000, 2000, 1)
    assert probe["source"] == "in-process" and p["unit"] == "cycles~" and "program's own process" in p["clock"]
    assert probe["inner_hi"] >= probe["inner_lo"] > 0 and probe["outer"] > 0
    c30, c3000 = rows["chain30"], rows["chain3000"]
    assert c3000["self"] > c30["self_raw"] > c30["self"]
    for r in (c30, c3000, rows["f"]):
        assert r["self_raw"] - r["self"] == pytest.approx(probe["inner"])
    main = rows["main"]
    assert main["self_raw"] - main["self"] == pytest.approx(probe["inner"] + 8000 * probe["outer"])
    assert main["callees"] == {"f": 1000, "g": 3000, "chain3000": 2000, "chain30": 2000}


@pytest.mark.timing
def test_the_truth_program_adds_up_and_orders(tmp_path: Path) -> None:
    """tests/data/profile_truth.c: exact calls and call graph, totals that add up (adds_up), and
    orderings and one ratio within the run: chain3000 / chain300 is 10 by construction (±30%: a
    host that slows part of the run moves it; bench/profile.py gives the figures)."""
    rows = _profile(tmp_path, "--cpu", "1", "--", str(_instrumented(tmp_path, "profile_truth.c")))["rows"]
    calls = {n: r["calls"] for n, r in rows.items()}
    assert calls == {"main": 1, "outer": 1000, "leaf": 10000, "chain300": 2000, "driver": 10, "chain50": 1000,
                     "chain3000": 100}
    assert rows["outer"]["callees"] == {"leaf": 10, "chain300": 1}
    assert rows["driver"]["callees"] == {"chain300": 100}
    assert rows["main"]["callees"] == {"outer": 1000, "driver": 10, "chain50": 1000, "chain3000": 100}
    c50, c300, c3000, leaf = (rows[n]["self"] for n in ("chain50", "chain300", "chain3000", "leaf"))
    assert c3000 > c300 > c50 > leaf
    assert 7 < c3000 / c300 < 13
    assert rows["driver"]["total"] >= 100 * rows["chain300"]["total"] - 1e-6


def test_the_probe_follows_threads_and_a_fork(tmp_path: Path) -> None:
    """tests/data/profile_fork.c: work() is called 100 times by main, 50 by a thread and 30 by a
    forked child that exits from inside main: 180 in all, main once (the child's main was entered
    in the parent), and main's time blocked in pthread_join and waitpid is off the CPU, no
    function's cost."""
    p = _profile(tmp_path, "--", str(_instrumented(tmp_path, "profile_fork.c", "-pthread")))
    rows = p["rows"]
    assert (rows["work"]["calls"], rows["main"]["calls"], rows["thread_main"]["calls"]) == (180, 1, 1)
    # the child's 30 calls alone take ~3,000 cycles~ each way plus its exit's calibration (~10 ms);
    # blocked, main would hold those tens of millions of cycles~ as its self
    assert rows["main"]["self_raw"] < 2e7, rows["main"]


def test_a_crash_under_the_probe_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "crash.c"
    src.write_text("#include <signal.h>\n__attribute__((noinline)) void f(void) { raise(SIGSEGV); }\n"
                   "int main(void) { f(); return 0; }\n")
    exe = tmp_path / "crash"
    subprocess.run(["cc", "-O2", "-finstrument-functions", str(src), "-o", str(exe)], check=True)
    r = cli("profile", "--", str(exe))
    assert r.exit_code == 2 and "SIGSEGV" in r.output and "Traceback" not in r.output, r.output
