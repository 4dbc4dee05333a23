"""A git repository of 40 commits of a small C library, for bisect and compare --rev: one
function, ``work``, a latency-bound chain of 300 dependent register adds in asm volatile (the
compiler can neither fold nor reorder it: tests/data/chain.c); a benchmark calls it.

Commit numbers are 1-based (commit 1 is the root):
  * 23 adds 12 dependent adds to the chain (+4% of ~305 cycles with the call);
  * 27 does not compile (a missing semicolon), 28 repairs it;
  * 31 renames lib/work.c to lib/chain.c (the Makefile follows);
  * every other commit changes a comment, the README or an unused helper.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ADDS = 300
EXTRA = 12
REGRESSION = 23
BROKEN = 27
RENAMED = 31
COMMITS = 40

HEADER = """#ifndef WORK_H
#define WORK_H
#include <stdint.h>
uint64_t work(uint64_t x);
uint64_t unused_helper(uint64_t x);
#endif
"""

MAKEFILE = """CC ?= cc
libwork.a: {src} lib/work.h
\t$(CC) -O2 -c {src} -o work.o
\tar rcs libwork.a work.o
"""

# The benchmark: a file of cyclebench's C API calling the library (docs/c-api.md)
BENCH = """#include <cyclebench.h>
#include "work.h"

CB_BENCH(lib, work) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = work(x);
    cb_do_not_optimize(x);
}

CB_BENCH(lib, flat) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = unused_helper(x);
    cb_do_not_optimize(x);
}
"""


def _chain(n: int) -> str:
    return (f'#if defined(__x86_64__)\n    __asm__ volatile(".rept {n}\\n\\tadd %0, %0\\n\\t.endr" : "+r"(x));\n'
            f'#elif defined(__aarch64__)\n    __asm__ volatile(".rept {n}\\n\\tadd %0, %0, %0\\n\\t.endr" : "+r"(x));\n'
            "#endif\n")


def source(k: int) -> str:
    """lib/work.c (or lib/chain.c) as of commit ``k``."""
    extra = ("    /* the regression: 12 more dependent adds */\n" + _chain(EXTRA)) if k >= REGRESSION else ""
    broken = "    x = x + 1 /* commit 27: no semicolon */\n" if k == BROKEN else ""
    helper_adds = 100 + (k >= 5)  # an unused-by-work change at commit 5
    return (f"/* work: a dependent chain (revision {k}) */\n#include \"work.h\"\n\n"
            f"__attribute__((noinline)) uint64_t work(uint64_t x) {{\n{_chain(ADDS)}{extra}{broken}"
            "    return x;\n}\n\n"
            f"__attribute__((noinline)) uint64_t unused_helper(uint64_t x) {{\n{_chain(helper_adds)}"
            "    return x;\n}\n")


def make_repo(root: Path, bench_inside: bool = True) -> list[str]:
    """The 40 commits in ``root`` (created); returns their shas, commit 1 first. The work tree
    is left at the last commit, with bench/work_bench.c inside when ``bench_inside``."""
    root.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                              env=env).stdout.strip()

    git("init", "-q", "-b", "main")
    shas = []
    for k in range(1, COMMITS + 1):
        src = "lib/chain.c" if k >= RENAMED else "lib/work.c"
        if k == RENAMED:
            git("mv", "lib/work.c", "lib/chain.c")
        (root / "lib").mkdir(exist_ok=True)
        (root / "lib" / "work.h").write_text(HEADER)
        (root / src).write_text(source(k))
        (root / "Makefile").write_text(MAKEFILE.format(src=src))
        (root / "README").write_text(f"libwork, release 0.{k}\n")
        (root / ".gitignore").write_text("*.o\n*.a\n")
        if bench_inside:
            (root / "bench").mkdir(exist_ok=True)
            (root / "bench" / "work_bench.c").write_text(BENCH)
        git("add", "-A")
        subject = {REGRESSION: "work: 12 more adds", BROKEN: "work: a typo that does not compile",
                   RENAMED: "rename lib/work.c to lib/chain.c"}.get(k, f"release 0.{k}")
        git("commit", "-q", "-m", f"{subject}\n\ncommit {k} of the test library")
        shas.append(git("rev-parse", "HEAD"))
    return shas


if __name__ == "__main__":  # a repository to try by hand: python tests/gitlib.py DIR
    import sys

    for i, s in enumerate(make_repo(Path(sys.argv[1])), 1):
        print(i, s)
