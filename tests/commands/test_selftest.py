"""The self-validation, in its quick mode, on the machine the tests run on.

Every check must pass except the +1-cycle one, which asks for 1.00 ± 0.25 cycles~: the
project's AMD EPYC VM meets that with the full selftest (blocks pooled until the CI is
narrow enough), but the quick mode's shorter blocks miss it on busy stretches of the host
(Δ 0.6 [0.14, 0.92] over 6 pooled blocks seen), and `cyclebench selftest` says so with a FAIL. Here the
step must still be found in the right direction and size, a tolerance a noisy 2-core VM
meets; a sign error or a lost cycle would fail it.

The cycles~ coverage check is judged the same way: on the Intel Xeon VM the add and xor
chains read +0.2…+0.8% in busy stretches (the host's gaps lengthen batches, not the
calibration chain: docs/method.md §3) and the check can FAIL there; here a broken
calibration (a wrong fixed part is off by 1–3%, a lost factor far more) must still fail.
A broken calibration moves every chain the same way, so the median bias of the six is held to
1%; one chain alone may stray further while the host moves under it (imul100 read −3.2% once in
eight quick selftests on the Xeon VM, on the code of 1078ea0 as on later code, the other five
within ±0.3%), so each is held only to 5%.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def test_selftest_quick(tmp_path: Path) -> None:
    out = tmp_path / "self.json"
    r = cli("selftest", "--quick", "--json", str(out))
    assert r.exit_code in (0, 1), r.output
    data = json.loads(out.read_text())
    checks = {c["name"].split(":")[0]: c for c in data["checks"]}
    assert {"calibration", "A/A", "+1 cycle", "linearity", "timer", "cycles~ coverage",
            "A/A across runs"} <= set(checks), list(checks)
    failed = [c["name"] for c in data["checks"] if c["passed"] is False
              and not c["name"].startswith(("+1", "cycles~ coverage"))]
    assert not failed, r.output
    cov = checks["cycles~ coverage"]["values"]
    assert cov["results"] == 36 and cov["covered"] >= 18, cov
    biases = sorted(cov["bias"].values())
    assert abs((biases[2] + biases[3]) / 2) <= 0.01 and all(abs(b) <= 0.05 for b in biases), cov
    plus = checks["+1 cycle"]["values"]
    assert plus["verdict"] != "faster" and 0.25 <= plus["diff"] <= 1.75, r.output
    assert plus["rounds"] >= 40 * plus["blocks"], plus  # blocks are pooled, not replaced
    assert data["passed"] is (r.exit_code == 0)
    assert data["seconds"] < 120
