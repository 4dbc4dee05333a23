"""Each bad input of DESIGN.md §9 gives one clear line, and other results are stored."""

from __future__ import annotations

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


@pytest.mark.parametrize(("argv", "what"), OVERWRITES, ids=[" ".join(a).replace(" ".join(FAST), "…") for a, _ in
                                                            OVERWRITES])
def test_an_output_that_is_an_input_is_refused_before_anything_runs(
        stored: Path, argv: list[str], what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(stored)
    monkeypatch.setenv("CYCLEBENCH_DB", f"sqlite:///{stored / 'r.db'}")
    before = {p.name: p.read_bytes() for p in (stored / "r.db", stored / "a.c", stored / "inc" / "mine.h")}
    r = cli(*argv)
    assert r.exit_code == 2, r.output
    assert what in one_line_error(r.stderr) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert {p.name: p.read_bytes() for p in (stored / "r.db", stored / "a.c", stored / "inc" / "mine.h")} == before
    assert not (stored / "x.json").exists()
    assert [run["id"] for run in Store(f"sqlite:///{stored / 'r.db'}").list_runs()] == [1]  # nothing measured
