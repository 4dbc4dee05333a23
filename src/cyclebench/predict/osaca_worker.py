"""OSACA on one loop, as JSON on stdout: run as ``python -m cyclebench.predict.osaca_worker ARCH FILE``
by predict/osaca.py, in its own process (its analysis may take long: it is killed at the timeout);
or on every unit of a block-weighted op at once (``--units ARCH[,ARCH…] FILE``, FILE a JSON list of
UnitRequest: ``analyse_units``), one process for all of them, each arch's machine model loaded once.

The analysis is OSACA's own ``inspect`` (osaca/osaca.py, 0.7): parse (AT&T), the arch's machine
model, the optimal port assignment, the kernel's dependency graph; its ``full_analysis_dict``
(Frontend) gives the per-instruction port pressure, latencies, the critical path and the longest
loop-carried dependency (Laukemann et al., "Automated Instruction Stream Throughput Prediction
for Intel and AMD Microarchitectures", PMBS 2018). Only the standard library, osaca and its
dependencies are imported.
"""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any, TypedDict


class OsacaInstruction(TypedDict):
    """One instruction of the loop as OSACA priced it: its line in the file and its text, the
    cycles it puts on each port (ports with none left out), its latency and its share of the
    critical path (cycles), whether it is on the longest loop-carried dependency, and whether the
    arch has no data for it (OSACA then prices it 0)."""

    line: int
    text: str
    ports: dict[str, float]
    latency: float
    cp: float
    lcd: bool
    unknown: bool


class OsacaAnalysis(TypedDict, total=False):
    """The worker's one JSON object: OSACA's version, the arch and its ports, the throughput
    (the most loaded port's cycles per trip), the critical path and the longest loop-carried
    dependency (cycles per trip) with its lines, whether the LCD search timed out, and each
    instruction; or ``error`` alone (OSACA failed: one line)."""

    version: str
    arch: str
    ports: list[str]
    throughput: float
    critical_path: float
    lcd: float
    lcd_lines: list[int]
    timed_out: bool
    instructions: list[OsacaInstruction]
    error: str


def _remember_reg_changes(semantics: Any) -> None:
    """OSACA's dependency graph asks the ISA semantics for an instruction's register changes once
    per pair of instructions it walks (KernelDG.find_depending), each a linear search of the
    machine model: 2.7 M calls, 140 of 148 s, for a 300-add loop. The answer depends only on the
    instruction's text (its mnemonic and operands), so it is computed once per text (the loop and
    its unrolled copy for the loop-carried search share them). The analysis is the same: same
    dict returned, never mutated by its callers (kernel_dg._update_reg_changes reads it)."""
    plain = semantics.get_reg_changes
    known: dict[tuple[str, str, bool], Any] = {}

    def reg_changes(form: Any, only_postindexed: bool = False) -> Any:
        key = (str(form.line), str(form.mnemonic), only_postindexed)
        if key not in known:
            known[key] = plain(form, only_postindexed)
        return known[key]

    semantics.get_reg_changes = reg_changes


class UnitRequest(TypedDict):
    """One unit of a block-weighted op for ``analyse_units``: its AT&T ``code``; ``lcd``: whether
    it repeats as a loop (its loop-carried dependency is searched; else its throughput alone);
    ``base``: for a loop's path with an arm, the index of the path without it (analysed on the arch
    the arm is priced on, so the difference is one arch's), else None."""

    code: str
    lcd: bool
    base: int | None


class UnitResult(TypedDict, total=False):
    """OSACA on one unit: ``arch``, the first arch asked for with data for all its instructions
    (None: none had; ``unknown`` then names those no arch has data for, else those the first
    lacks), its throughput (the most
    loaded port's cycles an execution) and LCD (cycles a trip; 0 unless asked), whether the LCD
    search timed out, ``base``: {"throughput", "lcd"} of the request's base on ``arch``; or
    ``error`` (OSACA failed on it: one line)."""

    arch: str | None
    throughput: float
    lcd: float
    timed_out: bool
    unknown: list[str]
    base: dict[str, float]
    error: str


@cache
def _machine(arch: str) -> tuple[Any, Any, Any]:
    """(parser, machine model, semantics) of ``arch``: loading a model's YAML is the slow part."""
    from osaca.osaca import get_asm_parser
    from osaca.semantics import ArchSemantics, MachineModel

    parser = get_asm_parser(arch, "ATT")
    model = MachineModel(arch=arch)
    semantics = ArchSemantics(parser, model)
    _remember_reg_changes(semantics)
    return parser, model, semantics


def _kernel(arch: str, code: str) -> list[Any]:
    """``code`` parsed and given ``arch``'s semantics and optimal port assignment."""
    parser, _model, semantics = _machine(arch)
    kernel = parser.parse_file(code)
    semantics.normalize_instruction_forms(kernel)
    semantics.add_semantics(kernel)
    semantics.assign_optimal_throughput(kernel)
    return kernel


def _unit(arch: str, code: str, lcd: bool, lcd_timeout: int) -> UnitResult:
    """One unit on one arch: throughput, LCD (when ``lcd``) and the instructions without data."""
    from osaca.semantics import INSTR_FLAGS, ArchSemantics, KernelDG

    parser, model, semantics = _machine(arch)
    kernel = _kernel(arch, code)
    unknown = [" ".join(x.line.split()) for x in kernel if x.mnemonic is not None and INSTR_FLAGS.TP_UNKWN in x.flags]
    out: UnitResult = {"arch": arch, "throughput": float(max(ArchSemantics.get_throughput_sum(kernel), default=0.0)),
                       "lcd": 0.0, "timed_out": False, "unknown": unknown}
    if lcd and not unknown:  # a unit with no data on this arch is not priced on it (and its LCD search may raise)
        graph = KernelDG(kernel, parser, model, semantics, lcd_timeout, False)
        deps = graph.get_loopcarried_dependencies()
        out["lcd"] = float(max((v["latency"] for v in deps.values()), default=0.0))
        out["timed_out"] = bool(graph.timed_out)
    return out


def analyse_units(archs: list[str], units: list[UnitRequest], lcd_timeout: int = 10) -> list[UnitResult]:
    """Every unit on the first of ``archs`` with data for all its instructions (an arm's base on
    the same arch), in this process. A unit OSACA fails on gets ``error``; the others go on."""
    done: dict[tuple[int, str], UnitResult] = {}

    def get(k: int, arch: str) -> UnitResult:
        if (k, arch) not in done:
            try:
                done[k, arch] = _unit(arch, units[k]["code"], units[k]["lcd"], lcd_timeout)
            except Exception as e:  # OSACA's own failure on this unit (a parse error, a cyclic graph)
                done[k, arch] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
        return done[k, arch]

    out: list[UnitResult] = []
    for k, u in enumerate(units):
        first = get(k, archs[0])
        got = next((r for a in archs if "error" not in (r := get(k, a)) and not r["unknown"]), None)
        if got is None:  # named: what no arch has data for (else what the first lacks)
            lacks = [r.get("unknown", []) for a in archs if "error" not in (r := get(k, a))]
            common = [t for t in (lacks[0] if lacks else []) if all(t in x for x in lacks)]
            out.append({"arch": None, "unknown": common or first.get("unknown", [])} if "error" not in first
                       else first)
            continue
        got = dict(got)  # type: ignore[assignment]
        if u["base"] is not None:
            b = get(u["base"], str(got["arch"]))
            if "error" in b:
                out.append({"error": f"its loop's path: {b['error']}"})
                continue
            got["base"] = {"throughput": b["throughput"], "lcd": b["lcd"]}
        out.append(got)
    return out


def analyse(arch: str, code: str, lcd_timeout: int = 10) -> OsacaAnalysis:
    """OSACA's analysis of ``code`` (an OsacaAnalysis without ``error``). Raises what OSACA raises."""
    import osaca
    from osaca.frontend import Frontend
    from osaca.semantics import INSTR_FLAGS, KernelDG

    parser, model, semantics = _machine(arch)
    kernel = _kernel(arch, code)
    graph = KernelDG(kernel, parser, model, semantics, lcd_timeout, False)
    d = Frontend("loop.s", arch=arch).full_analysis_dict(kernel, graph)
    deps = graph.get_loopcarried_dependencies()
    longest = max(deps.values(), key=lambda v: v["latency"], default=None)
    lcd_lines = sorted({dep[0].line_number for dep in longest["dependencies"]}) if longest else []
    ports = [str(p) for p in d["Target"]["Ports"]]
    out: list[OsacaInstruction] = []
    for k in d["Kernel"]:
        if k["Instruction"] is None:  # a label or a directive
            continue
        out.append({"line": k["LineNumber"], "text": k["Line"],
                    "ports": {str(p): float(v) for p, v in k["PortPressure"].items() if v},
                    "latency": k["Latency"], "cp": k["LatencyCP"], "lcd": k["LineNumber"] in lcd_lines,
                    "unknown": INSTR_FLAGS.TP_UNKWN in k["Flags"]})
    pressure = [float(v) for v in d["Summary"]["PortPressure"].values()]
    return {"version": osaca.__version__, "arch": arch, "ports": ports,
            "throughput": max(pressure, default=0.0), "critical_path": float(d["Summary"]["CriticalPath"]),
            "lcd": float(d["Summary"]["LCD"]), "lcd_lines": lcd_lines,
            "timed_out": bool(graph.timed_out), "instructions": out}


def main(argv: list[str]) -> int:
    if argv[0] == "--units":
        import osaca

        with open(argv[2]) as f:
            units = json.load(f)
        try:
            got = analyse_units(argv[1].split(","), units)
        except Exception as e:  # an arch OSACA cannot load: one line for the caller
            json.dump({"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}, sys.stdout)
            return 0
        json.dump({"version": osaca.__version__, "units": got}, sys.stdout)
        return 0
    arch, path = argv[0], argv[1]
    with open(path) as f:
        code = f.read()
    try:
        result = analyse(arch, code)
    except Exception as e:  # OSACA's own failure (a parse error, an unknown form): one line for the caller
        json.dump({"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}, sys.stdout)
        return 0
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
