"""One lab, one meaning (model.series_key): on a database that holds what a lab accumulates, every
reader follows a benchmark's ordinary series and says what it left out.

The lab (written through the store API, as tests/sitelab.py writes its history: measuring a
real 10% step in 8 runs takes too long for a test): a bisect of lab/lz4 whose sittings measured
revisions far apart (the library across its history: 900 to 1,400 cycles~), a `compare --rev`
of it, then 8 labelled nightly runs that step +10% at the 5th. Before runs had a purpose, the
revisions were points of the nightly series: its sd grew tenfold and the step went unseen."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from cyclebench.store import Store

from conftest import DATA, FAST, cli, cli_at
from sitelab import cyclebench_cli, cyclebench_in

BENCH = "lab/lz4"
FIRST_BAD = "c0ffee" + "0" * 34
BISECT = "ab12cd34"


@dataclass
class Lab:
    url: str
    path: Path
    nightly: list[int]  # oldest first
    sittings: list[int]
    compare_rev: int

    @property
    def step_run(self) -> int:
        return self.nightly[4]


def _at(store: Store, rid: int, day: int, **fields: object) -> None:
    t = dt.datetime(2026, 3, 1, 2, 0, tzinfo=dt.timezone.utc) + dt.timedelta(days=day)
    store.update_run(rid, started_at=t.isoformat(timespec="milliseconds"), status="complete",
                     finished_at=(t + dt.timedelta(minutes=2)).isoformat(timespec="milliseconds"), **fields)


def _row(store: Store, rid: int, value: float, variant: str = "") -> None:
    half = value * 0.002
    store.add_result(rid, {"bench": BENCH, "param": None, "variant": variant, "status": "ok", "unit": "ref-cycles",
                           "per_op": value / 1.3, "ci_low": (value - half) / 1.3, "ci_high": (value + half) / 1.3,
                           "cycles_per_op": value, "cycles_ci_low": value - half, "cycles_ci_high": value + half,
                           "n_samples": 40, "kind": "timing"})


def _state(steps: list[dict[str, object]]) -> dict[str, object]:
    """A bisect's state as experiments.bisect.Bisection.to_dict stores it with its sittings."""
    def rev(sha: str, subject: str) -> dict[str, str]:
        return {"sha": sha, "short": sha[:10], "tree": "t" * 40, "subject": subject}

    return {"bisect": BISECT, "good": rev("9" * 40, "v1.0"), "bad": rev("8" * 40, "HEAD"),
            "searches": [{"bench": BENCH, "status": "found", "first_bad": rev(FIRST_BAD, "lz4: a slower match finder"),
                          "candidates": [], "good": rev("9" * 40, "v1.0"), "bad": rev(FIRST_BAD, "x"),
                          "measured_steps": 3, "steps": steps}]}


def make_lab(directory: Path) -> Lab:
    path = directory / "lab.db"
    url = f"sqlite:///{path}"
    store = Store(url)
    rng = np.random.default_rng(36)
    sittings, steps = [], []
    # the bisect's sittings: GOOD (variant "good") beside the revision measured (variant "")
    for n, value in enumerate([1400.0, 900.0, 1250.0, 950.0]):
        sha = FIRST_BAD if n == 3 else f"{n + 1}" * 40
        rid = store.begin_run(command=["cyclebench", "bisect", "--good", "v1.0", "--bad", "HEAD", "-f", "b.c"],
                              host="lab1", labels={"bisect": BISECT, "rev": sha, "step": str(n)})
        _row(store, rid, 1000.0, "good")
        _row(store, rid, value)
        steps.append({"bench": BENCH, "n": n, "revision": {"sha": sha, "short": sha[:10], "subject": f"commit {n}"},
                      "verdict": "slower" if n == 0 else "bad" if value > 1000 else "good", "reason": "",
                      "diff": value / 1000 - 1, "low": value / 1000 - 1.01, "high": value / 1000 - 0.99,
                      "seconds": 4.2, "run_id": rid, "attempts": 1, "log": None})
        summary = {"compare": [], "bisect": {"id": BISECT, "step": n, "revision": sha, "threshold": 0.02}}
        if n == 3:
            summary["bisect"]["state"] = _state(steps)  # type: ignore[index]
        _at(store, rid, n, summary=summary)
        sittings.append(rid)
    rid = store.begin_run(command=["cyclebench", "compare", "--rev", "v1.0", "--rev", "HEAD", "-f", "b.c"],
                          host="lab1", labels={"rev": "8" * 40, "base": "9" * 40})
    _row(store, rid, 1000.0, "v1.0")
    _row(store, rid, 1320.0)
    _at(store, rid, 4)
    compare_rev = rid
    nightly = []
    for i in range(8):
        rid = store.begin_run(command=["cyclebench", "run", "-b", "lab/*"], host="lab1", cpu=1)
        _row(store, rid, 1000.0 * (1.10 if i >= 4 else 1.0) * (1 + rng.normal(0, 0.001)))
        _at(store, rid, 5 + i, labels={"night": f"n{i}"})
        nightly.append(rid)
    store.close()
    return Lab(url, path, nightly, sittings, compare_rev)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return make_lab(tmp_path_factory.mktemp("serieslab"))


def test_history_gates_on_the_nightly_step_the_bisect_does_not_hide(lab: Lab) -> None:
    r = cyclebench_in(lab.url, "history", BENCH, "--fail-on-regression")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"regression: {BENCH} +10." in r.stderr and f"from run #{lab.step_run}" in r.stderr, r.stderr
    assert "8 runs" in r.stdout  # the nightly runs, not the revisions
    assert f"5 revision runs of {BENCH} not in this series: --purpose revision" in r.stderr, r.stderr


def test_the_gate_says_its_verdict_over_the_runs_it_read(lab: Lab) -> None:
    """--fail-on-regression prints its verdict either way, over the runs the gate really read (8
    of a --window of 10): a failure names the step's levels and its CI; a pass says why — the step
    older than the window, or too few runs for any change point. Before, a pass printed nothing
    and a failure said "within the last 10 runs" of 8."""
    r = cyclebench_in(lab.url, "history", BENCH, "--fail-on-regression")
    said = " ".join(r.stderr.split())
    assert r.returncode == 1 and "within the last 8 runs" in said and "Δ's 95% CI [" in said, said
    assert "→ 1,10" in said and "cycles~" in said  # the levels before and after, in the series' unit
    r = cyclebench_in(lab.url, "history", BENCH, "--fail-on-regression", "--window", "3")
    said = " ".join(r.stderr.split())
    assert r.returncode == 0, said
    assert f"no regression among the last 3 runs of {BENCH}: no change point there (the regression from run " \
           f"#{lab.step_run} is older)" in said, said
    r = cyclebench_in(lab.url, "history", BENCH, "--fail-on-regression", "--since", "2026-03-10")  # after the step
    said = " ".join(r.stderr.split())
    assert r.returncode == 0 and f"no regression among the last 4 runs of {BENCH}: no change point found — 4 runs, " \
                                 "a change point needs 3 runs on each side" in said, said
    assert said.count("a change point needs") == 1  # the verdict says it; not the note as well


def test_history_of_a_bisect_by_its_label_and_of_every_purpose(lab: Lab, tmp_path: Path) -> None:
    """docs/revisions.md: `history --label bisect=ID` reads a bisect's sittings."""
    r = cyclebench_in(lab.url, "history", BENCH, "--label", f"bisect={BISECT}")
    assert r.returncode == 0, r.stderr
    assert "4 runs" in r.stdout and "revision" in r.stdout
    r = cyclebench_in(lab.url, "history", BENCH, "--purpose", "all", "--json", str(tmp_path / "h.json"))
    assert r.returncode == 0, r.stderr
    points = json.loads((tmp_path / "h.json").read_text())["points"]
    assert {p["run"] for p in points} >= set(lab.sittings), points  # every purpose: the bisect's sittings too
    r = cyclebench_in(lab.url, "history", BENCH, "--purpose", "fleet")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "purposes there: revision, run" in r.stderr


def test_show_prints_the_bisect_and_each_sitting_points_at_it(lab: Lab) -> None:
    """`show --bisect ID` prints the bisect's own table and answer from its newest stored state (as
    its page on the site does), GOOD, BAD and M defined under it, at 80 columns; `show` of a sitting
    says which step of which bisect it is and how to see the whole. Before, no command printed a
    bisect again: `show` had each sitting's compare table alone, "(GOOD)" and "(M)" undefined."""
    r = cli_at(80, "show", "--bisect", BISECT, env={"CYCLEBENCH_DB": lab.url})
    assert r.exit_code == 0, r.output
    said = " ".join(r.stdout.split())
    assert f"bisect {BISECT} · GOOD 9999999999 · BAD 8888888888 · threshold 2%" in said, r.stdout
    assert f"{BENCH}: first bad commit {FIRST_BAD} lz4: a slower match finder" in said, said
    assert "GOOD: the revision given by --good, BAD: by --bad, M: the revision a step measured" in said
    assert all(len(ln) <= 80 for ln in r.stdout.splitlines()), r.stdout
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines if ln.split() and ln.split()[0] in ("confirm", "1", "2", "3")] \
        == ["confirm", "1", "2", "3"], r.stdout  # every step, in order
    assert all(f"#{rid}" in r.stderr for rid in lab.sittings), r.stderr
    r = cli_at(80, "show", str(lab.sittings[3]), env={"CYCLEBENCH_DB": lab.url})
    said = " ".join(r.output.split())
    assert r.exit_code == 0 and f"step 3 of bisect {BISECT}, M against GOOD: GOOD is the revision given by " \
                                "--good (9999999999)" in said, said
    assert f"`cyclebench show --bisect {BISECT}` prints every step of it and its answer" in said
    r = cli_at(80, "show", str(lab.nightly[0]), env={"CYCLEBENCH_DB": lab.url})
    assert r.exit_code == 0 and "bisect" not in r.output  # a run of no bisect names none
    r = cli_at(80, "show", "--bisect", "nope", env={"CYCLEBENCH_DB": lab.url})
    assert r.exit_code == 2 and f"no bisect nope in {lab.url} (bisects there: {BISECT})" in r.output, r.output


def test_the_site_lists_the_regression_and_gives_the_bisect_its_page(lab: Lab, tmp_path: Path) -> None:
    r = cyclebench_cli(lab.url, "report", "-o", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    index = (tmp_path / "site" / "index.html").read_text()
    regressions = index.split('id="regressions"')[1].split("</section>")[0]
    assert BENCH in regressions and f"runs/{lab.step_run}.html" in regressions, regressions
    page = (tmp_path / "site" / "bisect" / f"{BISECT}.html").read_text()
    assert f"first bad commit {FIRST_BAD}" in page and "lz4: a slower match finder" in page
    assert all(f"runs/{rid}.html" in page for rid in lab.sittings)
    revisions = (tmp_path / "site" / "revisions.html").read_text()
    assert f"bisect/{BISECT}.html" in revisions and f"runs/{lab.compare_rev}.html" in revisions
    comparisons = (tmp_path / "site" / "comparisons.html").read_text()
    assert not any(f"runs/{rid}.html" in comparisons for rid in lab.sittings)  # on their bisect's page


def test_a_database_from_before_purposes_reads_the_same(lab: Lab, tmp_path: Path) -> None:
    """The same lab stored by a cyclebench before migration 0009: upgraded on open, each run's
    purpose told from its command line and labels, the step found."""
    old = tmp_path / "old.db"
    shutil.copy(lab.path, old)
    con = sqlite3.connect(old)
    con.execute("ALTER TABLE runs DROP COLUMN purpose")
    con.execute("ALTER TABLE predictions DROP COLUMN coverage")  # migration 0010's, after it
    con.execute("UPDATE alembic_version SET version_num = '0008'")
    con.commit()
    con.close()
    r = cyclebench_in(f"sqlite:///{old}", "history", BENCH, "--fail-on-regression")
    assert r.returncode == 1 and f"from run #{lab.step_run}" in r.stderr, r.stderr


def test_a_disturbed_run_is_named_not_followed(db: str) -> None:
    """A timing run that came out disturbed (written through the store: a busy host cannot be
    ordered) and a callgrind run: history follows the callgrind series and says the disturbed run
    is left out; before the callgrind run, "no valid result" says so too. Beside a busy loop, the
    test below once got its timing run disturbed (63 of 120 batches preempted), and history showed
    the callgrind series without a word of it."""
    s = Store(db)
    timing = s.begin_run(command=["cyclebench", "run", "-b", "chain/add200"])
    s.add_result(timing, {"bench": "chain/add200", "status": "disturbed", "reason": "63 of 120 batches preempted",
                          "unit": "ref-cycles", "per_op": 140.0, "cycles_per_op": 200.0, "kind": "timing"})
    s.finish_run(timing, "complete")
    r = cli("history", "chain/add200")
    assert r.exit_code == 2 and "no valid result of chain/add200" in r.output, r.output
    assert "1 disturbed, never a point" in r.output
    simulated = s.begin_run(command=["cyclebench", "run", "-b", "chain/add200", "--backend", "callgrind"])
    s.add_result(simulated, {"bench": "chain/add200", "status": "ok", "unit": "Ir", "per_op": 203.0,
                             "kind": "simulated"})
    s.finish_run(simulated, "complete")
    r = cli("history", "chain/add200")
    assert r.exit_code == 0 and "callgrind · 1 run · Ir" in r.output, r.output
    assert "1 disturbed run of chain/add200 not in this series" in r.output
    s.close()


@pytest.mark.timing  # its known truth needs a timing run that is not disturbed (status ok): a quiet CPU
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (apt install valgrind)")
def test_run_callgrind_run_history(db: str, tmp_path: Path) -> None:
    """`run; run --backend callgrind; run; history`: the timing series, the callgrind run named
    as left out, no traceback; `--kind callgrind` its own series."""
    chain = str(DATA / "chain.c")
    argv = [chain, "-b", "chain/add200", *FAST]
    assert cli("run", *argv).exit_code == 0
    assert cli("run", chain, "-b", "chain/add200", "--backend", "callgrind").exit_code == 0
    r = cli("history", "chain/add200")  # two runs: the timing one alone, and a line on the other
    assert r.exit_code == 0 and "1 run · cycles~" in r.output and "callgrind" not in r.output.split("\n")[0]
    assert "1 callgrind run of chain/add200 not in this series: --kind callgrind" in r.output
    assert cli("run", *argv).exit_code == 0
    for gate in ([], ["--fail-on-regression"]):
        r = cli("history", "chain/add200", *gate)
        assert r.exit_code == 0 and "2 runs · cycles~" in r.output, r.output
    r = cli("history", "chain/add200", "--kind", "callgrind")
    assert r.exit_code == 0 and "callgrind · 1 run · Ir" in r.output and "2 timing runs" in r.output


@pytest.mark.skipif(not (shutil.which("valgrind") and any(shutil.which(f"llvm-mca{v}") for v in
                                                           ["", *(f"-{n}" for n in range(14, 26))])),
                    reason="valgrind or llvm-mca missing (apt install valgrind llvm)")
def test_explain_measured_is_of_its_own_build(db: str) -> None:
    """`explain` after `variants` with other flags: the newest stored figure of the benchmark is of
    another build (-O3 -march=native); explain shows the plain run's, of its own build (one
    explain: OSACA alone takes 20–40 s here)."""
    src = str(DATA / "predict.c")
    assert cli("run", src, "-b", "truth/add300", *FAST).exit_code == 0
    r = cli("variants", src, "-b", "truth/add300", "--flags", "-O3 -march=native", "--flags", "-O1",
            "--min-time", "0.01", "--rounds", "6")
    assert r.exit_code == 0, r.output
    r = cli("explain", src, "truth/add300")
    assert r.exit_code == 0 and "cycles~ (run #1)" in r.output and "× measured" in r.output, r.output


def test_explain_never_measured_in_this_build(db: str) -> None:
    """store.predictions.newest_measured: rows of another build or of a variant are not this build's."""
    from cyclebench.store.predictions import newest_measured

    s = Store(db)
    plain = s.begin_run(command=["cyclebench", "run"], build={"key": "k-plain"})
    s.add_result(plain, {"bench": "a/b", "status": "ok", "per_op": 3.0, "cycles_per_op": 300.0})
    other = s.begin_run(command=["cyclebench", "variants"], build={"key": "k-plain"})  # its first variant's build
    s.add_result(other, {"bench": "a/b", "variant": "-O3", "status": "ok", "per_op": 2.0, "cycles_per_op": 200.0})
    row, _ = newest_measured(s, "a/b", None, "k-plain")
    assert row is not None and row.run_id == plain and row.cycles_per_op == 300.0
    assert newest_measured(s, "a/b", None, "k-native") == (None, other)
    assert newest_measured(s, "x/y", None, "k-plain") == (None, None)
    s.close()


def test_a_damaged_row_is_one_line_and_every_other_run_reads(lab: Lab, tmp_path: Path) -> None:
    """`show`, `runs`, `history`, `export` and `report` of a database with a run whose summary is
    not JSON, a result whose extra is not JSON and one whose per_op is text."""
    path = tmp_path / "damaged.db"
    shutil.copy(lab.path, path)
    con = sqlite3.connect(path)
    con.execute("UPDATE runs SET summary = '{not json' WHERE id = ?", (lab.sittings[-1],))
    con.execute("UPDATE results SET extra = '{bad' WHERE run_id = ?", (lab.nightly[0],))
    con.execute("UPDATE results SET per_op = 'abc' WHERE run_id = ?", (lab.nightly[1],))
    con.commit()
    con.close()
    url = f"sqlite:///{path}"
    r = cyclebench_in(url, "show", str(lab.sittings[-1]))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert f"run #{lab.sittings[-1]}: damaged in the database, read as empty: summary" in r.stderr
    r = cyclebench_in(url, "show", str(lab.nightly[1]))
    assert r.returncode == 0 and f"run #{lab.nightly[1]}, {BENCH}: damaged in the database, read as empty: per_op" \
        in r.stderr, r.stderr
    r = cyclebench_in(url, "runs", "-n", "50")
    assert r.returncode == 0 and "Traceback" not in r.stderr
    listed = {ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()}
    assert {str(rid) for rid in (*lab.nightly, *lab.sittings)} <= listed, r.stdout
    assert r.stderr.count("damaged in the database") == 1  # the run's own column; rows are show's
    for argv in (["history", BENCH, "--fail-on-regression"], ["export", str(lab.nightly[0]), "--format", "csv"],
                 ["export", "--json", str(tmp_path / "x.json")], ["report", "-o", str(tmp_path / "site")]):
        # report forks its pool, so a process of its own; the readers in this one (~0.5 s of CPU each)
        r = (cyclebench_cli if argv[0] == "report" else cyclebench_in)(url, *argv)
        assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (argv, r.stderr)
    assert f"from run #{lab.step_run}" in cyclebench_in(url, "history", BENCH, "--fail-on-regression").stderr


def test_show_prints_a_runs_predictions_and_so_does_its_page(lab: Lab, tmp_path: Path) -> None:
    from cyclebench.prediction import MCA, OSACA, HotLoop, LoopInstruction, ModelResult, Prediction
    from cyclebench.store import predictions as stored

    path = tmp_path / "predicted.db"
    shutil.copy(lab.path, path)
    url = f"sqlite:///{path}"
    store = Store(url)
    rid = lab.nightly[-1]
    loop = HotLoop("cb_body_lz4", "runner", 0x10, 0x40, (LoopInstruction(0x10, "lock addq $0x1,(%rdi)", 1.0,
                                                                          "lock prefix"),), "callgrind", 1.0)
    p = Prediction(BENCH, None, "", "Lab CPU", loop, (ModelResult(MCA, "ok", version="19.1.7", cpu="znver5",
                                                                  cycles=987.6, throughput=500.0),
                                                      ModelResult(OSACA, "missing", "OSACA not found")))
    stored.add(store, rid, stored.rows_of(p))
    store.close()
    r = cyclebench_in(url, "show", str(rid))
    assert r.returncode == 0, r.stderr
    text = r.stdout[r.stdout.index("measured beside predicted"):]
    line = next(ln for ln in text.splitlines() if ln.startswith(BENCH))
    assert "987.6" in line and "0.90" in line, text  # llvm-mca and its ratio to the measured 1,100
    assert "not modelled: lock prefix" in " ".join(text.split())
    r = cyclebench_cli(url, "report", "-o", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "site" / "runs" / f"{rid}.html").read_text()
    assert "measured beside predicted" in page and "987.6" in page
