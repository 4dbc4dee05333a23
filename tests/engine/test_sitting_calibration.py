"""A runner's timer calibration is measured once a sitting per CPU and binary (experiments/
session.py): reused with its age said, measured again for another CPU, after the sitting, under an
injected fault, and for a binary outside the build cache."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from cyclebench.build import BuildSpec, build
from cyclebench.experiments import session
from cyclebench.report.console import calibration_line
from cyclebench.runner import Runner

from conftest import DATA


@pytest.fixture(scope="module")
def binary() -> Path:
    return build(BuildSpec(sources=(DATA / "faults.c",))).path


def test_the_calibration_is_reused_within_a_sitting_and_measured_again_after(binary: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    memo = binary.parent / "calibration-cpu0.json"
    for cpu in (0, 1):  # the binary is the session's: other tests' runs may have remembered theirs
        (binary.parent / f"calibration-cpu{cpu}.json").unlink(missing_ok=True)
    first = session._sitting_calibration(Runner(binary, 0), 0)
    assert "age_s" not in first and first["rate_hz"] > 0 and memo.is_file()
    again = session._sitting_calibration(Runner(binary, 0), 0)
    assert again["age_s"] >= 0 and {k: v for k, v in again.items() if k != "age_s"} == first
    assert "s before the run" in calibration_line(again) and "before" not in calibration_line(first)  # said
    other_cpu = session._sitting_calibration(Runner(binary, 1), 1)  # its own CPU, its own memo
    assert "age_s" not in other_cpu

    kept = json.loads(memo.read_text())  # the sitting is over: measured again
    memo.write_text(json.dumps({**kept, "at": time.time() - session.SITTING_S - 1}))
    assert "age_s" not in session._sitting_calibration(Runner(binary, 0), 0)
    assert "age_s" in session._sitting_calibration(Runner(binary, 0), 0)

    monkeypatch.setenv("CYCLEBENCH_FAULT", "timer-skip")  # a fault's readings are neither reused nor kept
    faulty = session._sitting_calibration(Runner(binary, 0), 0)
    assert faulty.get("fault") == "timer-skip" and "age_s" not in faulty
    monkeypatch.delenv("CYCLEBENCH_FAULT")
    assert "fault" not in session._sitting_calibration(Runner(binary, 0), 0)


def test_a_binary_outside_the_build_cache_gets_no_file_beside_it(binary: Path, tmp_path: Path) -> None:
    mine = tmp_path / "runner"
    shutil.copy2(binary, mine)
    for _ in range(2):
        assert "age_s" not in session._sitting_calibration(Runner(mine, 0), 0)
    assert list(tmp_path.iterdir()) == [mine]
