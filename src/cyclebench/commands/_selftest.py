"""The checks of `cyclebench selftest`: the tool measures known effects on this machine.

Checks (each PASS/FAIL with expected and measured figures):
* calibration — a chain of 300 dependent adds measures 300 cycles~ (±3%), and the imul
  chain gives the same clock as the add chain (±3%);
* A/A — the same benchmark against itself, measured as `compare` measures (interleaved,
  rounds over PROCESSES runner processes, CI bootstrapped over them), ``aa_reps`` times: no difference
  may be reported (false-positive rate ≤ α; with 20 repetitions and α = 0.002 that is none);
* +1 cycle — chains of 300 and 301 adds: the difference is found (verdict "slower") and
  measured as 1.0 ± 0.25 cycles~ with a CI no wider than that; while the CI is wider (a
  noisy stretch of the host) another block of rounds is measured and pooled, up to 6;
* linearity — chains of 100, 200 and 400 adds: cycles~ slopes in ratio 1 : 2 : 4 (±5%);
* timer — the engine's start/stop pair costs what ``timer/rdtscp`` measures per read (±30%):
  the fixed cost the slope method removes is the timer the suite measures;
* across runs — six separate runs of chains whose cost is known (200, 300, 400, 800 adds;
  100 imuls = 300 cycles; 300 xors), each measured as `run` measures (rounds over 3
  processes): (a) cycles~ coverage: the 95% CIs contain the true count in ≥ 80% of the 36
  results and the mean bias is within ±0.5% (a broken calibration is off by 1–3%; the
  issue-13 targets, ≥ 90% and ±0.1%, are bench/chains.py's over 20 runs: a 36-result
  check cannot resolve them); (b) cross-run A/A: runs 1, 3, 5 against runs 2, 4, 6 (alternating,
  so a drift of the host over the ~10 s hits both sides; runs 1–3 against 4–6 gave one false
  verdict in a fresh CI run) with the stored-run statistics (stats.runs.cross_run): no chain may
  get a verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cyclebench.build import BuildSpec, build, suite_sources
from cyclebench.env import sysinfo
from cyclebench.model import OK, Outcome
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions
from cyclebench.stats import clock, estimate
from cyclebench.stats.ab import ALPHA, paired
from cyclebench.stats.result import result_fields
from cyclebench.stats.runs import cross_run

PLUS_TOLERANCE = 0.25  # cycles: the +1 step must measure 1.00 ± this, with a CI no wider
PROCESSES = 4  # runner processes per comparison, as `cyclebench compare` uses by default
PLUS_BLOCKS = 6  # blocks of +1 rounds at most, pooled, while the pooled CI stays wider than the tolerance
CHAIN_TRUTH = {"selftest/add200": 200, "selftest/add300": 300, "selftest/add400": 400, "selftest/add800": 800,
               "selftest/imul100": 300, "selftest/xor300": 300}  # core cycles per op
RUN_PROCESSES = 3  # as `cyclebench run` by default
REPLICATES = 3  # runs a side in the cross-run A/A
COVERAGE, MAX_BIAS = 0.8, 0.005


@dataclass
class Check:
    name: str
    expected: str
    measured: str
    passed: bool | None  # None: not applicable here
    detail: str = ""
    values: dict[str, Any] = field(default_factory=dict)  # the figures behind ``measured``


@dataclass
class SelftestReport:
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    cpu: int | None = None

    @property
    def passed(self) -> bool:
        return all(c.passed is not False for c in self.checks)


def _cycles_rounds(o: Outcome, ratio: np.ndarray | None = None) -> np.ndarray:
    """Per-round cycles~ slopes, one entry per round (NaN for a round without one)."""
    res = o.result
    if o.status != OK or res is None:
        raise RuntimeError(f"{o.bench}: {o.status}: {o.reason}")
    slopes, unit = clock.round_costs(res, ratio)
    if unit != "cycles~":
        raise RuntimeError("no add-chain calibration on this architecture: cycles~ unavailable")
    return slopes


def _paired_rounds(outs: list[Outcome], procs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-round cycles~ of two benchmarks measured together (interleave.measure), on one
    shared clock per round (as compare does), with the rounds either lacks dropped, and the
    process of each round kept."""
    for o in outs:
        if o.status != OK or o.result is None:
            raise RuntimeError(f"{o.bench}: {o.status}: {o.reason}")
    ra, rb = clock.shared_round_ratio([o.result for o in outs if o.result])
    a, b = _cycles_rounds(outs[0], ra), _cycles_rounds(outs[1], rb)
    ok = np.isfinite(a) & np.isfinite(b)
    g = procs[ok] if len(procs) == len(a) else np.zeros(int(ok.sum()), dtype=int)
    return a[ok], b[ok], g


def _together(runner: Runner, a: str, b: str, opts: MeasureOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a and b measured as `cyclebench compare` measures them: rounds over PROCESSES processes."""
    outs, procs = interleave.measure(runner, [(a, None), (b, None)], opts, PROCESSES)
    return _paired_rounds(outs, procs)


def run_selftest(quick: bool = False, cpu: int | None = None, aa_reps: int | None = None, fifo: int | None = None,
                 max_rss: int | None = None, on_step: Callable[[str], None] = lambda _s: None) -> SelftestReport:
    """Run every check; ``quick`` uses fewer rounds (for the test suite). Raises BuildError,
    RunnerError on a broken installation, never on a failed check (that is a FAIL row)."""
    t0 = time.monotonic()
    src = Path(str(resources.files("cyclebench") / "suite" / "selftest" / "chains.c"))
    timer_src = [p for p in suite_sources() if p.name == "timer.c"]
    binary = build(BuildSpec(sources=(src, *timer_src), werror=True))
    cpu = cpu if cpu is not None else sysinfo.choose_cpu()
    runner = Runner(binary.path, cpu, fifo=fifo, max_rss=max_rss)
    opts = MeasureOptions(min_time=0.02 if quick else 0.1, repeat=12 if quick else 40, warmup=0.005)
    report = SelftestReport(cpu=cpu)
    if _check_calibration(runner, opts, report.checks):
        _check_aa(runner, quick, aa_reps or (20 if quick else 40), report.checks, on_step)
        _check_plus_one(runner, quick, opts, report.checks, on_step)
        _check_linearity(runner, opts, report.checks)
        _check_timer(runner, opts, report.checks)
        _check_across_runs(runner, quick, report.checks, on_step)
    report.seconds = time.monotonic() - t0
    return report


def _check_calibration(runner: Runner, opts: MeasureOptions, checks: list[Check]) -> bool:
    """300 adds = 300 cycles~, imul clock = add clock. False: no cycles~ here, nothing else to check."""
    o300 = runner.run("selftest/add300", None, opts, opts.timeout())
    try:
        c300 = float(np.nanmedian(_cycles_rounds(o300)))
    except RuntimeError as e:
        checks.append(Check("calibration", "300 cycles~", "-", None, str(e)))
        return False
    checks.append(Check("calibration: 300 adds", "300 ± 9 cycles~", f"{c300:.2f} cycles~", abs(c300 - 300) <= 9))
    agree = clock.chain_agreement(o300.result or {})
    checks.append(Check("calibration: imul vs add clock", "1.00 ± 0.03", "-" if agree is None else f"{agree:.3f}",
                        None if agree is None else abs(agree - 1) <= 0.03))
    return True


def _check_aa(runner: Runner, quick: bool, reps: int, checks: list[Check], on_step: Callable[[str], None]) -> None:
    """A/A as compare runs it: 40 rounds over 4 processes even when quick. With 12 or 20 rounds
    (3–6 per process) the process-level bootstrap is too coarse: on the AMD VM 1 of 20 A/A
    pairs was called different in 2 of ~8 quick runs; with 10 rounds a process, 0 of 320."""
    aa = MeasureOptions(min_time=0.05 if quick else 0.1, repeat=40, warmup=0.005)
    positives, diffs = 0, []
    for _ in range(reps):
        a, b, g = _together(runner, "selftest/add300", "selftest/add300", aa)
        on_step("A/A")
        cmp = paired(a, b, groups=g)
        positives += cmp.verdict != "~"
        diffs.append(cmp.diff)
    checks.append(Check(f"A/A: add300 vs itself ×{reps}", f"false positives ≤ α={ALPHA}",
                        f"{positives}/{reps} (median |Δ| {np.median(np.abs(diffs)):.3f} cycles~)",
                        positives / reps <= ALPHA))


def _check_plus_one(runner: Runner, quick: bool, opts: MeasureOptions, checks: list[Check],
                    on_step: Callable[[str], None]) -> None:
    """+1 cycle: while the CI of the pooled rounds is wider than the tolerance it cannot judge
    ±0.25, so another block of rounds is measured and pooled with the earlier ones (at most
    PLUS_BLOCKS); the decision to go on looks at the CI's width only, never at the estimate,
    so it does not favour a pass (sequential sampling to a precision target, as pyperf and
    hyperfine add runs). Pooling is sound: every round is an ABBA pair on one shared clock, so
    a block measured in another host state adds spread, not bias."""
    plus = MeasureOptions(min_time=0.2 if quick else 0.3, repeat=80 if quick else 120, warmup=opts.warmup)
    tries, pa, pb, pg = [], np.empty(0), np.empty(0), np.empty(0, dtype=int)
    for blk in range(PLUS_BLOCKS):
        a, b, g = _together(runner, "selftest/add300", "selftest/add301", plus)
        on_step("+1 cycle")
        pa, pb = np.concatenate([pa, a]), np.concatenate([pb, b])
        pg = np.concatenate([pg, g + blk * PROCESSES])  # every process of every block is a group
        cmp = paired(pa, pb, groups=pg)
        tries.append(cmp)
        if (cmp.ci_high - cmp.ci_low) / 2 <= PLUS_TOLERANCE:
            break
    conclusive = (cmp.ci_high - cmp.ci_low) / 2 <= PLUS_TOLERANCE
    note = "" if len(tries) == 1 else f" ({len(tries)} blocks, {len(pa)} rounds pooled; CI after each ±" + ", ±".join(
        f"{(c.ci_high - c.ci_low) / 2:.2f}" for c in tries) + ")"
    if not conclusive:
        note += f": too noisy here to resolve ±{PLUS_TOLERANCE} cycle"
    checks.append(Check("+1 cycle: add300 → add301", f"slower, Δ = 1.00 ± {PLUS_TOLERANCE} cycles~",
                        f"{cmp.verdict}, Δ = {cmp.diff:.3f} [{cmp.ci_low:.3f}, {cmp.ci_high:.3f}] p={cmp.p:.1e}{note}",
                        conclusive and cmp.verdict == "slower" and abs(cmp.diff - 1) <= PLUS_TOLERANCE,
                        values={"diff": cmp.diff, "ci_low": cmp.ci_low, "ci_high": cmp.ci_high, "p": cmp.p,
                                "verdict": cmp.verdict, "blocks": len(tries), "rounds": len(pa)}))


def _check_linearity(runner: Runner, opts: MeasureOptions, checks: list[Check]) -> None:
    outs = runner.run_many([("selftest/add100", None), ("selftest/add200", None), ("selftest/add400", None)], opts,
                           opts.timeout())
    c = [float(np.nanmedian(_cycles_rounds(o))) for o in outs]
    r2, r4 = c[1] / c[0], c[2] / c[0]
    checks.append(Check("linearity: 100, 200, 400 adds", "1 : 2 : 4 (±5%)", f"1 : {r2:.3f} : {r4:.3f}",
                        abs(r2 - 2) <= 0.1 and abs(r4 - 4) <= 0.2))


def _check_timer(runner: Runner, opts: MeasureOptions, checks: list[Check]) -> None:
    """The engine's timer-pair cost against the suite's own fenced-read benchmark."""
    cal = runner.calibrate()
    pair = float(cal["timer_overhead"]["median"])
    names = {b.name for b in runner.list()}
    tname = "timer/rdtscp" if "timer/rdtscp" in names else "timer/cntvct" if "timer/cntvct" in names else None
    if tname is None or cal.get("unit") == "ns":
        checks.append(Check("timer", "-", "-", None, "no fenced counter read on this architecture"))
        return
    per = _per_op(runner.run(tname, None, opts, opts.timeout()))
    checks.append(Check(f"timer: start+stop pair vs {tname}", f"{per:.1f} ± 30% {cal['unit']}",
                        f"{pair:.1f} {cal['unit']}", abs(pair - per) <= 0.3 * per))


def _check_across_runs(runner: Runner, quick: bool, checks: list[Check], on_step: Callable[[str], None]) -> None:
    """cycles~ coverage on chains of known cost, and the cross-run A/A (module docstring)."""
    opts = MeasureOptions(min_time=0.03 if quick else 0.1, repeat=15 if quick else 30, warmup=0.005)
    rate, _src = clock.timer_rate(runner.calibrate(), None)
    items: list[tuple[str, int | None]] = [(b, None) for b in CHAIN_TRUTH]
    runs: list[dict[str, dict[str, Any]]] = []
    for _ in range(2 * REPLICATES):
        got: dict[str, dict[str, Any]] = {}

        def done(i: int, outs: list[Outcome], _partial: bool, got: dict[str, dict[str, Any]] = got) -> None:
            got[items[i][0]] = dict(result_fields(interleave.combine(outs), rate))

        interleave.in_passes(runner, items, opts, RUN_PROCESSES, done)
        runs.append(got)
        on_step("across runs")
    rows = [(b, r[b]) for r in runs for b in CHAIN_TRUTH if r.get(b, {}).get("cycles_per_op") is not None]
    if len(rows) < len(runs) * len(CHAIN_TRUTH):
        bad = next((r[b] for r in runs for b in CHAIN_TRUTH if r.get(b, {}).get("cycles_per_op") is None), {})
        raise RuntimeError(f"{bad.get('bench')}: {bad.get('status')}: {bad.get('reason') or 'no cycles~'}")
    covered = sum(f["cycles_ci_low"] <= CHAIN_TRUTH[b] <= f["cycles_ci_high"] for b, f in rows)
    bias = {b: float(np.mean([f["cycles_per_op"] for c, f in rows if c == b])) / t - 1 for b, t in CHAIN_TRUTH.items()}
    worst = max(bias, key=lambda b: abs(bias[b]))
    checks.append(Check("cycles~ coverage: chains of known cost", f"CI holds the truth ≥ {COVERAGE:.0%}, "
                        f"|bias| ≤ {MAX_BIAS:.1%}",
                        f"{covered}/{len(rows)} ({covered / len(rows):.0%}); bias " + ", ".join(
                            f"{b.split('/')[1]} {100 * v:+.2f}%" for b, v in bias.items()),
                        covered >= COVERAGE * len(rows) and abs(bias[worst]) <= MAX_BIAS,
                        values={"covered": covered, "results": len(rows), "bias": bias}))
    verdicts = {}
    for b in CHAIN_TRUTH:
        x = [r[b]["cycles_per_op"] for r in runs]
        cmp, _note = cross_run(x[0::2], x[1::2])  # sides alternate in time: the host's drift hits both
        verdicts[b] = cmp.verdict
    called = [f"{b.split('/')[1]} {v}" for b, v in verdicts.items() if v != "~"]
    checks.append(Check(f"A/A across runs: {REPLICATES} vs {REPLICATES} runs × {len(CHAIN_TRUTH)} chains",
                        "no verdict (~)", ", ".join(called) if called else f"0/{len(CHAIN_TRUTH)} verdicts",
                        not called, values={"verdicts": verdicts}))


def _per_op(o: Outcome) -> float:
    res = o.result
    if o.status != OK or res is None:
        raise RuntimeError(f"{o.bench}: {o.status}: {o.reason}")
    return estimate(res["n"], res["ticks"], group=res["ladder"]).per_op


def to_dict(report: SelftestReport) -> dict[str, Any]:
    return {"passed": report.passed, "seconds": report.seconds, "cpu": report.cpu,
            "checks": [c.__dict__ for c in report.checks]}
