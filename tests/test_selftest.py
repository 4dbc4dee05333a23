"""The self-validation, in its quick mode, must pass on the machine the tests run on."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def test_selftest_quick_passes(tmp_path: Path) -> None:
    out = tmp_path / "self.json"
    r = cli("selftest", "--quick", "--json", str(out))
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    names = [c["name"] for c in data["checks"]]
    assert any(n.startswith("A/A") for n in names) and any(n.startswith("+1 cycle") for n in names)
    assert any(n.startswith("linearity") for n in names)
    assert data["passed"] is True
    assert data["seconds"] < 120
