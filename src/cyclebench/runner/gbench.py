"""Google Benchmark executables run as they are: their benchmarks listed, and one benchmark per
invocation measured and read back from the library's JSON (google/benchmark's docs/user_guide.md:
``--benchmark_list_tests``, ``--benchmark_filter``, ``--benchmark_min_time``,
``--benchmark_format=json``). Each invocation is one figure: the real time per iteration of its
one iteration run, as the library measured it (its own aggregates are never read)."""

from __future__ import annotations

import json
import platform
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from cyclebench.model import OK, Outcome
from cyclebench.runner.child import Child, run_child
from cyclebench.runner.protocol import signal_name

NS_PER = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}  # the JSON's time_unit
ARCH = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64", "arm64": "EM_AARCH64"}


class GbenchError(Exception):
    """Not a Google Benchmark executable, another architecture's, or it cannot list: one line."""


@dataclass(frozen=True)
class GbenchRun:
    """One benchmark's iteration run in one invocation: ``real_ns`` per iteration (the library's
    real_time, manual where the benchmark uses UseManualTime), ``cpu_ns``, iterations, threads,
    its user counters (items_per_second and bytes_per_second among them), and the library's
    ``error`` where the benchmark reported one (SkipWithError)."""

    name: str
    real_ns: float
    cpu_ns: float
    iterations: int
    threads: int = 1
    counters: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    ghz: float | None = None  # the core clock in this invocation's process (add chains before and after main)
    no_clock: str | None = None  # why there is none

    @property
    def cycles(self) -> float | None:
        """cycles~ per iteration: the library's real ns × the core clock measured around it."""
        return self.real_ns * self.ghz if self.ghz is not None else None


def _symbols(path: Path) -> tuple[str, set[str]]:
    try:
        with path.open("rb") as f:
            elf = ELFFile(f)
            names: set[str] = set()
            for sec in ("dynsym", "symtab"):
                s = elf.get_section_by_name(f".{sec}")
                if s is not None:
                    names |= {x.name for x in s.iter_symbols() if "benchmark" in x.name}
            return str(elf["e_machine"]), names
    except (OSError, ELFError) as e:
        raise GbenchError(f"{path}: not an executable this machine can read ({e})") from None


class Gbench:
    """One Google Benchmark executable, pinned to ``cpu`` (taskset), each invocation stopped after
    ``timeout`` seconds; with ``clock``, each invocation runs with the engine's probe preloaded in
    its clock-only mode (engine/probe.c, CB_PROBE_CLOCK): add chains before and after its main give
    the core clock in that very process, for cycles~ beside the library's ns."""

    def __init__(self, path: Path, cpu: int | None = None, timeout: float = 120.0, clock: bool = True,
                 confine: Callable[[Sequence[Path], Sequence[Path]], list[str]] | None = None) -> None:
        """``confine``: (writable, readable) → the launcher prefix every invocation runs under
        (experiments.revisions.Confinement.sandbox: a revision's executable is code from its
        history); it may write its probe's directory and read the probe and the executable's
        directory."""
        self.path, self.cpu, self.timeout, self.clock, self.confine = path, cpu, timeout, clock, confine
        if not path.is_file():
            raise GbenchError(f"{path}: no such file")
        machine, names = _symbols(path)
        want = ARCH.get(platform.machine())
        if want is not None and machine != want:
            raise GbenchError(f"{path}: built for {machine.removeprefix('EM_').lower()}, not this machine's "
                              f"{platform.machine()}")
        # the library's namespace (benchmark::) in its mangled names: linked in or dynamically
        if not any(n.startswith("_ZN9benchmark") for n in names):
            raise GbenchError(f"{path}: not a Google Benchmark executable (no benchmark:: symbols)")
        self._version: tuple[int, ...] | None = None

    def _argv(self, *args: str, env: Sequence[str] = (), writable: Sequence[Path] = (),
              readable: Sequence[Path] = ()) -> list[str]:
        pin = ["taskset", "-c", str(self.cpu)] if self.cpu is not None and shutil.which("taskset") else []
        room = self.confine(writable, [self.path.parent, *readable]) if self.confine is not None else []
        # No group supervisor (lifetime.supervised, a Python process a spawn): run_child's session is
        # killed whole at a timeout or an interrupt, and the executable dies with cyclebench
        # (PR_SET_PDEATHSIG). The supervisor cost an invocation 64 ms where it takes 43 without it,
        # a third of compare --gbench's pairs in its budget (AMD EPYC Zen 3 guest).
        return [*room, *pin, *(["env", *env] if env else []), str(self.path), *args]

    def names(self, pattern: str | None = None) -> list[str]:
        """Its benchmarks' names (--benchmark_list_tests), those ``pattern`` (the library's own
        --benchmark_filter regex) selects."""
        child = run_child(self._argv("--benchmark_list_tests", *([f"--benchmark_filter={pattern}"] if pattern
                                                                 else [])), self.timeout)
        if child.timed_out:
            raise GbenchError(f"{self.path}: listing its benchmarks did not end within {self.timeout:g} s")
        if child.returncode != 0:
            tail = (child.stderr.strip().splitlines() or [f"exit {child.returncode}"])[-1]
            raise GbenchError(f"{self.path}: cannot list its benchmarks: {tail}")
        return [ln.strip() for ln in child.stdout.splitlines() if ln.strip()]

    def version(self) -> tuple[int, ...]:
        """The library's version from its JSON context (``library_version``, 1.8 on); (1, 7)
        when the context has none (1.7 and before print no version)."""
        if self._version is None:
            child = run_child(self._argv("--benchmark_filter=^$", "--benchmark_format=json"), self.timeout)
            text = child.stdout
            found = re.search(r'"library_version"\s*:\s*"v?(\d+)\.(\d+)', text)
            self._version = (int(found[1]), int(found[2])) if found else (1, 7)
        return self._version

    def min_time_arg(self, seconds: float) -> str:
        """--benchmark_min_time in the syntax of the binary's library: a number of seconds up to 1.7,
        ``<n>s`` from 1.8 (where a bare number became an iteration count's 'x' or a warning)."""
        return f"--benchmark_min_time={seconds:g}" + ("s" if self.version() >= (1, 8) else "")

    def run(self, name: str, min_time: float) -> Outcome:
        """One invocation measuring exactly ``name`` (an anchored, escaped regex) for ``min_time``
        seconds: an Outcome whose ``lines`` hold its GbenchRun ({"gbench": …}); status crashed
        (a signal), timeout, failed (a non-zero exit, no JSON, the benchmark's own error) else ok."""
        args = (f"--benchmark_filter=^{re.escape(name)}$", self.min_time_arg(min_time), "--benchmark_format=json",
                "--benchmark_repetitions=1")
        if not self.clock:
            return self._read(name, run_child(self._argv(*args), self.timeout), None, "not asked")
        from cyclebench.build.probe import build_probe
        from cyclebench.runner.probe import core_ghz, read_proc

        probe = build_probe()
        with tempfile.TemporaryDirectory(prefix="cyclebench-gbench-") as d:
            child = run_child(self._argv(*args, env=[f"LD_PRELOAD={probe}", f"CB_PROBE_DIR={d}", "CB_PROBE_CLOCK=1"],
                                         writable=[Path(d)], readable=[Path(probe).parent]), self.timeout)
            procs = list(Path(d).glob("proc-*.txt"))
            got = core_ghz(read_proc(procs[0])) if len(procs) == 1 else None
        why = None if got is not None else ("the probe could not be preloaded (a statically linked executable?)"
                                            if not procs else "no add chain timed around it")
        return self._read(name, child, got[0] if got is not None else None, why)

    def _read(self, name: str, child: Child, ghz: float | None, no_clock: str | None) -> Outcome:
        if child.timed_out:
            return Outcome(name, None, "timeout", f"did not end within {self.timeout:g} s", wall_s=child.wall_s)
        # killed by a signal: -N from the executable itself, 128 + N through a shell or a sandbox's init
        sig = -child.returncode if child.returncode < 0 else child.returncode - 128 if child.returncode > 128 else 0
        if sig:
            return Outcome(name, None, "crashed", f"killed by {signal_name(sig)}", wall_s=child.wall_s)
        try:
            doc = json.loads(child.stdout)
            runs = [b for b in doc.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]
        except ValueError:
            runs = []
        if child.returncode != 0 or not runs:
            tail = (child.stderr.strip().splitlines() or [f"exit {child.returncode}"])[-1]
            return Outcome(name, None, "failed", f"no result: {tail}", wall_s=child.wall_s)
        b = runs[0]
        if b.get("error_occurred"):
            got = GbenchRun(name, float("nan"), float("nan"), int(b.get("iterations", 0)),
                            error=str(b.get("error_message", "error")))
            return Outcome(name, None, "failed", f"the benchmark reported an error: {got.error}",
                           wall_s=child.wall_s, lines=[{"gbench": got}])  # type: ignore[list-item]
        scale = NS_PER.get(str(b.get("time_unit", "ns")), 1.0)
        known = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads", "iterations",
                 "real_time", "cpu_time", "time_unit", "family_index", "per_family_instance_index",
                 "aggregate_name", "aggregate_unit", "label"}
        counters = {k: float(v) for k, v in b.items() if k not in known and isinstance(v, (int, float))}
        got = GbenchRun(name, float(b["real_time"]) * scale, float(b["cpu_time"]) * scale, int(b["iterations"]),
                        int(b.get("threads", 1)), counters, ghz=ghz, no_clock=no_clock)
        return Outcome(name, None, OK, None, wall_s=child.wall_s, lines=[{"gbench": got}])  # type: ignore[list-item]
