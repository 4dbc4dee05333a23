"""`cyclebench annotate`: where a benchmark spends its time, instruction by instruction.

The runner measures the benchmark (as `run` does) under `perf record -e cpu-clock`
(a software clock: it needs no PMU, so it works in VMs), then `perf report` lists the
hottest symbols — user and kernel, since a syscall's cost is in the kernel — and
`perf annotate` shows the body's disassembly with the share of samples per instruction.
Sampling skid: a sample is charged to the instruction *after* the one that was running
(seed 002 found its ldaxr/stlxr loop this way with perf annotate).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cyclebench.build import ToolMissing
from cyclebench.build.elf import body_symbol
from cyclebench.runner.child import run_child
from cyclebench.runner.plan import MeasureOptions
from cyclebench.runner.protocol import parse_lines


@dataclass
class Annotation:
    samples: int
    top: str  # perf report --sort sym, as text
    body: str  # perf annotate of the body, as text


def perf_tool() -> str:
    if shutil.which("perf") is None:
        raise ToolMissing("perf not found: install it (apt-get install linux-perf) for cyclebench annotate")
    return "perf"


def annotate(binary: Path, bench: str, param: int | None, cpu: int | None, seconds: float = 1.0,
             freq: int = 10000, fifo: int | None = None) -> Annotation:
    """Profile one benchmark for about ``seconds`` and annotate its body.

    Raises ToolMissing without perf, RuntimeError when perf cannot record (e.g.
    perf_event_paranoid forbids it: the message says so).
    """
    perf = perf_tool()
    opts = MeasureOptions(min_time=seconds, repeat=40, warmup=0.05)
    with tempfile.TemporaryDirectory(prefix="cb-perf-") as tmp:
        data = Path(tmp) / "perf.data"
        argv = [perf, "record", "-q", "-e", "cpu-clock", "-F", str(freq), "-o", str(data), "--",
                str(binary), "--run", bench, *(["--param", str(param)] if param is not None else []),
                *opts.argv(), *(["--cpu", str(cpu)] if cpu is not None else []),
                *(["--fifo", str(fifo)] if fifo is not None else [])]
        limit = seconds * 20 + 60
        # perf and the runner it starts share one session: a timeout or Ctrl-C kills both (D1)
        rec = run_child(argv, limit)
        if rec.timed_out:
            raise RuntimeError(f"perf record of {bench} timed out after {limit:g} s (killed)")
        finals = [ln for ln in parse_lines(rec.stdout) if ln.get("type") in ("result", "skip", "fail", "error")]
        if rec.returncode != 0 and not finals and data.exists():  # perf recorded; the benchmark died (D19)
            raise RuntimeError(f"{bench} produced no result under perf record (perf exit {rec.returncode}): it "
                               f"crashed or failed; `cyclebench run -b {bench}` says why")
        if finals and finals[0]["type"] != "result":
            raise RuntimeError(f"{bench}: {finals[0]['type']}: {finals[0].get('reason')}")
        if rec.returncode != 0 or not data.exists():
            tail = [ln for ln in rec.stderr.splitlines() if ln.strip()][-1:] or ["no output"]
            raise RuntimeError(f"perf record failed: {tail[0]}")
        report = subprocess.run([perf, "report", "-i", str(data), "--stdio", "--sort", "dso,sym",
                                 "--percent-limit", "1"], capture_output=True, text=True, timeout=120, check=False)
        ann = subprocess.run([perf, "annotate", "-i", str(data), "--stdio", "-s", body_symbol(bench)],
                             capture_output=True, text=True, timeout=120, check=False)
    top = "\n".join(ln for ln in report.stdout.splitlines() if ln.strip() and not ln.startswith("#"))
    samples = 0
    for ln in report.stdout.splitlines():
        if ln.startswith("# Samples:"):
            word = ln.split(":", 1)[1].split()[0]
            mult = 1000 if word.endswith("K") else 1000000 if word.endswith("M") else 1
            samples = int(float(word.rstrip("KM")) * mult)
    return Annotation(samples, top, ann.stdout.strip() or ann.stderr.strip())
