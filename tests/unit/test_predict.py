"""The prediction's parts without a compiler: the CPU's names in the models, what the models do
not model, callgrind's per-instruction dumps read back, the loop as assembly, llvm-mca's output
read, and the table's marked cells (docs/method.md §12)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from cyclebench.predict import asm, cpu, hotloop, mca, target_of
from cyclebench.prediction import (
    CALLGRIND,
    MCA,
    MISSING,
    OK,
    OSACA,
    UNSUPPORTED,
    HotLoop,
    LoopInstruction,
    ModelResult,
    Prediction,
    PredictionRow,
)
from cyclebench.report.predict import footer_lines, predicted_table


def test_zen5_maps_to_znver5_and_falls_back_where_the_tool_lacks_it() -> None:
    core = cpu.core_of("AuthenticAMD", 26, 2)  # this project's EPYC guest: family 1Ah
    assert core.name == "Zen 5" and core.mca[0] == "znver5" and core.osaca[0] == "ZEN4"
    assert "no Zen 5 model" in core.osaca_why
    assert cpu.pick_mca(core, {"znver5", "znver4"}) == ("znver5", "Zen 5: znver5")
    name, why = cpu.pick_mca(core, {"znver1", "znver2", "znver3"})  # LLVM 14
    assert name == "znver3" and "no znver5" in why
    assert cpu.core_of("AuthenticAMD", 25, 0x61).name == "Zen 4"
    assert cpu.core_of("GenuineIntel", 6, 0x8F).mca[0] == "sapphirerapids"
    assert cpu.core_of("GenuineIntel", 6, 0x55).osaca == ("SKX",)


def test_every_cpu_of_the_fixtures_has_a_model_in_both_tools() -> None:
    """The machines these tests have met (tests/fixtures' /proc/cpuinfo: a Xeon KVM guest reporting
    Rocket Lake's model 0xA7, a Kaby Lake laptop, a Zen 2 desktop) and this one, when x86, map to a
    core both tools model: an unknown one would leave every prediction test without a figure."""
    from cyclebench.env import sysinfo

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    roots = [p.parents[1] for p in sorted(fixtures.glob("sysroot_*/proc/cpuinfo"))]
    infos = [sysinfo.cpu_info(r) for r in roots]
    if os.uname().machine == "x86_64":
        infos.append(sysinfo.cpu_info())
    assert len(infos) >= 3
    for info in infos:
        core = cpu.core_of(info["vendor"], info["family"], info["model"])
        assert core.known and core.mca and core.osaca, info
        assert set(core.osaca) <= cpu.OSACA_ARCHS, core


def test_an_unknown_cpu_is_a_reason_not_an_error() -> None:
    core = cpu.core_of("SomeVendor", 7, 1)
    assert not core.known and core.mca == () and core.osaca == ()
    name, why = cpu.pick_mca(core, None)
    assert name is None and "give --mcpu" in why
    t = target_of({"vendor": "SomeVendor", "family": 7, "model": 1, "model_name": "Odd CPU"})
    assert t.mcpu is None and t.osaca == () and "Odd CPU" in t.line()


def test_mcpu_overrides_either_tool() -> None:
    info = {"vendor": "AuthenticAMD", "family": 26, "model": 2, "model_name": "AMD EPYC"}
    t = target_of(info, "znver3")
    assert t.mcpu == "znver3" and t.osaca == ("ZEN3",) and "--mcpu znver3" in t.line()
    t = target_of(info, "znver4,ZEN3")
    assert t.mcpu == "znver4" and t.osaca == ("ZEN3",)
    t = target_of(info, "ZEN2")
    assert t.osaca == ("ZEN2",) and t.mcpu_reason.startswith("Zen 5")


@pytest.mark.parametrize(("text", "what"), [
    ("syscall", "system call"),
    ("lock addq $0x1,0xd8a7(%rip)", "lock prefix"),
    ("lock cmpxchg %rcx,(%rdi)", "lock prefix"),
    ("xchg %rax,(%rdi)", "xchg with memory (locked)"),
    ("mfence", "fence"),
    ("lfence", "fence"),
    ("rep movsb %ds:(%rsi),%es:(%rdi)", "rep string op"),
    ("rep stos %rax,%es:(%rdi)", "rep string op"),
    ("cpuid", "cpuid"),
    ("rdtsc", "timer read (rdtsc)"),
    ("rdtscp", "timer read (rdtsc)"),
    ("call 1090 <syscall@plt>", "call"),
    ("add %rax,%rax", None),
    ("xchg %ax,%ax", None),
    ("addq $0x1,(%rdi)", None),
])
def test_what_the_models_do_not_model_is_named(text: str, what: str | None) -> None:
    assert hotloop.why_unmodelled(text) == what


DUMP = """# callgrind format
version: 1
positions: instr
events: Ir
desc: Trigger: Client Request: cb:n2
ob=/bin/runner
fn=cb_simulate
0x100 1
cfn=cb_body_x
calls=1 0x200
0x104 999
fn=cb_body_x
0x200 1
0x204 {n}
0x208 {n}
0x204 {n}
0x208 {n}
0x20c 1
"""


def test_callgrind_dumps_read_back_per_op() -> None:
    """Self cost only (the line after calls= is the call's inclusive cost); an address listed
    twice is summed; (2N − N)/N per op, fixed costs cancelling."""
    n1 = hotloop.parse_instr_dump(DUMP.format(n=16))
    n2 = hotloop.parse_instr_dump(DUMP.format(n=32))
    assert hotloop.label_of(DUMP) == "cb:n2"
    assert n1[("/bin/runner", "cb_simulate")] == {0x100: 1}
    assert n1[("/bin/runner", "cb_body_x")][0x204] == 32
    per = hotloop.per_op_counts(n1, n2, 32)
    assert per == {("/bin/runner", "cb_body_x"): {0x204: 1.0, 0x208: 1.0}}


def _loop(*texts: str, trips: float | None = 1.0) -> HotLoop:
    ins = tuple(LoopInstruction(0x10 + 4 * i, t, 1.0, hotloop.why_unmodelled(t)) for i, t in enumerate(texts))
    return HotLoop("cb_body_x", "/bin/runner", 0x10, 0x10 + 4 * (len(texts) - 1), ins, CALLGRIND, trips)


def test_the_loop_as_assembly_gets_labels_for_its_branches() -> None:
    loop = _loop("add %rax,%rax", "call 1090 <syscall@plt>", "data16 cs nopw 0x0(%rax,%rax,1)",
                 "jb 10 <cb_body_x+0x10>")
    src, lines = asm.loop_source(loop)
    rows = src.splitlines()
    assert rows[0] == ".Lcb_10:" and "call .Lcb_out" in rows and "nopw 0x0(%rax,%rax,1)" in rows
    assert rows[-2] == "jb .Lcb_10" and rows[-1] == ".Lcb_out:"
    assert [rows[n - 1] for n in lines] == ["add %rax,%rax", "call .Lcb_out", "nopw 0x0(%rax,%rax,1)", "jb .Lcb_10"]
    assert loop.unmodelled == ("call",)


def test_llvm_mca_output_is_read() -> None:
    js = {"CodeRegions": [{"SummaryView": {"TotalCycles": 60003, "Iterations": 200, "BlockRThroughput": 75.5},
                           "InstructionInfoView": {"InstructionList": [{"Latency": 1}, {"Latency": 1}]},
                           "ResourcePressureView": {"ResourcePressureInfo": [
                               {"InstructionIndex": 0, "ResourceIndex": 1, "ResourceUsage": 1.0}]}}],
          "TargetInfo": {"Resources": ["Zn4AGU0", "Zn4ALU\x01"]}}
    text = ("Critical sequence based on the simulation:\n\n +----< 0.    addq\n |\n |    < loop carried > \n"
            " +----> 0.    addq\n |      1.    jb\n\n\n")
    r = mca.parse(json.dumps(js), text, "19.1.7", "znver5", "Zen 5: znver5", ["add %rax,%rax", "jb .L"], [1, 2])
    assert r.status == OK and r.cycles == pytest.approx(300.015) and r.throughput == 75.5
    assert r.instructions[0].ports == (("Zn4ALU1", 1.0),) and r.instructions[0].on_chain
    assert not r.instructions[1].on_chain
    assert any("loop-carried" in n for n in r.notes) and any("Zen 4 model" in n for n in r.notes)


def test_without_llvm_mca_the_result_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    mca.find_tool.cache_clear()
    try:
        assert mca.find_tool() is None
        r = mca.run(".L:\nadd %rax,%rax\njb .L\n", [2, 3], "znver4", "why")
        assert r.status == MISSING and "apt-get install llvm" in (r.reason or "")
    finally:
        mca.find_tool.cache_clear()


def test_marked_cells_missing_tool_unsupported_cpu_and_not_modelled() -> None:
    loop = _loop("lock addq $0x1,(%rdi)", "jb 10 <cb_body_x+0x10>")
    missing = ModelResult(MCA, MISSING, "llvm-mca not found: install llvm (apt-get install llvm)")
    unsupported = ModelResult(OSACA, UNSUPPORTED, "SomeVendor: no model of this CPU in OSACA's tables")
    p = Prediction("c/lock", None, "", "Odd", loop, (missing, unsupported))
    table = predicted_table([{"bench": "c/lock", "param": None, "cycles_per_op": 19.5}], [p])
    [row] = table.rows
    assert row[1:5] == ["", "19.50", "missing (llvm)", "-"] and row[5] == "no CPU model"
    assert "not modelled: lock prefix" in row[-1]
    lines = footer_lines([p])
    assert any("apt-get install llvm" in x for x in lines) and any("OSACA's tables" in x for x in lines)
    ok = Prediction("c/lock", None, "", "Odd", loop, (ModelResult(MCA, OK, cycles=1.04),))
    [row] = predicted_table([{"bench": "c/lock", "param": None, "cycles_per_op": 20.0}], [ok]).rows
    assert row[3] == "1.04*" and row[4] == "0.05"


def test_an_instruction_without_data_marks_the_figure_a_lower_bound() -> None:
    """OSACA 0.7's ZEN4 file has no `addq $1, mem`: it prices it at 0, and the cell says so."""
    loop = _loop("addq $0x1,(%rdi)", "jb 10 <cb_body_x+0x10>")
    m = ModelResult(OSACA, OK, cycles=1.0, throughput=0.5, lcd=1.0, unpriced=("addq $0x1,(%rdi)",))
    p = Prediction("counter/plain_add", None, "", "AMD EPYC", loop, (m,))
    [row] = predicted_table([{"bench": "counter/plain_add", "param": None, "cycles_per_op": 1.0}], [p]).rows
    assert row[5] == "1.00?"
    assert any(x.startswith("?: the tool has no data") and "OSACA: addq" in x for x in footer_lines([p]))


def test_a_retry_branch_that_never_retries_is_no_loop() -> None:
    """A compare-and-swap's retry branch runs per op but is never taken: the loop is the one
    around it, whose head is entered by its branch."""
    insns = [hotloop.Insn(0x10, "mov (%rdi),%rax"),
             hotloop.Insn(0x14, "lock cmpxchg %rcx,(%rdi)"),
             hotloop.Insn(0x18, "jne 14 <x+0x14>", 0x14),
             hotloop.Insn(0x1c, "add $0x1,%rdx"),
             hotloop.Insn(0x20, "cmp %rsi,%rdx"),
             hotloop.Insn(0x24, "jb 10 <x+0x10>", 0x10)]
    counts = {a: 1.0 for a in (0x10, 0x14, 0x18, 0x1c, 0x20, 0x24)}
    assert [(s, e) for s, e, _ in hotloop.loops(insns, counts)] == [(0x10, 0x24)]
    retrying = {**counts, 0x14: 3.0, 0x18: 3.0}  # two retries an op: then it is the inner loop
    assert [(s, e) for s, e, _ in hotloop.loops(insns, retrying)] == [(0x14, 0x18)]
    assert [(s, e) for s, e, _ in hotloop.loops(insns, None)] == [(0x14, 0x18)]  # statically: innermost


def test_predictions_are_stored_exported_and_deleted_with_their_run(tmp_path) -> None:
    from cyclebench.store import Store, runfile
    from cyclebench.store import predictions as stored

    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    rid = store.begin_run(command=["cyclebench", "run"], cpu_model="AMD EPYC", build={"key": "k1"})
    store.add_result(rid, {"bench": "c/lock", "param": None, "status": "ok", "cycles_per_op": 20.0})
    loop = _loop("lock addq $0x1,(%rdi)", "jb 10 <cb_body_x+0x10>")
    p = Prediction("c/lock", None, "", "AMD EPYC", loop,
                   (ModelResult(MCA, OK, version="19.1.7", cpu="znver5", cycles=1.04, throughput=1.0),
                    ModelResult(OSACA, MISSING, "OSACA not found")))
    assert stored.add(store, rid, stored.rows_of(p)) == 2
    rows = stored.of_run(store, rid)
    assert [r["tool"] for r in rows] == [MCA, OSACA]
    assert set(rows[0]) == set(PredictionRow.__annotations__)  # the table's columns are the record's keys
    assert rows[0]["cycles_per_op"] == pytest.approx(1.04) and rows[0]["trips_per_op"] == 1.0
    assert rows[0]["detail"]["not_modelled"] == ["lock prefix"] and rows[1]["status"] == MISSING
    # read back as the Prediction `show` prints beside the run's table
    (back,) = stored.predictions_of(rows)
    assert (back.bench, back.cpu_model, back.loop.unmodelled if back.loop else None) == (
        "c/lock", "AMD EPYC", ("lock prefix",))
    assert back.cycles_per_op(MCA) == pytest.approx(1.04) and back.model(MCA).cpu == "znver5"  # type: ignore[union-attr]
    assert back.model(OSACA).status == MISSING and back.model(OSACA).reason == "OSACA not found"  # type: ignore[union-attr]
    data = runfile.run_to_dict(store, rid)
    runfile.validate(data)
    assert len(data["predictions"]) == 2
    new = runfile.import_run(store, data)
    assert len(stored.of_run(store, new)) == 2
    row, _ = stored.newest_measured(store, "c/lock", None, "k1")
    assert row is not None and row["cycles_per_op"] == 20.0
    store.delete_runs([rid, new])
    assert stored.of_run(store, rid) == [] and stored.of_run(store, new) == []
    # a run without predictions has no key: the file stays what older readers know
    rid2 = store.begin_run(command=["cyclebench", "run"])
    assert "predictions" not in runfile.run_to_dict(store, rid2)


def test_an_osaca_analysis_is_remembered_per_arch_and_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker runs once per (arch, loop); a failed or timed-out analysis is run again."""
    from cyclebench.predict import osaca

    if not osaca.available():
        pytest.skip("osaca not installed (pip install 'cyclebench[predict]')")
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    calls: list[tuple[str, str]] = []
    answer: dict[str, Any] = {"version": "x", "throughput": 1.0, "lcd": 2.0, "critical_path": 2.0, "instructions": []}

    def worker(arch: str, source: str, timeout: float) -> dict[str, Any]:
        calls.append((arch, source))
        return dict(answer)

    monkeypatch.setattr(osaca, "_run_worker", worker)
    assert osaca._analyse("ZEN4", "add %rax, %rbx\n", 10) == answer
    assert osaca._analyse("ZEN4", "add %rax, %rbx\n", 10) == answer
    assert calls == [("ZEN4", "add %rax, %rbx\n")]
    osaca._analyse("ZEN3", "add %rax, %rbx\n", 10)
    osaca._analyse("ZEN4", "add %rcx, %rbx\n", 10)
    assert len(calls) == 3
    for kept_not in ({"error": "OSACA took over 10 s"}, {**answer, "timed_out": True}):
        answer = kept_not
        osaca._analyse("SKX", "nop\n", 10)
        osaca._analyse("SKX", "nop\n", 10)
    assert len(calls) == 7


def test_a_loop_path_holds_only_what_ran() -> None:
    """A rep string op inside a loop that did not run per op (its count absent) is not on the
    loop's typical trip (a suite run once died on its missing count); one that ran is, with its
    iterations as its Ir and the trip's executions as its count."""
    from cyclebench.predict import blocks

    insns = [hotloop.Insn(0x10, "mov %rsi,%rcx"), hotloop.Insn(0x14, "rep stos %rax,%es:(%rdi)"),
             hotloop.Insn(0x18, "add $0x1,%rdx"), hotloop.Insn(0x1c, "cmp %rsi,%rdx"),
             hotloop.Insn(0x20, "jb 10 <x+0x10>", 0x10)]
    key = ("/bin/x", "x")
    idle = {key: {0x10: 1.0, 0x18: 1.0, 0x1c: 1.0, 0x20: 1.0}}
    (loop,) = blocks.loops_of(idle, {key: insns})
    assert loop.addresses == (0x10, 0x18, 0x1c, 0x20) and loop.count == 1.0
    busy = {key: {**idle[key], 0x14: 512.0}}
    (loop,) = blocks.loops_of(busy, {key: insns})
    assert 0x14 in loop.addresses and loop.ir == 516.0 and loop.count == 1.0


@pytest.mark.skipif(importlib.util.find_spec("osaca") is None, reason="osaca not installed (pip install "
                    "'cyclebench[predict]')")
def test_osacas_register_changes_remembered_give_the_same_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker remembers each instruction text's register changes (OSACA asked 2.7 M times for a
    300-add loop: 40 → 7 s); the analysis, loop-carried dependencies included, is OSACA's own."""
    from cyclebench.predict import osaca_worker

    loop = ("\t.L1:\n\tmovq (%rdi), %rax\n\taddq %rax, %rbx\n\tmovq %rbx, (%rdi)\n\timulq %rbx, %rcx\n"
            "\taddq $8, %rsi\n\tcmpq %rsi, %rdx\n\tjne .L1\n")
    osaca_worker._machine.cache_clear()  # the arch's semantics, made (and remembering) once per process
    remembered = osaca_worker.analyse("ZEN4", loop)
    monkeypatch.setattr(osaca_worker, "_remember_reg_changes", lambda semantics: None)
    osaca_worker._machine.cache_clear()
    assert osaca_worker.analyse("ZEN4", loop) == remembered
    osaca_worker._machine.cache_clear()
    assert remembered["lcd"] > 0 and remembered["lcd_lines"]  # the store-to-load chain through (%rdi)


def test_osaca_prices_every_block_in_one_process_and_leaves_out_what_it_has_no_data_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """blocks.price_osaca on three units of known cost, OSACA itself in one worker process: a loop's
    path of 4 dependent adds is its LCD, 4 cycles a trip; an arm of 8 more dependent adds in it adds
    8; a block of 8 independent adds outside every loop is its throughput bound; a block with an
    endbr64 (no data in any OSACA arch) is not priced, its reason naming the instruction."""
    from cyclebench.predict import blocks, osaca

    if not osaca.available():
        pytest.skip("osaca not installed (pip install 'cyclebench[predict]')")
    monkeypatch.setenv("CYCLEBENCH_CACHE", str(tmp_path / "cache"))
    runs: list[list[str]] = []
    real = osaca.subprocess.run

    def counted(argv: list[str], **kw: Any) -> Any:
        if "cyclebench.predict.osaca_worker" in argv:
            runs.append(argv)
        return real(argv, **kw)

    monkeypatch.setattr(osaca.subprocess, "run", counted)
    archs = target_of({"vendor": "AuthenticAMD", "family": 25, "model": 17}).osaca  # Zen 4's: ZEN4, ZEN3

    def block(addrs: list[int], texts: list[str], count: float, kind: str = "block") -> Any:
        from cyclebench.prediction import Block

        return Block(function="f", obj="/bin/x", start=addrs[0], end=addrs[-1], count=count, ir=count * len(texts),
                     instructions=tuple(texts), addresses=tuple(addrs), kind=kind)

    def at(start: int, n: int) -> list[int]:
        return list(range(start, start + 4 * n, 4))

    # the loop's path: 4 adds at 0x100, [the arm's 8 at 0x110 on 1 trip in 10], its counter and branch at 0x130
    loop = block([*at(0x100, 4), *at(0x130, 3)],
                 ["add %rax,%rax"] * 4 + ["add $0x1,%rcx", "cmp %rcx,%rdx", "jne 100 <f+0x100>"], 10, "loop")
    arm = block(at(0x110, 8), ["add %rax,%rax"] * 8, 1)
    free = block(at(0x400, 8), [f"add $0x1,%r{r}" for r in ("8", "9", "10", "11", "12", "13", "14", "15")], 2)
    nodata = block(at(0x500, 2), ["endbr64", "add %rax,%rbx"], 3)
    out, info = blocks.price_osaca([arm, free, nodata], [loop], archs)
    assert info.error is None and len(runs) == 1, (info, runs)
    priced = {b.start: b for b in out}
    assert priced[0x100].cycles == pytest.approx(4.0) and priced[0x110].cycles == pytest.approx(8.0)
    assert priced[0x400].cycles == priced[0x400].throughput == pytest.approx(2.0)  # 8 adds on 4 ALUs
    assert priced[0x500].cycles is None and "endbr64" in (priced[0x500].reason or "")
    assert info.unknown == ("endbr64",)
    # summed as llvm-mca's: 10 × 4 + 1 × 8 + 2 × 2, the endbr64 block out of the coverage
    prof = blocks.summarise(out, {("/bin/x", "f"): {a: b.count for b in out for a in b.addresses}}, 7 * 10 + 8 + 16 + 6)
    assert prof.cycles_per_op == pytest.approx(52.0) and prof.coverage == pytest.approx(94 / 100)
    blocks.price_osaca([arm, free, nodata], [loop], archs)
    assert len(runs) == 1  # the same blocks again: remembered in the build cache


def test_osaca_block_figures_are_stored_shown_and_read_back(tmp_path: Path) -> None:
    """OSACA's block-weighted profile is stored on its row as llvm-mca's is on its (detail's blocks and
    totals, its own coverage), read back into ``osaca_blocks`` and shown in the table beside llvm-mca's."""
    from cyclebench.prediction import Block, BlockProfile
    from cyclebench.report.predict import block_lines, blocks_table
    from cyclebench.store import predictions as stored

    b = Block(function="f", obj="/bin/x", start=0x10, end=0x20, count=2.0, ir=20.0, instructions=("add %rax,%rax",),
              addresses=(0x10,), cycles=5.0, throughput=1.0)
    mca_prof = BlockProfile(blocks=(b,), ir_per_op=20.0, coverage=1.0, cycles_per_op=10.0, throughput_per_op=2.0)
    o_prof = BlockProfile(blocks=(Block(**{**b.__dict__, "cycles": 7.0, "throughput": 1.5}),), ir_per_op=20.0,
                          coverage=0.9, cycles_per_op=14.0, throughput_per_op=3.0,
                          unpriced=(("g", 0.1, "endbr64"),))
    loop = _loop("add %rax,%rax", "jb 10 <cb_body_x+0x10>")
    p = Prediction("b/x", None, "", "AMD EPYC", loop,
                   (ModelResult(MCA, OK, version="19", cpu="znver4", cycles=5.0),
                    ModelResult(OSACA, OK, version="0.7.1", cpu="ZEN4", cycles=7.0, throughput=1.5)),
                   None, mca_prof, o_prof)
    rows = stored.rows_of(p)
    assert [r["cycles_per_op"] for r in rows] == [10.0, 14.0] and [r["coverage"] for r in rows] == [1.0, 0.9]
    assert rows[1]["detail"]["block_totals"]["cycles_per_op"] == 14.0
    (back,) = stored.predictions_of(json.loads(json.dumps(rows)))
    assert back.cycles_per_op(MCA) == 10.0 and back.cycles_per_op(OSACA) == 14.0
    assert back.coverage_of(OSACA) == 0.9 and back.osaca_blocks is not None
    assert back.osaca_blocks.unpriced == (("g", 0.1, "endbr64"),) and back.osaca_blocks.unpriced_share == 0.1
    [row] = predicted_table([{"bench": "b/x", "param": None, "cycles_per_op": 20.0}], [back]).rows
    assert row[3] == "10.00" and row[5] == "14.00" and row[6] == "0.70" and "OSACA priced 90%" in row[-1]
    [shown] = blocks_table(back).rows  # type: ignore[union-attr]
    assert "14.00" in shown
    assert any(x.startswith("OSACA block-weighted: 14") and "0.70 × measured" in x for x in block_lines(back, 20.0))
