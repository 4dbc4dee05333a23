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
