#!/usr/bin/env python3
"""What `cyclebench ci` holds on a noisy 2-vCPU machine (a validation script, not a test;
docs/ci.md, "Measured").

A repository of 10 benchmarks (dependent add chains of 100–1000 adds, each its own function in a
small library) and three heads off main: a comment-only change, a new unused function in another
file (it may move code layout), and +4% planted in one benchmark (dependent adds). While a noisy
neighbour runs — a busy loop pinned to the other CPU, a process taking ~10% of the benchmark's CPU
in 5 ms bursts, a writer doing fsync'd 1 MiB writes — the gate runs ``--runs`` times against each
head and the script prints, per head: how often it failed (a false alarm for the first two, the
power for the third), was undecided, passed; the median wall per gate run (the cache restored:
builds skipped); and ``--gate counts`` once against a +1% Ir head.

    .venv/bin/python bench/ci_gate.py [--runs 50] [--budget 3] [--quiet]

Figures, not pass/fail: the host's load moves them; say it with them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CHAINS = (100, 150, 200, 300, 400, 500, 600, 700, 800, 1000)
PLANTED = 300  # the benchmark that gets +4%: 12 more adds
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


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


@contextlib.contextmanager
def neighbour(cpu: int, quiet: bool) -> Iterator[None]:
    """The noisy neighbour (module doc) around the measurements; nothing with ``quiet``."""
    if quiet:
        yield
        return
    others = [c for c in sorted(os.sched_getaffinity(0)) if c != cpu] or [cpu]
    code = {"busy": "while 1: pass",
            "bursts": "import time\nwhile 1:\n t=time.perf_counter()\n while time.perf_counter()-t<0.005: pass\n"
                      " time.sleep(0.045)",
            "writer": "import os,tempfile\nf=tempfile.TemporaryFile()\nb=b'x'*(1<<20)\nwhile 1:\n f.write(b)\n"
                      " f.flush(); os.fsync(f.fileno()); f.seek(0)"}
    procs = [subprocess.Popen([sys.executable, "-c", code[k]]) for k in code]
    os.sched_setaffinity(procs[0].pid, {others[0]})
    os.sched_setaffinity(procs[1].pid, {cpu})
    try:
        yield
    finally:
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait()


def gate(root: Path, head: str, budget: float, cpu: int, env: dict[str, str], *extra: str) -> tuple[int, float]:
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "cyclebench", "ci", "--repo", str(root), "--base", "main", "--head",
                        head, "--budget", str(budget), "--cpu", str(cpu), *extra], capture_output=True, text=True,
                       env=env)
    if r.returncode == 2:
        raise SystemExit(f"cyclebench ci failed: {r.stderr.strip()}")
    return r.returncode, time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    ap.add_argument("--quiet", action="store_true", help="no noisy neighbour")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cb-gate-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root)
        env = {**os.environ, "CYCLEBENCH_DB": f"sqlite:///{tmp}/gate.db", "CYCLEBENCH_CACHE": f"{tmp}/cache"}
        gate(root, "comment", a.budget, a.cpu, env)  # builds cached: every run below restores them
        print(f"{os.uname().nodename}: load before {os.getloadavg()[0]:.2f}; {a.runs} runs a head, budget "
              f"{a.budget:g} s a benchmark, {'quiet' if a.quiet else 'noisy neighbour'}")
        with neighbour(a.cpu, a.quiet):
            for head in ("comment", "layout", "slow"):
                codes, walls = [], []
                for _ in range(a.runs):
                    code, wall = gate(root, head, a.budget, a.cpu, env)
                    codes.append(code)
                    walls.append(wall)
                failed, undecided = codes.count(1), codes.count(3)
                print(f"{head:8} failed {failed}/{a.runs}  undecided {undecided}  passed {codes.count(0)}  "
                      f"wall median {statistics.median(walls):.1f} s (max {max(walls):.1f})")
            code, wall = gate(root, "counts", a.budget, a.cpu, env, "--gate", "counts")
            print(f"counts   +1% Ir in chain1000: exit {code} ({'failed' if code == 1 else 'not failed'}), "
                  f"{wall:.1f} s")
        print(f"load after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
