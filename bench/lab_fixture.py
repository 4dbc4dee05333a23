"""Rebuild the lab fixture: a database with one run of every kind cyclebench stores, made by the
real ``cyclebench`` program with small measurements (docs/gallery.md shows what each prints).

    .venv/bin/python bench/lab_fixture.py            # → tests/data/lab/ (lab.db, manifest.json, captured/)

The database is made from nothing, the commands always in the same order, so the runs' ids,
kinds and benchmarks are the same on every rebuild (their figures are measured, so they are
not). What a command prints but does not store (``annotate``) is kept as it printed it at 80
columns under ``captured/``. tests/commands/test_lab_readers.py says when the fixture is stale
(its schema is not the newest migration): rebuild it with this command and commit the result.

Every command runs in its own process (argv lists, no shell), in a private directory
(``/tmp/cyclebench-lab-*``, normalised in the gallery) holding copies of the sources, and with a
private build cache, so nothing of the user's is read or written.

    .venv/bin/python bench/lab_fixture.py --rederive # the stored results analysed again, nothing measured

When the estimators change a figure nothing stored later is made from (REDERIVED: min, the
median's CI), the fixture's results are analysed again from their stored samples by this code
(``rederive``: stats.result.result_fields, as the run stored them) and those columns rewritten,
so the gallery shows what the code derives without measuring anew (which would move every
figure). tests/commands/test_lab_min.py says when that is due.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
OUT = DATA / "lab"
sys.path.insert(0, str(ROOT / "tests"))

# as tests/conftest.py FAST: short measurements; the fixture is for what reaches the eye, not precision
FAST = ["--min-time", "0.01", "--repeat", "12", "--processes", "2"]
WIS = ["--duration", "0.3", "--interval", "0.1", "--warmup", "0.1", "--passes", "1", "--retries", "0"]
SCALE = ["--tasks", "1,2", "--duration", "0.05", "--passes", "1", "--warmup", "0", "--mode", "both"]
PREFIX = "cyclebench-lab-"  # the private directory's name: tests and the gallery normalise it


@dataclass(frozen=True)
class Step:
    """One command of the fixture: ``kind`` names what it stores (the manifest's key)."""

    kind: str
    argv: list[str]
    codes: tuple[int, ...] = (0,)  # the exit codes it may end with
    cwd: str | None = None  # relative to the private directory
    capture: str | None = None  # keep its stdout (80 columns) as captured/<name>.txt
    needs: tuple[str, ...] = ()  # programs it needs; without them it is left out, said in the manifest
    runs: list[int] = field(default_factory=list)


def _steps(work: Path, shas: list[str]) -> list[Step]:
    from gitlib import REGRESSION

    chain = str(work / "chain.c")
    lib = ["--repo", str(work / "repo"), "-f", str(work / "outside_bench.c"), "--build", "make", "--ldflags",
           "libwork.a", "-I", str(work / "repo" / "lib")]
    return [
        Step("run", ["run", chain, "-b", "chain/add200", "-b", "chain/add400", *FAST, "--label", "lab=plain"]),
        Step("run -e", ["run", chain, "-b", "chain/add200", *FAST, "-e", "task-clock,page-faults"]),
        Step("run --net", ["run", chain, "-b", "chain/add200", *FAST, "--net"]),
        Step("run --backend callgrind", ["run", chain, "-b", "chain/add200", "--backend", "callgrind"],
             needs=("valgrind",)),
        Step("run --allocator", ["run", "-b", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,jemalloc",
                                 *FAST]),
        Step("run --runs (group a)", ["run", chain, "-b", "chain/add200", *FAST, "--runs", "3", "--label",
                                      "build=a"]),
        Step("run --runs (group b)", ["run", chain, "-b", "chain/add200", *FAST, "--runs", "3", "--label",
                                      "build=b", "--cflags", "-O1"]),
        Step("compare", ["compare", "chain/add200", "chain/add400", "-f", chain, *FAST]),
        Step("compare, sequential", ["compare", "chain/add200", "chain/add400", "-f", chain, "--budget", "0.2",
                                     "--processes", "2", "--min-time", "0.01"]),
        Step("variants", ["variants", chain, "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200",
                          "--rounds", "6", "--min-time", "0.01"]),
        Step("variants --backend callgrind", ["variants", chain, "--flags", "-O1", "--flags", "-O2", "-b",
                                              "chain/add200", "--backend", "callgrind"], needs=("valgrind",)),
        Step("variants --target aarch64 --disasm",
             ["variants", str(work / "cas_counter.c"), "--target", "aarch64", "--flags", "-O2", "--flags",
              "-O2 -march=armv8.2-a", "--flags", "-O2 -mno-outline-atomics", "--disasm"],
             needs=("aarch64-linux-gnu-gcc", "qemu-aarch64")),
        Step("scale", ["scale", "chain/add200", "-f", chain, *SCALE]),
        Step("scale (will-it-scale)", ["scale", "-f", str(work / "wis" / "getppid.c"), "--tasks", "1,2", "--mode",
                                       "both", *WIS]),
        Step("stat", ["stat", "-r", "2", "-e", "task-clock,page-faults", "--", "true"]),
        Step("profile", ["profile", "--limit", "5", "--", str(work / "prog_pg")], needs=("uftrace",)),
        Step("profile --backend callgrind", ["profile", "--backend", "callgrind", "--", str(work / "prog")],
             needs=("valgrind",)),
        Step("bisect", ["bisect", "--good", shas[REGRESSION - 3], "--bad", shas[REGRESSION + 1], "-b", "lib/work",
                        "--budget", "2", *lib], needs=("git", "make")),
        Step("compare --rev", ["compare", "--rev", shas[REGRESSION - 2], "--rev", shas[REGRESSION - 1], "-f",
                               "bench/work_bench.c", "--build", "make", "--ldflags", "libwork.a", "-I", "lib",
                               "--budget", "2"], cwd="repo", needs=("git", "make")),
        Step("run --predict", ["run", chain, "-b", "chain/add200", *FAST, "--predict"], needs=("llvm-mca",)),
        Step("run --predict (block-weighted)", ["run", str(work / "predict_blocks.c"), "-b", "blocks/branchy", *FAST,
                                                "--predict"], needs=("llvm-mca", "valgrind")),
        Step("ci", ["ci", "--base", shas[REGRESSION - 2], "--head", shas[REGRESSION - 1], "-f", "bench/work_bench.c",
                    "--build", "make", "--ldflags", "libwork.a", "-I", "lib", "--budget", "2", "--gate", "both"],
             codes=(1,), cwd="repo", needs=("git", "make", "valgrind")),
        Step("import", ["import", str(work / "run1.json")]),
        Step("annotate", ["annotate", "chain/add400", "-f", chain, "--seconds", "0.3"], capture="annotate",
             needs=("perf",)),
    ]


def _prepare(work: Path) -> list[str]:
    """Copies of the sources, the profiled programs, the git repository of tests/gitlib.py."""
    from gitlib import BENCH, make_repo

    shutil.copy(DATA / "chain.c", work / "chain.c")
    shutil.copy(DATA / "predict_blocks.c", work / "predict_blocks.c")
    shutil.copy(ROOT / "examples" / "cas_counter.c", work / "cas_counter.c")
    (work / "wis").mkdir()
    shutil.copy(DATA / "wis" / "getppid.c", work / "wis" / "getppid.c")
    for exe, flags in (("prog", []), ("prog_pg", ["-pg"])):
        subprocess.run(["cc", "-O2", *flags, str(DATA / "profile_prog.c"), "-o", str(work / exe)], check=True)
    (work / "outside_bench.c").write_text(BENCH)
    return make_repo(work / "repo")


def _last_run(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return int(con.execute("select coalesce(max(id), 0) from runs").fetchone()[0])
    except sqlite3.OperationalError:  # no table yet
        return 0
    finally:
        con.close()


def build(out: Path, verbose: bool = True) -> dict[str, object]:
    """Make ``out``/lab.db (removed first), ``out``/manifest.json and ``out``/captured/."""
    work = Path(tempfile.mkdtemp(prefix=PREFIX))
    try:
        shas = _prepare(work)
        tmp_db = work / "lab.db"
        env = {**os.environ, "CYCLEBENCH_DB": f"sqlite:///{tmp_db}", "CYCLEBENCH_CACHE": str(work / "cache"),
               "COLUMNS": "80", "PYTHONPATH": str(ROOT / "src")}
        captured: dict[str, str] = {}
        manifest: list[dict[str, object]] = []
        steps = _steps(work, shas)
        for step in steps:
            missing = [p for p in step.needs if shutil.which(p) is None]
            if step.kind == "import":  # the first run, exported and imported back: a run of kind 'imported'
                subprocess.run([sys.executable, "-m", "cyclebench", "export", "1", "--json", str(work / "run1.json")],
                               env=env, check=True, capture_output=True)
            entry: dict[str, object] = {"kind": step.kind, "argv": step.argv, "cwd": step.cwd, "runs": []}
            if missing:
                entry["left out"] = f"not installed: {', '.join(missing)}"
                manifest.append(entry)
                continue
            before = _last_run(tmp_db)
            t0 = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "cyclebench", *step.argv], env=env, text=True,
                                  capture_output=True, cwd=work / step.cwd if step.cwd else work, check=False)
            if verbose:
                print(f"{step.kind:36} exit {done.returncode}  {time.monotonic() - t0:5.1f} s", file=sys.stderr)
            if done.returncode not in step.codes:
                raise SystemExit(f"{step.kind}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            entry["exit"] = done.returncode
            entry["runs"] = list(range(before + 1, _last_run(tmp_db) + 1))
            if step.capture:
                captured[step.capture] = done.stdout
            manifest.append(entry)
        # the database as committed: one file, no WAL beside it
        con = sqlite3.connect(tmp_db, isolation_level=None)
        try:
            con.execute("pragma wal_checkpoint(truncate)")
            con.execute("pragma journal_mode=delete")
            con.execute("vacuum")
        finally:
            con.close()
        if out.exists():
            shutil.rmtree(out)
        (out / "captured").mkdir(parents=True)
        shutil.copy(tmp_db, out / "lab.db")
        for name, text in captured.items():
            (out / "captured" / f"{name}.txt").write_text(text.replace(str(work), "$LAB"))
        doc = {"steps": [{**e, "argv": [a.replace(str(work), "$LAB") for a in e["argv"]]}  # type: ignore[attr-defined]
                         for e in manifest]}
        (out / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n")
        return doc
    finally:
        shutil.rmtree(work, ignore_errors=True)


# What rederive may rewrite: figures of stats.result.result_fields that nothing stored later is
# made from. The min over every process's largest batches (docs/method.md §2; the fixture's was
# over one process's: run 6's loop/empty 1.401 above its CI, 1.341–1.400); the median's CI, by
# order statistics since the fixture was measured with its bootstrap. The per-op figures and
# their CIs are read by add_net (--net), the run-to-run spread and the verdicts: a change to one
# of them needs the fixture rebuilt.
REDERIVED = ("min", "cycles_min", "median_ci_low", "median_ci_high")
# result_fields' figures that must come out as stored for a re-derivation to be trusted
CHECKED = ("per_op", "ci_low", "ci_high", "ns_per_op", "intercept", "median", "mad", "mean",
           "cv", "rcv", "n_samples", "outliers", "confidence", "method", "rounds", "cycles_per_op", "cycles_ci_low",
           "cycles_ci_high", "cycles_rcv", "core_ghz", "ratio_rcv", "chain_agreement", "n_disturbed", "n_trimmed",
           "pmu_cycles_per_op", "pmu_ci_low", "pmu_ci_high", "pmu_agreement")


def rederive(db: Path, write: bool = True) -> list[tuple[int, str, object, object]]:
    """Every timing result of ``db`` stored with its runner line and samples analysed again by this
    code: stats.result.result_fields on the line (store.rows.parts_of) and the samples, as the run
    handed them over; its REDERIVED columns rewritten where they differ (``write``). Returns
    (result id, column, stored, derived) of each difference. Raises SystemExit, writing nothing,
    when one of CHECKED would change too: the designs that read it must run again (rebuild)."""
    from cyclebench.model import OK, TIMING, Outcome
    from cyclebench.stats.result import result_fields
    from cyclebench.store.rows import parts_of

    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        changes: list[tuple[int, str, object, object]] = []
        stale: list[str] = []
        rates = {rid: (json.loads(cal or "null") or {}).get("rate_hz")
                 for rid, cal in con.execute("select id, calibration from runs")}
        for row in con.execute("select * from results where kind = ? and status in ('ok', 'disturbed') "
                               "order by id", (TIMING,)).fetchall():
            line = parts_of(TIMING, json.loads(row["extra"] or "null")).get("line")
            samples = con.execute("select iters, ticks, cal, disturbed, pmu from samples where result_id = ? "
                                  "order by idx", (row["id"],)).fetchall()
            rate = rates.get(row["run_id"])
            if not isinstance(line, dict) or not samples or not rate:
                continue
            cols = list(zip(*samples, strict=True))
            res = {**line, "n": list(cols[0]), "ticks": list(cols[1]), "disturbed": list(cols[3]),
                   "cal": None if None in cols[2] else list(cols[2]),
                   "pmu_cycles": None if None in cols[4] else list(cols[4])}
            # the runner's status: result_fields makes it 'disturbed' itself when most batches were
            got = result_fields(Outcome(row["bench"], row["param"], OK, result=res), rate, row["variant"])
            stale += [f"result {row['id']} {k}: stored {row[k]!r}, derived {got[k]!r}"
                      for k in CHECKED if got[k] != row[k]]
            changes += [(int(row["id"]), k, row[k], got[k]) for k in REDERIVED if got[k] != row[k]]
        if stale:
            raise SystemExit("re-deriving would change figures other designs read; rebuild the fixture "
                             "(bench/lab_fixture.py):\n" + "\n".join(stale[:20]))
        if write and changes:
            with con:
                for rid, k, _old, new in changes:
                    con.execute(f"update results set {k} = ? where id = ?", (new, rid))  # k: one of REDERIVED
            con.execute("vacuum")
        return changes
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"the fixture's directory (default: {OUT})")
    ap.add_argument("--rederive", action="store_true",
                    help="analyse the stored results again from their samples (REDERIVED), measure nothing")
    args = ap.parse_args()
    if args.rederive:
        changes = rederive(args.out / "lab.db")
        for rid, k, old, new in changes:
            print(f"result {rid} {k}: {old!r} -> {new!r}", file=sys.stderr)
        print(f"{args.out / 'lab.db'}: {len(changes)} figures re-derived", file=sys.stderr)
        return
    t0 = time.monotonic()
    doc = build(args.out)
    steps = doc["steps"]
    assert isinstance(steps, list)
    left = [s["kind"] for s in steps if "left out" in s]
    print(f"{args.out}: {len(steps) - len(left)} kinds in {time.monotonic() - t0:.0f} s"
          + (f"; left out (not installed): {', '.join(left)}" if left else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
