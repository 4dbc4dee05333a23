"""OSACA on one loop (RRZE's Open Source Architecture Code Analyzer, PyPI ``osaca``; Laukemann
et al., PMBS 2018): port pressure per instruction, the critical path and the longest
loop-carried dependency (LCD). Its prediction is max(throughput, LCD) cycles per trip: the
paper's reading of a loop kernel in steady state. Run in its own process
(``python -m cyclebench.predict.osaca_worker``), killed at the timeout.

Where the arch chosen for this CPU has no data for an instruction of the loop (OSACA 0.7's ZEN4
file lacks ``imul r64,r64``), the next arch of the CPU's list that has is used and named; the
instructions no arch knows are named in the notes (OSACA prices them at 0).

An analysis is remembered in the build cache, per OSACA version, worker, arch and loop text: it is
the same every time, and one of a 300-instruction loop took 10–17 s (its loop-carried dependency
search) on the 2-vCPU VM under load, paid again by every `explain` and `--predict` of that loop.
One that failed or whose search timed out (which depends on the host's speed) is not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import cast

from cyclebench.build.compile import UnsafeCache, build_dir, check_private
from cyclebench.predict import osaca_worker
from cyclebench.predict.hotloop import why_unmodelled
from cyclebench.predict.osaca_worker import OsacaAnalysis, UnitRequest, UnitResult
from cyclebench.prediction import FAILED, MISSING, OK, OSACA, UNSUPPORTED, InstructionView, ModelResult

TIMEOUT_S = 120
UNIT_S = 10  # more a unit whose LCD is searched (a loop's path): OSACA's own search timeout for one
MAX_UNITS_S = 1200
PACKAGE = "osaca (pip install 'cyclebench[predict]')"


def available() -> bool:
    return importlib.util.find_spec("osaca") is not None


def missing() -> ModelResult:
    return ModelResult(OSACA, MISSING, f"OSACA not found: install {PACKAGE}")


def _memo(arch: str, source: str) -> Path | None:
    """Where the build cache keeps the analysis of ``source`` on ``arch`` (None: no cache here)."""
    try:
        version = importlib.metadata.version("osaca")
        worker = Path(osaca_worker.__file__).read_bytes()
        bdir = build_dir()
    except (importlib.metadata.PackageNotFoundError, OSError, UnsafeCache):
        return None
    if bdir is None:
        return None
    h = hashlib.sha256(f"{version}\0{arch}\0".encode() + hashlib.sha256(worker).digest() + source.encode())
    return bdir / f".memo-osaca-{h.hexdigest()[:24]}.json"


def _analyse(arch: str, source: str, timeout: float) -> OsacaAnalysis:
    """The worker's analysis of ``source`` on ``arch`` (remembered: _memo), or one with ``error``
    alone (a timeout, a worker that printed no JSON)."""
    memo = _memo(arch, source)
    if memo is not None:
        with contextlib.suppress(OSError, ValueError, UnsafeCache):
            check_private(memo)
            known = cast(OsacaAnalysis, json.loads(memo.read_text()))
            with contextlib.suppress(OSError):
                os.utime(memo)  # last use, for pruning (build.compile.prune)
            return known
    d = _run_worker(arch, source, timeout)
    if memo is not None and "error" not in d and not d.get("timed_out"):
        with contextlib.suppress(OSError):
            part = memo.with_name(f"{memo.name}.{os.getpid()}")
            part.write_text(json.dumps(d))
            os.chmod(part, 0o644)
            part.rename(memo)
    return d


def _run_worker(arch: str, source: str, timeout: float) -> OsacaAnalysis:
    """The worker's analysis of ``source`` on ``arch``, run now."""
    with tempfile.TemporaryDirectory(prefix="cb-osaca-") as tmp:
        asm = Path(tmp) / "loop.s"
        asm.write_text(source)
        try:
            proc = subprocess.run([sys.executable, "-m", "cyclebench.predict.osaca_worker", arch, str(asm)],
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"error": f"OSACA took over {timeout:g} s"}
    try:
        return cast(OsacaAnalysis, json.loads(proc.stdout))
    except ValueError:
        tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
        return {"error": f"OSACA failed (exit {proc.returncode}){': ' + tail[0] if tail else ''}"}


def _unknown(d: OsacaAnalysis) -> list[str]:
    """Instructions the arch has no data for, other than those the models do not model anyway."""
    return [i["text"] for i in d.get("instructions", []) if i["unknown"] and not why_unmodelled(i["text"])]


def run(source: str, archs: tuple[str, ...], why: str, timeout: float = TIMEOUT_S) -> ModelResult:
    """OSACA's prediction for the loop in ``source`` on the first of ``archs`` that knows its
    instructions (else the first). Never raises for the tool's own failure: the status says it."""
    if not available():
        return missing()
    if not archs:
        return ModelResult(OSACA, UNSUPPORTED, why)
    tried: list[tuple[str, OsacaAnalysis]] = []
    for arch in archs:
        d = _analyse(arch, source, timeout)
        if "error" in d:
            return ModelResult(OSACA, FAILED, d["error"], cpu=arch, cpu_reason=why)
        tried.append((arch, d))
        if not _unknown(d):
            break
    arch, d = next(((a, x) for a, x in tried if not _unknown(x)), tried[0])
    notes = []
    if arch != archs[0]:
        first_unknown = sorted({t.split()[0] for t in _unknown(tried[0][1])})
        why = f"{why}; {archs[0]} has no data for {', '.join(first_unknown)}: {arch}"
    if unknown := _unknown(d):
        notes.append(f"no data in OSACA's {arch} for {', '.join(sorted({t.split()[0] for t in unknown}))} "
                     "(priced 0)")
    if d.get("timed_out"):
        notes.append("OSACA's LCD search timed out: the LCD is a lower bound")
    views = tuple(InstructionView(i["text"], tuple(i["ports"].items()), i["latency"], bool(i["lcd"]))
                  for i in d["instructions"])
    tp, lcd = float(d["throughput"]), float(d["lcd"])
    return ModelResult(OSACA, OK, None, version=d["version"], cpu=arch, cpu_reason=why, cycles=max(tp, lcd),
                       throughput=tp, lcd=lcd, critical_path=float(d["critical_path"]), instructions=views,
                       notes=tuple(notes), unpriced=tuple(dict.fromkeys(unknown)))


def run_units(units: list[UnitRequest], archs: tuple[str, ...], timeout: float | None = None
              ) -> tuple[str | None, list[UnitResult], str | None]:
    """OSACA on every unit of a block-weighted op in one worker process (osaca_worker's
    ``--units``), each on the first of ``archs`` with data for all its instructions: (OSACA's
    version, one UnitResult per unit in order, None) or (version or None, [], why it failed: not
    installed, no arch, a timeout — by default TIMEOUT_S + UNIT_S per LCD searched, at most
    MAX_UNITS_S). Remembered in the build cache like ``run``'s analyses (the same op's units are
    the same request); never raises for the tool's own failure."""
    if not available():
        return None, [], f"OSACA not found: install {PACKAGE}"
    if not archs:
        return None, [], "no OSACA arch for this CPU"
    if timeout is None:
        timeout = min(TIMEOUT_S + UNIT_S * sum(u["lcd"] for u in units), MAX_UNITS_S)
    text = json.dumps(units, sort_keys=True)
    memo = _memo(",".join(archs) + "\0units", text)
    if memo is not None:
        with contextlib.suppress(OSError, ValueError, UnsafeCache, KeyError):
            check_private(memo)
            known = json.loads(memo.read_text())
            with contextlib.suppress(OSError):
                os.utime(memo)
            return str(known["version"]), list(known["units"]), None
    with tempfile.TemporaryDirectory(prefix="cb-osaca-") as tmp:
        path = Path(tmp) / "units.json"
        path.write_text(text)
        try:
            proc = subprocess.run([sys.executable, "-m", "cyclebench.predict.osaca_worker", "--units", ",".join(archs),
                                   str(path)], capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return None, [], f"OSACA took over {timeout:g} s for {len(units)} blocks"
    try:
        d = json.loads(proc.stdout)
    except ValueError:
        tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
        return None, [], f"OSACA failed (exit {proc.returncode}){': ' + tail[0] if tail else ''}"
    if "error" in d:
        return None, [], str(d["error"])
    got = cast(list[UnitResult], d["units"])
    if len(got) != len(units):
        return str(d.get("version")), [], f"OSACA answered {len(got)} of {len(units)} blocks"
    if memo is not None and not any(r.get("timed_out") or "error" in r for r in got):
        with contextlib.suppress(OSError):
            part = memo.with_name(f"{memo.name}.{os.getpid()}")
            part.write_text(json.dumps(d))
            os.chmod(part, 0o644)
            part.rename(memo)
    return str(d["version"]), got, None
