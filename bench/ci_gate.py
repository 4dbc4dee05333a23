#!/usr/bin/env python3
"""What `cyclebench ci` holds on a noisy 2-vCPU machine, and what asv's and hyperfine's rules
say on the same builds in the same sitting (a validation script, not a test; docs/ci.md,
"Measured").

A repository of 10 benchmarks (dependent add chains of 100–1000 adds, each its own function in a
small library) and three heads off main: a comment-only change, a new unused function in another
file (it may move code layout), and +4% planted in one benchmark (chain300: dependent adds). While
a noisy neighbour runs — a busy loop pinned to the other CPU, a process taking ~10% of the
benchmark's CPU in 5 ms bursts, a writer doing fsync'd 1 MiB writes — the gate runs ``--runs``
times against each head and the script prints, per head: how often it failed (a false alarm for
the first two, the power for the third), was undecided, passed; the median wall per gate run (the
cache restored: builds skipped); and ``--gate counts`` ``--counts-runs`` times against a +1% Ir
head. The A/A heads run ``--runs`` times, the +4% head ``--power-runs`` times. Benchmarks left
with no CI at all (the budget ended before the first look's 6 pairs: `ci` lists them undecided)
are counted and printed apart: a sign the budget is too small for the host.

Side by side. In the first ``--side-runs`` runs of the comment head (A/A) and of the +4% head,
right after the gate, two other rules judge the same 10 benchmarks on the same runner binaries:
the ones the gate built, found again through cyclebench's own revision build
(experiments/revcompare.workspace with the gate's recipe; revisions.prepare then reads the
gate's checkout from the cache and build.compile its runner — the script says if either had to
be made anew). A run counts as flagged for a method when any of the 10 benchmarks is flagged;
the script prints, per head and method, the flagged runs (false alarms for A/A, power for +4%,
and for +4% whether chain300 was the one) and the median Δ of chain300.

* **cyclebench gate**: the gate run itself (exit 1: a benchmark failed; ``--json`` for which).
* **asv's rule** (asv continuous / asv compare: a benchmark got worse when
  median(head) > factor × median(base), factor 1.1 by default, and the samples differ by asv's
  test — Mann–Whitney U at p < 0.002 on the recorded samples, else non-overlapping 99% CIs of the
  medians; https://asv.readthedocs.io/en/stable/commands.html, asv/commands/compare.py
  ``_is_result_better``, asv/_stats.py ``is_different``). Where asv is installed
  (``pip install asv``: optional, never a dependency of cyclebench) the decision is asv's own code
  (``_is_result_better`` on ``asv_runner.statistics.compute_stats`` of the samples, as asv
  continuous calls them); without it, the fallback says so in the output: the minimum of each
  side's samples, worse when head/base > 1.1. The samples are taken as asv's timing takes them
  (https://asv.readthedocs.io/en/stable/benchmarks.html, "Timing"): ``rounds`` = 2 processes a
  side, interleaved across the two commits (base then head, then head then base: the order
  asv continuous runs its interleaved rounds in, every benchmark of one commit in turn); 0.1 s of
  warm-up in each (asv's ``warmup_time`` on CPython); each sample the time of one loop over the
  body lasting at least ``sample_time`` = 10 ms, divided by its count (the runner with
  ``--min-batch-ns 10 ms --ladder 2``: batches of n and 2n ops, each read as ticks/n; every
  sample kept, disturbed or not, as asv keeps them).
* **hyperfine, 5%** (https://github.com/sharkdp/hyperfine): ``hyperfine -N --warmup 1 --runs R
  --export-json F 'base…' 'head…'`` (both commands in one call, as one compares two programs
  with it; which comes first is drawn at random each time, since hyperfine runs all of one's runs
  before the other's), flagged when mean(head)/mean(base) > 1.05. The command is the revision's
  runner doing a fixed amount of work, ``runner --cpu C --run gate/chainN --sim N``: outside
  valgrind, --sim runs the body in batches of N, N and 2N and nothing else (no sizing, no
  calibration: engine/simulate.c), so the process's wall time grows with the body's cost — a
  timed run (``--min-time``) would last as long whatever the body cost. N is sized once per
  benchmark on base so the body runs ~50 ms a process: the start-up (exec, dynamic linking,
  measured and printed, ~1 ms) is then ~2% of a run and dilutes +4% only to ~+3.9%, while each
  side still gets hyperfine's default minimum of 10 runs within its share of the budget
  (hyperfine's README: "at least 10 benchmarking runs"); with ``--budget`` under 1.1 s the work
  shrinks to budget/22 so 10 runs still fit.

Comparable time: the gate measures each benchmark for ``--budget`` seconds, both sides together.
asv's rule gets the same per benchmark — budget/4 a process, four processes (2 rounds × 2 sides),
the samples filling what the warm-up leaves (asv's own default would stop at 5 samples a round,
~0.15 s a round; more samples only sharpen its test, its factor still decides) — and so does
hyperfine: budget/2 a side, R runs plus one warm-up run of ~50 ms each. A gate run with the
side-by-side thus measures for about three times the budget per benchmark, which is why only the
first ``--side-runs`` runs of two heads do it. asv's and hyperfine's runners run the binary
directly, not in the gate's bubblewrap sandbox (the code is this script's own repository, and
asv and hyperfine run their commands unconfined); a sandbox changes a process's start-up, not the
body's ticks.

    .venv/bin/python bench/ci_gate.py [--runs 50] [--power-runs 20] [--counts-runs 20] [--side-runs 20]
                                      [--budget 3] [--quiet]

Figures, not pass/fail: the host's load moves them; say it with them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

CHAINS = (100, 150, 200, 300, 400, 500, 600, 700, 800, 1000)
PLANTED = 300  # the benchmark that gets +4%: 12 more adds
PLANTED_LABEL = f"gate/chain{PLANTED}"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
SIDE_HEADS = ("comment", "slow")  # A/A and +4%: the heads the side-by-side judges
GATE, ASV, HYPERFINE = "cyclebench gate", "asv rule", "hyperfine 5%"

# asv's defaults (asv_runner/benchmarks/time.py, asv/commands/common_args.py)
ASV_FACTOR = 1.1  # asv continuous/compare --factor
ASV_ROUNDS = 2  # processes a commit (the ``rounds`` attribute)
ASV_SAMPLE_S = 0.01  # ``sample_time``: each sample a loop lasting at least this
ASV_WARMUP_S = 0.1  # ``warmup_time`` on CPython
HYPERFINE_LIMIT = 1.05  # mean(head)/mean(base) above this: flagged
HF_WORK_S = 0.05  # seconds of the body per hyperfine run (module doc)
HF_MIN_RUNS = 10  # hyperfine's default minimum of runs a command


def _fn(n: int, adds: int) -> str:
    return (f"__attribute__((noinline)) uint64_t chain{n}(uint64_t x) {{\n"
            f"    __asm__ volatile(\".rept {adds}\\n\\tadd %0, %0\\n\\t.endr\" : \"+r\"(x));\n    return x;\n}}\n")


def _lib(extra: int = 0) -> str:
    return "#include <stdint.h>\n" + "".join(_fn(n, n + (extra if n == PLANTED else 0)) for n in CHAINS)


def _bench() -> str:
    decl = "".join(f"uint64_t chain{n}(uint64_t x);\n" for n in CHAINS)
    body = "".join(f"CB_BENCH(gate, chain{n}) {{ uint64_t x = 1; for (uint64_t i = 0; i < cb_iters(s); i++) "
                   f"x = chain{n}(x); cb_do_not_optimize(x); }}\n" for n in CHAINS)
    return f"#include <cyclebench.h>\n{decl}{body}"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def make_repo(root: Path) -> None:
    """main and the heads: comment, layout, slow (+4% in chain300), counts (+1% of chain1000's Ir)."""
    (root / "bench").mkdir(parents=True)
    git(root.parent, "init", "-q", "-b", "main", str(root))
    (root / "lib.c").write_text(_lib())
    (root / "other.c").write_text("int other(int x) { return x + 1; }\n")
    (root / "bench" / "gate.c").write_text(_bench())
    (root / "Makefile").write_text("libg.a: lib.c other.c\n\t$(CC) -O2 -c lib.c other.c\n"
                                   "\tar rcs libg.a lib.o other.o\n")
    (root / "cyclebench.toml").write_text('[ci]\nfiles = ["bench/gate.c"]\nbuild = "make libg.a"\n'
                                          'ldflags = ["libg.a"]\n')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    heads = {"comment": ("lib.c", "/* a comment */\n" + _lib()),
             "layout": ("other.c", "int other(int x) { return x + 1; }\nint unused(int x) { return x * 3; }\n"),
             "slow": ("lib.c", _lib(extra=12)),
             "counts": ("lib.c", _lib().replace(".rept 1000", ".rept 1010"))}
    for name, (path, text) in heads.items():
        git(root, "checkout", "-q", "-b", name, "main")
        (root / path).write_text(text)
        git(root, "commit", "-q", "-am", name)
    git(root, "checkout", "-q", "main")


NEIGHBOUR = ("busy", "bursts", "writer")  # its parts (module doc), each alone by name in bench/chains.py --beside


@contextlib.contextmanager
def neighbour(cpu: int, quiet: bool, parts: Sequence[str] = NEIGHBOUR) -> Iterator[None]:
    """The noisy neighbour (module doc) around the measurements, or those of its ``parts``
    named ("busy": a loop on the other CPU; "bursts": 5 ms in every 50 on ``cpu``; "writer":
    fsync'd 1 MiB writes, unpinned); nothing with ``quiet``."""
    if quiet or not parts:
        yield
        return
    others = [c for c in sorted(os.sched_getaffinity(0)) if c != cpu] or [cpu]
    code = {"busy": "while 1: pass",
            "bursts": "import time\nwhile 1:\n t=time.perf_counter()\n while time.perf_counter()-t<0.005: pass\n"
                      " time.sleep(0.045)",
            "writer": "import os,tempfile\nf=tempfile.TemporaryFile()\nb=b'x'*(1<<20)\nwhile 1:\n f.write(b)\n"
                      " f.flush(); os.fsync(f.fileno()); f.seek(0)"}
    pin = {"busy": others[0], "bursts": cpu}
    procs = []
    try:
        for k in parts:
            procs.append(subprocess.Popen([sys.executable, "-c", code[k]]))
            if k in pin:
                os.sched_setaffinity(procs[-1].pid, {pin[k]})
        yield
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


@dataclass(frozen=True)
class Judged:
    """One method's judgement of one head in one run: the benchmarks it flagged, every
    benchmark's Δ (head/base − 1) as that method reads it, and (the gate's) the benchmarks it
    passed with no time CI at all."""

    flagged: frozenset[str]
    change: dict[str, float] = field(default_factory=dict)
    unlooked: frozenset[str] = frozenset()


def gate(root: Path, head: str, budget: float, cpu: int, env: dict[str, str], *extra: str
         ) -> tuple[int, float, Judged]:
    """One `cyclebench ci` run against ``head``: its exit status, wall seconds, and (from its
    --json) the benchmarks it failed or found broken with each one's Δ."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, "-m", "cyclebench", "ci", "--repo", str(root), "--base", "main",
                            "--head", head, "--budget", str(budget), "--cpu", str(cpu), "--json", out.name, *extra],
                           capture_output=True, text=True, env=env)
        wall = time.monotonic() - t0
        if r.returncode == 2:
            raise SystemExit(f"cyclebench ci failed: {r.stderr.strip()}")
        rows = json.loads(Path(out.name).read_text())["rows"]
    flagged = frozenset(x["benchmark"] for x in rows if x["status"] in ("fail", "broken"))
    change = {x["benchmark"]: x["time"]["change"] for x in rows if x.get("time")}
    # a budget that ends before the first look (6 pairs) leaves no CI: `ci` lists the benchmark
    # undecided (a pass with no CI before experiments/ci.time_status_of); counted apart
    unlooked = frozenset(x["benchmark"] for x in rows if x["status"] in ("pass", "undecided")
                         and x.get("time") is None and "counts" not in extra)
    return r.returncode, wall, Judged(flagged, change, unlooked)


# ---- the same builds, found again through cyclebench's own revision build ----

class Builds:
    """The runner binary of each revision, as the gate built it: cyclebench's workspace with the
    gate's recipe (cyclebench.toml's files, build command and ldflags; the sandbox chosen as
    `ci` chooses it, since a confined build is another cache entry), so revisions.prepare finds
    the gate's checkout and build.compile its runner. ``made`` lists what had to be made here
    (not the gate's: a recipe that drifted from the gate's)."""

    def __init__(self, root: Path, cpu: int) -> None:
        from cyclebench.experiments.options import BuildOptions, RunnerOptions
        from cyclebench.experiments.revcompare import workspace

        repo_root = root.resolve()  # ci takes the files from the repository's resolved root
        self.cpu = cpu
        self.ws = workspace(repo_root, ("make", "libg.a"), BuildOptions(files=(repo_root / "bench" / "gate.c",),
                                                                         ldflags=("libg.a",)),
                            RunnerOptions(cpu=cpu), (), (), sandbox="auto")
        self.made: list[str] = []
        self.items: list[str] = []

    def runner(self, rev: str) -> Path:
        """``rev``'s runner binary (after a gate run against it has built it)."""
        t0 = time.time()
        b = self.ws.build(self.ws.repo.resolve(rev))
        if b.binary is None:
            raise SystemExit(f"{rev} does not build: {b.reason} (log: {b.log})")
        if not b.cached or b.binary.path.stat().st_mtime >= t0:
            self.made.append(rev)
        if not self.items:
            self.items = [i.label for i in self.ws.items(b, self.cpu)]
        return b.binary.path


# ---- asv's rule ----

def asv_decider() -> tuple[Callable[[list[float], list[float]], bool], str, str]:
    """asv's own decision where asv is installed, else the fallback (min of the samples, factor
    1.1); the method's name in the output; a line saying which."""
    try:
        from asv.commands.compare import _is_result_better
        from asv_runner.statistics import compute_stats

        told = f"asv {version('asv')}'s own rule (median, Mann–Whitney p < 0.002, factor {ASV_FACTOR})"
    except ImportError as e:
        def fallback(base: list[float], head: list[float]) -> bool:
            return min(head) / min(base) > ASV_FACTOR

        return fallback, "min of N, ×1.1", (f"asv is not installed ({e}; pip install asv): asv's rule replaced by "
                                             f"the min of N samples, worse when head/base > {ASV_FACTOR}")

    def worse(base: list[float], head: list[float]) -> bool:
        vb, sb = compute_stats(base, 1)
        vh, sh = compute_stats(head, 1)
        # compare.py's "worsened" test: base better than head by the factor, the samples different
        return bool(_is_result_better(vb, vh, (sb, base), (sh, head), ASV_FACTOR))

    return worse, ASV, told


def asv_round(binary: Path, bench: str, cpu: int, seconds: float) -> list[float]:
    """One asv round of one benchmark: its own process, ASV_WARMUP_S of warm-up, then samples of
    at least ASV_SAMPLE_S each filling ``seconds`` (per-op ticks of each batch: asv's rule is a
    ratio and a rank test, indifferent to the unit)."""
    from cyclebench.model import OK
    from cyclebench.runner import Runner
    from cyclebench.runner.plan import MeasureOptions

    rounds = max(1, round((seconds - ASV_WARMUP_S) / (3 * ASV_SAMPLE_S)))  # a ladder of 2: n and 2n, 3 units
    opts = MeasureOptions(min_time=3 * ASV_SAMPLE_S * rounds, repeat=rounds, ladder=2, warmup=ASV_WARMUP_S,
                          min_batch_ns=int(ASV_SAMPLE_S * 1e9))
    o = Runner(binary, cpu).run(bench, None, opts, opts.timeout())
    if o.status != OK or not o.result:
        raise SystemExit(f"{bench} on {binary}: {o.status}: {o.reason}")
    return [t / n for n, t in zip(o.result["n"], o.result["ticks"], strict=True) if n > 0]


def judge_asv(base: Path, head: Path, items: Sequence[str], cpu: int, budget: float,
              worse: Callable[[list[float], list[float]], bool]) -> Judged:
    """asv's rounds over both commits (module doc), then its rule per benchmark."""
    samples: dict[tuple[Path, str], list[float]] = {}
    # asv continuous runs [head, parent] with interleaved rounds counted down from 2, an even round
    # in reverse: parent (base) first, then head first (asv/commands/run.py)
    for order in ((base, head), (head, base)):
        for binary in order:
            for bench in items:
                samples.setdefault((binary, bench), []).extend(
                    asv_round(binary, bench, cpu, budget / (2 * ASV_ROUNDS)))
    flagged = frozenset(b for b in items if worse(samples[(base, b)], samples[(head, b)]))
    change = {b: statistics.median(samples[(head, b)]) / statistics.median(samples[(base, b)]) - 1 for b in items}
    return Judged(flagged, change)


# ---- hyperfine's means ----

def sim_argv(binary: Path, bench: str, cpu: int, n: int) -> list[str]:
    """The runner running ``bench`` 4n times and nothing else (engine/simulate.c, natively)."""
    return [str(binary), "--cpu", str(cpu), "--run", bench, "--sim", str(n)]


def _wall(argv: list[str], times: int) -> float:
    best = float("inf")
    for _ in range(times):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return best


def hf_sizes(binary: Path, items: Sequence[str], cpu: int, work: float) -> tuple[dict[str, int], float]:
    """Per benchmark the --sim N whose run does ~``work`` seconds of the body (sized on base,
    used on both sides), and the process start-up (the fastest of 5 runs of --sim 1)."""
    start = min(_wall(sim_argv(binary, b, cpu, 1), 5) for b in items)
    sizes = {}
    for b in items:
        n = 1000
        while (t := _wall(sim_argv(binary, b, cpu, n), 2)) - start < 0.02 and n < 1 << 40:
            n *= 4
        per_op = max(t - start, 1e-9) / (4 * n)
        sizes[b] = max(1, round(work / (4 * per_op)))
    return sizes, start


def judge_hyperfine(base: Path, head: Path, items: Sequence[str], cpu: int, sizes: dict[str, int], runs: int,
                    tmp: Path, rng: random.Random) -> Judged:
    """One hyperfine call per benchmark with base's and head's commands (the first drawn at
    random), flagged when mean(head)/mean(base) > HYPERFINE_LIMIT."""
    flagged, change = set(), {}
    out = tmp / "hyperfine.json"
    for b in items:
        cmds = {side: shlex.join(sim_argv(binary, b, cpu, sizes[b])) for side, binary in (("base", base),
                                                                                           ("head", head))}
        order = ["base", "head"]
        rng.shuffle(order)
        subprocess.run(["hyperfine", "-N", "--warmup", "1", "--runs", str(runs), "--style", "none",
                        "--export-json", str(out), *(cmds[s] for s in order)], check=True, capture_output=True)
        mean = {s: r["mean"] for s, r in zip(order, json.loads(out.read_text())["results"], strict=True)}
        change[b] = mean["head"] / mean["base"] - 1
        if mean["head"] / mean["base"] > HYPERFINE_LIMIT:
            flagged.add(b)
    return Judged(frozenset(flagged), change)


def side_lines(head: str, method: str, runs: Sequence[Judged]) -> str:
    """The line of one head and method: runs flagged (false alarms, or power and whether chain300
    was the one flagged), which benchmarks, the median Δ of chain300."""
    n, hit = len(runs), sum(1 for r in runs if r.flagged)
    line = f"  {head:8} {method:16} flagged {hit}/{n} " + ("(power)" if head == "slow" else "(false alarms)")
    if head == "slow":
        line += (f"; chain300 flagged in {sum(1 for r in runs if PLANTED_LABEL in r.flagged)}, another benchmark "
                 f"in {sum(1 for r in runs if r.flagged - {PLANTED_LABEL})}")
    others = sorted({b for r in runs for b in r.flagged} - ({PLANTED_LABEL} if head == "slow" else set()))
    if others:
        line += f" ({', '.join(others)})"
    unlooked = sum(1 for r in runs if r.unlooked)
    if unlooked:
        line += f"; {unlooked} left {sum(len(r.unlooked) for r in runs)} benchmark(s) with no CI"
    planted = [r.change[PLANTED_LABEL] for r in runs if PLANTED_LABEL in r.change]
    if planted:
        line += f"; chain300 Δ median {100 * statistics.median(planted):+.2f}%"
    return line


@dataclass
class SideBySide:
    """What the side-by-side needs across runs: the builds, the rules, hyperfine's sizing, and
    every judgement (head → method → one Judged per run) with the seconds each method took."""

    builds: Builds
    worse: Callable[[list[float], list[float]], bool]
    asv_name: str
    budget: float
    tmp: Path
    hyperfine: bool
    sizes: dict[str, int] = field(default_factory=dict)
    hf_runs: int = 0
    runners: dict[str, Path] = field(default_factory=dict)
    judged: dict[str, dict[str, list[Judged]]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)

    def runner(self, rev: str) -> Path:
        if rev not in self.runners:
            self.runners[rev] = self.builds.runner(rev)
        return self.runners[rev]

    def size(self) -> str:
        """hyperfine's per-run work and runs a side (module doc); a line saying what was chosen."""
        work = max(0.01, min(HF_WORK_S, self.budget / (2 * (HF_MIN_RUNS + 1))))
        self.sizes, start = hf_sizes(self.runner("main"), self.builds.items, self.builds.cpu, work)
        self.hf_runs = max(3, round(self.budget / 2 / (work + start)) - 1)
        return (f"hyperfine: {self.hf_runs} runs + 1 warm-up a side, the body ~{1e3 * work:.0f} ms a run "
                f"(--sim N from {min(self.sizes.values())} to {max(self.sizes.values())}), process start-up "
                f"{1e3 * start:.1f} ms ({100 * start / (work + start):.1f}% of a run)")

    def judge(self, head: str, gate_said: Judged, gate_wall: float) -> None:
        """asv's rule and hyperfine on ``head`` against main, right after the gate's run (which
        said ``gate_said`` in ``gate_wall`` seconds)."""
        base, h = self.runner("main"), self.runner(head)
        items, cpu = self.builds.items, self.builds.cpu
        per = self.judged.setdefault(head, {})
        per.setdefault(GATE, []).append(gate_said)
        self.seconds.setdefault(GATE, []).append(gate_wall)
        t0 = time.monotonic()
        per.setdefault(self.asv_name, []).append(judge_asv(base, h, items, cpu, self.budget, self.worse))
        self.seconds.setdefault(self.asv_name, []).append(time.monotonic() - t0)
        if self.hyperfine:
            t0 = time.monotonic()
            per.setdefault(HYPERFINE, []).append(judge_hyperfine(base, h, items, cpu, self.sizes, self.hf_runs,
                                                                 self.tmp, self.rng))
            self.seconds.setdefault(HYPERFINE, []).append(time.monotonic() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))  # the first paragraph
    ap.add_argument("--runs", type=int, default=50, help="gate runs against each A/A head (comment, layout)")
    ap.add_argument("--power-runs", type=int, default=20, help="gate runs against the +4%% head")
    ap.add_argument("--counts-runs", type=int, default=20, help="--gate counts runs against the +1%% Ir head")
    ap.add_argument("--side-runs", type=int, default=20, metavar="K",
                    help="in the first K runs of the comment and slow heads, also judge with asv's rule and "
                         "hyperfine's (0: not at all)")
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    ap.add_argument("--quiet", action="store_true", help="no noisy neighbour")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cb-gate-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root)
        env = {**os.environ, "CYCLEBENCH_DB": f"sqlite:///{tmp}/gate.db", "CYCLEBENCH_CACHE": f"{tmp}/cache"}
        # cyclebench's in-process build functions (the side-by-side's) read the cache's root from here
        os.environ["CYCLEBENCH_CACHE"] = env["CYCLEBENCH_CACHE"]
        gate(root, "comment", a.budget, a.cpu, env)  # builds cached: every run below restores them
        side = None
        if a.side_runs > 0:
            worse, name, told = asv_decider()
            has_hf = shutil.which("hyperfine") is not None
            side = SideBySide(Builds(root, a.cpu), worse, name, a.budget, Path(tmp), has_hf)
            print(f"side by side: {told}")
            print(side.size() if has_hf else "hyperfine is not installed (apt-get install hyperfine): its column "
                                             "is skipped")
        print(f"{os.uname().nodename}: load before {os.getloadavg()[0]:.2f}; {a.runs} runs an A/A head, "
              f"{a.power_runs} the +4% head, budget {a.budget:g} s a benchmark, "
              f"{'quiet' if a.quiet else 'noisy neighbour'}", flush=True)
        with neighbour(a.cpu, a.quiet):
            for head in ("comment", "layout", "slow"):
                codes, walls, unlooked, nolook = [], [], 0, 0
                runs = a.power_runs if head == "slow" else a.runs
                for k in range(runs):
                    code, wall, said = gate(root, head, a.budget, a.cpu, env)
                    codes.append(code)
                    walls.append(wall)
                    unlooked += bool(said.unlooked)
                    nolook += len(said.unlooked)
                    if side is not None and head in SIDE_HEADS and k < a.side_runs:
                        side.judge(head, said, wall)
                    print(f"  {head} {k + 1}/{runs}: exit {code}, {wall:.1f} s, load {os.getloadavg()[0]:.1f}",
                          file=sys.stderr, flush=True)
                failed, undecided = codes.count(1), codes.count(3)
                print(f"{head:8} failed {failed}/{runs}  undecided {undecided}  passed {codes.count(0)}  "
                      f"wall median {statistics.median(walls):.1f} s (max {max(walls):.1f})", flush=True)
                if unlooked:
                    print(f"         {unlooked} of these runs left {nolook} benchmark(s) with no CI (the budget "
                          f"ended before 6 pairs): a larger --budget")
            counted = [gate(root, "counts", a.budget, a.cpu, env, "--gate", "counts")[:2]
                       for _ in range(a.counts_runs)]
            if counted:
                print(f"counts   +1% Ir in chain1000 (--gate counts): failed {[c for c, _ in counted].count(1)}/"
                      f"{len(counted)}, wall median {statistics.median(w for _, w in counted):.1f} s", flush=True)
        print(f"load after {os.getloadavg()[0]:.2f}")
        if side is not None and side.judged:
            report(side, min(a.side_runs, a.runs, a.power_runs))
    return 0


def report(side: SideBySide, k: int) -> None:
    """The side-by-side's lines (module doc)."""
    made = f"; made here, not the gate's: {', '.join(side.builds.made)}" if side.builds.made else \
        "; the gate's own builds (revision checkouts and runners from its cache)"
    print(f"side by side, the first {k} runs of {' and '.join(SIDE_HEADS)}, the same "
          f"{len(side.builds.items)} benchmarks{made}; a run is flagged when any benchmark is:")
    for head in SIDE_HEADS:
        for method, runs in side.judged.get(head, {}).items():
            print(side_lines(head, method, runs))
    if side.seconds:
        total = [sum(x) for x in zip(*side.seconds.values(), strict=True)]
        print(f"  a gate run with the side-by-side: median {statistics.median(total):.1f} s (max {max(total):.1f}): "
              + " + ".join(f"{m} {statistics.median(s):.1f} s" for m, s in side.seconds.items()))


if __name__ == "__main__":
    sys.exit(main())
