"""The options an experiment takes, as records: what to build and how to pin the runner. The
command line parses its flags into these (ui/options.py) and hands them over."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cyclebench.build import DEFAULT_CFLAGS, BuildSpec, suite_sources

__all__ = ["DEFAULT_PROCESSES", "FIXED_MIN_TIME", "Budget", "BuildOptions", "PredictOptions", "RunnerOptions"]

# 3 processes: within-process bias of ±3 cycles~ seen on a 300-add chain (docs/method.md §5) needs
# more than one process to show in the CI; the extra start-ups cost ~30 ms a benchmark.
DEFAULT_PROCESSES = 3
# compare's fixed design (--repeat): 0.2 s of timed samples a benchmark over its 60 rounds
FIXED_MIN_TIME = 0.2


@dataclass(frozen=True)
class BuildOptions:
    """What to build: the user's C files (empty: the built-in suite) and how."""

    files: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()
    cflags: tuple[str, ...] = DEFAULT_CFLAGS
    ldflags: tuple[str, ...] = ()
    cc: str = "cc"

    def sources(self) -> tuple[Path, ...]:
        return self.files or tuple(suite_sources())

    def spec(self, sources: Sequence[Path] | None = None, **kw: Any) -> BuildSpec:
        """The BuildSpec of these options (``-Werror`` for the suite's own sources only)."""
        spec = BuildSpec(sources=tuple(sources) if sources is not None else self.sources(), cc=self.cc,
                         cflags=self.cflags, include_dirs=self.include_dirs, defines=self.defines,
                         ldflags=self.ldflags, werror=not self.files)
        return dataclasses.replace(spec, **kw)


@dataclass(frozen=True)
class RunnerOptions:
    """How to pin and bound the runner: CPU (None: chosen), SCHED_FIFO priority, RSS cap in bytes."""

    cpu: int | None = None
    fifo: int | None = None
    max_rss: int | None = None


@dataclass(frozen=True)
class Budget:
    """The sequential design of compare (stats/sequential.py): seconds of measuring per compared
    pair and parameter, and the equivalence margin (relative to A)."""

    seconds: float = 2.0
    equivalence: float = 0.01
    # rounds of ~1.2 ms a side (0.07 s over 60 rounds, as --min-time counts) and 5 ms of warm-up a
    # benchmark: a process of 10 rounds then takes ~40 ms instead of ~90 ms at compare's fixed-design
    # 0.2 s, so the first look, after 4 processes, comes at ~0.16 s of measuring instead of ~0.36 s.
    # Z grows with the seconds measured, not the rounds: +30 and +1 cycle on 300 still end at look 1
    # (docs/method.md §5a, measured there)
    min_time: float = 0.07
    warmup: float = 0.005


@dataclass(frozen=True)
class PredictOptions:
    """--predict's (experiments/predict.py): ``mcpu``: --mcpu (an llvm-mca CPU name, an OSACA
    arch, or both comma-separated; None: from cpuid); ``use_callgrind``: find the loop from
    callgrind's counts where valgrind is installed; ``timeout``: seconds for callgrind on one
    benchmark."""

    mcpu: str | None = None
    use_callgrind: bool = True
    timeout: float = 600.0
