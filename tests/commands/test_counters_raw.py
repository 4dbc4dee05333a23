"""`counters sweep --raw`: refused in one line without a PMU; with a PMU's format, every code is tried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cyclebench.counters import raw

from conftest import FIXTURES, cli


@pytest.mark.skipif(raw.core_pmu() is not None, reason="this machine exposes a PMU: there is nothing to refuse")
def test_raw_sweep_without_a_pmu_is_one_line_exit_2() -> None:
    r = cli("counters", "sweep", "syscall/getpid", "--raw", "0x00-0xff")
    assert r.exit_code == 2
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--raw needs the CPU's own PMU" in lines[0]


def test_raw_sweep_tries_every_code_of_the_range(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an Intel PMU's format (a fixture tree), the whole path down to the runner: every code
    is encoded as Intel encodes it and opened for real — here, without a PMU, none opens, and
    each says why; on a machine with one, those that count get a figure per op."""
    monkeypatch.setattr(raw, "ROOT", FIXTURES / "pmu_intel")
    out = tmp_path / "sweep.json"
    r = cli("counters", "sweep", "syscall/getpid", "--raw", "0x3c,0xc0-0xc2", "--umask", "0", "--json", str(out))
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert [e["event"] for e in data["events"]] == [f"cpu/event={c:#04x},umask=0x00/" for c in (0x3C, 0xC0, 0xC1, 0xC2)]
    assert [e["encoding"] for e in data["events"]] == [f"4:{c:#x}:0x0:0x0" for c in (0x3C, 0xC0, 0xC1, 0xC2)]
    for e in data["events"]:
        assert e["countable"] == (e["error"] is None)
        assert (e["per_op"] is not None) == e["countable"]  # a code that opens is counted
    text = " ".join(r.output.split())
    n = sum(e["countable"] for e in data["events"])
    assert f"({n} of 4 raw codes countable here)" in text
    if n == 0:
        assert "none of the 4 events could be opened here:" in text
