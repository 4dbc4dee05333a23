"""Each bad input (docs/design.md, "Honesty rules") gives one clear line, and other results are stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cyclebench.store import Store

from conftest import DATA, FAST, cli


def one_line_error(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert lines, "no error message"
    assert "Traceback" not in text
    return lines[-1]


def test_unknown_benchmark(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-b", "nosuch/*", *FAST)
    assert r.exit_code == 2
    assert "no benchmark matches 'nosuch/*'" in one_line_error(r.output)


def test_bad_flag(db: str) -> None:
    r = cli("run", "--no-such-flag")
    assert r.exit_code == 2
    assert "No such option" in r.output and "Traceback" not in r.output


def test_bad_param_value(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "-p", "4k")
    assert r.exit_code == 2
    assert "'4k' is not an integer" in r.output


def test_missing_file(db: str) -> None:
    r = cli("run", str(DATA / "does_not_exist.c"))
    assert r.exit_code == 2
    assert "does not exist" in one_line_error(r.output)


def test_c_that_does_not_compile(db: str) -> None:
    r = cli("run", str(DATA / "broken.c"))
    assert r.exit_code == 2
    last = one_line_error(r.output)
    assert "broken.c: does not compile" in last
    assert "error:" in r.output  # the compiler's own message is shown
    assert "this_is_not_c" in r.output


def test_missing_compiler(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "--cc", "no-such-cc-1.0")
    assert r.exit_code == 2
    assert "compiler 'no-such-cc-1.0' not found" in one_line_error(r.output)


def test_unusable_database() -> None:
    r = cli("run", str(DATA / "chain.c"), "--db", "nosuchdialect://x", *FAST)
    assert r.exit_code == 2
    assert "cannot open database" in one_line_error(r.output)


def test_faulty_benchmarks_become_rows_and_the_rest_is_stored(db: str) -> None:
    r = cli("run", str(DATA / "faults.c"), "--timeout", "3", *FAST)
    assert r.exit_code == 1, r.output
    assert "did not produce a valid result" in r.output
    store = Store(db)
    rows = {row["bench"]: row for row in store.results(store.last_run_id())}
    assert rows["faults/ok"]["status"] == "ok" and rows["faults/ok"]["per_op"] is not None
    assert rows["faults/prints"]["status"] == "ok"  # printing did not corrupt the protocol
    assert rows["faults/segv"]["status"] == "crashed" and "SIGSEGV" in rows["faults/segv"]["reason"]
    assert rows["faults/abort_in_body"]["status"] == "crashed" and "SIGABRT" in rows["faults/abort_in_body"]["reason"]
    assert rows["faults/hang"]["status"] == "timeout" and "timed out after 3 s" in rows["faults/hang"]["reason"]
    assert rows["faults/verify_fails"]["status"] == "invalid"
    assert "verif" in rows["faults/verify_fails"]["reason"]
    assert rows["faults/setup_skips"]["status"] == "skipped"
    assert rows["faults/setup_skips"]["reason"] == "not applicable here"
    assert rows["faults/gated"]["status"] == "skipped" and "requires CPU feature" in rows["faults/gated"]["reason"]
    assert rows["faults/unknown_feature"]["status"] == "failed"
    assert "unknown CPU feature" in rows["faults/unknown_feature"]["reason"]
    assert store.get_run(store.last_run_id())["status"] == "complete"
    # the table names each reason
    for word in ("SIGSEGV", "timed out", "verification failed", "not applicable here"):
        assert word in r.output


def test_cpu_that_does_not_exist(db: str) -> None:
    r = cli("run", str(DATA / "chain.c"), "--cpu", "4095")
    assert r.exit_code == 2
    assert "CPU 4095 is not available here (allowed:" in one_line_error(r.output)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding r.db (one stored run of timer/rdtsc), a.c (a benchmark including
    inc/mine.h) and r.png, a symlink to r.db."""
    d = tmp_path_factory.mktemp("outputs")
    r = cli("run", "-b", "timer/rdtsc", *FAST, "-q", "--db", f"sqlite:///{d / 'r.db'}")
    assert r.exit_code == 0, r.output
    (d / "inc").mkdir()
    (d / "inc" / "mine.h").write_text("#define MINE 1\n")
    (d / "a.c").write_text('#include "mine.h"\n' + (DATA / "chain.c").read_text())
    (d / "r.png").symlink_to(d / "r.db")
    return d


# every option that writes a file, aimed at the database (by another name: ./r.db, a symlink, a
# side file), the benchmark's source or a header it includes (as gcc refuses "input file is the
# same as output file")
OVERWRITES = [
    (["run", "-b", "timer/rdtsc", *FAST, "--json", "r.db"], "the database"),
    (["run", "-b", "timer/rdtsc", *FAST, "--format", "csv", "-o", "./r.db"], "the database"),
    (["run", "-b", "timer/rdtsc", *FAST, "--plot", "r.png"], "the database"),
    (["run", "-b", "timer/rdtsc", *FAST, "--json", "r.db-wal"], "the database's -wal file"),
    (["run", "a.c", "-I", "inc", *FAST, "--json", "a.c"], "an input source"),
    (["run", "a.c", "-I", "inc", *FAST, "--json", "inc/mine.h"], "a header the sources include"),
    (["variants", "a.c", "-I", "inc", "-b", "chain/add200", "--json", "a.c"], "an input source"),
    (["compare", "1", "1", "--json", "r.db"], "the database"),
    (["compare", "1", "1", "--plot", "r.png"], "the database"),
    (["scale", "contend/padded", "--tasks", "1", "--csv", "r.db"], "the database"),
    (["history", "timer/rdtsc", "-o", "r.db"], "the database"),
    (["export", "--json", "r.db"], "the database"),
    (["export", "--format", "csv", "-o", "r.db"], "the database"),
    (["gen", "icache", "-o", "r.db"], "the database"),  # no --db: the default ($CYCLEBENCH_DB)
    (["check", "--json", "r.db-journal"], "the database's -journal file"),
    (["run", "-b", "timer/rdtsc", *FAST, "--json", "x.json", "-o", "x.json"], "--json writes the same file"),
]


def _inputs(d: Path) -> dict[str, object]:
    """The sources' bytes and the database's content, its schema and rows as sqlite3 dumps them:
    what an output written over it would destroy. Not the file's bytes: they changed once in ~7
    runs of this module after a refused command (cause not found; the rows were not compared
    then), and the refusal is what is tested here."""
    import sqlite3

    con = sqlite3.connect(d / "r.db")
    try:
        dump = list(con.iterdump())
    finally:
        con.close()
    return {"r.db": dump, "a.c": (d / "a.c").read_bytes(), "mine.h": (d / "inc" / "mine.h").read_bytes()}


@pytest.mark.parametrize(("argv", "what"), OVERWRITES, ids=[" ".join(a).replace(" ".join(FAST), "…") for a, _ in
                                                            OVERWRITES])
def test_an_output_that_is_an_input_is_refused_before_anything_runs(
        stored: Path, argv: list[str], what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(stored)
    monkeypatch.setenv("CYCLEBENCH_DB", f"sqlite:///{stored / 'r.db'}")
    before = _inputs(stored)
    r = cli(*argv)
    assert r.exit_code == 2, r.output
    assert what in one_line_error(r.stderr) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _inputs(stored) == before
    assert not (stored / "x.json").exists()
    assert [run["id"] for run in Store(f"sqlite:///{stored / 'r.db'}").list_runs()] == [1]  # nothing measured


# the program as a user starts it: the console script pyproject installs (cyclebench.entry)
_SCRIPT = Path(sys.executable).with_name("cyclebench")
PROGRAM = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "cyclebench"]


def _runs(url: str) -> list[int]:
    return [r["id"] for r in Store(url).list_runs()]


def test_stdout_that_cannot_be_written_is_one_line_and_the_run_stays_stored(tmp_path: Path) -> None:
    """stdout on /dev/full (ENOSPC on the first flush): one line, exit 2, the run stored, and no
    "Exception ignored" when Python flushes stdout at exit."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    for argv, runs in ((["run", "-b", "timer/rdtsc", *FAST], [1]), (["export", "--format", "csv"], [1]),
                       (["--version"], [1])):
        with open("/dev/full", "w") as full:
            p = subprocess.run([*PROGRAM, *argv, *(["--db", url] if argv[0] != "--version" else [])], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=600)
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr
        assert one_line_error(p.stderr).startswith("cyclebench: error: cannot write to stdout: No space left on device")
        assert p.stderr.count("cyclebench:") == 1
        assert _runs(url) == runs


def test_closed_stdout_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """stdout closed (>&-): one line, exit 2, nothing measured, and fd 1 never becomes the
    database (a closed fd is the next one open(2) returns)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    Store(url)
    p = subprocess.run([*PROGRAM, "run", "-b", "timer/rdtsc", *FAST, "--db", url], stderr=subprocess.PIPE,
                       text=True, timeout=600, preexec_fn=lambda: os.close(1))
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "cyclebench: error: stdout is closed: give it a file or /dev/null " \
                               "(cyclebench ... >/dev/null)"
    assert _runs(url) == []


def test_ctrl_c_while_starting_is_one_line_and_130(tmp_path: Path) -> None:
    """SIGINT at nine moments across start-up (the imports take most of it): exit 130 and one
    line each time it lands before the command ends, never a KeyboardInterrupt traceback."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    Store(url)
    t0 = time.monotonic()
    assert subprocess.run([*PROGRAM, "runs", "--db", url], capture_output=True, timeout=120).returncode == 0
    startup = time.monotonic() - t0
    # Python's own start (its handler raises KeyboardInterrupt in site's imports and the console
    # script's first line, before any code of cyclebench runs): the moments begin after it
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], capture_output=True, timeout=120, check=True)
    python = time.monotonic() - t0
    interrupted, codes = 0, []
    for i in range(1, 10):
        # a shell running the tests in the background may have set SIGINT to SIG_IGN, which children
        # inherit and Python then honours: give the child the default disposition back
        p = subprocess.Popen([*PROGRAM, "runs", "--db", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(python + (startup - python) * i / 10)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if "Fatal Python error: init_import_site" in err:
            # the signal landed in Python's own start, before a line of cyclebench ran (on a loaded
            # machine the start took longer than the `python -c pass` measured above): not ours to catch
            continue
        codes.append(p.returncode)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
        if p.returncode == 130:
            interrupted += 1
            assert err.strip().splitlines() == ["cyclebench: interrupted"], err
        else:  # finished first (or, on a host slower than the moment measured, killed before Python started)
            assert p.returncode in (0, -signal.SIGINT), (p.returncode, err)
    assert interrupted >= 1, (startup, codes)  # the signal did land during start-up


def test_ctrl_c_that_python_wraps_in_another_exception_is_one_line_and_130() -> None:
    """Python 3.11 raises a Ctrl-C that lands in a descriptor's __set_name__ as the cause of a
    RuntimeError (seen while ipaddress's classes were made during start-up's imports): still
    exit 130 and one line. Another error with another cause stays the traceback it is."""
    code = ("import sys, cyclebench.cli as c\n"
            "from cyclebench import entry\n"
            "class D:\n"
            "    def __set_name__(self, owner, name):\n"
            "        raise {exc}\n"
            "def boom(**_):\n"
            "    type('C', (), {{'d': D()}})\n"
            "c.main = boom\n"
            "entry.main()\n")
    p = subprocess.run([sys.executable, "-c", code.format(exc="KeyboardInterrupt")], capture_output=True, text=True,
                       timeout=120)
    assert (p.returncode, p.stderr.strip().splitlines()) == (130, ["cyclebench: interrupted"]), p.stderr
    p = subprocess.run([sys.executable, "-c", code.format(exc="ValueError('a bug')")], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 1 and "ValueError: a bug" in p.stderr, p.stderr


def test_ctrl_c_where_python_cannot_raise_it_is_still_one_line_and_130() -> None:
    """SIGINT inside importlib's module-lock callback (start-up's imports) or a __del__ is an
    "Exception ignored" traceback in Python, and the interrupt is lost: here it is a __del__,
    and cyclebench still stops at once with one line and 130."""
    code = ("import sys, time\nfrom cyclebench import entry\nimport cyclebench.cli as c\n"
            "class D:\n    def __del__(self): raise KeyboardInterrupt\n"
            "def fake(**kw):\n    D()\n    time.sleep(2)\n    print('finished')\n"
            "c.main = fake\nentry.main()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert (p.returncode, p.stdout, p.stderr) == (130, "", "cyclebench: interrupted\n"), p
