"""Tests for cyclebench.check on fixture trees of /proc and /sys.

Fixtures (tests/fixtures): ``sysroot_kvm`` and ``sysroot_baremetal`` (see README.md there), and
``sysroot_amd``, hand-written for these tests: AMD Ryzen 5 3600 (6 cores × 2 threads, SMT
siblings N and N+6), acpi-cpufreq with governor ``ondemand`` and ``cpufreq/boost=1``, clocksource
``hpet`` with tsc no longer offered (marked unstable), no isolcpus, load 7.85 on 12 CPUs,
perf_event_paranoid 1, nmi_watchdog 0, a ``cpu`` PMU without caps, and fake processes: seven
runnable ``cc1`` on CPU 5, two runnable ``ffmpeg`` threads on CPU 11 (CPU 5's sibling), a
sleeping kworker on CPU 5.

Only the real-machine tests touch ``/``; they assert shapes, never a vendor or a status.
"""

from __future__ import annotations

import json
from pathlib import Path

from cyclebench.env.check import NAMES


def test_check_command_and_findings_stored_with_runs(tmp_path: Path, db: str) -> None:
    from cyclebench.store import Store

    from conftest import DATA, cli

    out = tmp_path / "check.json"
    r = cli("check", "--json", str(out))
    assert r.exit_code == 0, r.output
    names = [f["name"] for f in json.loads(out.read_text())]
    assert names == list(NAMES)
    r = cli("run", str(DATA / "chain.c"), "-b", "chain/add200", "-q", "--min-time", "0.01", "--repeat", "6")
    assert r.exit_code == 0
    store = Store(db)
    env = store.get_run(store.last_run_id())["env"]
    assert [f["name"] for f in env["check"]] == list(NAMES)
