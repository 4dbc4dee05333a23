"""`cyclebench annotate`: where a benchmark spends its time, instruction by instruction.

The runner measures the benchmark (as `run` does) under `perf record -e cpu-clock
--call-graph dwarf` (a software clock: it needs no PMU, so it works in VMs; DWARF unwinding
from a copy of the user stack, since -O2 code keeps no frame pointers), then `perf report`
lists the hottest symbols of the whole process — user and kernel, since a syscall's cost is
in the kernel. The samples whose call chain holds the body (`perf script`) are what the body
reached: the body itself, the functions it calls (a body calling a non-inlined `fib` has
99 % of them in `fib`), the kernel under its system calls. `perf annotate` shows the hottest
of those symbols (at most ``top``, each at least 1 % of them) with the share of samples per
instruction. Sampling skid: a sample is charged to the instruction *after* the one that was
running (perf-annotate(1) shows an LL/SC ldaxr/stlxr loop this way).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.build import ToolMissing
from cyclebench.build.elf import body_symbol
from cyclebench.runner.child import run_child
from cyclebench.runner.plan import MeasureOptions
from cyclebench.runner.protocol import parse_lines

# DWARF call chains copy this much of the user stack per sample (perf record --call-graph
# dwarf,SIZE): a benchmark's stack from _start to its callees is a few hundred bytes to a few KiB
# (fib(16) below the body and cb_measure: under 2 KiB here); a chain cut short loses its body.
STACK_BYTES = 8192
# ~8 KiB a sample: the rate is lowered for long recordings to keep perf.data near 64 MB.
MAX_SAMPLES = 8000
MIN_SHARE = 0.01  # a symbol under 1 % of the body's samples is not annotated


@dataclass(frozen=True)
class Hot:
    """A symbol the body reached: ``samples`` with it at the top of a call chain holding the
    body, ``share`` of the body's samples (0..1), ``listing`` its perf annotate text."""

    symbol: str
    dso: str
    samples: int
    share: float
    listing: str = ""


@dataclass(frozen=True)
class Annotation:
    samples: int  # every sample of the process
    top: str  # perf report --sort dso,sym, as text
    body: str  # the body's symbol
    under_body: int = 0  # samples whose call chain holds the body
    hot: tuple[Hot, ...] = ()  # the hottest symbols reached, hottest first


def _frames(block: str) -> list[tuple[str, str]]:
    """(symbol, dso) of each line of one perf script sample (``-F ip,sym,dso``), leaf first."""
    out = []
    for ln in block.splitlines():
        parts = ln.strip().split(None, 1)
        if len(parts) < 2:
            continue
        sym, _, dso = parts[1].rpartition(" (")
        out.append((sym or parts[1], dso.rstrip(")") if sym else ""))
    return out


def reached(script: str, body: str) -> tuple[Counter[tuple[str, str]], int]:
    """From ``perf script -F ip,sym,dso`` text: the samples whose call chain holds ``body``,
    counted by their leaf (symbol, dso), and how many there are."""
    counts: Counter[tuple[str, str]] = Counter()
    for block in script.split("\n\n"):
        frames = _frames(block)
        if frames and any(sym == body for sym, _ in frames):
            counts[frames[0]] += 1
    return counts, sum(counts.values())


def hottest(counts: Counter[tuple[str, str]], total: int, top: int, body: str) -> list[Hot]:
    """At most ``top`` symbols, hottest first, each at least MIN_SHARE of ``total``; the body
    too when it is not among them but has samples (what the user wrote is always shown)."""
    if not total:
        return []
    hot = [Hot(sym, dso, n, n / total) for (sym, dso), n in counts.most_common(top) if n / total >= MIN_SHARE]
    if not any(h.symbol == body for h in hot):
        hot += [Hot(sym, dso, n, n / total) for (sym, dso), n in counts.most_common() if sym == body][:1]
    return hot


def _listing(proc: subprocess.CompletedProcess[str], dso: str) -> str:
    """perf annotate's text, or one line when it has no disassembly: a kernel symbol needs the
    kernel's vmlinux or /proc/kcore, which perf annotate reads only with CAP_SYS_RAWIO and a
    matching build id (perf-annotate(1)); perf's own dozen lines say just that."""
    text = proc.stdout.strip()
    if text and not text.startswith("Error"):
        return text
    why = " ".join((proc.stderr.strip() or text).split())
    if dso.startswith("[kernel"):
        return ("(kernel code: no disassembly here; perf annotate needs a vmlinux with the running kernel's build "
                "id, or /proc/kcore, which it reads only with CAP_SYS_RAWIO)")
    return f"(no disassembly: {why or 'perf annotate printed nothing'})"


def perf_tool() -> str:
    if shutil.which("perf") is None:
        raise ToolMissing("perf not found: install it (apt-get install linux-perf) for cyclebench annotate")
    return "perf"


def _perf(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """A perf report/script/annotate over the recording; a timeout is a RuntimeError (one line)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"perf {argv[1]} took more than {timeout:g} s (killed)") from None


def annotate(binary: Path, bench: str, param: int | None, cpu: int | None, seconds: float = 1.0,
             freq: int = 4000, fifo: int | None = None, top: int = 3) -> Annotation:
    """Profile one benchmark for about ``seconds`` (at ``freq`` Hz, lowered so a recording holds
    about MAX_SAMPLES) and annotate the ``top`` hottest symbols its body reached.

    Raises ToolMissing without perf, RuntimeError when perf cannot record (e.g.
    perf_event_paranoid forbids it: the message says so).
    """
    perf = perf_tool()
    opts = MeasureOptions(min_time=seconds, repeat=40, warmup=0.05)
    with tempfile.TemporaryDirectory(prefix="cb-perf-") as tmp:
        data = Path(tmp) / "perf.data"
        freq = max(100, min(freq, int(MAX_SAMPLES / seconds)))
        argv = [perf, "record", "-q", "-e", "cpu-clock", "-F", str(freq), "--call-graph", f"dwarf,{STACK_BYTES}",
                "-o", str(data), "--",
                str(binary), "--run", bench, *(["--param", str(param)] if param is not None else []),
                *opts.argv(), *(["--cpu", str(cpu)] if cpu is not None else []),
                *(["--fifo", str(fifo)] if fifo is not None else [])]
        limit = seconds * 20 + 60
        # perf and the runner it starts share one session: a timeout or Ctrl-C kills both
        rec = run_child(argv, limit)
        if rec.timed_out:
            raise RuntimeError(f"perf record of {bench} timed out after {limit:g} s (killed)")
        finals = [ln for ln in parse_lines(rec.stdout) if ln.get("type") in ("result", "skip", "fail", "error")]
        if rec.returncode != 0 and not finals and data.exists():  # perf recorded; the benchmark died, not perf
            raise RuntimeError(f"{bench} produced no result under perf record (perf exit {rec.returncode}): it "
                               f"crashed or failed; `cyclebench run -b {bench}` says why")
        if finals and finals[0]["type"] != "result":
            raise RuntimeError(f"{bench}: {finals[0]['type']}: {finals[0].get('reason')}")
        if rec.returncode != 0 or not data.exists():
            tail = [ln for ln in rec.stderr.splitlines() if ln.strip()][-1:] or ["no output"]
            raise RuntimeError(f"perf record failed: {tail[0]}")
        report = _perf([perf, "report", "-i", str(data), "--stdio", "--no-children", "-g", "none",
                        "--sort", "dso,sym", "--percent-limit", "1"], 120)
        script = _perf([perf, "script", "-i", str(data), "-F", "ip,sym,dso", "--no-inline"], 300)
        body = body_symbol(bench)
        counts, under = reached(script.stdout, body)
        hot = hottest(counts, under, top, body)
        if not hot:  # no chain reached the body (a perf without DWARF unwinding): the body alone, as flat samples
            hot = [Hot(body, "", 0, 0.0)]
        annotated = []
        for h in hot:
            ann = _perf([perf, "annotate", "-i", str(data), "--stdio", *(["--dsos", h.dso] if h.dso else []),
                         "-s", h.symbol], 120)
            annotated.append(replace(h, listing=_listing(ann, h.dso)))
    top_text = "\n".join(ln for ln in report.stdout.splitlines() if ln.strip() and not ln.startswith("#"))
    samples = sum(1 for block in script.stdout.split("\n\n") if block.strip())  # perf report rounds: "# Samples: 1K"
    return Annotation(samples, top_text, body, under, tuple(annotated))
