"""A small lab for `cyclebench report`'s tests (tests/commands/test_report_site.py and
tests/browser/): real runs made by the CLI — `run` (twice, labelled), `compare`, `variants` and
`scale` of tests/data/chain.c with fast options — and a history written through the store API:
12 runs on each of two hosts of ``lab/step``, where host ``lab-a`` steps +5% at its 7th run
(STEP_AT) and ``lab-b`` stays flat; one row disturbed; and a benchmark named ``HOSTILE``.
Measuring a real 5% step takes too long and too much quiet for a test (bench/history.py does
it): the stored rows carry estimates with a ~0.3% run-to-run spread and a 0.2% CI.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import cyclebench
from cyclebench.store import Store

from conftest import cli_at

DATA = Path(__file__).parent / "data"
CHAIN = str(DATA / "chain.c")
FAST = ["--min-time", "0.01", "--repeat", "6", "--warmup", "0.002"]
HOSTILE = "<script>alert(1)</script>"
STEP = "lab/step"
STEP_AT = 6  # lab-a's runs from this position (0-based) on are 5% slower
N_HISTORY = 12  # runs per host


@dataclass
class LabDb:
    url: str
    path: Path
    step_runs: dict[str, list[int]]  # host → its lab/step runs, oldest first
    real_runs: dict[str, int]  # "run", "run2", "compare", "variants", "scale" → run id
    disturbed_run: int  # the run whose lab/step row is disturbed (lab-b's 4th)

    @property
    def step_run(self) -> int:
        """The run where the step was made: lab-a's first slower run."""
        return self.step_runs["lab-a"][STEP_AT]


def cyclebench_cli(url: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own on ``url`` (COLUMNS=200)."""
    src = str(Path(cyclebench.__file__).resolve().parents[1])
    env = {**os.environ, "COLUMNS": "200", "CYCLEBENCH_DB": url,
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "cyclebench", *args], env=env, text=True, capture_output=True,
                          timeout=600, check=False, cwd=cwd)


def cyclebench_in(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``cyclebench_cli`` in this process (conftest.cli_at): the same stdout, stderr and exit
    status for ~0.015 s of CPU where a process costs ~0.5 s. For commands that read (`history`,
    `show`, `runs`, `export`); `report` forks its pool and measuring commands their runners, so
    those stay in a process of their own."""
    r = cli_at(200, *args, env={"CYCLEBENCH_DB": url})
    return subprocess.CompletedProcess(["cyclebench", *args], r.exit_code, r.stdout, r.stderr)


def _real(url: str) -> dict[str, int]:
    made = {}
    for name, argv in [
        ("run", ["run", CHAIN, *FAST, "--label", "branch=main", "--label", "note=<b>not bold</b>"]),
        ("run2", ["run", CHAIN, *FAST, "--label", "branch=topic"]),
        ("compare", ["compare", "chain/add200", "chain/add400", "-f", CHAIN, "--repeat", "8", "--processes", "2",
                     "--min-time", "0.01"]),
        ("variants", ["variants", CHAIN, "--flags", "-O1", "--flags", "-O2", "-b", "chain/add200", "--rounds", "6",
                      "--min-time", "0.01"]),
        ("scale", ["scale", "chain/add200", "-f", CHAIN, "--tasks", "1,2", "--duration", "0.05", "--passes", "1",
                   "--warmup", "0"]),
    ]:
        r = cyclebench_cli(url, *argv)
        assert r.returncode == 0, f"{argv}: {r.stderr}"
        store = Store(url, create=False)
        made[name] = int(store.last_run_id() or 0)
        store.close()
    return made


def _history(url: str) -> tuple[dict[str, list[int]], int]:
    """lab/step on two hosts, 12 runs each, interleaved in time; HOSTILE beside it."""
    rng = np.random.default_rng(28)
    store = Store(url)
    start = dt.datetime(2026, 1, 5, 3, 0, tzinfo=dt.timezone.utc)
    ids: dict[str, list[int]] = {"lab-a": [], "lab-b": []}
    disturbed = 0
    for i in range(N_HISTORY):
        for h, host in enumerate(ids):
            t = start + dt.timedelta(days=i, minutes=10 * h)
            rid = store.begin_run(command=["cyclebench", "run", "-b", "lab/*"], host=host, cpu=1,
                                  cpu_model="Lab CPU " + host[-1].upper(), status="complete")
            store.update_run(rid, started_at=t.isoformat(timespec="milliseconds"),
                             finished_at=(t + dt.timedelta(minutes=3)).isoformat(timespec="milliseconds"),
                             labels={"night": t.date().isoformat(), "host": host}, code_rev=f"{0xabc100 + i:x}",
                             kernel_release="6.1.0-lab", host_id=f"{h + 1:02d}" * 16, status="complete")
            v = 300.0 * (1.05 if host == "lab-a" and i >= STEP_AT else 1.0) * (1 + rng.normal(0, 0.003))
            status = "disturbed" if host == "lab-b" and i == 3 else "ok"
            for bench, value in ((STEP, v), (HOSTILE, 50.0 * (1 + rng.normal(0, 0.003)))):
                half = value * 0.002
                store.add_result(rid, {
                    "bench": bench, "param": None, "status": status if bench == STEP else "ok",
                    "reason": "most batches shared the CPU" if status == "disturbed" and bench == STEP else None,
                    "unit": "ref-cycles", "per_op": value / 1.3, "ci_low": (value - half) / 1.3,
                    "ci_high": (value + half) / 1.3, "cycles_per_op": value, "cycles_ci_low": value - half,
                    "cycles_ci_high": value + half, "ns_per_op": value / 3.0, "rcv": 0.004, "min": value / 1.31,
                    "n_samples": 40, "n_disturbed": 30 if status == "disturbed" and bench == STEP else 0,
                    "kind": "timing"})
            if status == "disturbed":
                disturbed = rid
            ids[host].append(rid)
    store.close()
    return ids, disturbed


def make_lab(directory: Path) -> LabDb:
    path = directory / "lab.db"
    url = f"sqlite:///{path}"
    real = _real(url)
    steps, disturbed = _history(url)
    return LabDb(url, path, steps, real, disturbed)


@dataclass
class BuiltSite:
    lab: LabDb
    root: Path  # the site's directory
    stderr: str


@pytest.fixture(scope="session")
def site_lab(tmp_path_factory: pytest.TempPathFactory) -> BuiltSite:
    """The lab's database and its site (`cyclebench report -o site`), made once a session."""
    d = tmp_path_factory.mktemp("sitelab")
    lab = make_lab(d)
    r = cyclebench_cli(lab.url, "report", "-o", str(d / "site"), "-j", "2")
    assert r.returncode == 0, r.stderr
    return BuiltSite(lab, d / "site", r.stderr)
