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

    .venv/bin/python bench/lab_fixture.py --capture  # only the captured commands, now; lab.db untouched

What depends on the machine or is measured and stores nothing the gallery could replay (``check``,
``selftest``, ``counters``, ``explain``, ``cache``, ``gen``, ``compare``/``variants --allocator``,
``compare --by host`` of two host names) is run by ``--capture`` (``Capture``; a rebuild runs it
too), each command in its own private directory with its own database and build cache: its output
under ``captured/``, its argv in manifest.json's "captured". One that cannot run here is said there,
left out with the reason.

    .venv/bin/python bench/lab_fixture.py --redo KIND # one step measured again, its run swapped in

``--redo KIND`` runs the step named KIND (its manifest "kind", one that makes one run) as a
rebuild would, in a private directory of its own, and puts the run it made in lab.db in place of
the one it made before, under the same run id (its results replaced): one kind made by new code
without measuring every other figure anew. A step new to the fixture, the one after its last, is
added so: its run the next id, as a rebuild would give it.

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
import re
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
        Step("profile", ["profile", "--limit", "5", "--", str(work / "prog_fi")]),
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
        Step("run --gbench", ["run", "--gbench", str(work / "gbench_chain"), "--processes", "6", "--min-time",
                              "0.01", "--label", "lab=gbench"], needs=("g++",)),
    ]


def _prepare(work: Path) -> list[str]:
    """Copies of the sources, the profiled programs, the git repository of tests/gitlib.py."""
    from gitlib import BENCH, make_repo

    shutil.copy(DATA / "chain.c", work / "chain.c")
    shutil.copy(DATA / "predict_blocks.c", work / "predict_blocks.c")
    shutil.copy(ROOT / "examples" / "cas_counter.c", work / "cas_counter.c")
    (work / "wis").mkdir()
    shutil.copy(DATA / "wis" / "getppid.c", work / "wis" / "getppid.c")
    for exe, flags in (("prog", []), ("prog_fi", ["-finstrument-functions"])):
        subprocess.run(["cc", "-O2", *flags, str(DATA / "profile_prog.c"), "-o", str(work / exe)], check=True)
    (work / "outside_bench.c").write_text(BENCH)
    if shutil.which("g++"):  # a Google Benchmark executable (Debian's libbenchmark-dev) for `run --gbench`
        subprocess.run(["g++", "-O2", str(DATA / "gbench_chain.cc"), "-o", str(work / "gbench_chain"), "-lbenchmark",
                        "-lpthread"], check=True)
    return make_repo(work / "repo")


def redo(out: Path, kind: str) -> int:
    """``--redo KIND`` (module doc): the run id replaced. SystemExit when KIND is no step that
    made one run, or it fails."""
    manifest = json.loads((out / "manifest.json").read_text())
    entry = next((e for e in manifest["steps"] if e["kind"] == kind), None)
    if entry is not None and len(entry.get("runs", [])) != 1:
        raise SystemExit(f"{kind}: no step of the fixture that made one run")
    work = Path(tempfile.mkdtemp(prefix=PREFIX))
    try:
        shas = _prepare(work)
        steps = _steps(work, shas)
        step = next((st for st in steps if st.kind == kind), None)
        if step is None:
            raise SystemExit(f"{kind}: no step of the fixture")
        if entry is None:  # a step new to the fixture, after every step there: its run the next id, as a rebuild
            if steps[len(manifest["steps"]):][:1] != [step]:
                raise SystemExit(f"{kind}: only the step after the fixture's last can be added; rebuild it")
            entry = {"kind": step.kind, "argv": step.argv, "cwd": step.cwd, "runs": [_last_run(out / "lab.db") + 1],
                     "exit": 0}
            manifest["steps"].append(entry)
        target = int(entry["runs"][0])
        tmp_db = work / "redo.db"
        env = {**os.environ, "CYCLEBENCH_DB": f"sqlite:///{tmp_db}", "CYCLEBENCH_CACHE": str(work / "cache"),
               "COLUMNS": "80", "PYTHONPATH": str(ROOT / "src")}
        done = subprocess.run([sys.executable, "-m", "cyclebench", *step.argv], env=env, text=True,
                              capture_output=True, cwd=work / step.cwd if step.cwd else work, check=False)
        if done.returncode not in step.codes or _last_run(tmp_db) != 1:
            raise SystemExit(f"{kind}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        new = sqlite3.connect(tmp_db)
        lab = sqlite3.connect(out / "lab.db", isolation_level=None)
        try:
            cols = [r[1] for r in lab.execute("pragma table_info(runs)") if r[1] != "id"]
            row = new.execute(f"select {', '.join(cols)} from runs where id = 1").fetchone()
            rcols = [r[1] for r in lab.execute("pragma table_info(results)") if r[1] not in ("id", "run_id")]
            results = new.execute(f"select {', '.join(rcols)} from results where run_id = 1 order by id").fetchall()
            with lab:
                if lab.execute("select count(*) from runs where id = ?", (target,)).fetchone()[0] == 0:
                    lab.execute(f"insert into runs (id, {', '.join(cols)}) values (?, {', '.join('?' * len(cols))})",
                                (target, *row))
                else:
                    lab.execute(f"update runs set {', '.join(f'{c} = ?' for c in cols)} where id = ?",
                                (*row, target))
                lab.execute("delete from results where run_id = ?", (target,))
                marks = ", ".join("?" * len(rcols))
                lab.executemany(f"insert into results (run_id, {', '.join(rcols)}) values (?, {marks})",
                                [(target, *r) for r in results])
            lab.execute("vacuum")
        finally:
            new.close()
            lab.close()
        entry["argv"] = [a.replace(str(work), "$LAB") for a in step.argv]
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        return target
    finally:
        shutil.rmtree(work, ignore_errors=True)


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


# ---------------------------------------------------------------- --capture
@dataclass(frozen=True)
class Capture:
    """A command whose output depends on this machine (its CPU, kernel, tools) or is measured, and
    that the gallery cannot replay from lab.db: run once by ``--capture``, its output kept as
    captured/<name>.txt. ``before``: commands run first in its directory, their output dropped
    (what it reads: a run to explain, a cache to list, runs of two hosts), each (its environment's
    additions, argv). ``$LAB`` in an argv is the capture's private directory."""

    kind: str  # the gallery's heading
    name: str  # captured/<name>.txt
    argv: list[str]
    why: str  # why it is captured, not replayed
    before: tuple[tuple[dict[str, str], list[str]], ...] = ()
    codes: tuple[int, ...] = (0,)
    needs: tuple[str, ...] = ()  # programs it needs; without them it is left out, said in the manifest
    left_out: str | None = None  # left out wherever it is made, and why


def _captures() -> list[Capture]:
    tiny = [*FAST]
    built_in = ["run", "-b", "loop/empty", *tiny]
    return [
        Capture("check", "check", ["check"], "it reads this machine"),
        Capture("selftest --check chains", "selftest", ["selftest", "--quick", "--check", "chains"], "it measures"),
        Capture("counters list", "counters-list", ["counters", "list"], "it tries this machine's counters"),
        Capture("counters sweep", "counters-sweep", ["counters", "sweep", "syscall/getppid"], "it measures"),
        Capture("explain", "explain", ["explain", "counter/addl_adcl"],
                "it reads this machine's CPU and its static models' versions",
                before=(({}, ["run", "-b", "counter/addl_adcl", *tiny]),), needs=("llvm-mca",)),
        Capture("compare --allocator", "compare-allocator",
                ["compare", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,jemalloc", *tiny], "it measures"),
        Capture("variants --allocator", "variants-allocator",
                ["variants", "-b", "alloc/malloc_free", "-p", "16", "--allocator", "glibc,jemalloc", "--rounds", "6",
                 "--min-time", "0.01"], "it measures"),
        # two inventory names of this machine, as a fleet job stores them (docs/fleet.md, "Run")
        Capture("compare --by host", "compare-by-host", ["compare", "--by", "host"],
                "it measures, under two host names (the lab has one)",
                before=(({"CYCLEBENCH_HOST": "lab-a"}, built_in), ({"CYCLEBENCH_HOST": "lab-b"}, built_in))),
        Capture("fleet run", "fleet-run", ["fleet", "run", "-i", "$LAB/lab.ini", "--", *built_in], "it drives hosts",
                left_out="it installs cyclebench on each host (a ~90 MB wheelhouse of this checkout, a venv): no "
                         "tiny budget; tests/commands/test_fleet.py runs it end to end"),
        Capture("cache info", "cache-info", ["cache", "info"], "it reads this machine's build cache",
                before=(({}, built_in),)),
        Capture("cache clean", "cache-clean", ["cache", "clean", "--all"], "it removes this machine's build cache",
                before=(({}, built_in),)),
        Capture("gen icache", "gen-icache", ["gen", "icache", "--funcs", "8", "-o", "$LAB/icache.c"],
                "it writes a file"),
    ]


# a progress step's line on a pipe (ui.progress.Steps: a bar on a terminal, gone when it ends)
_PROGRESS = re.compile(r"^cyclebench: .+ \d+/\d+\b.* \(\d+\.\d s\)\n", re.M)


def capture(out: Path = OUT, verbose: bool = True) -> list[dict[str, object]]:
    """Run every Capture now, each in its own private directory (``/tmp/cyclebench-lab-*``, ``$LAB``)
    with its own database and build cache, at 80 columns: stdout and stderr as they came (but a
    progress step's lines, a terminal's bar) into ``out``/captured/<name>.txt, each command in
    manifest.json's "captured" (its argv, its ``before``, its exit or why it was left out).
    ``out``/lab.db is not read or written; the files are written once every command has ended as
    it may."""
    manifest = json.loads((out / "manifest.json").read_text())
    taken = {str(s["kind"]) for s in manifest["steps"]}  # a step's capture is named by its kind (annotate)
    entries: list[dict[str, object]] = []
    texts: dict[str, str] = {}
    for c in _captures():
        assert c.name not in taken, f"{c.name}: the name of a fixture step's capture"
        entry: dict[str, object] = {"kind": c.kind, "name": c.name, "argv": c.argv, "why": c.why}
        if c.before:
            entry["before"] = [{"env": env, "argv": argv} for env, argv in c.before]
        missing = [p for p in c.needs if shutil.which(p) is None]
        if c.left_out or missing:
            entry["left out"] = c.left_out or f"not installed: {', '.join(missing)}"
            entries.append(entry)
            continue
        work = Path(tempfile.mkdtemp(prefix=PREFIX))
        try:
            env = {**{k: v for k, v in os.environ.items() if not k.startswith("CYCLEBENCH_")},
                   "CYCLEBENCH_DB": f"sqlite:///{work / 'x.db'}", "CYCLEBENCH_CACHE": str(work / "cache"),
                   "COLUMNS": "80", "PYTHONPATH": str(ROOT / "src")}
            t0 = time.monotonic()
            for more, argv in c.before:
                done = subprocess.run([sys.executable, "-m", "cyclebench", *argv], env={**env, **more}, text=True,
                                      capture_output=True, cwd=work, stdin=subprocess.DEVNULL, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{c.kind}: before it, {' '.join(argv)}: exit {done.returncode}\n"
                                     f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            argv = [a.replace("$LAB", str(work)) for a in c.argv]
            done = subprocess.run([sys.executable, "-m", "cyclebench", *argv], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=work,
                                  stdin=subprocess.DEVNULL, check=False)
            if verbose:
                print(f"{c.kind:36} exit {done.returncode}  {time.monotonic() - t0:5.1f} s", file=sys.stderr)
            if done.returncode not in c.codes:
                raise SystemExit(f"{c.kind}: exit {done.returncode}\n{done.stdout[-3000:]}")
            entry["exit"] = done.returncode
            texts[c.name] = _PROGRESS.sub("", done.stdout).replace(str(work), "$LAB")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        entries.append(entry)
    (out / "captured").mkdir(parents=True, exist_ok=True)
    for old in manifest.get("captured") or []:  # what an earlier capture wrote and this one did not
        if old["name"] not in texts:
            (out / "captured" / f"{old['name']}.txt").unlink(missing_ok=True)
    for name, text in texts.items():
        (out / "captured" / f"{name}.txt").write_text(text)
    manifest["captured"] = entries
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return entries


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
        from cyclebench.model import STAT
        from cyclebench.stats.repetitions import FLOOR

        # a stat row's mean interval: its low end clipped at FLOOR (stats.repetitions.MeanInterval:
        # the t interval of 2 repetitions reached -1,098 ms for a wall time of 95 ms)
        for row in con.execute("select id, ci_low from results where kind = ? and ci_low < ?", (STAT, FLOOR)):
            changes.append((int(row["id"]), "ci_low", row["ci_low"], FLOOR))
        if stale:
            raise SystemExit("re-deriving would change figures other designs read; rebuild the fixture "
                             "(bench/lab_fixture.py):\n" + "\n".join(stale[:20]))
        if write and changes:
            with con:
                for rid, k, _old, new in changes:
                    con.execute(f"update results set {k} = ? where id = ?", (new, rid))  # k: REDERIVED, or ci_low
            con.execute("vacuum")
        return changes
    finally:
        con.close()


def reanchor(db: Path, write: bool = True) -> list[tuple[int, str, object, object]]:
    """Every stored table's sides made the figures of the results they stand for, as the designs
    store them now (docs/method.md §5: one stored result, one per-op figure in every view): each
    comparison's A and B (summary.compare: stats.ab.anchored, Result.figure; exact counts are their
    sides already), each variant's ``per_op`` (summary.variants) and each gate row's base and head
    (summary.ci: head = base × (1 + Δ)). The paired Δ (relative between revisions), its CI and every
    verdict stay as measured. Returns (run id, what, stored, derived) of each change, rewritten
    where ``write``."""
    from cyclebench.model import Comparison
    from cyclebench.stats.ab import anchored
    from labnumbers import Stored

    stored = Stored(db)
    changes: list[tuple[int, str, object, object]] = []
    rewritten: dict[int, dict[str, object]] = {}

    def value(r: object, unit: str) -> float | None:
        fig = r.figure(unit) if r is not None else None  # type: ignore[attr-defined]
        return None if fig is None else fig.value

    for run_id, run in sorted(stored.runs.items()):
        old = run.get("summary")
        if not isinstance(old, dict):
            continue
        new = json.loads(json.dumps(old))
        for d in new.get("compare") or []:
            c = d.get("comparison")
            if not c or c["ci_low"] == c["ci_high"] == c["diff"]:
                continue
            unit, param = d.get("unit") or "", d.get("param")
            got = anchored(Comparison(**c), value(stored.side(run_id, d["a"], param), unit),
                           value(stored.side(run_id, d["b"], param), unit), relative=" @ " in d["a"]).to_dict()
            if got != c:
                changes.append((run_id, f"compare {d['a']} · {d['b']}", c, got))
                d["comparison"] = got
        for entry in new.get("variants") or []:
            for v in entry["variants"]:
                if v.get("emulated") or v.get("status") != "ok":
                    continue
                r = stored.find(run_id, lambda x, e=entry, lab=v["label"]: (x.bench, x.param, x.variant or "")
                                == (e["bench"], e["param"], lab))
                fig = r.figure(entry["unit"]) if r is not None else None
                want = None if fig is None else {"value": fig.value, "ci_low": fig.ci_low, "ci_high": fig.ci_high}
                if want is not None and v.get("per_op") != want:
                    changes.append((run_id, f"variant {entry['bench']} {v['label']}", v.get("per_op"), want))
                    v["per_op"] = want
        for row in (new.get("ci") or {}).get("rows") or []:
            t = row.get("time")
            d = next((x for x in new.get("compare") or [] if x["a"].startswith(f"{row['benchmark']} @ ")), None)
            if not t or d is None or not d.get("comparison"):
                continue
            base = d["comparison"]["median_a"]
            want_t = {**t, "base": base, "head": base * (1 + t["change"])}
            if want_t != t:
                changes.append((run_id, f"gate {row['benchmark']}", t, want_t))
                row["time"] = want_t
        if new != old:
            rewritten[run_id] = new
    if write and rewritten:
        con = sqlite3.connect(db)
        try:
            with con:
                for run_id, summary in rewritten.items():
                    con.execute("update runs set summary = ? where id = ?", (json.dumps(summary), run_id))
            con.execute("vacuum")
        finally:
            con.close()
    return changes


def commit_depths(db: Path, write: bool = True) -> list[tuple[int, str, object, object]]:
    """The commit depth of every revision a sitting of the fixture built (model.Revisions
    ``depths``, which history orders a revision series by; the fixture was made before sittings
    stored it), from the subjects its bisect stored: tests/gitlib.py's history is linear and
    commit k is "release 0.k" but the regression's ("work: 12 more adds", REGRESSION), so its
    depth is k. Returns (run id, "depths", stored, derived) of each run changed, rewritten where
    ``write``; a run whose every side's subject is not known is left as it is."""
    import re

    from gitlib import REGRESSION

    con = sqlite3.connect(db)
    try:
        subjects: dict[str, str] = {}

        def walk(x: object) -> None:  # every {sha, subject} a bisect's summary holds
            if isinstance(x, dict):
                if isinstance(x.get("sha"), str) and isinstance(x.get("subject"), str):
                    subjects[x["sha"]] = x["subject"]
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        for (summary,) in con.execute("select summary from runs where summary is not null"):
            walk(json.loads(summary))

        def depth(subject: str) -> int | None:
            m = re.fullmatch(r"release 0\.(\d+)", subject)
            return int(m.group(1)) if m else REGRESSION if subject == "work: 12 more adds" else None

        changes: list[tuple[int, str, object, object]] = []
        for rid, env_text in con.execute("select id, env from runs order by id").fetchall():
            env = json.loads(env_text or "null")
            revs = env.get("revisions") if isinstance(env, dict) else None
            if not isinstance(revs, dict):
                continue
            shas = [s for k in ("a", "b") if isinstance(s := revs.get(k), str)] + list(revs.get("sides") or [])
            got = {s: depth(subjects.get(s, "")) for s in shas}
            if not shas or None in got.values() or revs.get("depths") == got:
                continue
            changes.append((int(rid), "depths", revs.get("depths"), got))
            if write:
                revs["depths"] = got
                with con:
                    con.execute("update runs set env = ? where id = ?", (json.dumps(env), rid))
        return changes
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"the fixture's directory (default: {OUT})")
    ap.add_argument("--rederive", action="store_true",
                    help="analyse the stored results again from their samples (REDERIVED), measure nothing")
    ap.add_argument("--capture", action="store_true",
                    help="only run the commands kept as printed (captured/, their manifest entries) now, "
                         "each with its own throwaway database; lab.db is not touched")
    ap.add_argument("--redo", metavar="KIND", help="measure one step (its manifest kind) again and swap its run in")
    args = ap.parse_args()
    if args.redo:
        print(f"{args.out / 'lab.db'}: run {redo(args.out, args.redo)} made again ({args.redo})", file=sys.stderr)
        return
    if args.capture:
        t0 = time.monotonic()
        entries = capture(args.out)
        left = [f"{e['kind']} ({e['left out']})" for e in entries if "left out" in e]
        print(f"{args.out / 'captured'}: {len(entries) - len(left)} commands in {time.monotonic() - t0:.0f} s"
              + (f"; left out: {', '.join(left)}" if left else ""), file=sys.stderr)
        return
    if args.rederive:
        changes = rederive(args.out / "lab.db")
        for rid, k, old, new in changes:
            print(f"result {rid} {k}: {old!r} -> {new!r}", file=sys.stderr)
        print(f"{args.out / 'lab.db'}: {len(changes)} figures re-derived", file=sys.stderr)
        sides = reanchor(args.out / "lab.db")
        for run_id, what, old, new in sides:
            print(f"run {run_id} {what}: {old!r} -> {new!r}", file=sys.stderr)
        print(f"{args.out / 'lab.db'}: {len(sides)} tables' sides made their results' figures", file=sys.stderr)
        depths = commit_depths(args.out / "lab.db")
        print(f"{args.out / 'lab.db'}: {len(depths)} runs given their revisions' commit depths", file=sys.stderr)
        return
    t0 = time.monotonic()
    doc = build(args.out)
    capture(args.out)  # build made captured/ and the manifest anew: the captured commands with them
    steps = doc["steps"]
    assert isinstance(steps, list)
    left = [s["kind"] for s in steps if "left out" in s]
    print(f"{args.out}: {len(steps) - len(left)} kinds in {time.monotonic() - t0:.0f} s"
          + (f"; left out (not installed): {', '.join(left)}" if left else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
