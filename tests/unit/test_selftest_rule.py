"""The rule that tells a busy host from a broken tool (docs/method.md §11) and the /proc/stat
reading behind "the other CPUs were busy"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cyclebench.env import check
from cyclebench.experiments.selftest import FAIL, INCONCLUSIVE, NA, PASS, decide

# attempts: (passed, the host can explain the figure, the host was busy)
QUIET_FAIL, BUSY_FAIL, BUSY_BEYOND = (False, True, False), (False, True, True), (False, False, True)


@pytest.mark.parametrize("attempts, expected", [
    ([(True, True, False)], (PASS, 0)),
    ([BUSY_FAIL, (True, True, True)], (PASS, 1)),  # the host moved: a repeat passed
    ([QUIET_FAIL, BUSY_FAIL, (True, True, False)], (PASS, 2)),
    ([(None, True, False)], (NA, 0)),
    ([BUSY_FAIL, BUSY_FAIL, BUSY_FAIL], (INCONCLUSIVE, 2)),  # never FAIL a correct tool for the host's noise
    ([BUSY_FAIL, QUIET_FAIL, BUSY_FAIL], (FAIL, 2)),  # once with nothing to blame
    # one busy attempt beyond the bound is the host's too: 303.19, 301.91, 301.56 cycles~ for 300 adds
    ([BUSY_BEYOND, BUSY_FAIL, BUSY_FAIL], (INCONCLUSIVE, 2)),
    ([BUSY_BEYOND, BUSY_BEYOND, BUSY_BEYOND], (FAIL, 2)),  # a fault moves every attempt the same way
    ([BUSY_BEYOND, BUSY_BEYOND, QUIET_FAIL], (FAIL, 2)),
    # failed twice with nothing to blame: the tool's, whatever a third attempt reads (a 1% calibration
    # fault once read +0.98%, +0.94% quiet, then +0.33%)
    ([QUIET_FAIL, QUIET_FAIL, (True, True, False)], (FAIL, 1)),
    ([QUIET_FAIL, QUIET_FAIL], (FAIL, 1)),
])
def test_decide(attempts: list[tuple[bool | None, bool, bool]], expected: tuple[str, int]) -> None:
    assert decide(attempts) == expected


STAT = """cpu  300 0 30 600 0 0 0 10 0 0
cpu0 {u0} 0 {s0} {i0} 0 0 0 {st0} 0 0
cpu1 100 0 10 300 0 0 0 {st1} 0 0
intr 1 2 3
"""


def _stat(root: Path, **kw: int) -> dict[int, check.CpuTimes]:
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc/stat").write_text(STAT.format(**kw))
    return check.cpu_times(root)


def test_activity_of_the_other_cpus_and_steal(tmp_path: Path) -> None:
    before = _stat(tmp_path, u0=100, s0=0, i0=100, st0=0, st1=0)
    assert before[0] == check.CpuTimes(busy=100, steal=0, total=200) and set(before) == {0, 1}
    # 100 ticks on CPU 0: 90 busy (80 user + 10 system); CPU 1 had 10 of 50 ticks stolen
    after = _stat(tmp_path, u0=180, s0=10, i0=110, st0=0, st1=10)
    after[1] = check.CpuTimes(after[1].busy + 40, after[1].steal, after[1].total + 40)
    act = check.activity(before, after, cpu=1)
    assert act["others"] == pytest.approx(0.9) and act["steal"] == pytest.approx(10 / 50)
    hz = check.os.sysconf("SC_CLK_TCK")
    own = check.activity(before, after, cpu=1, own_seconds=40 / hz)  # our own 40 ticks are not the others'
    assert own["others"] == pytest.approx(0.5)


def test_activity_without_proc_stat(tmp_path: Path) -> None:
    assert check.cpu_times(tmp_path) == {}
    assert check.activity({}, {}, cpu=1) == {"others": None, "steal": None}


class _Watch:
    """HostWatch with nothing to see: every attempt's host quiet, as the guest's /proc shows it."""

    def start(self) -> None:
        pass

    def stop(self):  # type: ignore[no-untyped-def]
        from cyclebench.experiments.selftest import HostSeen

        return HostSeen(0, 100, 0.0, 0.0, "0.00", 1.0)


def _judged(agreements: list[float]) -> str:
    """The imul-vs-add check judged over attempts that read ``agreements``, the host quiet to the guest."""
    from types import SimpleNamespace

    from cyclebench.experiments.selftest import Check, _judge

    reads = iter(agreements)

    def attempt(_ctx: object) -> list[Check]:
        a = next(reads)
        return [Check("calibration: imul vs add clock", "1.00 ± 0.03", f"{a:.3f}", abs(a - 1) <= 0.03,
                      host_can_explain=abs(a - 1) <= 0.1,
                      unseen="" if not 0.03 < abs(a - 1) <= 0.1 else "the imul and add chains disagree")]

    got = _judge(SimpleNamespace(watch=_Watch()), ["calibration: imul vs add clock"], attempt)  # type: ignore[arg-type]
    return got[0].status


def test_chains_that_disagree_are_a_neighbour_the_guest_cannot_see() -> None:
    """1.035 and 1.048 on a quiet Zen 4 guest (the add chain slowed by what shares the core, the imul
    chain not): the host's, never FAIL; a chain far from its latency every time is the tool's."""
    assert _judged([1.035, 1.048, 1.041]) == INCONCLUSIVE
    assert _judged([1.035, 1.009]) == PASS
    assert _judged([1.25, 1.25, 1.25]) == FAIL


def test_an_attempt_whose_add_chain_ran_slower_than_imul_beyond_host_bias_cannot_fail_a_check() -> None:
    """+1 cycle read Δ 0.41 and 0.45 cycles~ beside a busy loop while the add chain ran 6.4–6.6%
    slower than the imul chain beside it (the other vCPU on the same physical core): beyond the
    bound a busy host explains, yet the host's; a split within SPLIT_EXPLAINS leaves the bound
    in force, and a split beyond SPLIT_BROKEN is the clock's own fault."""
    from types import SimpleNamespace

    from cyclebench.experiments.selftest import SPLIT_BROKEN, SPLIT_EXPLAINS, Check, HostSeen, _judge

    def judged(split: float) -> str:
        class Watch(_Watch):
            def stop(self):  # type: ignore[no-untyped-def]
                busy = ("the add chain ran slower",) if split > 0.0025 and split <= SPLIT_BROKEN else ()
                return HostSeen(0, 100, 0.0, 0.0, "0.00", 1.0, busy, split)

        def attempt(_ctx: object) -> list[Check]:
            return [Check("+1 cycle: add300 → add301", "slower, Δ = 1.00 ± 0.25", "Δ = 0.45", False,
                          host_can_explain=False)]

        return _judge(SimpleNamespace(watch=Watch()), ["+1 cycle: add300 → add301"], attempt)[0].status  # type: ignore[arg-type]

    assert judged(0.065) == INCONCLUSIVE
    assert judged(SPLIT_EXPLAINS / 2) == FAIL
    assert judged(SPLIT_BROKEN * 1.5) == FAIL
