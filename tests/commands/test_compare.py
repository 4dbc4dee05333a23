"""`cyclebench compare`: verdicts with CIs; A/A gives `~`; stored runs compare unpaired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cyclebench.store import Store

from conftest import DATA, cli

FAST = ["--repeat", "20", "--min-time", "0.05"]


@pytest.mark.timing
def test_a_a_gives_no_verdict(db: str, tmp_path: Path) -> None:
    out = tmp_path / "aa.json"
    # 40 rounds: 10 per process, as selftest's A/A (5 a process gave the odd false positive)
    r = cli("compare", "chain/add200", "chain/add200", "-f", str(DATA / "chain.c"), "--json", str(out),
            "--repeat", "40", "--min-time", "0.05")
    assert r.exit_code == 0, r.output
    [row] = json.loads(out.read_text())
    assert row["comparison"]["verdict"] == "~"
    assert row["unit"] in ("cycles~", "ref-cycles", "ticks", "ns")


@pytest.mark.timing
def test_twice_the_work_is_slower_with_a_ci(db: str, tmp_path: Path) -> None:
    out = tmp_path / "ab.json"
    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--json", str(out), *FAST)
    assert r.exit_code == 0, r.output
    [row] = json.loads(out.read_text())
    c = row["comparison"]
    assert c["verdict"] == "slower"
    assert c["ci_low"] <= c["diff"] <= c["ci_high"]
    assert 0.8 < c["diff"] / c["median_a"] < 1.2  # 400 adds cost about twice 200
    store = Store(db)
    run = store.get_run(store.last_run_id())
    assert run["summary"]["compare"][0]["comparison"]["verdict"] == "slower"
    assert {r["variant"] for r in store.results(run["id"])} == {"compare"}


@pytest.mark.timing
def test_suite_benchmarks_with_params_and_holm(db: str, tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    # 24 rounds, not FAST's 12: with 12 the exact signed-rank test has p = 0.00049 when every pair
    # agrees and 0.00098–0.0015 with one of 12 against (by its rank), at or above Holm's 0.001:
    # one round disturbed by a busy loop on the other CPU took the verdict (seen once beside one)
    r = cli("compare", "copy/memcpy", "copy/byte_loop", "-p", "48,4096", "--json", str(out), *FAST, "--repeat", "24")
    assert r.exit_code == 0, r.output
    rows = json.loads(out.read_text())
    assert [x["param"] for x in rows] == [48, 4096]
    # a byte loop loses to memcpy
    assert all(x["comparison"]["verdict"] == "slower" for x in rows), [(x["param"], x["comparison"]) for x in rows]


def test_two_stored_runs_without_replicates_claim_nothing(db: str, tmp_path: Path) -> None:
    """A within-run CI cannot see drift between runs (docs/method.md §7); one run a side with no
    run-to-run spread known on this host is `~` with a note saying what would allow a verdict."""
    for _ in range(2):
        assert cli("run", str(DATA / "chain.c"), "-q", "--min-time", "0.03", "--repeat", "12").exit_code == 0
    out = tmp_path / "runs.json"
    r = cli("compare", "1", "2", "--json", str(out))
    assert r.exit_code == 0, r.output
    rows = json.loads(out.read_text())
    assert {x["a"].split(" ")[0] for x in rows} == {"loop/empty", "chain/add200", "chain/add400"}
    assert all(x["comparison"]["verdict"] == "~" and "run --runs" in x["note"] for x in rows)


def test_replicate_groups_are_compared_with_labels(db: str, tmp_path: Path) -> None:
    """run --runs N stores a group; compare gN gM takes each group as a side; labels name it."""
    fast = ["-q", "--min-time", "0.02", "--repeat", "12", "-b", "chain/add200", "--runs", "3"]
    assert cli("run", str(DATA / "chain.c"), *fast, "--label", "build=a").exit_code == 0
    assert cli("run", str(DATA / "chain.c"), *fast, "--label", "build=b", "--cflags", "-O1").exit_code == 0
    out = tmp_path / "g.json"
    r = cli("compare", "g1", "g4", "--json", str(out))
    assert r.exit_code == 0, r.output
    row = next(x for x in json.loads(out.read_text()) if x["a"].startswith("chain/add200"))
    assert "build=a #1,2,3" in row["a"] and row["b"] == "build=b #4,5,6"
    assert row["comparison"]["pairs"] == 6 and "runs 3 vs 3" in row["note"]
    assert "runs differ in build" in row["note"]  # said, never silently


def test_compare_errors(db: str) -> None:
    assert cli("compare", "chain/add200", "-f", str(DATA / "chain.c")).exit_code == 2
    r = cli("compare", "chain/add200", "nosuch/x", "-f", str(DATA / "chain.c"))
    assert r.exit_code == 2 and "nosuch/x" in r.output
    r = cli("compare", "7", "8")
    assert r.exit_code == 2 and "no run 7" in r.output


def test_a_crash_is_blamed_on_its_benchmark_and_fails_the_command(db: str, tmp_path: Path) -> None:
    """compare once exited 0 and marked the healthy benchmark crashed; the A vs A2
    comparison was lost with it."""
    out = tmp_path / "c.json"
    r = cli("compare", "cc/good", "cc/bad", "cc/good2", "-f", str(DATA / "cmpcrash.c"), "--repeat", "24",
            "--min-time", "0.02", "--json", str(out))
    assert r.exit_code == 1, r.output
    rows = {row["b"]: row for row in json.loads(out.read_text())}
    assert rows["cc/bad"]["comparison"] is None
    assert rows["cc/bad"]["note"].startswith("cc/bad: crashed: SIGSEGV")
    assert rows["cc/good2"]["comparison"] is not None  # measured again without the culprit
    store = Store(db)
    stored = {x["bench"]: x["status"] for x in store.results(store.last_run_id())}
    assert stored["cc/bad"] == "crashed" and stored["cc/good2"] == "ok"


def test_n_stored_runs_ranked_with_a_baseline(db: str) -> None:
    """The ranked table of Molnar's alignment thread: N runs on one line each per benchmark,
    ranked, the baseline marked."""
    fast = ["-q", "--min-time", "0.02", "--repeat", "12", "-b", "chain/add200", "-b", "chain/add400"]
    for label in ("a", "b", "c"):
        assert cli("run", str(DATA / "chain.c"), *fast, "--label", f"k={label}").exit_code == 0
    r = cli("compare", "1", "2", "3", "--baseline", "2")
    assert r.exit_code == 0, r.output
    assert "chain/add400 (cycles~), ranked" in r.output
    assert "k=b #2 [baseline]" in r.output and "k=a #1" in r.output and "k=c #3" in r.output
    r = cli("compare", "1", "2", "--baseline", "9")
    assert r.exit_code == 2 and "not one of the sides" in r.output


@pytest.mark.timing
def test_sequential_stops_when_the_answer_is_known(db: str, tmp_path: Path) -> None:
    """Without --repeat, compare looks after every process and stops at the first
    conclusive look; twice the work is obvious at the first look, long before the budget."""
    out = tmp_path / "seq.json"
    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--json", str(out),
            "--budget", "3")
    assert r.exit_code == 0, r.output
    [row] = json.loads(out.read_text())
    assert row["comparison"]["verdict"] == "slower", row
    seq = row["sequential"]
    assert seq["looks"] and seq["looks"][-1]["decision"] == "slower"
    assert seq["seconds"] < seq["budget"] == 3.0
    assert row["comparison"]["ci_low"] > row["comparison"]["margin"]
    assert "sequential" in r.output and "decided at look" in r.output
    store = Store(db)
    assert store.get_run(store.last_run_id())["summary"]["compare"][0]["sequential"]["looks"]
    # --fail-on: the verdict that occurred exits 1, one that did not exits 0
    assert cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--budget", "3",
               "--fail-on", "different").exit_code == 1
    assert cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--budget", "3",
               "--fail-on", "faster").exit_code == 0


@pytest.mark.timing  # a verdict needs rounds the host did not disturb: beside another measuring worker, none came
def test_sequential_a_a_is_never_a_verdict(db: str, tmp_path: Path) -> None:
    out = tmp_path / "aa.json"
    r = cli("compare", "chain/add200", "chain/add200", "-f", str(DATA / "chain.c"), "--json", str(out),
            "--budget", "1")
    assert r.exit_code == 0, r.output
    [row] = json.loads(out.read_text())
    assert row["comparison"]["verdict"] in ("equivalent", "inconclusive"), row
    if row["comparison"]["verdict"] == "inconclusive":
        assert "the budget ended it" in row["note"]


@pytest.mark.timing  # the plot draws the comparison's verdict, which needs undisturbed rounds (as above)
def test_compare_and_run_plot(db: str, tmp_path: Path) -> None:
    """Plots of a compare (Δ with CI) and of a run (per op with CI)."""
    png, svg = tmp_path / "c.png", tmp_path / "r.svg"
    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--budget", "2",
            "--plot", str(png))
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:4] == b"\x89PNG" and "plot of 1 comparison(s)" in r.output
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "--min-time", "0.01", "--repeat", "10", "-q",
            "--plot", str(svg))
    assert r.exit_code == 0, r.output
    assert "<svg" in svg.read_text() and "chain/add200" in svg.read_text()
    assert cli("run", "-b", "timer/rdtsc", "--plot", "x.txt").exit_code == 2  # said before measuring


def test_stored_runs_with_a_nan_figure_say_no_number(db: str) -> None:
    """A stored per op of NaN (SQLite keeps NULL) read as a fallback to the other unit and was
    reported "units differ"; it is no number, and is said so."""
    store = Store(db)
    t = "2026-11-24T10:00:00+00:00"

    def stored(per_op: float, cycles: float | None) -> int:
        row = {"bench": "chain/add200", "status": "ok", "unit": "ticks", "per_op": per_op, "cycles_per_op": cycles,
               "created_at": t, "kind": "timing"}
        return store.insert_run({"started_at": t, "status": "complete"}, [(row, [])])

    good, nan = stored(410.0, 200.0), stored(float("nan"), float("nan"))
    for a, b in ((good, nan), (nan, good)):
        r = cli("compare", str(a), str(b))
        assert "units differ" not in r.output and "Traceback" not in r.output, r.output
        assert f"no number: run #{nan} stored no finite per-op figure for it (NaN)" in r.output, r.output
