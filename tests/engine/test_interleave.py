"""Rounds over several runner processes (interleave.py) and the CI bootstrapped over them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cyclebench.build import BuildSpec, build
from cyclebench.model import OK
from cyclebench.runner import Runner, interleave
from cyclebench.runner.plan import MeasureOptions

from conftest import DATA, cli


def test_measure_spreads_rounds_and_reverses_the_order() -> None:
    runner = Runner(build(BuildSpec(sources=(DATA / "chain.c",), werror=True)).path, None)
    opts = MeasureOptions(min_time=0.02, repeat=20, warmup=0.002)
    outs, procs = interleave.measure(runner, [("chain/add200", None), ("chain/add400", None)], opts, 4)
    assert [o.status for o in outs] == [OK, OK]
    assert [o.bench for o in outs] == ["chain/add200", "chain/add400"]  # back in the order given
    r = outs[0].result or {}
    assert r["processes"] == 4 and sum(r["process_rounds"]) == r["rounds"] == len(procs)
    assert len(r["n"]) == r["rounds"] * r["ladder"]
    assert list(np.unique(procs)) == [0, 1, 2, 3]
    bad, procs = interleave.measure(runner, [("chain/add200", None), ("chain/nope", None)], opts, 4)
    assert bad[1].status != OK and len(bad[0].result["process_rounds"] if bad[0].result else []) <= 1


def test_compare_stores_the_processes(db: str, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    r = cli("compare", "chain/add200", "chain/add400", "-f", str(DATA / "chain.c"), "--processes", "3",
            "--repeat", "18", "--min-time", "0.03", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert "rounds over 3 processes" in r.output
    assert "warning: 6 rounds per process" in r.output  # fewer than SAFE_ROUNDS: said
    from cyclebench.store import Store
    s = Store(db)
    rows = s.results(s.last_run_id())
    assert all(x.processes == 3 for x in rows)
    assert json.loads(out.read_text())[0]["comparison"]["pairs"] == 18
