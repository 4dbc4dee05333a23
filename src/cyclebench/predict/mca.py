"""llvm-mca on one loop (LLVM's Machine Code Analyzer: https://llvm.org/docs/CommandGuide/llvm-mca.html).

The newest llvm-mca on PATH is used (Debian installs ``llvm-mca-14`` … ``llvm-mca-19`` side by
side, ``llvm-mca`` for the default): its scheduling models are LLVM's, and a newer LLVM knows
newer cores (``znver4`` since LLVM 16, ``znver5`` since 19). The loop is simulated for
ITERATIONS iterations (``-iterations``); cycles per trip = Total Cycles / Iterations, which
includes the dependencies the simulation meets; Block RThroughput is the resource bound alone
(llvm-mca's docs, "Summary View"). The per-instruction resource pressure is the JSON output's
ResourcePressureView; the bottleneck analysis (``--bottleneck-analysis``, text only) says what
share of the cycles data dependencies cost and prints the critical sequence.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from cyclebench.prediction import FAILED, MCA, MISSING, OK, UNSUPPORTED, InstructionView, ModelResult

ITERATIONS = 200
TIMEOUT_S = 120
VERSIONS = range(25, 13, -1)  # llvm-mca-25 … llvm-mca-14, newest first
PACKAGE = "llvm (apt-get install llvm, or llvm-19 for Zen 4/5 models)"


@cache
def find_tool() -> tuple[str, str] | None:
    """(program, LLVM version) of the newest llvm-mca on PATH, None without one."""
    found: list[tuple[tuple[int, ...], str, str]] = []
    for name in [f"llvm-mca-{v}" for v in VERSIONS] + ["llvm-mca"]:
        path = shutil.which(name)
        if path is None:
            continue
        version = _version(path)
        if version:
            found.append((tuple(int(x) for x in re.findall(r"\d+", version)[:3]), path, version))
    if not found:
        return None
    _, path, version = max(found)
    return path, version


def _version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except OSError:
        return None
    m = re.search(r"LLVM version (\S+)", out)
    return m.group(1) if m else None


@cache
def known_cpus(path: str) -> frozenset[str]:
    """The ``-mcpu`` names this llvm-mca knows (its ``-mcpu=help``)."""
    proc = subprocess.run([path, "-mcpu=help"], capture_output=True, text=True, timeout=30, check=False,
                          stdin=subprocess.DEVNULL)
    text = proc.stdout + proc.stderr
    block = text.split("Available CPUs for this target:", 1)[-1].split("Available features", 1)[0]
    return frozenset(m.group(1) for m in re.finditer(r"^\s+(\S+)\s+- Select the", block, re.M))


def missing() -> ModelResult:
    return ModelResult(MCA, MISSING, f"llvm-mca not found: install {PACKAGE}")


def run(source: str, lines: list[int], mcpu: str | None, cpu_reason: str, timeout: float = TIMEOUT_S) -> ModelResult:
    """llvm-mca's prediction for the loop in ``source`` (``lines``: each loop instruction's line,
    so the views line up with the loop) on ``mcpu``. Never raises for the tool's own failure:
    the ModelResult's status says it (MISSING, UNSUPPORTED, FAILED)."""
    tool = find_tool()
    if tool is None:
        return missing()
    path, version = tool
    if mcpu is None:
        return ModelResult(MCA, UNSUPPORTED, cpu_reason, version=version)
    if mcpu not in known_cpus(path):
        return ModelResult(MCA, UNSUPPORTED, f"llvm-mca {version} has no model '{mcpu}' (llvm-mca -mcpu=help)",
                           version=version, cpu=mcpu, cpu_reason=cpu_reason)
    with tempfile.TemporaryDirectory(prefix="cb-mca-") as tmp:
        asm = Path(tmp) / "loop.s"
        asm.write_text(source)
        base = [path, f"-mcpu={mcpu}", f"-iterations={ITERATIONS}", str(asm)]
        try:
            js = subprocess.run([*base, "--json"], capture_output=True, text=True, timeout=timeout, check=False)
            bn = subprocess.run([*base, "--bottleneck-analysis", "--instruction-info=false",
                                 "--resource-pressure=false"], capture_output=True, text=True, timeout=timeout,
                                check=False)
        except subprocess.TimeoutExpired:
            return ModelResult(MCA, FAILED, f"llvm-mca took over {timeout:g} s", version=version, cpu=mcpu,
                               cpu_reason=cpu_reason)
    if js.returncode != 0:
        err = next((ln for ln in js.stderr.splitlines() if "error" in ln), js.stderr.strip()[:200])
        return ModelResult(MCA, FAILED, f"llvm-mca: {err.strip()}", version=version, cpu=mcpu, cpu_reason=cpu_reason)
    return parse(js.stdout, bn.stdout, version, mcpu, cpu_reason, source.splitlines(), lines)


def parse(json_text: str, text: str, version: str, mcpu: str, cpu_reason: str, source_lines: list[str],
          lines: list[int]) -> ModelResult:
    """The ModelResult of llvm-mca's JSON output (and its text bottleneck analysis)."""
    d = json.loads(json_text)
    region = d["CodeRegions"][0]
    summary = region["SummaryView"]
    cycles = summary["TotalCycles"] / summary["Iterations"]
    # a resource of several units is named with the unit's index as a raw byte ("Zn4LSU.\x01")
    resources = [re.sub(r"[\x00-\x1f]", lambda c: str(ord(c.group())), str(r))
                 for r in d.get("TargetInfo", {}).get("Resources", [])]
    per: dict[int, dict[str, float]] = {}
    for p in region.get("ResourcePressureView", {}).get("ResourcePressureInfo", []):
        idx, res = p["InstructionIndex"], p["ResourceIndex"]
        if idx < len(lines) and res < len(resources) and p["ResourceUsage"]:
            per.setdefault(idx, {})[resources[res]] = float(p["ResourceUsage"])
    info = region.get("InstructionInfoView", {}).get("InstructionList", [])
    critical = _critical_lines(text)
    views = []
    for idx, line in enumerate(lines):
        text_i = source_lines[line - 1].strip() if line - 1 < len(source_lines) else ""
        lat = info[idx]["Latency"] if idx < len(info) else None
        views.append(InstructionView(text_i, tuple(per.get(idx, {}).items()), lat, idx in critical))
    notes = []
    if m := re.search(r"Data Dependencies:\s*\[\s*([\d.]+)%", text):
        notes.append(f"bottleneck analysis: data dependencies in {m.group(1)}% of the cycles")
    if "< loop carried >" in text:
        notes.append("bottleneck analysis: the critical sequence is loop-carried")
    if re.search(r"No resource or data dependency bottlenecks discovered", text):
        notes.append("bottleneck analysis: no resource or data dependency bottleneck")
    if mcpu == "znver5" and any(r.startswith("Zn4") for r in resources):
        notes.append("LLVM schedules znver5 with its Zen 4 model (resources Zn4*)")
    return ModelResult(MCA, OK, None, version=version, cpu=mcpu, cpu_reason=cpu_reason, cycles=round(cycles, 4),
                       throughput=float(summary["BlockRThroughput"]), instructions=tuple(views), notes=tuple(notes))


def _critical_lines(text: str) -> set[int]:
    """Indices of the instructions on llvm-mca's 'Critical sequence based on the simulation' (its
    lines ``+----< N.`` and ``+----> N.``; ``|      N.`` lines are beside it)."""
    if "Critical sequence" not in text:
        return set()
    block = text.split("Critical sequence based on the simulation:", 1)[1].split("\n\n\n", 1)[0]
    return {int(m.group(1)) for m in re.finditer(r"^\s*\+-+[<>]\s+(\d+)\.\s", block, re.M)}
