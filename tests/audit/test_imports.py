"""`import` of a run file: an export comes back identical; a file that is not a whole, valid
run file is refused with exit 2 and stores nothing."""

from __future__ import annotations

import re

import pytest

from .conftest import Shared, crafted_export, database
from .harness import Lab

pytestmark = pytest.mark.audit


@pytest.mark.audit_slow
def test_an_export_imports_back_identical(lab: Lab, shared: Shared) -> None:
    database(lab, shared, "seed")
    assert lab.run("export", "1", "--json", "{T}/exp1.json").rc == 0
    r = lab.run("import", "{T}/exp1.json")
    assert r.rc == 0, r
    a, b = (lab.run("show", n) for n in ("1", "2"))
    assert a.rc == 0 and b.rc == 0
    shown = [re.sub(r"run #\d+", "run #N", x.out) for x in (a, b)]
    assert shown[0].strip() and shown[0] == shown[1]


SPOILED = ["truncated", "list", "no-run", "version-abc", "binary", "ticks-shorter-than-iters", "result-without-bench",
           "started-at-null", "iters-2**70", "per-op-a-string"]


@pytest.mark.parametrize("kind", SPOILED)
def test_a_spoiled_run_file_is_refused_and_stores_nothing(lab: Lab, shared: Shared, kind: str) -> None:
    """Half a file, a list, a file without its run, a version that is not a number, binary
    bytes, samples that do not pair up, a result without its benchmark, a run without its
    start, a count beyond 64 bits, a cost that is a string: some of these were stored half-way
    or ended in a traceback."""
    f = lab.dir / "spoiled.json"
    f.write_bytes(crafted_export(shared.seed()[1], kind))
    r = lab.run("import", str(f))
    assert r.rc == 2, r
    assert lab.n_runs() == 0
