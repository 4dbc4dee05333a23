"""Each bad input of DESIGN.md §9 gives one clear line, and other results are stored."""

from __future__ import annotations

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
