"""`show RUN` prints every stored kind as the command that made it printed it: the same text at
the same width (COLUMNS=200), from what the run stored; `show --format F` exports it. Runs stored
by older versions (tests/fixtures/db) are shown with their command's defaults."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import Result

from conftest import DATA, FAST, FIXTURES, cli, cli_at

CHAIN = str(DATA / "chain.c")
NO_VALGRIND = shutil.which("valgrind") is None
NO_UFTRACE = shutil.which("uftrace") is None


def _cli(db: str, *args: str) -> Result:
    """The CLI on ``db`` as a process of its own prints it, its consoles 200 columns wide
    (COLUMNS), in this process (conftest.cli_at): the file's ~40 Pythons were ~20 s of CPU."""
    return cli_at(200, *args, env={"CYCLEBENCH_DB": db})


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _prog(tmp_path: Path, *flags: str) -> str:
    exe = tmp_path / ("prog_pg" if "-pg" in flags else "prog")
    subprocess.run(["cc", "-O2", *flags, str(DATA / "profile_prog.c"), "-o", str(exe)], check=True)
    return str(exe)


# kind → (the command, text only its own table has, the csv's kind: None for compare's comparisons)
KINDS = {
    "run --net": (["run", CHAIN, "-b", "chain/add200", *FAST, "--processes", "2", "--net"], "net per op", "timing"),
    "run -e": (["run", CHAIN, "-b", "chain/add200", *FAST, "--processes", "2", "-e", "task-clock,page-faults"],
               "counters per op", "timing"),
    "run --backend callgrind": (["run", CHAIN, "-b", "chain/add200", "--backend", "callgrind"], "Bim/op",
                                "simulated"),
    "compare": (["compare", "chain/add200", "chain/add400", "-f", CHAIN, "--repeat", "12", "--processes", "2",
                 "--min-time", "0.01"], "95% CI of Δ", None),
    "compare, sequential": (["compare", "chain/add200", "chain/add400", "-f", CHAIN, "--budget", "0.2",
                             "--processes", "2", "--min-time", "0.01"], "repeated CI of Δ", None),
    "variants --sort dec": (["variants", CHAIN, "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200",
                             "--rounds", "6", "--min-time", "0.01", "--sort", "dec"], "ranked by dec", "timing"),
    "scale": (["scale", "chain/add200", "-f", CHAIN, "--tasks", "1,2", "--duration", "0.05", "--passes", "1",
               "--warmup", "0"], "efficiency per CPU-second (│ = 1.0)", "scaling"),
    "profile --backend callgrind": (["profile", "--backend", "callgrind", "--", "PROG"], "self Ir/call", "profile"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_show_prints_what_the_command_printed(kind: str, db: str, tmp_path: Path) -> None:
    argv, own, csv_kind = KINDS[kind]
    if "callgrind" in kind and NO_VALGRIND:
        pytest.skip("valgrind not installed (apt-get install valgrind)")
    argv = [_prog(tmp_path) if a == "PROG" else a for a in argv]
    made = _cli(db, *argv)
    assert made.exit_code == 0, made.stderr
    assert own in made.stdout
    shown = _cli(db, "show")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == made.stdout  # the same tables, titles and captions, from what was stored
    exported = _cli(db, "show", "--format", "csv")
    assert exported.exit_code == 0, exported.stderr
    rows = _csv(exported.stdout)  # stdout carries only the export
    assert rows, exported.stdout
    if csv_kind is None:  # compare: its comparisons, the table show prints
        assert [(r["a"], r["b"], r["verdict"]) for r in rows] == [("chain/add200", "chain/add400", "slower")]
    else:
        assert {r["kind"] for r in rows} == {csv_kind}


def test_show_of_a_variants_run_is_its_ranking(db: str) -> None:
    """The ranked tables, and nothing else: not the per-variant result rows; the headers say
    which estimator each figure is."""
    made = _cli(db, "variants", CHAIN, "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200", "-b",
                "chain/add400", "--rounds", "6", "--min-time", "0.01")
    assert made.exit_code == 0, made.stderr
    shown = _cli(db, "show", "--wide")
    assert shown.exit_code == 0, shown.stderr
    tables = [ln for ln in shown.stdout.splitlines() if "ranked by per op (cycles~) · run #1" in ln]
    assert len(tables) == 2 and "chain/add200" in tables[0] and "chain/add400" in tables[1]
    header = next(ln for ln in shown.stdout.splitlines() if "variant" in ln)
    assert "per op (cycles~)" in header and "Δ% median" in header and "body B" in header
    assert "per-round differences" in " ".join(shown.stdout.split())  # the caption says what Δ% is
    assert "±CI95" not in shown.stdout  # the results table is not variants'
    csv_rows = _csv(_cli(db, "show", "--format", "csv").stdout)
    assert sorted((r["bench"], r["variant"].lstrip("'")) for r in csv_rows) == [
        ("chain/add200", "-O1"), ("chain/add200", "-O2"), ("chain/add400", "-O1"), ("chain/add400", "-O2")]


def test_show_of_a_stat_run_is_the_table_stat_wrote(db: str, tmp_path: Path) -> None:
    """stat writes its table to -o FILE at 200 columns; show prints the same, a hardware event
    that could not be opened still <not supported> (not merely skipped)."""
    table = tmp_path / "stat.txt"
    made = _cli(db, "stat", "-r", "2", "-e", "cycles,task-clock", "-o", str(table), "--", "true")
    assert made.exit_code == 0, made.stderr
    shown = _cli(db, "show")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == table.read_text()
    rows = _csv(_cli(db, "show", "--format", "csv").stdout)
    assert {r["kind"] for r in rows} == {"stat"} and any(r["bench"].endswith("/task-clock") for r in rows)


def test_show_of_a_replicate_run_has_the_spread_known_when_it_ran(db: str) -> None:
    """`run --runs 3`: the third table has the run-to-run sd of the two before it; show of the
    first has none, though later replicates are stored now."""
    made = _cli(db, "run", CHAIN, "-b", "chain/add200", *FAST, "--processes", "2", "--runs", "3")
    assert made.exit_code == 0, made.stderr
    assert "replicate sd" in made.stdout
    for rid in (1, 2, 3):
        shown = _cli(db, "show", str(rid))
        assert shown.exit_code == 0, shown.stderr
        assert shown.stdout in made.stdout, rid
        assert ("replicate sd" in shown.stdout) == (rid == 3)


@pytest.mark.skipif(NO_UFTRACE, reason="uftrace not installed (apt-get install uftrace)")
def test_show_of_a_timed_profile_and_its_probe(db: str, tmp_path: Path) -> None:
    made = _cli(db, "profile", "--limit", "3", "--", _prog(tmp_path, "-pg"))
    assert made.exit_code == 0, made.stderr
    shown = _cli(db, "show")
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout == made.stdout and "self/call (cycles~)" in shown.stdout
    names = {"main", "chain3000", "chain30", "f", "g"}
    shown_names = [ln.split()[-1] for ln in shown.stdout.splitlines() if ln.split() and ln.split()[-1] in names]
    assert len(shown_names) == 3  # --limit 3, as stored
    probe = next(ln for ln in made.stderr.splitlines() if ln.startswith("probe (uftrace's mcount hooks)"))
    assert probe in shown.stderr
    rows = _csv(_cli(db, "show", "--format", "csv").stdout)
    assert {r["kind"] for r in rows} == {"profile"} and {"main", "chain3000", "f", "g"} <= {r["bench"] for r in rows}
    gbench = _cli(db, "show", "--format", "gbench")
    assert gbench.exit_code == 0 and "per call, not per op" in gbench.stderr


# runs stored by older versions: (fixture, run id, what its table shows)
STORED = [
    ("24ff9bd.db", 1, ["counters per op", "task-clock (ns)", "cycles~"]),
    ("24ff9bd.db", 2, ["simulated (callgrind)", "Ir/op", "Bim/op"]),
    ("24ff9bd.db", 3, ["run #3: comparisons", "95% CI of Δ", "slower"]),
    ("24ff9bd.db", 4, ["chain/add200 · ranked by per op (cycles~) · run #4", "Δ% median", "(baseline)"]),
    ("24ff9bd.db", 5, ["stat #5 · 'true' · 2 repetitions · counters enabled at exec", "task-clock"]),
    ("24ff9bd.db", 6, ["chain/add200 (threads)", "speed-up", "efficiency"]),
    ("c7ecbb2.db", 2, ["stat #2 · 'true' · 3 repetitions", "page-faults"]),
    ("c7ecbb2.db", 3, ["simulated (callgrind)", "Bim/op"]),
    ("c7ecbb2.db", 5, ["emulated", "per op"]),  # variants before its summary was stored: its rows
]


@pytest.mark.parametrize(("fixture", "rid", "says"), STORED, ids=[f"{f[:7]}-{r}" for f, r, _ in STORED])
def test_show_of_runs_stored_by_older_versions(fixture: str, rid: int, says: list[str], tmp_path: Path) -> None:
    path = tmp_path / fixture
    shutil.copy(FIXTURES / "db" / fixture, path)
    url = f"sqlite:///{path}"
    r = cli("show", str(rid), "--db", url)
    assert r.exit_code == 0, r.output
    for s in says:
        assert s in r.stdout, s
    exported = cli("show", str(rid), "--db", url, "--format", "csv")
    assert exported.exit_code == 0 and _csv(exported.stdout), exported.output


def test_show_format_to_a_file_keeps_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "db" / "24ff9bd.db", path)
    url = f"sqlite:///{path}"
    out = tmp_path / "v.csv"
    r = cli("show", "4", "--db", url, "--format", "csv", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "ranked by per op" in r.stdout and f"csv export written to {out}" in r.stderr
    assert {row["variant"].lstrip("'") for row in _csv(out.read_text())} == {"-O1", "-O2"}
    md = cli("show", "3", "--db", url, "--format", "markdown")
    assert md.exit_code == 0 and "| chain/add200 | chain/add400 |" in md.stdout and "┃" not in md.stdout
    js = tmp_path / "run.json"
    assert cli("show", "2", "--db", url, "-o", str(js)).exit_code == 0  # -o alone: the lossless run file
    assert '"format": "cyclebench-run"' in js.read_text()


@pytest.mark.parametrize("summary", [{"variants": [{"bench": "chain/add200"}]}, {"compare": [{"a": "x"}]},
                                     {"compare": [{"a": "x", "b": "y", "comparison": {"nonsense": 1}}]}],
                         ids=["variants", "compare", "comparison"])
def test_a_damaged_summary_shows_the_rows_in_one_line(summary: dict, db: str) -> None:
    """A summary an edited import left incomplete: its result rows and one line saying so, no
    traceback; the export still works."""
    from cyclebench.store import Store

    store = Store(db)
    rid = store.begin_run(command=["cyclebench", "variants"], summary=summary)
    store.add_result(rid, {"bench": "chain/add200", "variant": "-O2", "status": "ok", "unit": "ref-cycles",
                           "per_op": 123.4, "ci_low": 123.0, "ci_high": 124.0})
    store.finish_run(rid, "complete")
    r = cli("show")
    assert r.exit_code == 0, r.output
    assert f"run #{rid}'s stored table is incomplete" in r.stderr and "Traceback" not in r.output
    assert "chain/add200" in r.stdout and "123.4" in r.stdout
    exported = cli("show", "--format", "csv")
    assert exported.exit_code == 0 and _csv(exported.stdout)[0]["bench"] == "chain/add200"
